"""Proposed regions learned from a scope's decided calls: interpretable conditions on one or two params where
reviewers accept nearly always (candidates for `auto`) or often do not (candidates for `always_review`).

How: a small decision tree of our own, at most two levels deep, grown on the decisions with the Gini impurity.
Each level tries, per top-level param, every numeric threshold (`params.amount <= 200`, at most MAX_CUTS cut
points taken from the sorted values), the best split of its categorical values (categories ordered by their
acceptance, the best prefix of that order: `params.currency == 'GBP'` or `in [...]`) and path or string prefixes
ending at a `/` (`params.path.startswith('summaries/')`). The best splits at the root (one per param, the
best few) and, within each of their sides, the best split on another param (a conjunction of two) are the
candidates. A candidate side is proposed when it holds at least MIN_REGION decisions and either the lower bound
of its acceptance reaches the bar (`auto`) or the upper bound stays below it (`always_review`), and its interval
does not overlap the interval of the rest of its parent (the split is no accident of noise). The bounds are
the Wilson score interval at z = 1.96 (95% two-sided, 97.5% one-sided). Proposals are ranked by coverage (the
share of the decisions the condition holds for), then by the lower bound; `auto` candidates first.

Bounded: the last MAX_DECISIONS decisions, MAX_PARAMS params, MAX_CUTS thresholds and MAX_CATEGORIES values per
param, prefixes up to MAX_DEPTH folders; nothing is proposed under MIN_DECISIONS decisions. Skips are left out
before this is called (as the readiness test leaves them out). A proposal is a hint: its figures are from the
same decisions it was chosen on, so they are never promotion evidence (docs/autonomy.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

MIN_DECISIONS = 30  # decided calls (skips left out) before anything is proposed
MIN_REGION = 10  # decisions a proposed region must hold
MAX_DECISIONS = 1000  # the latest decisions considered
MAX_PARAMS = 16  # top-level params tried (the most frequent first)
MAX_CUTS = 256  # numeric thresholds tried per param
MAX_CATEGORIES = 20  # distinct values of a categorical param (more: it is not categorical)
MAX_IN = 8  # values in an `in [...]` condition
MAX_DEPTH = 3  # folders of a path prefix
MAX_VALUE = 100  # characters of a string value in a condition
MAX_PROPOSALS = 6
ROOT_SPLITS = 3  # the best root splits (on different params) grown further
Z = 1.96

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SAFE = re.compile(r"^[^'\\\x00-\x1f\x7f]*$")


def wilson(accepted: int, n: int, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval of a proportion: (lower, upper); (0, 1) with no data."""
    if n <= 0:
        return 0.0, 1.0
    p = accepted / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return max(0.0, (centre - spread) / denominator), min(1.0, (centre + spread) / denominator)


@dataclass(frozen=True)
class Condition:
    """One side of a split: the predicate (`when`), its words, and the param it reads."""

    when: str
    words: str
    param: str
    test: Callable[[dict], bool] = field(compare=False, repr=False)


@dataclass(frozen=True)
class Proposal:
    when: str
    explanation: str
    params: tuple[str, ...]
    decisions: int
    accepted: int
    coverage: float
    acceptance: float
    lower_bound: float
    upper_bound: float
    suggested_mode: str  # auto | always_review

    def to_dict(self) -> dict[str, Any]:
        return {
            "when": self.when,
            "explanation": self.explanation,
            "params": list(self.params),
            "decisions": self.decisions,
            "accepted": self.accepted,
            "coverage": round(self.coverage, 4),
            "acceptance": round(self.acceptance, 4),
            "lower_bound": round(self.lower_bound, 4),
            "upper_bound": round(self.upper_bound, 4),
            "suggested_mode": self.suggested_mode,
        }


def propose(
    decided: Sequence[tuple[dict, bool]], *, bar: float = 0.85, subject: str = "calls", limit: int = MAX_PROPOSALS
) -> list[Proposal]:
    """Proposals for decided calls `(params, accepted)`, newest first (the first MAX_DECISIONS are used);
    `bar`: the acceptance a region in AUTO should have (the scope's `auto_acceptance`)."""
    rows = [(p if isinstance(p, dict) else {}, bool(a)) for p, a in list(decided)[:MAX_DECISIONS]]
    if len(rows) < MIN_DECISIONS:
        return []
    total = len(rows)
    roots = _best_splits(rows, exclude=set())[:ROOT_SPLITS]
    found: dict[str, Proposal] = {}
    for _gain, sides in roots:
        parts = [[r for r in rows if side.test(r[0])] for side in sides]
        for side, inside, sibling in ((sides[0], parts[0], parts[1]), (sides[1], parts[1], parts[0])):
            _consider(found, [side], inside, sibling, total, bar, subject)
            for _g, inner in _best_splits(inside, exclude={side.param})[:1]:
                halves = [[r for r in inside if child.test(r[0])] for child in inner]
                for child, half, other in ((inner[0], halves[0], halves[1]), (inner[1], halves[1], halves[0])):
                    if _qualifies(child, rows, bar):
                        continue  # the child's condition alone says as much: the simpler one is proposed
                    _consider(found, [side, child], half, other, total, bar, subject)
    ranked = sorted(found.values(), key=lambda p: (p.suggested_mode != "auto", -p.coverage, -p.lower_bound, p.when))
    return ranked[:limit]


