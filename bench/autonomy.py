"""AUTO readiness and demotion, simulated (docs/autonomy.md): how often, and how fast, the sequential tests
in core.coaching decide, at known true acceptance rates.

Each run drives a fresh MetricsState exactly as the server does: record one decision, then read
assess().auto_ready (promotion) or should_demote(state, thresholds) (demotion, on the spot-check scope's
state). Decisions are accept with the true acceptance probability, reject otherwise.

    python bench/autonomy.py [--runs 2000] [--seed 1] [--workers N] [--chart docs/autonomy-readiness.svg]
                             [--regions] [--region-runs 1000]

With --regions it also prints decisions to ready per region (core.regions.evidence: the j-th condition version of
a scope is tested at alpha * 6 / (pi^2 j^2)) beside the whole tool's (at alpha), and the scope-wide false-ready
share: a scope whose 8 regions (condition versions 1..8) all have the same true acceptance, counted ready when any
of them is.

With --chart it also draws, for a lead, how often a workflow of a given true acceptance is flagged AUTO-ready
within 1,000 decisions: under the sequential test, and under the rule it replaced (rolling acceptance >= 0.85
over >= 20 of the last 50 decisions, checked after each one), as an SVG (no plotting library needed).

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

from core.coaching.counters import ACCEPT, REJECT  # noqa: E402
from core.coaching.levels import LevelThresholds  # noqa: E402
from core.coaching.metrics import MetricsState, should_demote  # noqa: E402
from core.regions.evidence import alpha_share, fresh_state  # noqa: E402

HORIZON = 1000
DEMOTION_HORIZON = 500
NEVER = float("inf")


def _kind(rng: random.Random, p: float) -> str:
    return ACCEPT if rng.random() < p else REJECT


def time_to_ready(
    p: float, rng: random.Random, horizon: int = HORIZON, thresholds: LevelThresholds | None = None
) -> float:
    """Decisions until the first AUTO-ready, or NEVER within the horizon."""
    state = MetricsState(thresholds=thresholds or LevelThresholds())
    for n in range(1, horizon + 1):
        state.record_decision(_kind(rng, p), 1000.0)
        if state.assess().auto_ready:
            return n
    return NEVER


def time_to_ready_region(p: float, rng: random.Random, version: int, horizon: int = HORIZON) -> float:
    """Decisions until a region's condition version `version` is first AUTO-ready, at its share of the level."""
    state = fresh_state(LevelThresholds(), version)
    for n in range(1, horizon + 1):
        state.record_decision(_kind(rng, p), 1000.0)
        if state.assess().auto_ready:
            return n
    return NEVER


def scope_time_to_ready(p: float, rng: random.Random, regions: int = 8, horizon: int = HORIZON) -> float:
    """A scope of `regions` regions (versions 1..regions), each at true acceptance p with `horizon` decisions of its
    own: the first region's decisions to ready, NEVER when none is ready (the scope-wide false-ready event)."""
    return min(time_to_ready_region(p, rng, j, horizon) for j in range(1, regions + 1))


def time_to_lose_ready(
    rng: random.Random, before: float = 0.95, lead: int = 200, after: float = 0.60, horizon: int = HORIZON
) -> float:
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


def time_to_naive_ready(p: float, rng: random.Random, horizon: int = HORIZON) -> float:
    """The rule before the sequential test: rolling acceptance >= 0.85 over >= 20 of the last 50 decisions."""
    window: list[bool] = []
    for n in range(1, horizon + 1):
        window.append(rng.random() < p)
        del window[:-50]
        if len(window) >= 20 and sum(window) * 100 >= 85 * len(window):
            return n
    return NEVER


