"""Correction packs: what operators change in suggested params, and the rules learned from it.

A change is (field, before, after) where field is a dotted path into params. Nested dicts are
flattened (`{"a": {"b": 1}}` -> `a.b`); lists and empty dicts are compared as whole values. A dot
or backslash inside a key is escaped with a backslash (`{"x.y": 1}` -> `x\\.y`), so every path
names exactly one place.

A field that is absent is `MISSING` in Python and `{"$missing": true}` in JSON (`MISSING_JSON`).
That marker cannot collide with a real value: a flattened value is never a non-empty dict.

Values are compared by their canonical JSON, so `1`, `1.0` and `true` are different values, as
they are to the tool that receives them.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable


class _Missing:
    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"  # pickling and deepcopy keep the singleton, so `is MISSING` stays true


MISSING: Any = _Missing()
MISSING_JSON: dict[str, bool] = {"$missing": True}


def encode_value(v: Any) -> Any:
    """The JSON form of a before/after value."""
    return dict(MISSING_JSON) if v is MISSING else v


def decode_value(v: Any) -> Any:
    return MISSING if isinstance(v, dict) and v == MISSING_JSON else v


def _canon(v: Any) -> str:
    return json.dumps(encode_value(v), sort_keys=True, separators=(",", ":"), default=repr)


def _join(parts: Iterable[str]) -> str:
    return ".".join(p.replace("\\", "\\\\").replace(".", "\\.") for p in parts)


def _split(dotted: str) -> list[str]:
    if not dotted:
        raise ValueError("empty field path")
    parts, cur, escaped = [], [], False
    for ch in dotted:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ".":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def split_path(dotted: str) -> list[str]:
    """A dotted field path's parts (a backslash escapes a dot or a backslash in a key)."""
    return _split(dotted)


def _walk(d: Any, parts: list[str]) -> tuple[Any, bool]:
    """(value or MISSING, blocked) where blocked means a parent exists but is not a dict."""
    cur = d
    for i, p in enumerate(parts):
        if not isinstance(cur, dict):
            return MISSING, i > 0
        if p not in cur:
            return MISSING, False
        cur = cur[p]
    return cur, False


def get_path(d: dict, dotted: str, default: Any = MISSING) -> Any:
    value, _ = _walk(d, _split(dotted))
    return default if value is MISSING else value


def set_path(d: dict, dotted: str, value: Any) -> None:
    """Set in place, creating intermediate dicts; a non-dict parent is a TypeError, not lost."""
    parts = _split(dotted)
    cur = d
    for p in parts[:-1]:
        nxt = cur.setdefault(p, {})
        if not isinstance(nxt, dict):
            raise TypeError(f"cannot set {dotted!r}: {p!r} holds a {type(nxt).__name__}")
        cur = nxt
    cur[parts[-1]] = value


def delete_path(d: dict, dotted: str) -> bool:
    """Remove in place; parents left empty by the removal go too: they only existed to hold it."""
    parts = _split(dotted)
    chain = [d]
    for p in parts[:-1]:
        nxt = chain[-1].get(p)
        if not isinstance(nxt, dict):
            return False
        chain.append(nxt)
    if parts[-1] not in chain[-1]:
        return False
    del chain[-1][parts[-1]]
    for depth in range(len(chain) - 1, 0, -1):
        if chain[depth]:
            break
        del chain[depth - 1][parts[depth - 1]]
    return True


def flatten(d: dict, _prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        parts = _prefix + (str(k),)
        if isinstance(v, dict) and v:
            out.update(flatten(v, parts))
        else:
            out[_join(parts)] = v
    return out


def _key(field_: str, before: Any, after: Any) -> str:
    return json.dumps([field_, encode_value(before), encode_value(after)],
                      sort_keys=True, separators=(",", ":"), default=repr)


# Values may be lists or dicts, so identity and hashing go through the JSON key, not the fields.
@dataclass(frozen=True, eq=False)
class Change:
    field: str
    before: Any
    after: Any

    def key(self) -> str:
        return _key(self.field, self.before, self.after)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Change) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": encode_value(self.before),
                "after": encode_value(self.after)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Change:
        return cls(str(d["field"]), decode_value(d.get("before")), decode_value(d.get("after")))


def diff_params(before: dict | None, after: dict | None) -> list[Change]:
    fb, fa = flatten(before or {}), flatten(after or {})
    changes = []
    for f in sorted(set(fb) | set(fa)):
        b, a = fb.get(f, MISSING), fa.get(f, MISSING)
        if _canon(b) != _canon(a):
            changes.append(Change(f, b, a))
    return changes


@dataclass
class ChangeGroup:
    field: str
    before: Any
    after: Any
    count: int = 0

    def key(self) -> str:
        return _key(self.field, self.before, self.after)

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": encode_value(self.before),
                "after": encode_value(self.after), "count": self.count}