def _qualifies(condition: Condition, rows: list[tuple[dict, bool]], bar: float) -> bool:
    inside = [r for r in rows if condition.test(r[0])]
    return _mode(inside, [r for r in rows if not condition.test(r[0])], bar) is not None


def _mode(inside: list[tuple[dict, bool]], sibling: list[tuple[dict, bool]], bar: float) -> str | None:
    if len(inside) < MIN_REGION or len(sibling) < MIN_REGION:
        return None
    low, high = wilson(sum(1 for _p, a in inside if a), len(inside))
    other_low, other_high = wilson(sum(1 for _p, a in sibling if a), len(sibling))
    if low >= bar and low > other_high:
        return "auto"
    if high < bar and high < other_low:
        return "always_review"
    return None


def _consider(
    found: dict[str, Proposal],
    conditions: list[Condition],
    inside: list[tuple[dict, bool]],
    sibling: list[tuple[dict, bool]],
    total: int,
    bar: float,
    subject: str,
) -> None:
    """Propose the side `inside` when it is big enough, its acceptance is clearly on one side of the bar, and it
    differs clearly from the rest of its parent (`sibling`): the two intervals do not overlap."""
    mode = _mode(inside, sibling, bar)
    if mode is None:
        return
    n, accepted = len(inside), sum(1 for _p, a in inside if a)
    low, high = wilson(accepted, n)
    when = " and ".join(c.when if len(conditions) == 1 else _grouped(c.when) for c in conditions)
    if when in found:
        return
    words = " and ".join(c.words for c in conditions)
    explanation = f"{subject} with {words}: {accepted} of {n} accepted"
    found[when] = Proposal(
        when, explanation, tuple(c.param for c in conditions), n, accepted, n / total, accepted / n, low, high, mode
    )


def _grouped(when: str) -> str:
    return when if " or " not in when and not when.startswith("not ") else f"({when})"


# -- splits -------------------------------------------------------------------------------------------------------


def _gini(accepted: int, n: int) -> float:
    if n == 0:
        return 0.0
    p = accepted / n
    return 2 * p * (1 - p) * n  # weighted by the side's size


def _best_splits(rows: list[tuple[dict, bool]], exclude: set[str]) -> list[tuple[float, tuple[Condition, Condition]]]:
    """The best split per param (the highest Gini gain), best first: each a pair (condition, its complement)."""
    n = len(rows)
    if n < 2 * MIN_REGION:
        return []
    accepted = sum(1 for _p, a in rows if a)
    parent = _gini(accepted, n)
    if parent == 0.0:
        return []
    counts: dict[str, int] = {}
    for params, _a in rows:
        for key in params:
            counts[key] = counts.get(key, 0) + 1
    keys = [k for k in sorted(counts, key=lambda k: (-counts[k], k)) if k not in exclude and isinstance(k, str)]
    best = []
    for key in keys[:MAX_PARAMS]:
        # prefixes first: of two splits that part the calls alike, the first (the more general) is kept
        candidates = [*_prefixes(rows, key), *_numeric(rows, key), *_categorical(rows, key)]
        scored = []
        for left_acc, left_n, pair in candidates:
            right_n, right_acc = n - left_n, accepted - left_acc
            if left_n < MIN_REGION or right_n < MIN_REGION:
                continue
            scored.append((parent - _gini(left_acc, left_n) - _gini(right_acc, right_n), pair))
        if scored:
            gain, pair = max(scored, key=lambda s: s[0])
            if gain > 1e-9:
                best.append((gain, pair))
    best.sort(key=lambda s: -s[0])
    return best


def _ref(key: str) -> str:
    return (
        f"params.{key}"
        if _IDENT.match(key) and key not in ("items", "keys", "values", "get")
        else f"params[{_literal(key)}]"
    )


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'"
    return repr(value)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(value)