def _batch(job: tuple[str, float, int, int]) -> list[float]:
    what, p, runs, seed = job
    rng = random.Random(seed)
    if what == "ready":
        return [time_to_ready(p, rng) for _ in range(runs)]
    if what == "naive":
        return [time_to_naive_ready(p, rng) for _ in range(runs)]
    if what.startswith("region"):
        version = int(what[len("region") :])
        return [time_to_ready_region(p, rng, version) for _ in range(runs)]
    if what == "scope8":
        return [scope_time_to_ready(p, rng) for _ in range(runs)]
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
        rows.append(
            (f"promotion, true {p:.2f}", f"ready within {HORIZON}: {share:.1%}", f"<= {limit:.0%}", share <= limit)
        )
    t90 = simulate("ready", 0.90, runs, seed, workers)
    rows.append(
        (
            "promotion, true 0.90",
            f"ready within {HORIZON}: {share_within(t90, HORIZON):.1%} (median {median(t90):g})",
            ">= 90%",
            share_within(t90, HORIZON) >= 0.90,
        )
    )
    t95 = simulate("ready", 0.95, runs, seed, workers)
    rows.append(("promotion, true 0.95", f"median decisions to ready: {median(t95):g}", "<= 60", median(t95) <= 60))
    lost = simulate("recency", 0.60, runs, seed, workers)
    rows.append(
        ("0.95 x 200, then 0.60", f"median decisions to lose ready: {median(lost):g}", "<= 25", median(lost) <= 25)
    )
    d95 = simulate("demote", 0.95, runs, seed, workers)
    rows.append(
        (
            "demotion, true 0.95",
            f"demoted within {DEMOTION_HORIZON}: {share_within(d95, DEMOTION_HORIZON):.1%}",
            "<= 5%",
            share_within(d95, DEMOTION_HORIZON) <= 0.05,
        )
    )
    d85 = simulate("demote", 0.85, runs, seed, workers)
    rows.append(
        (
            "demotion, true 0.85",
            f"demoted within {DEMOTION_HORIZON}: {share_within(d85, DEMOTION_HORIZON):.1%}",
            "(for information)",
            True,
        )
    )
    d60 = simulate("demote", 0.60, runs, seed, workers)
    rows.append(("demotion, true 0.60", f"median spot checks to demotion: {median(d60):g}", "<= 15", median(d60) <= 15))
    return rows


def region_table(runs: int, seed: int, workers: int) -> list[tuple[str, str, str, bool]]:
    """Per region (condition versions 1 and 8 of a scope, at their shares of alpha) beside the whole tool."""
    alpha = LevelThresholds().auto_alpha
    rows = []
    # the power target (>= 90% ready within 1,000 at 0.90) is held for the first version; later versions pay for
    # the shared level with more decisions (docs/autonomy.md#regions), and their rows are for information
    for label, what, level in (
        ("whole tool", "ready", alpha),
        ("region, version 1", "region1", alpha_share(alpha, 1)),
        ("region, version 2", "region2", alpha_share(alpha, 2)),
        ("region, version 8", "region8", alpha_share(alpha, 8)),
    ):
        t99, t95, t90 = (simulate(what, p, runs, seed, workers) for p in (0.99, 0.95, 0.90))
        f85, f80 = (share_within(simulate(what, p, runs, seed, workers), HORIZON) for p in (0.85, 0.80))
        powered = what in ("ready", "region1")
        ok = (share_within(t90, HORIZON) >= 0.90 or not powered) and f85 <= 0.05 and f80 <= 0.01
        rows.append(
            (
                f"{label} (alpha {level:.4f})",
                f"median to ready at 0.99: {median(t99):g}, 0.95: {median(t95):g}, 0.90: {median(t90):g}; "
                f"ready within {HORIZON} at 0.90: {share_within(t90, HORIZON):.1%}; "
                f"false-ready at 0.85: {f85:.1%}, at 0.80: {f80:.1%}",
                ">= 90%; <= 5%; <= 1%" if powered else "(info); <= 5%; <= 1%",
                ok,
            )
        )
    for p, limit in ((0.85, 0.05), (0.80, 0.01)):
        share = share_within(simulate("scope8", p, runs, seed, workers), HORIZON)
        rows.append(
            (
                f"scope of 8 regions, true {p:.2f}",
                f"some region ready within {HORIZON}: {share:.1%}",
                f"<= {limit:.0%}",
                share <= limit,
            )
        )
    return rows


CHART_POINTS = (0.70, 0.75, 0.80, 0.825, 0.85, 0.875, 0.90, 0.925, 0.95, 0.975)


