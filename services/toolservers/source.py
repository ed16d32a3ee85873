"""A workspace's MCP tools in the tool registry (core.tools.ToolSource), and the tool object a step calls.

The tools a server offers are those of its last listing, stored with the server's row (so every process
validates and runs with the same list). The sessions with the servers live in Coach's MCP process (asgi.py): there
the source has the client pool (pool.Clients), and a server's notifications/tools/list_changed is listed again and
written to the row at once; the web process and the workers have the pool's internal routes instead
(remote.Remote), the same calls over HTTP.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from mcp.client.stdio import get_default_environment
from sqlalchemy import select

from config import Settings
from core import toolservers as T
from core.outbound import parse_entries, parse_entry
from core.tools import ToolContext, ToolError
from services.db import Database
from services.models.toolservers import ToolServer
from services.orm import utcnow
from services.policies import outbound
from services.tools.basic import budget
from services.tools.files import workspace_root
from services.tools.http import Vetter
from services.toolservers.connection import Endpoint, Unavailable
from services.toolservers.pool import Clients
from services.toolservers.remote import Remote
from services.toolservers.secrets import Secrets, SecretUnreadable
from services.unit_of_work import unit_of_work

log = logging.getLogger(__name__)

CACHE_S = 1.0  # how long a process trusts its copy of a workspace's servers (another process may change them)


def stdio_allowed(command: list[str], allow: tuple[str, ...]) -> bool:
    """A command runs only if it starts, word for word, with one of COACH_MCP_STDIO_ALLOW's command lines."""
    import shlex

    for entry in allow:
        words = shlex.split(entry)
        if words and command[: len(words)] == words:
            return True
    return False


@dataclass(frozen=True)
class Server:
    """What the registry keeps of a server row."""

    id: str
    workspace_id: str
    name: str
    revision: int
    transport: str
    url: str
    command: tuple[str, ...]
    secret: str
    trusted: bool
    risk_overrides: dict[str, str]
    tools: tuple[dict[str, Any], ...]

    @classmethod
    def of(cls, row: ToolServer) -> Server:
        return cls(
            row.id,
            row.workspace_id,
            row.name,
            row.revision,
            row.transport,
            row.url,
            tuple(row.command or ()),
            row.secret,
            bool(row.trusted),
            dict(row.risk_overrides or {}),
            tuple(row.tools or ()),
        )


class McpTool:
    """One tool of one server, as core.tools.Tool: `<server>.<tool>`, its inputSchema, the risk by core's rule."""

    honours_deadline = True  # the call is bounded by the step's deadline and COACH_MCP_CALL_TIMEOUT_S
    source = "mcp"

    def __init__(self, owner: McpSource, server: Server, spec: dict[str, Any]):
        self.owner, self.server = owner, server
        self.tool = spec["name"]
        self.name = T.full_name(server.name, self.tool)
        self.description = spec.get("description") or spec.get("title") or ""
        self.params_schema = spec.get("inputSchema") or {"type": "object"}
        self.annotations = spec.get("annotations") or {}
        self.title = spec.get("title") if isinstance(spec.get("title"), str) else None
        self.output_schema = spec.get("outputSchema") if isinstance(spec.get("outputSchema"), dict) else None
        self.risk = T.effective_risk(
            self.annotations, trusted=server.trusted, override=server.risk_overrides.get(self.tool)
        )

    def run(self, params: dict[str, Any], ctx: ToolContext) -> Any:
        if ctx.workspace_id != self.server.workspace_id:
            raise ToolError(f"{self.name} belongs to another workspace")
        seconds = budget(ctx)
        # the key the several-machines work puts on ToolContext; until then one per execution step
        key = getattr(ctx, "idempotency_key", None) or f"{ctx.execution_id}:{ctx.step_id}"
        result = self.owner.call(self.server, self.tool, params, timeout=seconds, meta={"idempotencyKey": key})
        if result.get("isError"):
            raise ToolError(f"{self.name} reported an error: {T.error_message(result)}")
        return T.step_output(result)