def _numeric(rows, key: str) -> Iterable[tuple[int, int, tuple[Condition, Condition]]]:
    values = sorted((r[0][key], r[1]) for r in rows if _number(r[0].get(key)))
    if len(values) < 2 * MIN_REGION:
        return
    guard = len(values) < len(rows)  # some calls lack it, or hold something else: say `is number` first
    distinct = sorted({v for v, _a in values})
    if len(distinct) < 2:
        return
    step = -(-(len(distinct) - 1) // MAX_CUTS)  # at most MAX_CUTS cut points
    cuts = set(distinct[:-1][::step])
    ref, acc, seen = _ref(key), 0, 0
    for index, (value, accepted) in enumerate(values):
        acc += accepted
        seen += 1
        if value in cuts and (index + 1 == len(values) or values[index + 1][0] != value):
            when = f"{ref} <= {_shown(value)}"
            left = Condition(
                f"{ref} is number and {when}" if guard else when,
                f"{key} ≤ {_shown(value)}",
                key,
                lambda p, k=key, v=value: _number(p.get(k)) and p[k] <= v,
            )
            right = Condition(
                f"not ({left.when})" if guard else f"{ref} > {_shown(value)}",
                f"{key} > {_shown(value)}" if not guard else f"not {key} ≤ {_shown(value)}",
                key,
                lambda p, k=key, v=value: not (_number(p.get(k)) and p[k] <= v),
            )
            yield acc, seen, (left, right)


def _category(value: Any) -> bool:
    return isinstance(value, bool) or (isinstance(value, str) and len(value) <= MAX_VALUE and bool(_SAFE.match(value)))


def _categorical(rows, key: str) -> Iterable[tuple[int, int, tuple[Condition, Condition]]]:
    tally: dict[Any, list[int]] = {}
    for params, accepted in rows:
        value = params.get(key)
        if key in params and _category(value):
            t = tally.setdefault((type(value).__name__, value), [0, 0])
            t[0] += accepted
            t[1] += 1
    if not 1 <= len(tally) <= MAX_CATEGORIES:
        return
    ordered = sorted(tally, key=lambda c: (-tally[c][0] / tally[c][1], str(c[1])))
    ref, acc, seen, chosen = _ref(key), 0, 0, []
    for category in ordered[: min(MAX_IN, len(ordered) - 1) or 1]:
        acc += tally[category][0]
        seen += tally[category][1]
        chosen.append(category)
        values = [c[1] for c in chosen]
        wanted = frozenset(chosen)
        if len(values) == 1:
            when, words = f"{ref} == {_literal(values[0])}", f"{key} = {_literal(values[0])}"
            negated, neg_words = f"{ref} != {_literal(values[0])}", f"{key} ≠ {_literal(values[0])}"
        else:
            listed = ", ".join(_literal(v) for v in values)
            when, words = f"{ref} in [{listed}]", f"{key} in {listed}"
            negated, neg_words = f"{ref} not in [{listed}]", f"{key} not in {listed}"
        if any(key not in p for p, _a in rows):
            when, negated = f"{ref} is defined and {when}", f"not ({ref} is defined and {when})"

        def test(p, k=key, w=wanted):
            return k in p and _category(p[k]) and (type(p[k]).__name__, p[k]) in w

        yield (
            acc,
            seen,
            (Condition(when, words, key, test), Condition(negated, neg_words, key, lambda p, t=test: not t(p))),
        )


def _prefixes(rows, key: str) -> Iterable[tuple[int, int, tuple[Condition, Condition]]]:
    tally: dict[str, list[int]] = {}
    for params, accepted in rows:
        value = params.get(key)
        if not isinstance(value, str) or "/" not in value or len(value) > 1000:
            continue
        parts = value.split("/")
        for depth in range(1, min(MAX_DEPTH, len(parts) - 1) + 1):
            prefix = "/".join(parts[:depth]) + "/"
            if len(prefix) <= MAX_VALUE and _SAFE.match(prefix):
                t = tally.setdefault(prefix, [0, 0])
                t[0] += accepted
                t[1] += 1
    ref = _ref(key)
    guard = any(not isinstance(p.get(key), str) for p, _a in rows)
    for prefix in sorted(tally, key=lambda s: -tally[s][1])[:MAX_CUTS]:
        when = f"{ref}.startswith({_literal(prefix)})"
        if guard:
            when = f"{ref} is string and {when}"

        def test(p, k=key, s=prefix):
            return isinstance(p.get(k), str) and p[k].startswith(s)

        yield (
            tally[prefix][0],
            tally[prefix][1],
            (
                Condition(when, f"{key} starting with {_literal(prefix)}", key, test),
                Condition(
                    f"not ({when})" if guard else f"not {when}",
                    f"{key} not starting with {_literal(prefix)}",
                    key,
                    lambda p, t=test: not t(p),
                ),
            ),
        )