def chart(path: Path, runs: int, seed: int, workers: int) -> None:
    """Share of workflows flagged AUTO-ready within 1,000 decisions, by true acceptance: both rules."""
    series = {
        what: [share_within(simulate(what, p, runs, seed, workers), HORIZON) for p in CHART_POINTS]
        for what in ("ready", "naive")
    }
    w, h, left, top, right, bottom = 640, 380, 60, 40, 20, 60
    x0, x1, pw, ph = CHART_POINTS[0], CHART_POINTS[-1], w - left - right, h - top - bottom

    def xy(p: float, share: float) -> tuple[float, float]:
        return left + (p - x0) / (x1 - x0) * pw, top + (1 - share) * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
        f'font-size="12"><rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="14" font-weight="bold">Flagged AUTO-ready within 1,000 decisions '
        f"({runs} simulated workflows per point)</text>",
    ]
    for share in (0, 0.25, 0.5, 0.75, 1):
        _, y = xy(x0, share)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{share:.0%}</text>'
        )
    for p in CHART_POINTS:
        x, y = xy(p, 0)
        out.append(f'<text x="{x:.1f}" y="{y + 18:.1f}" text-anchor="middle">{p:g}</text>')
    bar_x, _ = xy(0.85, 0)
    out.append(
        f'<line x1="{bar_x:.1f}" y1="{top}" x2="{bar_x:.1f}" y2="{top + ph}" stroke="#888" '
        f'stroke-dasharray="4 3"/><text x="{bar_x + 4:.1f}" y="{top + 12}" fill="#555">threshold 0.85</text>'
    )
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{h - 18}" text-anchor="middle">true acceptance of the workflow</text>'
    )
    for what, colour, label, dy in (
        ("ready", "#0b5cad", "sequential test (now)", 0),
        ("naive", "#c0392b", "rolling rate >= 0.85 (before)", 18),
    ):
        points = " ".join(
            f"{x:.1f},{y:.1f}" for x, y in (xy(p, v) for p, v in zip(CHART_POINTS, series[what], strict=False))
        )
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2.5"/>')
        out.extend(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>'
            for x, y in (xy(p, v) for p, v in zip(CHART_POINTS, series[what], strict=False))
        )
        lx, ly = left + 15, top + ph * 0.6 + dy  # lower left: between the two lines there
        out.append(
            f'<rect x="{lx}" y="{ly}" width="14" height="4" fill="{colour}"/>'
            f'<text x="{lx + 20}" y="{ly + 6}">{label}</text>'
        )
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")
    print(f"chart: {path}")
    for what in ("ready", "naive"):
        print(f"  {what:<6} " + "  ".join(f"{p:g}: {v:.1%}" for p, v in zip(CHART_POINTS, series[what], strict=False)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--chart", type=Path, default=None, help="also draw the readiness chart (SVG) here")
    parser.add_argument("--regions", action="store_true", help="also print the per-region figures")
    parser.add_argument("--region-runs", type=int, default=1000, help="runs per point of the per-region figures")
    parser.add_argument("--chart-runs", type=int, default=500, help="runs per point of the chart")
    args = parser.parse_args()
    if args.chart:
        chart(args.chart, args.chart_runs, args.seed, args.workers)
    started = time.perf_counter()
    rows = table(args.runs, args.seed, args.workers)
    t = LevelThresholds()
    print(
        f"AUTO readiness and demotion: {args.runs} runs per point, auto_acceptance {t.auto_acceptance}, "
        f"auto_alpha {t.auto_alpha}, seed {args.seed}"
    )
    print(f"| {'scenario':<24} | {'measured':<44} | {'target':<18} | ok  |")
    print(f"|{'-' * 26}|{'-' * 46}|{'-' * 20}|-----|")
    for name, measured, target, ok in rows:
        print(f"| {name:<24} | {measured:<44} | {target:<18} | {'yes' if ok else 'NO':<3} |")
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.regions:
        started = time.perf_counter()
        region_rows = region_table(args.region_runs, args.seed, args.workers)
        print(
            f"Regions (alpha_j = alpha * 6 / (pi^2 j^2), sum over all versions <= alpha): {args.region_runs} runs "
            f"per point, seed {args.seed}"
        )
        for name, measured, target, ok in region_rows:
            print(f"| {name:<30} | {measured} | {target} | {'yes' if ok else 'NO'} |")
        print(f"({time.perf_counter() - started:.0f} s)")
        rows += region_rows
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
