"""AUTO readiness and demotion, simulated (docs/autonomy.md): how often, and how fast, the sequential tests
in core.coaching decide, at known true acceptance rates.

Each run drives a fresh MetricsState exactly as the server does: record one decision, then read
assess().auto_ready (promotion) or should_demote(state, thresholds) (demotion, on the spot-check scope's
state). Decisions are accept with the true acceptance probability, reject otherwise.

    python bench/autonomy.py [--runs 2000] [--seed 1] [--workers N]

Targets (issue #12): true acceptance <= 0.85 ready within 1,000 decisions in <= 5% of runs (<= 1% at 0.80);
at 0.95 median decisions to ready <= 60; at 0.90 ready within 1,000 in >= 90%; at 0.95 for 200 decisions
then 0.60, AUTO-ready lost within a median of <= 25 decisions; demotion within 500 spot checks in <= 5% of
runs at 0.95, and within a median of <= 15 spot checks at 0.60.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.coaching.metrics import ACCEPT, REJECT, LevelThresholds, MetricsState, should_demote  # noqa: E402

HORIZON = 1000
DEMOTION_HORIZON = 500
NEVER = float("inf")


def _kind(rng: random.Random, p: float) -> str:
    return ACCEPT if rng.random() < p else REJECT


def time_to_ready(p: float, rng: random.Random, horizon: int = HORIZON,
                  thresholds: LevelThresholds | None = None) -> float:
    """Decisions until the first AUTO-ready, or NEVER within the horizon."""
    state = MetricsState(thresholds=thresholds or LevelThresholds())
    for n in range(1, horizon + 1):
        state.record_decision(_kind(rng, p), 1000.0)
        if state.assess().auto_ready:
            return n
    return NEVER


def time_to_lose_ready(rng: random.Random, before: float = 0.95, lead: int = 200, after: float = 0.60,
                       horizon: int = HORIZON) -> float:
    """`lead` decisions at `before`, then decisions at `after` until AUTO-ready is lost (0 if it never was)."""
    state = MetricsState()
    for _ in range(lead):
        state.record_decision(_kind(rng, before), 1000.0)
        state.assess()
    for n in range(0, horizon + 1):
        if not state.assess().auto_ready:
            return n
        state.record_decision(_kind(rng, after), 1000.0)
    return NEVER


def time_to_demote(p: float, rng: random.Random, horizon: int = DEMOTION_HORIZON) -> float:
    """Spot checks (a fresh spot-check scope, as after a promotion) until should_demote, or NEVER."""
    thresholds = LevelThresholds()
    spot = MetricsState(thresholds=thresholds)
    for n in range(1, horizon + 1):
        spot.record_decision(_kind(rng, p), 1000.0)
        if should_demote(spot, thresholds):
            return n
    return NEVER


def _batch(job: tuple[str, float, int, int]) -> list[float]:
    what, p, runs, seed = job
    rng = random.Random(seed)
    if what == "ready":
        return [time_to_ready(p, rng) for _ in range(runs)]
    if what == "recency":
        return [time_to_lose_ready(rng) for _ in range(runs)]
    return [time_to_demote(p, rng) for _ in range(runs)]


def simulate(what: str, p: float, runs: int, seed: int, workers: int = 1) -> list[float]:
    chunks = max(1, min(workers * 4, runs // 50)) if workers > 1 else 1
    sizes = [runs // chunks + (i < runs % chunks) for i in range(chunks)]
    jobs = [(what, p, size, seed * 1_000_003 + i) for i, size in enumerate(sizes)]
    if workers <= 1:
        return [t for job in jobs for t in _batch(job)]
    with ProcessPoolExecutor(workers) as pool:
        return [t for part in pool.map(_batch, jobs) for t in part]


def share_within(times: list[float], horizon: int) -> float:
    return sum(t <= horizon for t in times) / len(times)


def median(times: list[float]) -> float:
    return statistics.median(times)


def table(runs: int, seed: int, workers: int) -> list[tuple[str, str, str, bool]]:
    rows = []
    for p, limit in ((0.80, 0.01), (0.85, 0.05)):
        share = share_within(simulate("ready", p, runs, seed, workers), HORIZON)
        rows.append((f"promotion, true {p:.2f}", f"ready within {HORIZON}: {share:.1%}", f"<= {limit:.0%}",
                     share <= limit))
    t90 = simulate("ready", 0.90, runs, seed, workers)
    rows.append(("promotion, true 0.90", f"ready within {HORIZON}: {share_within(t90, HORIZON):.1%} "
                 f"(median {median(t90):g})", ">= 90%", share_within(t90, HORIZON) >= 0.90))
    t95 = simulate("ready", 0.95, runs, seed, workers)
    rows.append(("promotion, true 0.95", f"median decisions to ready: {median(t95):g}", "<= 60",
                 median(t95) <= 60))
    lost = simulate("recency", 0.60, runs, seed, workers)
    rows.append(("0.95 x 200, then 0.60", f"median decisions to lose ready: {median(lost):g}", "<= 25",
                 median(lost) <= 25))
    d95 = simulate("demote", 0.95, runs, seed, workers)
    rows.append(("demotion, true 0.95", f"demoted within {DEMOTION_HORIZON}: {share_within(d95, DEMOTION_HORIZON):.1%}",
                 "<= 5%", share_within(d95, DEMOTION_HORIZON) <= 0.05))
    d85 = simulate("demote", 0.85, runs, seed, workers)
    rows.append(("demotion, true 0.85", f"demoted within {DEMOTION_HORIZON}: {share_within(d85, DEMOTION_HORIZON):.1%}",
                 "(for information)", True))
    d60 = simulate("demote", 0.60, runs, seed, workers)
    rows.append(("demotion, true 0.60", f"median spot checks to demotion: {median(d60):g}", "<= 15",
                 median(d60) <= 15))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    args = parser.parse_args()
    started = time.perf_counter()
    rows = table(args.runs, args.seed, args.workers)
    t = LevelThresholds()
    print(f"AUTO readiness and demotion: {args.runs} runs per point, auto_acceptance {t.auto_acceptance}, "
          f"auto_alpha {t.auto_alpha}, seed {args.seed}")
    print(f"| {'scenario':<24} | {'measured':<44} | {'target':<18} | ok  |")
    print(f"|{'-' * 26}|{'-' * 46}|{'-' * 20}|-----|")
    for name, measured, target, ok in rows:
        print(f"| {name:<24} | {measured:<44} | {target:<18} | {'yes' if ok else 'NO':<3} |")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
