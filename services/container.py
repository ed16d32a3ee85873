"""The services one app instance uses, built from settings in one place."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from config import Settings
from core import budget
from core.tools import ToolRegistry
from services import workspaces
from services.db import Database
from services.decisions import approvals as approval_decisions
from services.notifications import outbox as notification_outbox
from services.notifications.sender import Scanner as NotificationScanner
from services.notifier import Notifier
from services.orchestration.runner import Runner
from services.policies.outbound import WorkspaceDirectory
from services.tools import build_registry
from services.toolservers.pool import Clients
from services.toolservers.secrets import Secrets
from services.toolservers.source import McpSource
from services.unit_of_work import UnitOfWork
from services.workflows.service import DefinitionCache


@dataclass
class Services:
    settings: Settings
    db: Database
    tools: ToolRegistry
    definitions: DefinitionCache
    notifier: Notifier
    runner: Runner
    # the workspaces' MCP servers, whose tools `tools.for_workspace(id)` shows (services/toolservers)
    mcp: McpSource
    # re-evaluates a tool call's edited params: fn(session, approval, params) -> policy verdict | None
    # (services.decisions.approvals.Recheck: services.decisions.approvals.approval_recheck)
    approval_recheck: Callable | None = None
    # sends the notification outbox in the background (services/notifications/sender.py), started with the runner's
    # deadline scanner by the server that recovers
    notifications: NotificationScanner | None = None
    # more to close with the rest (the web process's client of its MCP process: api/mcp_proxy.py)
    closing: list[Callable[[], None]] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        settings: Settings,
        socketio=None,
        *,
        notifier: Notifier | None = None,
        spawn=None,
        dispatch: bool = True,
        mcp_pool: Clients | None = None,
    ) -> Services:
        """`spawn` runs the runner's tasks (default: a thread pool, or green threads under eventlet/gevent);
        benchmarks pass an inline one to measure the engine without scheduling noise. With COACH_BROKER_URL set,
        executions that need a slow tool go to the Celery workers (services.orchestration.dispatch,
        services.worker) unless `dispatch` is False (a worker's own Services). `mcp_pool`: the MCP process's client
        pool (asgi.py); without it, MCP servers are called through the MCP process's internal routes."""
        budget.configure(time_s=settings.eval_time_ms / 1000.0)
        db = Database(
            settings.resolved_database_url, pool_size=settings.db_pool_size, max_overflow=settings.db_max_overflow
        )
        tools = build_registry(settings, WorkspaceDirectory(db))
        mcp = McpSource(settings, db, Secrets(settings.secret_key), clients=mcp_pool)
        tools.add_source(mcp)
        definitions = DefinitionCache(tools)
        notifier = notifier or Notifier(socketio, coalesce_s=settings.queue_changed_s)
        if spawn is None and socketio is not None and settings.async_mode in ("eventlet", "gevent"):
            spawn = socketio.start_background_task
        remote = None
        if dispatch and settings.broker_url:
            from services.orchestration.dispatch import dispatcher

            remote = dispatcher(settings)
        # the outbox's settings: every unit of work of the runner's (`command()`) writes notifications under them
        outbox = notification_outbox.Config(email=bool(settings.smtp_host))
        runner = Runner(db, tools, definitions, notifier, settings, spawn=spawn, dispatch=remote, notifications=outbox)
        built = cls(
            settings,
            db,
            tools,
            definitions,
            notifier,
            runner,
            mcp,
            approval_recheck=approval_decisions.approval_recheck(tools),
        )
        built.notifications = NotificationScanner(built)
        return built

    def command(self) -> AbstractContextManager[UnitOfWork]:
        """A command's unit of work (services/unit_of_work.py): `with services.command() as uow:` commits, then sends
        its events and schedules its runs."""
        return self.runner.command()

    def default_workspace_id(self) -> str:
        with self.command() as uow:
            return workspaces.default_id(uow.session)

    def close(self) -> None:
        if self.notifications is not None:
            self.notifications.stop()
        self.runner.shutdown()
        for close_it in self.closing:
            close_it()
        self.mcp.close()  # the HTTP client of the MCP process's routes (the MCP process closes its own sessions)
        for tool in self.tools.tools.values():  # e.g. sql.query's engines to the configured databases
            close = getattr(tool, "close", None)
            if callable(close):
                close()
        self.db.dispose()
