"""Instructions per decision, Coach beside LangGraph: a figure this noisy shared machine cannot move.

Wall-clock figures here vary by up to 2x between runs, whatever else the machine is doing. Valgrind's
callgrind counts the instructions a process executes, the same for the same code and inputs. Each engine
runs its in-process loop (bench/coaching_throughput.py's) for a few and for more executions, each under
callgrind, in parallel; the difference divided by the extra decisions is the cost of one decision (with its
share of starting an execution), start-up and imports cancelled out. Slow (a minute or two) but repeatable:
use it to tell whether a change made a decision cheaper.

    .venv/bin/python bench/instructions.py            # both engines
    .venv/bin/python bench/instructions.py --engines coach
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FEW, MORE, STEPS = 5, 15, 10


def _loop(engine: str, executions: int) -> None:
    """What runs under callgrind: one engine's loop, on a fresh file."""
    with tempfile.TemporaryDirectory() as tmp:
        if engine.startswith("coach"):  # coach, or coach-200: with 200 policy rules in the workspace
            from bench.coaching_throughput import coach_in_process
            from services.orchestration import runner

            # valgrind runs ~50x slower: the runner's 10 ms slice would expire mid-decision, at moments that vary
            # with the machine's load, and the extra transactions it starts would change the count from run to run
            runner.SLICE_S = 60.0
            # nor does the WAL checkpointer's thread run here: how often it wakes and copies depends on how slowly
            # valgrind runs the rest, which made the count move by a few percent from run to run. (Its copying
            # is real work, done beside the decisions, not in them; LangGraph's checkpoints run in its commits.)
            import services.db

            class NoCheckpointer:
                def __init__(self, *args, **kwargs):
                    pass

                def stop(self) -> None:
                    pass

            services.db.Checkpointer = NoCheckpointer

            rules = int(engine.partition("-")[2] or 0)
            coach_in_process(executions, f"{tmp}/coach.db", policy_rules=rules)
        else:
            from bench.langgraph_baseline import run_langgraph

            run_langgraph(executions, f"{tmp}/langgraph.db")


def _count(engine: str, executions: int) -> int:
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--run",
            engine,
            str(executions),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected\s*:\s*(\d+)", out.stderr)
    if not found:
        raise RuntimeError(f"no instruction count from callgrind:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def per_decision(engine: str) -> int:
    with ThreadPoolExecutor(max_workers=2) as pool:
        few, more = pool.map(lambda n: _count(engine, n), (FEW, MORE))
    return round((more - few) / ((MORE - FEW) * STEPS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--engines",
        default="coach,langgraph,coach-200",
        help="comma list: coach, langgraph, coach-N (Coach with N policy rules, as make bench's)",
    )
    parser.add_argument("--run", nargs=2, metavar=("ENGINE", "EXECUTIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        _loop(args.run[0], int(args.run[1]))
        return
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    os.environ.setdefault("PYTHONHASHSEED", "0")  # the same dict layouts in every run
    counts = {engine: per_decision(engine) for engine in filter(None, args.engines.split(","))}
    for engine, count in counts.items():
        print(f"{engine:<12}{count / 1e6:>8.2f} M instructions per decision")
    if {"coach", "langgraph"} <= counts.keys():
        print(f"\nCoach / LangGraph instructions per decision = {counts['coach'] / counts['langgraph']:.2f}")
    for engine in (e for e in counts if e.startswith("coach-")):
        if "coach" in counts:
            print(f"{engine} / coach instructions per decision = {counts[engine] / counts['coach']:.3f}")


if __name__ == "__main__":
    main()
