"""A policy rule as written (the API's shape, docs/api.md) and as compiled: checked once, matched many times.

A rule is `match` → `effect` with a `reason`, an `order`, and a `scope`: the whole workspace, one workflow, one
user, or one user within one workflow. Every `match` key is optional and all the keys given must hold:

| key | holds when |
|---|---|
| `tool` | the tool's name matches the glob, or one of a list of globs (core.policy.helpers) |
| `step_type` | the step's type is this one, or one of a list |
| `risk` | the tool's risk (`read`, `write`, `external`, `destructive`) is one of the list |
| `workflow_id`, `user`, `agent_step` | the call's workflow, the user who started the execution, the agent step making
the call: this one or one of a list (`agent_step: "*"`: any agent step) |
| `agent` | the agent identity calling through the MCP gateway (its name): this one or one of a list (`"*"`: any agent;
a call of a workflow's step has no agent and never matches) |
| `sql` | `not_read`: the call's `query` param is not a read-only statement (core.policy.sql); `read`: it is |
| `host_not_in` | the call's `url` param's host is not on the list |
| `path_outside` | the call's `path` param lies outside the folder |
| `params` | the predicate, an expression in the project's condition language, is true |

A predicate is a sandboxed Jinja expression (the language of step conditions, core/templating.py, metered by
core/budget.py); it sees `params`, `tool`, `risk`, `step_type`, `workflow_id`, `user`, `agent_step` and `agent`, e.g.
`params.amount > 1000`, `params.method in ['POST', 'DELETE']`, `'prod' in params.url`,
`params.to is defined and not params.to.endswith('@example.com')`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jinja2 import TemplateError

from core import templating
from core.errors import ValidationFailed
from core.policy import helpers
from core.policy.helpers import HelperError
from core.tools import RISKS
from core.workflow.model import STEP_TYPES

EFFECTS = ("allow", "require_review", "deny", "confirm")
# `confirm`: ask the person at the agent (an MCP elicitation, services/gateway/confirm.py); what applies instead where
# nobody can be asked (a client without elicitation, a workflow's call): the rule's `fallback`
FALLBACKS = ("require_review", "deny")
DEFAULT_FALLBACK = "require_review"
DEFAULT_EFFECTS = ("allow", "require_review", "deny")  # a workspace default names no rule to confirm by
MATCH_KEYS = (
    "tool",
    "step_type",
    "risk",
    "workflow_id",
    "user",
    "agent_step",
    "agent",
    "sql",
    "host_not_in",
    "path_outside",
    "params",
)
SCOPE_KEYS = ("workflow_id", "user")
SQL_HELPERS = ("not_read", "read")
PREDICATE_NAMES = frozenset({"params", "tool", "risk", "step_type", "workflow_id", "user", "agent_step", "agent"})
MAX_PREDICATE = 2000
MAX_LIST = 200
# scope → specificity: the most specific scope that matched wins (docs/design.md#concepts)
SPECIFICITY = {"workspace": 0, "workflow": 1, "user": 2, "user+workflow": 3}


@dataclass(frozen=True)
class CompiledRule:
    """A rule ready to match: everything checked, globs and predicate compiled."""

    id: str
    name: str
    order: int
    effect: str
    reason: str
    scope_workflow_id: str | None
    scope_user: str | None
    tool_names: frozenset[str] | None  # exact names (globs without wildcards)
    tool_patterns: tuple[re.Pattern, ...]  # the other globs
    step_types: frozenset[str] | None
    risks: frozenset[str] | None
    workflow_ids: frozenset[str] | None
    users: frozenset[str] | None
    agent_steps: tuple[re.Pattern | str, ...] | None
    agents: frozenset[str] | None = None  # gateway agent identities' names ("*": any)
    checks: tuple[tuple[str, Callable[[dict], bool]], ...] = field(default=())  # helpers: (key, test of params)
    predicate: str | None = None
    revision: int = 0
    fallback: str | None = None  # a confirm rule's: what applies where nobody at the agent can be asked

    @property
    def scope(self) -> str:
        if self.scope_user and self.scope_workflow_id:
            return "user+workflow"
        return "user" if self.scope_user else "workflow" if self.scope_workflow_id else "workspace"

    @property
    def specificity(self) -> int:
        return SPECIFICITY[self.scope]

    def matches_tool(self, tool: str) -> bool:
        if self.tool_names is None and not self.tool_patterns:
            return True
        return (self.tool_names is not None and tool in self.tool_names) or any(
            p.match(tool) for p in self.tool_patterns
        )


class _Errors(dict):
    def add(self, path: str, message: str) -> None:
        self.setdefault(path, []).append(message)


def _strings(value: Any, path: str, errors: _Errors, allowed: tuple[str, ...] | None = None) -> frozenset[str] | None:
    """A string or a list of strings (optionally from `allowed`); None when absent."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if (
        not isinstance(items, list)
        or not items
        or len(items) > MAX_LIST
        or not all(isinstance(v, str) and v for v in items)
    ):
        errors.add(path, f"must be a non-empty string or a list of 1 to {MAX_LIST} non-empty strings")
        return None
    if allowed is not None:
        unknown = [v for v in items if v not in allowed]
        if unknown:
            errors.add(path, f"unknown {', '.join(map(repr, unknown))}; one of {list(allowed)}")
            return None
    return frozenset(items)


