"""Counterfactual replay: what a region's condition (`when`), or a policy rule being written, would have done to a
scope's past decided calls (issue 41, item 3). Plain Python: services/replay loads the history.

For each past call, the outcome it would have had:

- **denied**: the policy (the workspace's rules, plus the rule being written) denies it;
- **unattended**: it would have run without a person: the policy allows it (a gateway call: or holds it by the
  workspace default only) and the call is in the region (its condition holds: the region taken as `auto`) or,
  outside it, its scope is in AUTO (`outside_mode`);
- **asked**: anything else: a `require_review` rule always wins, whatever a region's mode.

Each outcome counts the reviewers' actual decisions on those calls (accepted, corrected, rejected, manual,
skipped), and the unattended calls that were corrected or rejected are listed with their links: what letting them
through would have let through. A replay looks at the very decisions a condition was chosen on: it is never
promotion evidence (docs/autonomy.md).

Bounded: at most MAX_CALLS calls. The condition is evaluated in the metered sandbox, each call within its own
budget (core/budget.py, COACH_EVAL_TIME_MS); a condition that runs out of it on any call, or that costs more than
MAX_TOTAL_OPS operations or MAX_TOTAL_CPU_S over the whole replay, is refused (ValidationFailed naming `when`):
never a hang. A condition that fails on a call for another reason (a param it reads is missing) does not hold
there (fail closed: the call is asked), counted in `condition_failed`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core import budget, templating
from core.budget import BudgetExceeded
from core.errors import ValidationFailed
from core.policy import Call, CompiledRule, RuleSet
from core.regions import region

DEFAULT_LIMIT = 500
MAX_CALLS = 1000
MAX_LINKS = 200
MAX_TOTAL_OPS = 5_000_000
MAX_TOTAL_CPU_S = 2.0
OUTCOMES = ("unattended", "denied", "asked")
TALLY = {"accept": "accepted", "correct": "corrected", "reject": "rejected", "manual": "manual", "skip": "skipped"}
REPLAY_RULE_ID = "~replay"  # sorts after every stored id (32 hex digits): the rule being written is the newest
AUTO = "auto"
# how core/budget.py's refusals read once the policy engine has turned them into a rule's error (fail closed)
_BUDGET_MARKS = ("ran out of its", "allowed in a template", "more than the")


@dataclass(frozen=True)
class Past:
    """One decided call: as the policy sees it, the reviewer's decision, the mode it follows outside any region,
    and its link (ids, the web path)."""

    call: Call
    decision: str  # accept | correct | reject | manual | skip
    outside_mode: str = "coaching"
    gateway: bool = False  # a call held by the MCP gateway (allowed calls never wait there)
    link: dict[str, Any] = field(default_factory=dict)


def check_when(when: Any, path: str = "when") -> str:
    """A condition as written (core.regions.region.check_when: one language and one size for regions and replays)."""
    return region.check_when(when, path)


class _Cost:
    def __init__(self, path: str):
        self.path, self.ops, self.cpu = path, 0, 0.0

    def refuse(self, message: str) -> ValidationFailed:
        return ValidationFailed(f"`{self.path}` is refused: {message}", {self.path: [message]})

    def holds(self, when: str, call: Call) -> tuple[bool, str | None]:
        """Whether the condition holds for the call (False with the error when it fails on it)."""
        with budget.metered(f"the condition `{self.path}`") as meter:
            try:
                result, error = templating.evaluate_condition(when, call.context(), self.path), None
            except templating.TemplateFailure as exc:
                # the sandbox's failure keeps the BudgetExceeded it came from as its context (raise … from None)
                if isinstance(exc.__context__, BudgetExceeded) or meter.ops > meter.limits.max_ops:
                    raise self.refuse(f"it exceeds the evaluation budget on a past call ({exc.message})") from None
                result, error = False, exc.message
            self.ops += meter.ops
            self.cpu += meter.spent()
        if self.ops > MAX_TOTAL_OPS or self.cpu > MAX_TOTAL_CPU_S:
            raise self.refuse(
                f"it costs more than the replay's budget ({MAX_TOTAL_OPS:,} operations, "
                f"{MAX_TOTAL_CPU_S:g} s) over the past calls"
            )
        return result, error


def _outcome(effect: str, default: bool, past: Past, in_region: bool) -> str:
    if effect == "deny":
        return "denied"
    unattended_mode = in_region or past.outside_mode == AUTO
    if past.gateway:  # the gateway forwards allowed calls; a call held by the default follows the mode
        # a confirm rule's question, like the default's hold, is what the learned mode lifts
        if effect == "allow" or ((default or effect == "confirm") and unattended_mode):
            return "unattended"
        return "asked"
    return "unattended" if effect == "allow" and unattended_mode else "asked"


class _Table:
    def __init__(self, limit: int):
        self.limit = limit
        self.tallies = {o: {"calls": 0, **{k: 0 for k in TALLY.values()}} for o in OUTCOMES}
        self.links: list[dict[str, Any]] = []
        self.left_off = 0
        self.calls = 0

    def add(self, past: Past, outcome: str) -> None:
        self.calls += 1
        tally = self.tallies[outcome]
        tally["calls"] += 1
        key = TALLY.get(past.decision)
        if key:
            tally[key] += 1
        if outcome == "unattended" and past.decision in ("correct", "reject"):
            if len(self.links) < MAX_LINKS:
                self.links.append({**past.link, "decision": past.decision})
            else:
                self.left_off += 1

    def view(self, **more: Any) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "limit": self.limit,
            **self.tallies,
            "links": self.links,
            "links_left_off": self.left_off,
            "evidence": False,
            **more,
        }


def _bounded(history: Iterable[Past], limit: int) -> list[Past]:
    limit = max(1, min(int(limit), MAX_CALLS))
    out = []
    for past in history:
        if len(out) >= limit:
            break
        out.append(past)
    return out


def replay_condition(
    when: str, history: Iterable[Past], rules: RuleSet, *, limit: int = DEFAULT_LIMIT, path: str = "when"
) -> dict[str, Any]:
    """The replay table of a region whose condition is `when`, taken as `auto`, over the latest `limit` calls of
    `history` (newest first) under the workspace's `rules`."""
    check_when(when, path)
    cost, table = _Cost(path), _Table(limit)
    failed, first_error, inside = 0, None, 0
    for past in _bounded(history, limit):
        holds, error = cost.holds(when, past.call)
        if error is not None:
            failed += 1
            first_error = first_error or error
        inside += holds
        verdict = rules.evaluate(past.call)
        table.add(past, _outcome(verdict.effect, verdict.default, past, holds))
    return table.view(in_region=inside, condition_failed={"calls": failed, "first_error": first_error})


