"""Coach's own tools (services/tools: echo, http.request, file.write ...) offered to agents through the gateway, as an
admin chose per workspace (default: none; docs/mcp-gateway.md "Built-in tools for agents").

An agent sees an exposed tool as `coach.<name>` (`coach.echo`, `coach.http.request`): `coach` is a reserved server
name (core/toolservers.RESERVED_NAMES), so no MCP server's `<server>.<tool>` can take or shadow it. That name is the
one the policies match (`match.tool: coach.echo`), the learning per tool counts and the audit records, like an MCP
tool's `<server>.<tool>`; its risk is the built-in's own, and its annotations say that risk. A call runs the
built-in as a workflow step runs it (core/execution/engine.run_tool): in the workspace's context (its outbound lists
for http.request, its sandbox directory for the file tools), bounded by COACH_MCP_CALL_TIMEOUT_S, no retries.
"""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy.orm import Session

from core import gateway as G
from core import toolservers as T
from core.errors import NotFound, ValidationFailed
from core.execution.engine import run_tool
from core.tools import Tool, ToolRegistry
from core.workflow.model import StepDef
from services.audit import service as audit
from services.models.gateway import GatewayBuiltins
from services.models.users import Workspace
from services.tools import is_builtin

PREFIX = "coach."  # the reserved server name `coach` and a dot


class ExposedTool:
    """A built-in as the gateway offers it to one workspace's agents (core.tools.Tool, plus MCP annotations)."""

    source = "builtin"

    def __init__(self, tool: Tool, workspace_id: str):
        self.tool, self.workspace_id = tool, workspace_id
        self.name = PREFIX + tool.name
        self.description = tool.description
        self.params_schema = tool.params_schema
        self.risk = tool.risk
        self.annotations = T.risk_annotations(tool.risk)


def choices(registry: ToolRegistry) -> dict[str, Tool]:
    """The built-in tools of this server an admin may expose, by name (a plugin's tools are not among them)."""
    return {name: tool for name, tool in registry.tools.items() if is_builtin(tool)}


def exposed(session: Session, workspace_id: str) -> list[str]:
    row = session.get(GatewayBuiltins, workspace_id)
    return list(row.tools or []) if row is not None else []


def tools_for(registry: ToolRegistry, session: Session, workspace_id: str) -> dict[str, ExposedTool]:
    """The workspace's exposed built-ins by the name its agents see (`coach.echo`)."""
    offered = choices(registry)
    tools = [ExposedTool(offered[name], workspace_id) for name in exposed(session, workspace_id) if name in offered]
    return {tool.name: tool for tool in tools}


def gateway_tools(svc, workspace_id: str, session: Session | None = None) -> dict[str, Any]:
    """Every tool the workspace's agents may call: its MCP servers' `<server>.<tool>` and its exposed `coach.<name>`
    (read in the caller's `session` when it has one)."""
    if session is None:
        with svc.db.read() as own_session:
            own = tools_for(svc.tools, own_session, workspace_id)
    else:
        own = tools_for(svc.tools, session, workspace_id)
    return {**svc.mcp.tools_for(workspace_id), **own}


def gateway_tool(svc, workspace_id: str, name: str) -> Any:
    """One tool the workspace's agents may call, by the name they see, or None: an MCP server's `<server>.<tool>` from
    the client pool (no database read: most calls), an exposed built-in `coach.<name>` from the workspace's choice."""
    if not name.startswith(PREFIX):
        return svc.mcp.tools_for(workspace_id).get(name)
    with svc.db.read() as session:
        return tools_for(svc.tools, session, workspace_id).get(name)


def registry(tools: ToolRegistry, session: Session, workspace_id: str) -> ToolRegistry:
    """The workspace's registry with its exposed built-ins under their gateway names: what a review of an agent's
    call (an edit's schema check, the policy's second look) finds the tool in."""
    own = tools_for(tools, session, workspace_id)
    base = tools.for_workspace(workspace_id)
    exposed: dict[str, Tool] = {name: found.tool for name, found in own.items()}
    return ToolRegistry({**base.tools, **exposed}, workspace_id=workspace_id) if own else base


def run(svc, tool: ExposedTool, arguments: dict[str, Any], idempotency: str) -> dict[str, Any]:
    """The built-in's output as an MCP CallToolResult (its JSON as text, and as structuredContent when an object);
    a failure (a ToolError, the timeout, a refused host) is an error result with the tool's own message."""
    step = StepDef(id="gateway", type="action", tool=tool.tool.name, timeout_s=svc.settings.mcp_call_timeout_s)
    outcome = run_tool(step, tool.tool, arguments, workspace_id=tool.workspace_id, idempotency_key=idempotency)
    if not outcome.ok:
        return G.error_result(f"{tool.name}: {outcome.error}", decision="tool_error")
    output = outcome.output
    text = output if isinstance(output, str) else orjson.dumps(output, default=str).decode()
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if isinstance(output, dict):
        result["structuredContent"] = output
    return result


# -- the admin's choice (GET/PUT /api/workspace/gateway) --------------------------------------------------------------


def view(session: Session, registry_: ToolRegistry, workspace_id: str) -> dict[str, Any]:
    offered = choices(registry_)
    chosen = [name for name in exposed(session, workspace_id) if name in offered]
    return {
        "builtin_tools": chosen,
        "available": [
            {
                "name": name,
                "gateway_name": PREFIX + name,
                "description": tool.description,
                "risk": tool.risk,
                "exposed": name in chosen,
            }
            for name, tool in sorted(offered.items())
        ],
    }


def set_exposed(
    session: Session, registry_: ToolRegistry, workspace_id: str, names: list[str], actor: str
) -> dict[str, Any]:
    """Replace the workspace's exposed built-ins (an unknown name: 422 naming it), audited."""
    offered = choices(registry_)
    unknown = [name for name in names if name not in offered]
    if unknown:
        raise ValidationFailed(
            f"unknown built-in tool {unknown[0]!r}",
            details={
                "builtin_tools": [
                    f"{name!r} is not a built-in tool of this server (one of: {', '.join(sorted(offered))})"
                    for name in unknown
                ]
            },
        )
    if session.get(Workspace, workspace_id) is None:
        raise NotFound(f"workspace {workspace_id} not found")
    chosen = sorted(set(names))
    before = exposed(session, workspace_id)
    row = session.get(GatewayBuiltins, workspace_id)
    if row is None:
        session.add(GatewayBuiltins(workspace_id=workspace_id, tools=chosen, updated_by=actor))
    else:
        row.tools, row.updated_by = chosen, actor
    session.flush()
    audit.record(
        session,
        workspace_id,
        actor,
        "gateway_builtins",
        target_type="workspace",
        target_id=workspace_id,
        before={"builtin_tools": before},
        after={"builtin_tools": chosen},
        result="ok",
    )
    return view(session, registry_, workspace_id)
