"""A workspace's MCP tools in the tool registry (core.tools.ToolSource), and the tool object a step calls.

The tools a server offers are those of its last listing, stored with the server's row (so every process
validates and runs with the same list) and replaced in this process at once when the server sends
notifications/tools/list_changed; the new list is written to the row by the next call or refresh.
"""

from __future__ import annotations

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
from services.toolservers.secrets import Secrets, SecretUnreadable

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
    def __init__(self, settings: Settings, db: Database, secrets: Secrets, clients: Clients | None = None):
        self.settings, self.db, self.secrets = settings, db, secrets
        self._server_allow = parse_entries(settings.outbound_allow)
        self.clients = clients or Clients(
            call_timeout=settings.mcp_call_timeout_s, connect_timeout=settings.mcp_connect_timeout_s
        )
        self.clients.on_tools = self._listed
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, dict[str, McpTool]]] = {}
        # tool lists a server announced (tools/list_changed) that its row does not hold yet: server id ->
        # (the row's revision then, tools)
        self._announced: dict[str, tuple[int, list[dict[str, Any]]]] = {}

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
        announced = self._announced.get(server.id)
        if announced is not None and announced[0] == server.revision:
            return announced[1]
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
        return [_checked(t) for t in self.clients.list_tools(self.endpoint(server))]

    def call(
        self, server: Server, tool: str, params: dict[str, Any], *, timeout: float, meta: dict[str, Any]
    ) -> dict[str, Any]:
        self.save_announced(server.id)
        try:
            return self.clients.call(self.endpoint(server), tool, params, timeout=timeout, meta=meta)
        except Unavailable as exc:
            raise ToolError(str(exc)) from exc

    def _listed(self, ep: Endpoint, tools: list[dict[str, Any]]) -> None:
        """On the MCP loop: a server said its list changed and was listed again."""
        self._announced[ep.server_id] = (ep.revision, [_checked(t) for t in tools])
        self.invalidate()

    def save_announced(self, server_id: str) -> None:
        """Write a list the server announced to its row (outside any transaction of the caller's)."""
        announced = self._announced.get(server_id)
        if announced is None:
            return
        with self.db.transaction() as session:
            row = session.get(ToolServer, server_id)
            if row is not None and row.revision == announced[0]:
                row.tools, row.listed_at, row.last_error = announced[1], utcnow(), ""
        self._announced.pop(server_id, None)

    def forget(self, server_id: str, workspace_id: str) -> None:
        self._announced.pop(server_id, None)
        self.clients.forget(server_id)
        self.invalidate(workspace_id)

    def close(self) -> None:
        self.clients.close()


def _checked(spec: dict[str, Any]) -> dict[str, Any]:
    problem = T.check_input_schema(spec.get("inputSchema"))
    return {**spec, "problem": problem} if problem else spec
