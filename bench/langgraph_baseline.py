"""LangGraph baseline for the coaching-throughput benchmark.

The same work as Coach's loop: a 10-step chain where every step pauses for a human
decision (``interrupt``), is resumed with ``Command(resume=...)`` and runs an echo
tool, checkpointed durably in a SQLite file. Run: ``python -m bench.langgraph_baseline``.
"""

from __future__ import annotations

import argparse
import operator
import os
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Generator
from importlib.metadata import version
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Durability, interrupt

from bench.stats import finish, percentile, settle, slices

STEPS = 10
DECISION = {"decision": "accept"}


class State(TypedDict):
    thread: str
    # operator.add makes each node's one-item list append instead of overwrite.
    outputs: Annotated[list[dict], operator.add]


def _make_step(i: int):
    def step(state: State) -> dict:
        suggestion = {"step": i, "tool": "echo", "params": {"message": f"step {i} of {state['thread']}"}}
        # On resume LangGraph re-runs the node from the top; interrupt() then returns
        # the resume value instead of raising, so the code before it must stay pure.
        decision = interrupt(suggestion)
        if decision != DECISION:
            raise ValueError(f"step {i}: unexpected decision {decision!r}")
        return {"outputs": [dict(suggestion["params"])]}  # echo tool: output = params

    return step


def build_graph(checkpointer: SqliteSaver):
    builder = StateGraph(State)
    for i in range(STEPS):
        builder.add_node(f"step_{i}", _make_step(i))
        builder.add_edge(START if i == 0 else f"step_{i - 1}", f"step_{i}")
    builder.add_edge(f"step_{STEPS - 1}", END)
    return builder.compile(checkpointer=checkpointer)


def _open_saver(db_path: str) -> SqliteSaver:
    # check_same_thread=False is what SqliteSaver's docs use: it serialises access with
    # its own lock, and "async" durability writes from a background thread.
    conn = sqlite3.connect(db_path, check_same_thread=False)
    # SqliteSaver.setup() already switches to WAL; synchronous=NORMAL matches Coach's
    # services/db.py so both engines pay the same fsync cost per commit.
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return SqliteSaver(conn)


def _suggestion(out) -> dict | None:
    # version="v2" returns a GraphOutput; a run that finished has no interrupts.
    return out.interrupts[0].value if out.interrupts else None


def run_langgraph(executions: int, db_path: str, *, durability: Durability = "sync") -> dict:
    return finish(langgraph_turns(executions, db_path, durability=durability))


def langgraph_turns(
    executions: int, db_path: str, *, durability: Durability = "sync", rounds: int = 1
) -> Generator[None, None, dict]:
    """Drive ``executions`` workflows sequentially, one decision at a time.

    ``durability="sync"`` (the strictest mode) persists every checkpoint before the
    next step starts, which is what Coach promises. ``seconds`` sums the decision loops
    only; starting each execution (up to its first suggestion) is not timed.
    """
    saver = _open_saver(db_path)
    try:
        graph = build_graph(saver)
        run_id = uuid.uuid4().hex[:8]  # fresh thread ids if db_path is reused
        threads = [f"lg-{run_id}-{n}" for n in range(executions)]
        latencies: list[float] = []
        seconds = 0.0
        for part in slices(threads, rounds):
            yield
            settle()
            for thread in part:
                config = {"configurable": {"thread_id": thread}}
                out = graph.invoke({"thread": thread, "outputs": []}, config, durability=durability, version="v2")
                loop_start = time.perf_counter()
                for i in range(STEPS):
                    suggestion = _suggestion(out)
                    if suggestion is None or suggestion["step"] != i:
                        raise RuntimeError(f"{thread}: expected suggestion {i}, got {suggestion!r}")
                    t0 = time.perf_counter()
                    out = graph.invoke(Command(resume=DECISION), config, durability=durability, version="v2")
                    latencies.append(time.perf_counter() - t0)
                seconds += time.perf_counter() - loop_start
                if _suggestion(out) is not None:
                    raise RuntimeError(f"{thread}: still interrupted after {STEPS} decisions")
        _verify(graph, threads)
    finally:
        saver.conn.close()
    decisions = len(latencies)
    return {
        "engine": "langgraph",
        "executions": executions,
        "decisions": decisions,
        "seconds": seconds,
        "decisions_per_s": decisions / seconds if seconds else 0.0,
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
        "versions": {p: version(p) for p in ("langgraph", "langgraph-checkpoint-sqlite")},
        "rounds": rounds,
    }


def _verify(graph, threads: list[str]) -> None:
    # Read back from the checkpointer, not the in-memory result, to prove durability.
    for thread in threads:
        snap = graph.get_state({"configurable": {"thread_id": thread}})
        expected = [{"message": f"step {i} of {thread}"} for i in range(STEPS)]
        if snap.next or snap.values.get("outputs") != expected:
            raise RuntimeError(f"{thread}: incomplete final state {snap.values!r} next={snap.next}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=50)
    parser.add_argument("--durability", choices=["sync", "async", "exit"], default="sync")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        r = run_langgraph(args.executions, os.path.join(tmp, "langgraph.db"), durability=args.durability)
    versions = " ".join(f"{k}=={v}" for k, v in r["versions"].items())
    print(
        f"| {r['engine']} | {r['executions']} | {r['decisions']} | {r['seconds']:.3f}s"
        f" | {r['decisions_per_s']:.1f}/s | p50 {r['p50_ms']:.2f}ms"
        f" | p99 {r['p99_ms']:.2f}ms | {versions} |"
    )


if __name__ == "__main__":
    main()
