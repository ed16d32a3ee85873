"""Policy evaluation speed: p50 / p99 of one tool call's verdict with 0, 20 and 200 rules in the workspace.

Per size:
  effect     core.policy.RuleSet.evaluate on the compiled rule set: the verdict's effect and deciding rule (the
             rules after the first match are not looked at)
  explained  the same, then `to_dict()`: every other matching rule found too (the dry run's answer)
  service    services.policies.service.evaluate inside an open transaction on a SQLite file: the revision read that
             validates the per-process cache (once per transaction: each call here as the first of its
             transaction), then the effect (what the runner pays per tool call)

The rules are a realistic mix: each names a tool glob among 40 tools (`sql.*`, `http.request`, `mcp_k.*` …),
a fifth of them also a step type or risk, some a helper (`sql: not_read`, `host_not_in`, `path_outside`) or a
predicate on params. The calls rotate over sql.query (a write and a read), http.request, file.write and echo.

    .venv/bin/python bench/policy.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.policy import Call, RuleSet, compile_rule  # noqa: E402

CALLS = [
    Call(
        "sql.query",
        {"connection": "dw", "query": "UPDATE invoices SET paid = true WHERE id = 7"},
        "action",
        "write",
        "wf1",
        "ann@x",
    ),
    Call(
        "sql.query",
        {"connection": "dw", "query": "SELECT id, total FROM invoices WHERE paid = false"},
        "action",
        "write",
        "wf1",
        "ann@x",
    ),
    Call(
        "http.request",
        {"method": "POST", "url": "https://api.example.com/v1/refunds", "json": {"amount": 12}},
        "action",
        "external",
        "wf2",
        "bob@x",
    ),
    Call("file.write", {"path": "summaries/invoices-summary.json", "content": "{}"}, "action", "write", "wf1", "ann@x"),
    Call("echo", {"message": "hi"}, "action", "read", "wf3", "bob@x"),
]


def written(i: int) -> dict:
    """Bench rule number i, as a lead would write it."""
    k = i % 40
    match: dict = {
        "tool": ["sql.*", "http.request", "file.write", "file.read", "shell.run"][k] if k < 5 else f"mcp_{k}.*"
    }
    if i % 5 == 1:
        match["risk"] = ["write", "destructive"]
    if i % 5 == 2:
        match["step_type"] = "action"
    if k == 0 and i % 3 == 0:
        match["sql"] = "not_read"
    if k == 1 and i % 3 == 0:
        match["host_not_in"] = ["api.example.com", "*.corp"]
    if k == 2 and i % 3 == 0:
        match["path_outside"] = "summaries/"
    if k in (0, 1) and i % 3 == 1:
        match["params"] = "params.amount is defined and params.amount > 1000"
    scope = {"user": "ann@x"} if i % 7 == 0 else {"workflow_id": None} if i % 7 == 1 else {}
    return {
        "name": f"rule {i}",
        "order": i,
        "effect": ("allow", "require_review", "deny")[i % 3],
        "scope": scope,
        "match": match,
    }


def rules(n: int) -> list:
    return [compile_rule(written(i), rule_id=f"{i:04d}") for i in range(n)]


def percentiles(samples_ns: list[int]) -> tuple[float, float]:
    samples = sorted(samples_ns)
    return statistics.median(samples) / 1000, samples[int(len(samples) * 0.99) - 1] / 1000


def bench_engine(n: int, calls: int, explain: bool) -> tuple[float, float]:
    rule_set = RuleSet(rules(n))
    for call in CALLS:  # warm: candidate lists, compiled predicates, classified queries
        rule_set.evaluate(call).to_dict()
    samples = []
    clock = time.perf_counter_ns
    for i in range(calls):
        call = CALLS[i % len(CALLS)]
        started = clock()
        verdict = rule_set.evaluate(call)
        if explain:
            verdict.to_dict()
        samples.append(clock() - started)
    return percentiles(samples)


def bench_service(n: int, calls: int) -> tuple[float, float]:
    from services.db import Database
    from services.migrate import upgrade
    from services.models.users import Workspace
    from services.policies import service as policies

    with tempfile.TemporaryDirectory() as folder:
        db = Database(f"sqlite:///{folder}/bench.db")
        upgrade(db)
        with db.transaction() as session:
            ws = Workspace(slug="bench", name="bench")
            session.add(ws)
            session.flush()
            workspace_id = ws.id
            for i in range(n):
                policies.create(session, workspace_id, written(i), "bench")
        samples = []
        clock = time.perf_counter_ns
        with db.read() as session:
            for call in CALLS:
                policies.evaluate(session, workspace_id, call)
            for i in range(calls):
                call = CALLS[i % len(CALLS)]
                session.expunge_all()  # as in a new transaction: the revision is read again
                started = clock()
                policies.evaluate(session, workspace_id, call)
                samples.append(clock() - started)
        db.dispose()
    return percentiles(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    print(f"policy evaluation, {args.calls:,} calls per row (µs)")
    print(
        f"{'rules':>6} {'effect p50':>11} {'effect p99':>11} {'explained p50':>14} {'explained p99':>14} "
        f"{'service p50':>12} {'service p99':>12}"
    )
    for n in (0, 20, 200):
        e50, e99 = bench_engine(n, args.calls, explain=False)
        x50, x99 = bench_engine(n, args.calls, explain=True)
        s50, s99 = bench_service(n, args.calls)
        print(f"{n:>6} {e50:>11.1f} {e99:>11.1f} {x50:>14.1f} {x99:>14.1f} {s50:>12.1f} {s99:>12.1f}")


if __name__ == "__main__":
    main()