@dataclass
class PackStats:
    """One workflow step's corrections, grouped by what they changed."""

    corrections: int = 0
    groups: dict[str, ChangeGroup] = field(default_factory=dict)

    def record(self, changes: Iterable[Change]) -> None:
        # Every correct decision counts in `corrections`, even one that changed nothing. A rule's
        # consistency, though, is judged among the corrections that touched its field
        # (`field_corrections`), so one correction changes each field at most once.
        unique = {c.key(): c for c in changes}.values()
        fields = [c.field for c in unique]
        if len(set(fields)) != len(fields):
            raise ValueError("one correction changes each field at most once")
        self.corrections += 1
        for ch in unique:
            g = self.groups.setdefault(ch.key(), ChangeGroup(ch.field, ch.before, ch.after))
            g.count += 1

    def field_corrections(self) -> dict[str, int]:
        """How many corrections touched each field. Derived from the groups (a correction counts once
        per field it changed), so stored packs and exports from before need no extra count."""
        out: dict[str, int] = {}
        for g in self.groups.values():
            out[g.field] = out.get(g.field, 0) + g.count
        return out

    def discount(self, changes: Iterable[Change]) -> bool:
        """Take one recorded correction back out (its step failed because of it): the inverse of `record`.
        False, with nothing changed, when the counts no longer hold it (the pack was imported or edited since)."""
        unique = list({c.key(): c for c in changes}.values())
        if self.corrections <= 0 or any(self.groups.get(c.key()) is None for c in unique):
            return False
        self.corrections -= 1
        for ch in unique:
            g = self.groups[ch.key()]
            g.count -= 1
            if g.count <= 0:
                del self.groups[ch.key()]
        return True

    def remove(self, change: Change) -> ChangeGroup | None:
        """Drop one change (field, before → after) and its count, as a lead judged it wrong; the corrections
        stay counted (they may have changed other fields too). The removed group, or None if there was none."""
        return self.groups.pop(change.key(), None)

    def record_params(self, before: dict, after: dict) -> list[Change]:
        changes = diff_params(before, after)
        self.record(changes)
        return changes

    def to_dict(self) -> dict[str, Any]:
        ordered = sorted(self.groups.values(), key=lambda g: (-g.count, g.field, g.key()))
        return {"corrections": self.corrections, "groups": [g.to_dict() for g in ordered]}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> PackStats:
        d = d or {}
        stats = cls(int(d.get("corrections", 0)))
        for raw in d.get("groups") or []:
            ch = Change.from_dict(raw)
            g = stats.groups.setdefault(ch.key(), ChangeGroup(ch.field, ch.before, ch.after))
            g.count += int(raw.get("count", 0))
            if g.count < 0 or g.count > stats.corrections:
                raise ValueError(f"group {ch.field!r} counts {g.count} of "
                                 f"{stats.corrections} corrections")
        for name, count in stats.field_corrections().items():
            if count > stats.corrections:
                raise ValueError(f"field {name!r} changed in {count} of "
                                 f"{stats.corrections} corrections")
        return stats


@dataclass(frozen=True, eq=False)
class LearnedRule:
    field: str
    before: Any
    after: Any
    count: int
    share: float

    def key(self) -> str:
        return _key(self.field, self.before, self.after)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, LearnedRule) and self.key() == other.key()
                and (self.count, self.share) == (other.count, other.share))

    def __hash__(self) -> int:
        return hash(self.key())

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": encode_value(self.before),
                "after": encode_value(self.after), "count": self.count, "share": self.share}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LearnedRule:
        return cls(str(d["field"]), decode_value(d.get("before")), decode_value(d.get("after")),
                   int(d.get("count", 0)), float(d.get("share", 0.0)))


def learned_rules(stats: PackStats, min_count: int = 3,
                  min_share: float = 0.8) -> list[LearnedRule]:
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
            best.setdefault((g.field, _canon(g.before)), []).append(g)
    rules = []
    for (_, _), groups in sorted(best.items()):
        groups.sort(key=lambda g: -g.count)
        if len(groups) > 1 and groups[0].count == groups[1].count:
            continue
        g = groups[0]
        rules.append(LearnedRule(g.field, copy.deepcopy(g.before), copy.deepcopy(g.after),
                                 g.count, round(g.count / per_field[g.field], 4)))
    return rules


def apply_rules(params: dict | None,
                rules: Iterable[LearnedRule]) -> tuple[dict, list[LearnedRule]]:
    """Apply each rule whose field currently holds its `before`; return (new params, applied rules).

    Removals go first so that a rule replacing a dict by a scalar (or the reverse) finds the place
    free. A field is changed at most once, so rules never chain (1 -> 2 then 2 -> 3).
    """
    out = copy.deepcopy(params or {})
    ordered = sorted(rules, key=lambda r: r.after is not MISSING)  # stable: caller order kept
    touched: set[str] = set()
    applied: list[LearnedRule] = []
    for rule in ordered:
        parts = _split(rule.field)
        norm = _join(parts)
        current, blocked = _walk(out, parts)
        if blocked or norm in touched or _canon(current) != _canon(rule.before):
            continue
        if rule.after is MISSING:
            delete_path(out, rule.field)
        else:
            set_path(out, rule.field, copy.deepcopy(rule.after))
        touched.add(norm)
        applied.append(rule)
    return out, applied


def rule_transitions(before: Iterable[LearnedRule],
                     after: Iterable[LearnedRule]) -> tuple[list[LearnedRule], list[LearnedRule]]:
    """(rules that started applying, rules that stopped), each in field order. A rule whose count or
    share moved but that still applies is neither: it changes nothing a suggestion says."""
    old = {r.key(): r for r in before}
    new = {r.key(): r for r in after}
    started = [r for k, r in new.items() if k not in old]
    stopped = [r for k, r in old.items() if k not in new]
    order = lambda r: (r.field, r.key())  # noqa: E731
    return sorted(started, key=order), sorted(stopped, key=order)


def track_rules(history: dict[str, Any] | None, started: Iterable[LearnedRule],
                stopped: Iterable[LearnedRule], at: str) -> dict[str, Any]:
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
    return {"since": since, "changed_at": at,
            "last_change": {"at": at, "started": [_rule_ref(r) for r in started],
                            "stopped": [_rule_ref(r) for r in stopped]}}


def _rule_ref(rule: LearnedRule) -> dict[str, Any]:
    return {"field": rule.field, "before": encode_value(rule.before), "after": encode_value(rule.after)}
