"""A workspace's MCP servers: create, change, delete, refresh (list their tools), audited. Admins only (api/).

Headers (a bearer token among them) are stored encrypted and never returned: a view names them only.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import toolservers as T
from core.errors import Conflict, ValidationFailed
from core.tools import RISKS
from services.audit import service as audit
from services.models.toolservers import ToolServer
from services.orm import in_workspace, utcnow
from services.toolservers.connection import Unavailable
from services.toolservers.source import McpSource, Server, stdio_allowed
from services.unit_of_work import unit_of_work


def list_servers(session: Session, workspace_id: str) -> list[ToolServer]:
    return list(
        session.scalars(
            select(ToolServer).where(ToolServer.workspace_id == workspace_id).order_by(ToolServer.name)
        ).all()
    )


def get(session: Session, workspace_id: str, server_id: str) -> ToolServer:
    return in_workspace(session, ToolServer, workspace_id, server_id, "tool server")


def _check(data: dict[str, Any], source: McpSource) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    problem = T.check_server_name(data.get("name"))
    if problem:
        errors["name"] = [problem]
    if data["transport"] == "http":
        url = data.get("url") or ""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            errors["url"] = ["an http(s) URL of the server's MCP endpoint is required, e.g. https://host/mcp"]
        if data.get("command"):
            errors["command"] = ["only a stdio server has a command"]
    else:
        command = data.get("command") or []
        if not command:
            errors["command"] = ["a stdio server needs its command line (a list: program and arguments)"]
        elif not stdio_allowed(command, source.settings.mcp_stdio_allow):
            allowed = ", ".join(source.settings.mcp_stdio_allow) or "nothing (COACH_MCP_STDIO_ALLOW is empty)"
            errors["command"] = [
                f"not allowed: this server's configuration allows stdio commands starting with {allowed}"
            ]
        if data.get("url"):
            errors["url"] = ["only an http server has a URL"]
        if data.get("headers") or data.get("bearer_token"):
            errors["headers"] = ["headers and tokens are for http servers"]
    for tool, risk in (data.get("risk_overrides") or {}).items():
        if risk not in RISKS:
            errors.setdefault(f"risk_overrides.{tool}", []).append(f"must be one of {list(RISKS)}")
    return errors


def _sealed(data: dict[str, Any], source: McpSource) -> str | None:
    """The encrypted headers to store, or None when the request leaves them as they are."""
    if "headers" not in data and "bearer_token" not in data:
        return None
    headers = dict(data.get("headers") or {})
    if data.get("bearer_token"):
        headers["Authorization"] = f"Bearer {data['bearer_token']}"
    return source.secrets.seal({"headers": headers}) if headers else ""


def _unique(session: Session, workspace_id: str, name: str, server_id: str | None = None) -> None:
    found = session.scalar(select(ToolServer).where(ToolServer.workspace_id == workspace_id, ToolServer.name == name))
    if found is not None and found.id != server_id:
        raise Conflict(f"this workspace already has a tool server named {name!r}", details={"name": [name]})


def create(session: Session, source: McpSource, workspace_id: str, data: dict[str, Any], actor: str) -> ToolServer:
    errors = _check(data, source)
    if errors:
        raise ValidationFailed("the tool server is not valid", details=errors)
    _unique(session, workspace_id, data["name"])
    row = ToolServer(
        workspace_id=workspace_id,
        name=data["name"],
        description=data.get("description") or "",
        transport=data["transport"],
        url=data.get("url") or "",
        command=list(data.get("command") or []),
        secret=_sealed(data, source) or "",
        trusted=bool(data.get("trusted")),
        enabled=data.get("enabled", True),
        risk_overrides=dict(data.get("risk_overrides") or {}),
        tools=[],
        revision=1,
        created_by=actor,
    )
    session.add(row)
    session.flush()
    audit.record(
        session,
        workspace_id,
        actor,
        "tool_server_create",
        target_type="tool_server",
        target_id=row.id,
        after=_audited(row),
    )
    source.invalidate(workspace_id)
    return row


def replace(
    session: Session, source: McpSource, workspace_id: str, server_id: str, data: dict[str, Any], actor: str
) -> ToolServer:
    row = get(session, workspace_id, server_id)
    errors = _check(data, source)
    if errors:
        raise ValidationFailed("the tool server is not valid", details=errors)
    _unique(session, workspace_id, data["name"], row.id)
    before = _audited(row)
    sealed = _sealed(data, source)
    if data["transport"] != row.transport and sealed is None:
        sealed = ""
    row.name, row.description, row.transport = data["name"], data.get("description") or "", data["transport"]
    row.url, row.command = data.get("url") or "", list(data.get("command") or [])
    if sealed is not None:
        row.secret = sealed
    row.trusted, row.enabled = bool(data.get("trusted")), data.get("enabled", True)
    row.risk_overrides = dict(data.get("risk_overrides") or {})
    row.revision = (row.revision or 0) + 1
    row.updated_at = utcnow()
    audit.record(
        session,
        workspace_id,
        actor,
        "tool_server_update",
        target_type="tool_server",
        target_id=row.id,
        before=before,
        after=_audited(row),
    )
    session.flush()
    source.forget(row.id, workspace_id)
    return row


def delete(session: Session, source: McpSource, workspace_id: str, server_id: str, actor: str) -> None:
    row = get(session, workspace_id, server_id)
    audit.record(
        session,
        workspace_id,
        actor,
        "tool_server_delete",
        target_type="tool_server",
        target_id=row.id,
        before=_audited(row),
    )
    session.delete(row)
    session.flush()
    source.forget(server_id, workspace_id)


def refresh(db, source: McpSource, workspace_id: str, server_id: str, actor: str) -> ToolServer:
    """List the server's tools now (no transaction is held meanwhile) and store them. A server that cannot be
    reached keeps its last list; the error is stored and returned with the view."""
    with db.read() as session:
        server = Server.of(get(session, workspace_id, server_id))
    try:
        tools, error = source.list_tools(server), ""
    except Unavailable as exc:
        tools, error = None, str(exc)
    with unit_of_work(db) as uow:
        session = uow.session
        row = get(session, workspace_id, server_id)
        if row.revision == server.revision:
            if tools is not None:
                row.tools, row.listed_at = tools, utcnow()
            row.last_error = error
        audit.record(
            session,
            workspace_id,
            actor,
            "tool_server_refresh",
            target_type="tool_server",
            target_id=row.id,
            after={"tools": [t["name"] for t in (tools or [])]},
            result="ok" if not error else f"failed: {error[:200]}",
        )
        session.flush()
        source.forget(server_id, workspace_id) if tools is not None else source.invalidate(workspace_id)
        return row


def _audited(row: ToolServer) -> dict[str, Any]:
    return {
        k: v
        for k, v in view(row, None).items()
        if k in ("name", "transport", "url", "command", "trusted", "enabled", "risk_overrides", "header_names")
    }


def view(row: ToolServer, source: McpSource | None) -> dict[str, Any]:
    header_names: list[str] = []
    if source is not None and row.secret:
        try:
            header_names = sorted(source.secrets.open(row.secret).get("headers", {}))
        except Exception:  # noqa: BLE001 (an unreadable secret is reported by the server's status)
            header_names = ["(unreadable: enter the headers again)"]
    server = Server.of(row)
    listing = source.listing(server) if source is not None else list(row.tools or [])
    tools = []
    for spec in listing:
        risk = T.effective_risk(
            spec.get("annotations"), trusted=server.trusted, override=server.risk_overrides.get(spec["name"])
        )
        tools.append(
            {
                "name": spec["name"],
                "full_name": T.full_name(row.name, spec["name"]),
                "description": spec.get("description") or "",
                "input_schema": spec.get("inputSchema"),
                "annotations": spec.get("annotations") or {},
                "annotated_risk": T.annotated_risk(spec.get("annotations")),
                "risk": risk,
                "problem": spec.get("problem"),
            }
        )
    return {
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "transport": row.transport,
        "url": row.url,
        "command": list(row.command or []),
        "header_names": header_names,
        "has_secret": bool(row.secret),
        "trusted": row.trusted,
        "enabled": row.enabled,
        "risk_overrides": dict(row.risk_overrides or {}),
        "tools": tools,
        "listed_at": row.listed_at,
        "last_error": row.last_error,
        "revision": row.revision,
        "created_by": row.created_by,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }
