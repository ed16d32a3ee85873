"""Evaluating a workspace's rules for one tool call: precedence, the default, and the explanation.

Precedence (docs/design.md#concepts): among the rules that match, the one of the most specific scope wins
(user+workflow > user > workflow > workspace), then the lowest `order`, then the oldest (ids sort by creation).
No rule matched: the workspace default for the tool's risk (a tool of unknown risk is taken as destructive).

Evaluation never raises. A rule whose helper or predicate fails (an error, a predicate out of its budget) is
taken as matched with effect `require_review`, and its entry in the explanation says why (fail closed). All the
predicates of one evaluation share one budget (core/budget.py), so 200 slow predicates cannot add up.

The effect needs the rules only up to the first match in precedence order; the rules that matched but lost are
found when the explanation is asked for (Verdict.matched, Verdict.to_dict()).

Speed: a RuleSet is compiled once per policy revision; it keeps, per tool name, the rules whose `tool` globs
can match it, in precedence order, so a call only looks at those (and cheap keys such as `step_type` are checked
before any helper or predicate runs).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core import budget, templating
from core.budget import BudgetExceeded
from core.policy.rules import DEFAULTS, CompiledRule

_CANDIDATE_CACHE = 4096  # tool names remembered per rule set
NO_AGENT_TO_ASK = "a confirm rule asks the person at an MCP gateway agent; this call has none, so its fallback applies"


@dataclass(frozen=True)
class Call:
    """One tool call as the policy sees it. `risk` is the registered tool's (None: unknown tool)."""

    tool: str
    params: dict[str, Any] = field(default_factory=dict)
    step_type: str = "action"
    risk: str | None = None
    workflow_id: str | None = None
    user: str | None = None
    agent_step: str | None = None
    agent: str | None = None  # the gateway's agent identity (its name); None for a workflow's call

    def context(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "tool": self.tool,
            "risk": self.risk,
            "step_type": self.step_type,
            "workflow_id": self.workflow_id,
            "user": self.user,
            "agent_step": self.agent_step,
            "agent": self.agent,
        }


@dataclass(frozen=True)
class Matched:
    rule: CompiledRule
    effect: str  # the rule's, or require_review when it failed (fail closed)
    error: str | None = None
    note: str | None = None  # a confirm rule on a call with no agent to ask: why its fallback applies


class Verdict:
    """The effect on one call, the rule that decided it (None: the workspace default), and the explanation.

    The effect needs only the rules up to the first that matches, in precedence order: the runner pays for no
    more. The rules after it that match as well (`matched`, "matched but lost") are found when first asked for,
    by `to_dict()` or `matched`, within a budget of their own."""

    __slots__ = ("effect", "default", "rule", "risk", "revision", "error", "_winner", "_pending", "_call", "_matched")

    def __init__(
        self,
        effect: str,
        default: bool,
        winner: Matched | None,
        risk: str | None,
        revision: int = 0,
        pending: tuple[CompiledRule, ...] = (),
        call: Call | None = None,
    ):
        self.effect, self.default, self.risk, self.revision = effect, default, risk, revision
        self.rule = winner.rule if winner else None
        self.error = winner.error if winner else None  # the deciding rule failed: taken as require_review
        self._winner, self._pending, self._call = winner, pending, call
        self._matched: tuple[Matched, ...] | None = None if pending else ((winner,) if winner else ())

    @property
    def fallback(self) -> str | None:
        """A confirm verdict's fallback: what applies when the agent's client cannot ask its user."""
        return (self.rule.fallback or "require_review") if self.effect == "confirm" and self.rule else None

    @property
    def matched(self) -> tuple[Matched, ...]:
        """Every rule that matched, the deciding one first."""
        if self._matched is None:
            params = self._call.params if isinstance(self._call.params, dict) else {}
            with budget.metered("explaining a policy verdict"):
                found = [m for m in (_match(r, self._call, params) for r in self._pending) if m is not None]
            self._matched = (self._winner, *found)
        return self._matched

    def to_dict(self) -> dict[str, Any]:
        """The explanation (docs/api.md, the answer of POST /api/policies/evaluate)."""
        if self.rule is None:
            risk = self.risk or "destructive"
            rule = {
                "id": None,
                "name": "workspace default",
                "scope": "workspace",
                "reason": f"no rule matched; the workspace default for {risk} tools"
                f"{'' if self.risk else ' (the tool is unknown)'} is {self.effect}",
            }
        else:
            rule = _rule_view(self.rule)
            if self.error:
                rule["error"] = self.error
            if self._winner is not None and self._winner.note:
                rule["note"] = self._winner.note
        lost = [
            {
                **_rule_view(m.rule),
                "effect": m.effect,
                "lost_because": _lost_because(m.rule, self.rule),
                **({"error": m.error} if m.error else {}),
            }
            for m in self.matched[1:]
        ]
        return {
            "effect": self.effect,
            "default": self.default,
            **({"fallback": self.fallback} if self.effect == "confirm" else {}),
            "rule": rule,
            "matched": lost,
            "risk": self.risk,
            "revision": self.revision,
        }


