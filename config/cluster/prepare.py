"""`make cluster`'s preparation, run once before its processes start: the PostgreSQL database (created when
missing), its schema, the demo and the first admin, so that two servers starting together do not race to make
them. Then the nginx configuration with the proxy's port."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def create_database(url: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    admin = parsed.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (parsed.database,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{parsed.database}"')
            print(f"created database {parsed.database}")


def main() -> None:
    folder = Path(os.environ["COACH_CLUSTER_DIR"])
    (folder / "tmp").mkdir(parents=True, exist_ok=True)
    port = os.environ.get("COACH_CLUSTER_PORT", "8000")
    template = (Path(__file__).parent / "nginx.conf.in").read_text()
    (folder / "nginx.conf").write_text(template.replace("@PORT@", port))
    create_database(os.environ["COACH_DATABASE_URL"])

    from api.app import create_app
    from services import demo

    app = create_app(recover=False)  # migrates; creates the first admin when there is no user yet
    created = demo.load(app.extensions["coach"], app.extensions["coach_default_workspace"])
    if created:
        print(f"loaded demo workflows: {', '.join(created)}")
    app.extensions["coach"].close()
    print(
        f"cluster ready: http://127.0.0.1:{port} (nginx) -> servers :5001 and :5002, their MCP processes :5101 and "
        ":5102 (/mcp), 2 Celery workers"
    )


if __name__ == "__main__":
    main()