def with_rule(rules: RuleSet, rule: CompiledRule) -> RuleSet:
    """The workspace's rules as if `rule` were added (the newest of its scope and order)."""
    return RuleSet((*rules.rules, rule), rules.defaults, rules.revision)


def replay_rule(
    rule: CompiledRule, history: Iterable[Past], rules: RuleSet, *, limit: int = DEFAULT_LIMIT
) -> dict[str, Any]:
    """The replay table of the workspace's rules with `rule` added: each call's outcome in its scope's present
    mode; `changed`: the calls whose effect the rule changes; `matched`: those it decides. A rule whose predicate
    runs out of its budget on a call is refused (ValidationFailed naming `rule.match.params`); one that fails for
    another reason decides the call as `require_review` (fail closed, as it would), counted in `rule_failed`."""
    after = with_rule(rules, rule)
    table = _Table(limit)
    changed = matched = failed = 0
    first_error = None
    effects = {"allow": 0, "require_review": 0, "deny": 0, "confirm": 0}  # confirm: asked at the agent
    for past in _bounded(history, limit):
        verdict = after.evaluate(past.call)
        if verdict.rule is not None and verdict.rule.id == rule.id:
            matched += 1
            if verdict.error:
                if any(mark in verdict.error for mark in _BUDGET_MARKS):
                    raise ValidationFailed(
                        "the rule is refused: its predicate exceeds the evaluation budget on a "
                        f"past call ({verdict.error})",
                        {"rule.match.params": [verdict.error]},
                    )
                failed += 1
                first_error = first_error or verdict.error
        effects[verdict.effect] += 1
        changed += verdict.effect != rules.evaluate(past.call).effect
        table.add(past, _outcome(verdict.effect, verdict.default, past, False))
    return table.view(
        matched=matched, changed=changed, effects=effects, rule_failed={"calls": failed, "first_error": first_error}
    )
