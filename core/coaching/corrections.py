"""Correction packs: what operators change in suggested params, counted per step.

A change is (field, before, after) where field is a dotted path into params (core.coaching.paths: flattening,
escaping, the MISSING marker, canonical comparison). The rules learned from the counts are core.coaching.rules.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core.coaching.paths import MISSING, canonical, decode_value, encode_value, flatten


def change_key(field_: str, before: Any, after: Any) -> str:
    """A change's identity: (field, before, after) as canonical JSON, since values may be unhashable."""
    return json.dumps(
        [field_, encode_value(before), encode_value(after)], sort_keys=True, separators=(",", ":"), default=repr
    )


# Values may be lists or dicts, so identity and hashing go through the JSON key, not the fields.
@dataclass(frozen=True, eq=False)
class Change:
    field: str
    before: Any
    after: Any

    def key(self) -> str:
        return change_key(self.field, self.before, self.after)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Change) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": encode_value(self.before), "after": encode_value(self.after)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Change:
        return cls(str(d["field"]), decode_value(d.get("before")), decode_value(d.get("after")))


def diff_params(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[Change]:
    fb, fa = flatten(before or {}), flatten(after or {})
    changes = []
    for f in sorted(set(fb) | set(fa)):
        b, a = fb.get(f, MISSING), fa.get(f, MISSING)
        if canonical(b) != canonical(a):
            changes.append(Change(f, b, a))
    return changes


@dataclass
class ChangeGroup:
    field: str
    before: Any
    after: Any
    count: int = 0

    def key(self) -> str:
        return change_key(self.field, self.before, self.after)

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "before": encode_value(self.before),
            "after": encode_value(self.after),
            "count": self.count,
        }


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

    def record_params(self, before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
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
                raise ValueError(f"group {ch.field!r} counts {g.count} of {stats.corrections} corrections")
        for name, count in stats.field_corrections().items():
            if count > stats.corrections:
                raise ValueError(f"field {name!r} changed in {count} of {stats.corrections} corrections")
        return stats