def compile_rule(data: dict[str, Any], *, rule_id: str = "", revision: int = 0) -> CompiledRule:
    """Check a rule as written and compile it; ValidationFailed naming every wrong field (`match.params` …)."""
    errors = _Errors()
    if not isinstance(data, dict):
        raise ValidationFailed("a policy rule must be an object", {"(body)": ["must be an object"]})
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        errors.add("name", "must be a non-empty string of at most 200 characters")
    order = data.get("order", 0)
    if not isinstance(order, int) or isinstance(order, bool) or not -(10**9) <= order <= 10**9:
        errors.add("order", "must be an integer")
    effect = data.get("effect")
    if effect not in EFFECTS:
        errors.add("effect", f"must be one of {list(EFFECTS)}")
    fallback = data.get("fallback")
    if effect == "confirm":
        if fallback is None:
            fallback = DEFAULT_FALLBACK
        elif fallback not in FALLBACKS:
            errors.add(
                "fallback",
                f"must be one of {list(FALLBACKS)} (what applies when the agent's client cannot ask its user); "
                f"got {fallback!r}",
            )
    elif fallback is not None:
        errors.add("fallback", "only a rule whose effect is confirm has a fallback; leave it out or null")
    reason = data.get("reason") or ""
    if not isinstance(reason, str) or len(reason) > 2000:
        errors.add("reason", "must be a string of at most 2000 characters")
    scope = data.get("scope") or {}
    if not isinstance(scope, dict):
        errors.add("scope", "must be an object {workflow_id, user}")
        scope = {}
    for key in scope:
        if key not in SCOPE_KEYS:
            errors.add(f"scope.{key}", f"unknown scope key; one of {list(SCOPE_KEYS)}")
    for key in SCOPE_KEYS:
        if scope.get(key) is not None and (not isinstance(scope[key], str) or not scope[key]):
            errors.add(f"scope.{key}", "must be null or a non-empty string")
    match = data.get("match") or {}
    if not isinstance(match, dict):
        errors.add("match", "must be an object")
        match = {}
    compiled = _compile_match(match, errors)
    if errors:
        raise ValidationFailed("the policy rule is not valid", dict(errors))
    return CompiledRule(
        id=rule_id,
        name=name.strip(),
        order=order,
        effect=effect,
        reason=reason,
        scope_workflow_id=scope.get("workflow_id"),
        scope_user=scope.get("user"),
        revision=revision,
        fallback=fallback if effect == "confirm" else None,
        **compiled,
    )


