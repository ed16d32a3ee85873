"""The OpenAPI document as the web app's generated types read it (docs/api.md "The contract").

`python -m api.openapi_document <file>` builds an app on a throw-away SQLite database and writes its document there
(`make api-types` writes frontend/src/api/openapi.json, then openapi-typescript generates schema.d.ts from it).
tests/api/test_contract.py compares the checked-in file with a running app's document.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path


def document_text(app) -> str:
    """The app's /api/openapi.json, keys sorted and indented, so that a change reads as a small diff."""
    answer = app.test_client().get("/api/openapi.json")
    assert answer.status_code == 200, answer.status_code
    return json.dumps(answer.get_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(target: str) -> None:
    from api.app import create_app
    from config import Settings

    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            env="test",
            instance_dir=folder,
            demo=False,
            secret_key="openapi-document",
            async_mode="threading",
            log_level="WARNING",
        )
        app = create_app(settings, recover=False)
        try:
            Path(target).write_text(document_text(app), encoding="utf-8")
        finally:
            app.extensions["coach"].close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "frontend/src/api/openapi.json")