def _rule_view(rule: CompiledRule) -> dict[str, Any]:
    view = {"id": rule.id, "name": rule.name, "scope": rule.scope, "order": rule.order, "reason": rule.reason}
    if rule.fallback is not None:
        view["fallback"] = rule.fallback
    return view


def _lost_because(loser: CompiledRule, winner: CompiledRule) -> str:
    if loser.specificity < winner.specificity:
        return "less specific scope"
    if loser.order > winner.order:
        return "later order"
    return "same scope and order, created later"


def precedence(rule: CompiledRule) -> tuple:
    return (-rule.specificity, rule.order, rule.id)


class RuleSet:
    """A workspace's enabled rules at one revision, compiled, in precedence order, with the default."""

    def __init__(self, rules: Iterable[CompiledRule], defaults: dict[str, str] | None = None, revision: int = 0):
        self.rules = tuple(sorted(rules, key=precedence))
        self.defaults = {**DEFAULTS, **(defaults or {})}
        self.revision = revision
        self._by_tool: dict[str, tuple[CompiledRule, ...]] = {}
        self._lock = threading.Lock()

    def candidates(self, tool: str) -> tuple[CompiledRule, ...]:
        found = self._by_tool.get(tool)
        if found is None:
            found = tuple(r for r in self.rules if r.matches_tool(tool))
            with self._lock:
                if len(self._by_tool) >= _CANDIDATE_CACHE:
                    self._by_tool.clear()
                self._by_tool[tool] = found
        return found

    def default_for(self, risk: str | None) -> str:
        return self.defaults.get(risk or "destructive", self.defaults["destructive"])

    def evaluate(self, call: Call) -> Verdict:
        params = call.params if isinstance(call.params, dict) else {}
        candidates = self.candidates(call.tool)
        with budget.metered("evaluating policy predicates"):
            for index, rule in enumerate(candidates):
                found = _match(rule, call, params)
                if found is not None:  # candidates are in precedence order: the first match decides
                    return Verdict(found.effect, False, found, call.risk, self.revision, candidates[index + 1 :], call)
        return Verdict(self.default_for(call.risk), True, None, call.risk, self.revision)


def _match(rule: CompiledRule, call: Call, params: dict[str, Any]) -> Matched | None:
    """The rule's match on the call (fail closed: a rule that fails matches as require_review), or None."""
    if not _applies(rule, call):
        return None
    try:
        outcome = _failed_check(rule, params, call)
    except Exception as exc:  # noqa: BLE001 - a rule never raises into the runner: fail closed
        return Matched(rule, "require_review", _error_text(exc))
    if outcome is False:
        return None
    if outcome is True:
        if rule.effect == "confirm" and call.agent is None:  # nobody at an agent to ask: the rule's fallback
            return Matched(rule, rule.fallback or "require_review", note=NO_AGENT_TO_ASK)
        return Matched(rule, rule.effect)
    return Matched(rule, "require_review", outcome)


def _applies(rule: CompiledRule, call: Call) -> bool:
    """Scope and the cheap keys: no helper, no predicate."""
    if rule.scope_workflow_id is not None and rule.scope_workflow_id != call.workflow_id:
        return False
    if rule.scope_user is not None and rule.scope_user != call.user:
        return False
    if rule.step_types is not None and call.step_type not in rule.step_types:
        return False
    if rule.risks is not None and call.risk not in rule.risks:
        return False
    if rule.workflow_ids is not None and call.workflow_id not in rule.workflow_ids:
        return False
    if rule.users is not None and call.user not in rule.users:
        return False
    if rule.agent_steps is not None:
        if call.agent_step is None:
            return False
        if "*" not in rule.agent_steps and call.agent_step not in rule.agent_steps:
            return False
    if rule.agents is not None:
        if call.agent is None or ("*" not in rule.agents and call.agent not in rule.agents):
            return False
    return True


def _failed_check(rule: CompiledRule, params: dict[str, Any], call: Call) -> bool | str:
    """True: the rule matches; False: it does not; a string: it failed, and why (fail closed)."""
    for key, check in rule.checks:
        try:
            if not check(params):
                return False
        except Exception as exc:  # noqa: BLE001 - fail closed, said in the explanation
            return f"match.{key} failed: {_error_text(exc)}"
    if rule.predicate is None:
        return True
    try:
        return templating.evaluate_condition(rule.predicate, call.context(), "match.params")
    except templating.TemplateFailure as exc:
        return f"match.params failed: {exc.message}"
    except BudgetExceeded as exc:
        return f"match.params failed: {exc.message}"


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]