def _compile_match(match: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    for key in match:
        if key not in MATCH_KEYS:
            errors.add(f"match.{key}", f"unknown match key; one of {list(MATCH_KEYS)}")
    out: dict[str, Any] = {"tool_names": None, "tool_patterns": ()}
    tools = _strings(match.get("tool"), "match.tool", errors)
    if tools:
        names, patterns = set(), []
        for glob in sorted(tools):
            try:
                exact, pattern = helpers.compile_glob(glob)
            except HelperError as exc:
                errors.add("match.tool", str(exc))
                continue
            if exact is not None:
                names.add(exact)
            else:
                patterns.append(pattern)
        out["tool_names"], out["tool_patterns"] = (frozenset(names) if names else None), tuple(patterns)
    out["step_types"] = _strings(match.get("step_type"), "match.step_type", errors, STEP_TYPES)
    out["risks"] = _strings(match.get("risk"), "match.risk", errors, RISKS)
    out["workflow_ids"] = _strings(match.get("workflow_id"), "match.workflow_id", errors)
    out["users"] = _strings(match.get("user"), "match.user", errors)
    agents = _strings(match.get("agent_step"), "match.agent_step", errors)
    out["agent_steps"] = tuple(sorted(agents)) if agents else None
    out["agents"] = _strings(match.get("agent"), "match.agent", errors)
    out["checks"] = tuple(_helper_checks(match, errors))
    out["predicate"] = _predicate(match.get("params"), errors)
    return out


def _helper_checks(match: dict[str, Any], errors: _Errors) -> list[tuple[str, Callable[[dict], bool]]]:
    from core.policy import sql

    checks: list[tuple[str, Callable[[dict], bool]]] = []
    wanted = match.get("sql")
    if wanted is not None:
        if wanted not in SQL_HELPERS:
            errors.add("match.sql", f"must be one of {list(SQL_HELPERS)}")
        else:
            # no `query` param: the helper does not apply (no match); a query that is not text: not a read
            reads = wanted == "read"
            checks.append(("sql", lambda p: "query" in p and (sql.classify(p["query"]) is None) == reads))
    hosts = match.get("host_not_in")
    if hosts is not None:
        if not isinstance(hosts, list) or not hosts or len(hosts) > MAX_LIST:
            errors.add("match.host_not_in", f"must be a list of 1 to {MAX_LIST} host names, `*.suffix` or `*`")
        else:
            try:
                entries = tuple(helpers.normalise_host_entry(h) for h in hosts)
                checks.append(
                    (
                        "host_not_in",
                        lambda p: "url" in p and not helpers.host_listed(helpers.url_host(p["url"]), entries),
                    )
                )
            except HelperError as exc:
                errors.add("match.host_not_in", str(exc))
    folder = match.get("path_outside")
    if folder is not None:
        try:
            norm = helpers.normalise_folder(folder)
            checks.append(("path_outside", lambda p: "path" in p and helpers.path_outside(p["path"], norm)))
        except HelperError as exc:
            errors.add("match.path_outside", str(exc))
    return checks


def _predicate(source: Any, errors: _Errors) -> str | None:
    if source is None:
        return None
    if not isinstance(source, str) or not source.strip() or len(source) > MAX_PREDICATE:
        errors.add("match.params", f"must be a non-empty expression of at most {MAX_PREDICATE} characters")
        return None
    try:
        names = templating.expression_names(source)
    except TemplateError as exc:
        errors.add("match.params", f"does not compile: {exc}")
        return None
    unknown = sorted(names - PREDICATE_NAMES)
    if unknown:
        errors.add(
            "match.params",
            f"unknown name(s) {', '.join(unknown)}; a predicate sees {', '.join(sorted(PREDICATE_NAMES))}",
        )
        return None
    return source


# -- the workspace default ------------------------------------------------------------------------------------

DEFAULTS = {"read": "allow", "write": "allow", "external": "allow", "destructive": "require_review"}


def check_defaults(data: Any) -> dict[str, str]:
    """The workspace default, one effect per tool risk; ValidationFailed naming the wrong keys. Keys left out
    keep the built-in default (`require_review` for destructive tools, `allow` for the others)."""
    if not isinstance(data, dict):
        raise ValidationFailed("the default must be an object", {"(body)": ["must be an object {risk: effect}"]})
    errors = _Errors()
    for key, value in data.items():
        if key not in RISKS:
            errors.add(key, f"unknown risk; one of {list(RISKS)}")
        elif value not in DEFAULT_EFFECTS:
            errors.add(
                key,
                f"must be one of {list(DEFAULT_EFFECTS)}"
                + (" (confirm is a rule's effect: it needs a rule's match and fallback)" if value == "confirm" else ""),
            )
    if errors:
        raise ValidationFailed("the policy default is not valid", dict(errors))
    return {**DEFAULTS, **data}
