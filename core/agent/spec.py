"""What an `agent` step says (docs/api.md "Shapes", §6); its fields are checked by core.workflow.format's AgentStep
when a definition is saved, its tools against the workspace's by core.workflow.steps.

    {"id": "analyse", "type": "agent", "goal": "Summarise the open invoices", "tools": ["file.read", "echo"],
     "max_tool_iterations": 10, "context_budget_kb": 50, "model": null, "output_schema": null}

`tools` are names or globs (`sql.*`) of registered tools; `goal` is a template (`{{ vars.x }}`,
`{{ steps.fetch.output }}`) rendered when the step starts; `instructions` (optional) is added to the system
prompt. The tool names the LLM sees are made API-safe (`file.read` -> `file_read`: OpenAI accepts letters,
digits, `_` and `-` only); a call naming either form is understood.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

KEYS = ("goal", "tools", "max_tool_iterations", "context_budget_kb", "model", "output_schema", "instructions")
DEFAULT_MAX_TOOL_ITERATIONS = 10
DEFAULT_CONTEXT_BUDGET_KB = 50.0
MAX_GOAL = 20_000
_GLOB = re.compile(r"[*?\[]")
_API_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class AgentSpec:
    goal: str
    tools: tuple[str, ...] = ()
    max_tool_iterations: int = DEFAULT_MAX_TOOL_ITERATIONS
    context_budget_kb: float = DEFAULT_CONTEXT_BUDGET_KB
    model: str | None = None
    output_schema: dict[str, Any] | None = None
    instructions: str | None = None

    @property
    def budget_bytes(self) -> int:
        return max(1024, int(self.context_budget_kb * 1024))


def is_glob(pattern: str) -> bool:
    return bool(_GLOB.search(pattern))


def resolve_tools(patterns: Iterable[str], names: Iterable[str]) -> list[str]:
    """The registered tool names the patterns allow, in registry order."""
    patterns = list(patterns)
    return [n for n in names if any(n == p or (is_glob(p) and fnmatch.fnmatchcase(n, p)) for p in patterns)]


def api_names(tools: Iterable[str]) -> dict[str, str]:
    """API-safe name -> registered name, one to one (a clash gets a numbered suffix)."""
    out: dict[str, str] = {}
    for name in tools:
        safe = _API_NAME.sub("_", name)[:60] or "tool"
        candidate, n = safe, 2
        while candidate in out:
            candidate, n = f"{safe}_{n}", n + 1
        out[candidate] = name
    return out
