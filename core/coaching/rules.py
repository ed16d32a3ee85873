"""Rules learned from a correction pack: the changes operators make consistently enough to apply on their own,
applying them to suggested params, and the history of when each started or stopped applying.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from core.coaching.corrections import ChangeGroup, PackStats, change_key
from core.coaching.paths import (
    MISSING,
    canonical,
    decode_value,
    delete_path,
    encode_value,
    join_path,
    set_path,
    split_path,
    walk_path,
)


@dataclass(frozen=True, eq=False)
class LearnedRule:
    field: str
    before: Any
    after: Any
    count: int
    share: float

    def key(self) -> str:
        return change_key(self.field, self.before, self.after)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, LearnedRule)
            and self.key() == other.key()
            and (self.count, self.share) == (other.count, other.share)
        )

    def __hash__(self) -> int:
        return hash(self.key())

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "before": encode_value(self.before),
            "after": encode_value(self.after),
            "count": self.count,
            "share": self.share,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LearnedRule:
        return cls(
            str(d["field"]),
            decode_value(d.get("before")),
            decode_value(d.get("after")),
            int(d.get("count", 0)),
            float(d.get("share", 0.0)),
        )


def learned_rules(stats: PackStats, min_count: int = 3, min_share: float = 0.8) -> list[LearnedRule]:
    """Groups consistent enough to apply on their own: made at least `min_count` times and in at
    least `min_share` of the corrections that touched the same field. A correction of another field
    is no evidence against a change, so it never undoes a rule (an operator who fixes the amount of
    a suggestion whose currency a rule already set did not disagree with the currency).

    When two groups change the same field from the same value to different values (possible with
    min_share <= 0.5), the larger one wins and a tie yields no rule, since the operators themselves
    do not agree."""
    if min_count < 1 or not 0.0 < min_share <= 1.0:
        raise ValueError("min_count must be >= 1 and min_share within (0, 1]")
    if stats.corrections <= 0:
        return []
    # repr() recovers the decimal the caller wrote, so 4 of 5 meets 0.8 exactly.
    threshold = Fraction(repr(float(min_share)))
    per_field = stats.field_corrections()
    best: dict[tuple[str, str], list[ChangeGroup]] = {}
    for g in stats.groups.values():
        if g.count >= min_count and Fraction(g.count, per_field[g.field]) >= threshold:
            best.setdefault((g.field, canonical(g.before)), []).append(g)
    rules = []
    for (_, _), groups in sorted(best.items()):
        groups.sort(key=lambda g: -g.count)
        if len(groups) > 1 and groups[0].count == groups[1].count:
            continue
        g = groups[0]
        rules.append(
            LearnedRule(
                g.field,
                copy.deepcopy(g.before),
                copy.deepcopy(g.after),
                g.count,
                round(g.count / per_field[g.field], 4),
            )
        )
    return rules


def apply_rules(
    params: dict[str, Any] | None, rules: Iterable[LearnedRule]
) -> tuple[dict[str, Any], list[LearnedRule]]:
    """Apply each rule whose field currently holds its `before`; return (new params, applied rules).

    Removals go first so that a rule replacing a dict by a scalar (or the reverse) finds the place
    free. A field is changed at most once, so rules never chain (1 -> 2 then 2 -> 3).
    """
    out = copy.deepcopy(params or {})
    ordered = sorted(rules, key=lambda r: r.after is not MISSING)  # stable: caller order kept
    touched: set[str] = set()
    applied: list[LearnedRule] = []
    for rule in ordered:
        parts = split_path(rule.field)
        norm = join_path(parts)
        current, blocked = walk_path(out, parts)
        if blocked or norm in touched or canonical(current) != canonical(rule.before):
            continue
        if rule.after is MISSING:
            delete_path(out, rule.field)
        else:
            set_path(out, rule.field, copy.deepcopy(rule.after))
        touched.add(norm)
        applied.append(rule)
    return out, applied


def rule_transitions(
    before: Iterable[LearnedRule], after: Iterable[LearnedRule]
) -> tuple[list[LearnedRule], list[LearnedRule]]:
    """(rules that started applying, rules that stopped), each in field order. A rule whose count or
    share moved but that still applies is neither: it changes nothing a suggestion says."""
    old = {r.key(): r for r in before}
    new = {r.key(): r for r in after}
    started = [r for k, r in new.items() if k not in old]
    stopped = [r for k, r in old.items() if k not in new]
    order = lambda r: (r.field, r.key())  # noqa: E731
    return sorted(started, key=order), sorted(stopped, key=order)


def track_rules(
    history: dict[str, Any] | None, started: Iterable[LearnedRule], stopped: Iterable[LearnedRule], at: str
) -> dict[str, Any]:
    """The pack's rule history after a change at `at` (ISO 8601): `since` maps each applying rule's
    key to when it started applying, `changed_at` is the last start or stop and `last_change` says
    what it was. A new dict; the input is not changed. Nothing moved: the history as it was."""
    started, stopped = list(started), list(stopped)
    history = copy.deepcopy(history) if isinstance(history, dict) else {}
    if not started and not stopped:
        return history
    since = dict(history.get("since") or {})
    for r in stopped:
        since.pop(r.key(), None)
    for r in started:
        since[r.key()] = at
    return {
        "since": since,
        "changed_at": at,
        "last_change": {
            "at": at,
            "started": [_rule_ref(r) for r in started],
            "stopped": [_rule_ref(r) for r in stopped],
        },
    }


def _rule_ref(rule: LearnedRule) -> dict[str, Any]:
    return {"field": rule.field, "before": encode_value(rule.before), "after": encode_value(rule.after)}
