"""What the core knows about tools: a name, a JSON Schema for params, a risk class, and `run`.

Implementations live in services/tools; the core only calls them through this interface.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from core import schema

RISKS = ("read", "write", "external", "destructive")


@dataclass
class ToolContext:
    """What a running tool may know: its deadline (seconds, monotonic clock), the execution it serves and the
    workspace (tenant) it runs for. Tools that touch a tenant's things (files, SQL connections, outbound hosts)
    refuse to run without a workspace rather than fall back to something shared.

    `idempotency_key` names this run of the step (core.execution.engine.call_key): a call made again for the same
    run (the step's retries, or a re-run after a crash took the server down while the tool ran) carries the same
    key, a new run another. A tool whose effect must happen once hands it to the receiver (http.request sends it
    as the Idempotency-Key header) or records it with the effect and checks it first (README "Effects").
    `attempt`: the engine's try of this run, 1 for the first (its retries count on)."""

    execution_id: str = ""
    step_id: str = ""
    deadline: float | None = None
    workspace_id: str = ""
    idempotency_key: str = ""
    attempt: int = 1

    def remaining(self, default: float = 300.0) -> float:
        if self.deadline is None:
            return default
        return max(0.0, self.deadline - time.monotonic())


class ToolError(Exception):
    """A tool failed in a way worth reporting to the step (message is shown to users)."""


def require_workspace(ctx: ToolContext, tool: str) -> str:
    """The workspace a tenant-scoped tool runs for, or a ToolError: never a shared default."""
    workspace = (ctx.workspace_id or "").strip()
    if not workspace:
        raise ToolError(f"{tool} needs a workspace to run for, and was called without one")
    return workspace


class Tool(Protocol):
    name: str
    description: str
    params_schema: dict[str, Any]
    risk: str

    def run(self, params: dict[str, Any], ctx: ToolContext) -> Any: ...


class ToolSource(Protocol):
    """Tools that belong to one workspace (its MCP servers' tools): only that workspace's registry shows them."""

    def tools_for(self, workspace_id: str) -> Mapping[str, Tool]: ...


@dataclass
class ToolRegistry:
    """The server's tools (built in, entry points) plus, through `sources`, each workspace's own.

    `for_workspace(id)` is the registry a workspace sees: what validates its definitions, runs its steps and
    tells its policies a tool's risk. The server-wide registry alone knows no workspace's tools."""

    tools: dict[str, Tool] = field(default_factory=dict)
    sources: list[ToolSource] = field(default_factory=list)
    workspace_id: str = ""
    # a definition read back from storage was checked when saved: a tool gone since fails the step that
    # calls it ("tool ... is not registered"), not the loading of the whole definition
    accept_unknown: bool = False

    def lenient(self) -> ToolRegistry:
        return ToolRegistry(self.tools, self.sources, self.workspace_id, accept_unknown=True)

    def add_source(self, source: ToolSource) -> None:
        self.sources.append(source)

    def for_workspace(self, workspace_id: str | None) -> ToolRegistry:
        if not workspace_id or not self.sources:
            return self
        extra: dict[str, Tool] = {}
        for source in self.sources:
            for name, tool in source.tools_for(workspace_id).items():
                if name not in self.tools:  # a workspace's tool never shadows the server's
                    extra[name] = tool
        if not extra:
            return self
        return ToolRegistry({**self.tools, **extra}, workspace_id=workspace_id)

    def register(self, tool: Tool) -> None:
        if tool.risk not in RISKS:
            raise ValueError(f"tool {tool.name}: risk must be one of {RISKS}")
        schema.check_schema(tool.params_schema)
        self.tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def names(self) -> list[str]:
        return sorted(self.tools)

    def __contains__(self, name: str) -> bool:
        return name in self.tools or self.accept_unknown


def schema_errors(params_schema: dict[str, Any], params: Any) -> dict[str, list[str]]:
    """Validate params against a tool's JSON Schema; return {field path: [messages]} (empty when valid)."""
    errors: dict[str, list[str]] = {}
    for err in schema.errors(params_schema, params):
        path = ".".join(str(p) for p in err.absolute_path) or "(params)"
        errors.setdefault(path, []).append(err.message)
    return errors