class McpSource:
    """`clients`: the pool itself (the MCP process); None: the MCP process's internal routes (remote.Remote)."""

    def __init__(self, settings: Settings, db: Database, secrets: Secrets, clients: Clients | None = None):
        self.settings, self.db, self.secrets = settings, db, secrets
        self._server_allow = parse_entries(settings.outbound_allow)
        self.clients = clients
        self.remote = Remote(settings) if clients is None else None
        if clients is not None:
            clients.on_tools = self._listed
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, dict[str, McpTool]]] = {}

    # -- the registry's side ---------------------------------------------------------------------------------

    def tools_for(self, workspace_id: str) -> dict[str, McpTool]:
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(workspace_id)
            if cached is not None and now - cached[0] < CACHE_S:
                return cached[1]
        with self.db.aside() as session:  # callers may be inside a transaction (the runner): not from the pool
            rows = session.scalars(
                select(ToolServer).where(ToolServer.workspace_id == workspace_id, ToolServer.enabled.is_(True))
            ).all()
            servers = [Server.of(r) for r in rows]
        tools: dict[str, McpTool] = {}
        for server in servers:
            for spec in self.listing(server):
                if spec.get("problem"):
                    continue  # a tool whose schema is unusable is shown on the Tools page, never callable
                tool = McpTool(self, server, spec)
                tools[tool.name] = tool
        with self._lock:
            self._cache[workspace_id] = (now, tools)
        return tools

    def listing(self, server: Server) -> list[dict[str, Any]]:
        return list(server.tools)

    def invalidate(self, workspace_id: str | None = None) -> None:
        with self._lock:
            if workspace_id is None:
                self._cache.clear()
            else:
                self._cache.pop(workspace_id, None)

    # -- talking to servers ----------------------------------------------------------------------------------------

    def endpoint(self, server: Server) -> Endpoint:
        if server.transport == "stdio":
            if not stdio_allowed(list(server.command), self.settings.mcp_stdio_allow):
                raise Unavailable(
                    f"MCP server {server.name!r}: its command is not (or no longer) allowed by COACH_MCP_STDIO_ALLOW"
                )
            cwd = str(workspace_root(self.settings, server.workspace_id, create=True))
            return Endpoint(
                server.id,
                server.name,
                server.revision,
                "stdio",
                command=server.command,
                env=tuple(sorted(get_default_environment().items())),
                cwd=cwd,
            )
        try:
            headers = self.secrets.open(server.secret).get("headers", {})
        except SecretUnreadable as exc:
            raise Unavailable(f"MCP server {server.name!r}: {exc}") from exc
        return Endpoint(
            server.id,
            server.name,
            server.revision,
            "http",
            url=server.url,
            headers=tuple(sorted(headers.items())),
            vetter=lambda: self.vetter(server.workspace_id),
        )

    def vetter(self, workspace_id: str) -> Vetter:
        """The outbound rules an MCP server's URL is held to, as http.request's calls are (core/outbound): the
        server's COACH_OUTBOUND_ALLOW and the workspace's lists as they are now, read aside from the pool (the
        caller may be a step holding a pooled connection while it waits for the call)."""
        with self.db.aside() as session:
            lists = outbound.get_lists(session, workspace_id)
        return Vetter(
            self._server_allow, tuple(parse_entry(e) for e in lists.allow), tuple(parse_entry(e) for e in lists.deny)
        )

    def list_tools(self, server: Server) -> list[dict[str, Any]]:
        """The server's tools now, each with `problem` when its schema cannot be used."""
        if self.remote is not None:
            return self.remote.list_tools(server.id, server.name)
        return [_checked(t) for t in self._pool().list_tools(self.endpoint(server))]

    def call(
        self, server: Server, tool: str, params: dict[str, Any], *, timeout: float, meta: dict[str, Any]
    ) -> dict[str, Any]:
        try:
            if self.remote is not None:
                return self.remote.call(server.id, server.name, tool, params, timeout=timeout, meta=meta)
            return self._pool().call(self.endpoint(server), tool, params, timeout=timeout, meta=meta)
        except Unavailable as exc:
            raise ToolError(str(exc)) from exc

    # -- in the MCP process (the internal routes, on its loop) -------------------------------------------------------

    def _pool(self) -> Clients:
        if self.clients is None:
            raise Unavailable("this process has no MCP client pool")
        return self.clients

    def server(self, server_id: str) -> Server | None:
        """The server's row as it is now (a worker thread: it reads the database)."""
        with self.db.read() as session:
            row = session.get(ToolServer, server_id)
            return Server.of(row) if row is not None else None

    async def alist_tools(self, server: Server) -> list[dict[str, Any]]:
        import anyio

        endpoint = await anyio.to_thread.run_sync(self.endpoint, server)
        return [_checked(t) for t in await self._pool().alist_tools(endpoint)]

    async def acall(
        self, server: Server, tool: str, params: dict[str, Any], *, timeout: float, meta: dict[str, Any]
    ) -> dict[str, Any]:
        import anyio

        endpoint = await anyio.to_thread.run_sync(self.endpoint, server)
        return await self._pool().acall(endpoint, tool, params, timeout=timeout, meta=meta)

    def _listed(self, ep: Endpoint, tools: list[dict[str, Any]]) -> None:
        """On the MCP loop: a server said its list changed and was listed again: the row gets it (in a worker
        thread), so every process's registry shows it at its next read."""
        import anyio

        checked = [_checked(t) for t in tools]

        def store() -> None:
            with unit_of_work(self.db) as uow:
                row = uow.session.get(ToolServer, ep.server_id)
                if row is not None and row.revision == ep.revision:
                    row.tools, row.listed_at, row.last_error = checked, utcnow(), ""
            self.invalidate()

        async def write() -> None:
            try:
                await anyio.to_thread.run_sync(store)
            except Exception:  # noqa: BLE001 (the next refresh lists again)
                log.exception("storing %s's new tool list failed", ep.name)

        asyncio.get_running_loop().create_task(write())

    def forget(self, server_id: str, workspace_id: str) -> None:
        if self.remote is not None:
            self.remote.forget(server_id)
        else:
            self._pool().forget(server_id)
        self.invalidate(workspace_id)

    def close(self) -> None:
        if self.remote is not None:
            self.remote.close()


def _checked(spec: dict[str, Any]) -> dict[str, Any]:
    problem = T.check_input_schema(spec.get("inputSchema"))
    return {**spec, "problem": problem} if problem else spec
