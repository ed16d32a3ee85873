"""What an `agent` step says (docs/api.md "Shapes", §6), checked when a definition is saved.

    {"id": "analyse", "type": "agent", "goal": "Summarise the open invoices", "tools": ["file.read", "echo"],
     "max_tool_iterations": 10, "context_budget_kb": 50, "model": null, "output_schema": null}

`tools` are names or globs (`sql.*`) of registered tools; `goal` is a template (`{{ vars.x }}`,
`{{ steps.fetch.output }}`) rendered when the step starts; `instructions` (optional) is added to the system
prompt. The tool names the LLM sees are made API-safe (`file.read` -> `file_read`: OpenAI accepts letters,
digits, `_` and `-` only); a call naming either form is understood.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.schema import user_schema_problems

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


def parse_spec(
    raw: dict[str, Any], path: str, tool_names: list[str] | None
) -> tuple[AgentSpec | None, dict[str, list[str]]]:
    """The step's AgentSpec, and every problem by field path. `tool_names` None: the tools are not checked (a stored
    definition read again, whose tools were checked when it was saved; a workspace's MCP tools come and go)."""
    problems: dict[str, list[str]] = {}

    def bad(key: str, message: str) -> None:
        problems.setdefault(f"{path}.{key}", []).append(message)

    goal = raw.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        bad("goal", "is required for an agent step: what the LLM must do")
        goal = ""
    elif len(goal) > MAX_GOAL:
        bad("goal", f"must be at most {MAX_GOAL:,} characters")
    tools = raw.get("tools", [])
    if isinstance(tools, str):
        tools = [tools]
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        bad("tools", 'must be a list of tool names or globs (e.g. ["file.read", "sql.*"])')
        tools = []
    for i, pattern in enumerate(tools):
        if tool_names is not None and not resolve_tools([pattern], tool_names):
            what = "matches no registered tool" if is_glob(pattern) else "is not a registered tool"
            bad(f"tools[{i}]", f"{pattern!r} {what}; known tools: {tool_names}")
    iterations = raw.get("max_tool_iterations", DEFAULT_MAX_TOOL_ITERATIONS)
    if isinstance(iterations, bool) or not isinstance(iterations, int) or not 1 <= iterations <= 1000:
        bad("max_tool_iterations", "must be an integer from 1 to 1000")
        iterations = DEFAULT_MAX_TOOL_ITERATIONS
    budget = raw.get("context_budget_kb", DEFAULT_CONTEXT_BUDGET_KB)
    if (
        isinstance(budget, bool)
        or not isinstance(budget, (int, float))
        or not math.isfinite(budget)
        or not 1 <= budget <= 100_000
    ):
        bad("context_budget_kb", "must be a number of kilobytes from 1 to 100000")
        budget = DEFAULT_CONTEXT_BUDGET_KB
    model = raw.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip() or len(model) > 200):
        bad("model", "must be a model name (or null: COACH_LLM_MODEL)")
        model = None
    schema = raw.get("output_schema")
    if schema is not None:
        for problem in user_schema_problems(schema):
            bad("output_schema", problem)
    instructions = raw.get("instructions")
    if instructions is not None and (not isinstance(instructions, str) or len(instructions) > MAX_GOAL):
        bad("instructions", f"must be text of at most {MAX_GOAL:,} characters")
        instructions = None
    if problems:
        return None, problems
    return AgentSpec(
        goal=goal,
        tools=tuple(tools),
        max_tool_iterations=iterations,
        context_budget_kb=float(budget),
        model=model,
        output_schema=schema,
        instructions=instructions,
    ), problems
