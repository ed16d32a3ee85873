"""The services one app instance uses, built from settings in one place."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from config import Settings
from core.tools import ToolRegistry
from services.db import Database
from services.models import Workspace
from services.notifier import Notifier
from services.runner import Runner
from services.tools import build_registry
from services.workflows import DefinitionCache

DEFAULT_WORKSPACE = "default"


@dataclass
class Services:
    settings: Settings
    db: Database
    tools: ToolRegistry
    definitions: DefinitionCache
    notifier: Notifier
    runner: Runner

    @classmethod
    def build(cls, settings: Settings, socketio=None) -> "Services":
        db = Database(settings.resolved_database_url)
        tools = build_registry(settings)
        definitions = DefinitionCache(tools)
        notifier = Notifier(socketio)
        runner = Runner(db, tools, definitions, notifier, settings,
                        spawn=socketio.start_background_task if socketio is not None and
                        settings.async_mode in ("eventlet", "gevent") else None)
        return cls(settings, db, tools, definitions, notifier, runner)

    def default_workspace_id(self) -> str:
        with self.db.transaction() as session:
            ws = session.scalar(select(Workspace).where(Workspace.slug == DEFAULT_WORKSPACE))
            if ws is None:
                ws = Workspace(slug=DEFAULT_WORKSPACE, name="Default workspace")
                session.add(ws)
                session.flush()
            return ws.id

    def close(self) -> None:
        self.runner.shutdown()
        self.db.dispose()
