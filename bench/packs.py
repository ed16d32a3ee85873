"""Correction packs: how soon a step's acceptance gets high, with and without packs, and whether it stays there.

A simulated refund step suggests `currency: EUR`; its operators want GBP every time and, on a share of the
refunds, also change the amount (a different amount each time: an unrelated correction that teaches nothing).
Each decision: the suggestion is the definition's params with the pack's learned rules applied (the real
core.coaching.corrections functions: PackStats.record_params, learned_rules, apply_rules); the operator accepts
it when it is what they want and corrects it otherwise, and the correction is recorded into the pack.

Three ways to run the step:
  none       no packs: every suggestion needs the same correction
  step-wide  packs judged as before issue #12 item 7: a change's share among ALL the step's corrections, so an
             amount correction (made on a suggestion whose currency the rule already fixed) drops the currency
             rule under 80% until the next currency correction brings it back: the rule flickers
  per-field  packs as now: a change's share among the corrections of its own field

Printed per share of amount corrections: decisions until the rolling acceptance (last WINDOW decisions) first
reaches 0.9, the acceptance over all decisions, and how often the currency rule stopped applying (median of
the seeds).

    .venv/bin/python bench/packs.py [--decisions 300] [--seeds 20]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections import deque
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.coaching.corrections import PackStats  # noqa: E402
from core.coaching.rules import LearnedRule, apply_rules, learned_rules  # noqa: E402

WINDOW, TARGET = 20, 0.9
MODES = ("none", "step-wide", "per-field")


def stepwide_rules(stats: PackStats, min_count: int = 3, min_share: float = 0.8) -> list[LearnedRule]:
    """The rules as learned_rules judged them before: share among every correction of the step."""
    if stats.corrections <= 0:
        return []
    threshold = Fraction(repr(float(min_share)))
    return [
        LearnedRule(g.field, g.before, g.after, g.count, round(g.count / stats.corrections, 4))
        for g in stats.groups.values()
        if g.count >= min_count and Fraction(g.count, stats.corrections) >= threshold
    ]


def run(mode: str, decisions: int, amount_share: float, seed: int) -> dict[str, float | int | None]:
    rnd = random.Random(seed)
    stats = PackStats()
    rules: list[LearnedRule] = []
    recent: deque[int] = deque(maxlen=WINDOW)
    reached, accepted, stops, applying = None, 0, 0, False
    for n in range(1, decisions + 1):
        amount = round(rnd.uniform(5, 500), 2)
        definition = {"order_id": f"A-{n}", "amount": amount, "currency": "EUR"}
        suggested = apply_rules(definition, rules)[0] if mode != "none" else definition
        wanted = {**definition, "currency": "GBP"}
        if rnd.random() < amount_share:
            wanted["amount"] = round(amount + rnd.choice((-5, 5, 10)), 2)
        if suggested == wanted:
            accepted += 1
            recent.append(1)
        else:
            recent.append(0)
            if mode != "none":
                stats.record_params(suggested, wanted)
                rules = learned_rules(stats) if mode == "per-field" else stepwide_rules(stats)
        now = any(r.field == "currency" for r in rules)
        stops += applying and not now
        applying = now
        if reached is None and len(recent) == WINDOW and sum(recent) / WINDOW >= TARGET:
            reached = n
    return {"reached": reached, "acceptance": accepted / decisions, "stops": stops}


def demo_case() -> tuple[list[str], list[str]]:
    """The demo's case: currency EUR -> GBP 3 of 3 times, then one correction of the amount only.
    Returns the fields of the rules left (step-wide, per-field)."""
    stats = PackStats()
    for _ in range(3):
        stats.record_params({"amount": 40, "currency": "EUR"}, {"amount": 40, "currency": "GBP"})
    stats.record_params({"amount": 40, "currency": "GBP"}, {"amount": 45, "currency": "GBP"})
    return [r.field for r in stepwide_rules(stats)], [r.field for r in learned_rules(stats)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()

    def cell(values: list[int | None]) -> str:
        hit = [v for v in values if v is not None]
        if len(hit) * 2 <= len(values):  # the median run never got there
            return f"never ({len(hit)}/{len(values)})"
        return f"{statistics.median([v if v is not None else args.decisions + 1 for v in values]):g}" + (
            f" ({len(hit)}/{len(values)})" if len(hit) < len(values) else ""
        )

    print(
        f"refund step, {args.decisions} decisions, {args.seeds} seeds: decisions until rolling acceptance "
        f"(last {WINDOW}) >= {TARGET} / acceptance overall / times the currency rule stopped applying"
    )
    head = f"{'amount corrected':>16} | " + " | ".join(f"{m:^28}" for m in MODES)
    print(head)
    print("-" * len(head))
    for share in (0.0, 0.05, 0.1, 0.2):
        cells = []
        for mode in MODES:
            runs = [run(mode, args.decisions, share, seed) for seed in range(args.seeds)]
            cells.append(
                f"{cell([r['reached'] for r in runs]):>12} "
                f"{statistics.median(r['acceptance'] for r in runs):6.2f} "
                f"{statistics.median(r['stops'] for r in runs):>6g}"
            )
        print(f"{share:>15.0%}  | " + " | ".join(f"{c:^28}" for c in cells))
    stepwide, per_field = demo_case()
    print(
        f"\ndemo: 3 of 3 currency corrections, then 1 of the amount: rules step-wide {stepwide}, per-field {per_field}"
    )


if __name__ == "__main__":
    main()
