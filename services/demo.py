"""Demo workflows and their data, loaded on `make run` unless COACH_DEMO=0."""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from sqlalchemy import select

from services import workflows
from services.container import Services
from services.models import Workflow

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"


def load(services: Services, workspace_id: str) -> list[str]:
    """Create each demo workflow that is not there yet (by name), and copy the demo data files."""
    data_dir = Path(services.settings.resolved_data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    for source in (DEMO_DIR / "data").iterdir():
        if not (data_dir / source.name).exists():
            shutil.copy(source, data_dir / source.name)
    created = []
    with services.db.transaction() as session:
        existing = set(session.scalars(select(Workflow.name).where(Workflow.workspace_id == workspace_id,
                                                                   Workflow.deleted_at.is_(None))))
        for path in sorted(DEMO_DIR.glob("*.yaml")):
            definition = yaml.safe_load(path.read_text())
            if definition["name"] in existing:
                continue
            if "base_url" in definition.get("variables", {}):
                definition["variables"]["base_url"]["default"] = (
                    f"http://{services.settings.host}:{services.settings.port}")
            workflows.create(session, services.tools, workspace_id, definition)
            created.append(definition["name"])
    return created
