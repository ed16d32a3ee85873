"""Agent steps: Coach's own overhead per loop iteration, the LLM's and the tools' time left out.

An agent step whose scripted LLM (tests/support/llm_server.py, real HTTP on loopback, the real `openai` client) asks
for one `echo` call per turn, N turns, then answers; E executions run one after the other in-process on a durable
SQLite file. One iteration is what Coach does between the LLM's answer to turn i and its request for turn i+1:
store the answer, judge the call (policy, review gate), run the tool, store the result, build the next request
(budget fitting included). Its time is measured as (start of request i+1) - (end of answer i) - (the tool's own
time); the HTTP round trip to the LLM server, the server's time and the openai client's parsing are the LLM's.
Target: p50 under 3 ms.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stats import percentile  # noqa: E402


class TimedProvider:
    """The real provider, with the start and end of every request kept per conversation."""

    def __init__(self, provider):
        self.provider, self.calls = provider, defaultdict(list)
        self.configured = provider.configured

    def complete(self, request):
        started = time.perf_counter()
        try:
            return self.provider.complete(request)
        finally:
            self.calls[request.key.rsplit("/turn-", 1)[0]].append((started, time.perf_counter()))


class TimedTool:
    """A tool, with the time of each of its runs kept per execution."""

    def __init__(self, tool):
        self.tool, self.runs = tool, defaultdict(list)
        for name in ("name", "description", "params_schema", "risk", "inline", "honours_deadline"):
            if hasattr(tool, name):
                setattr(self, name, getattr(tool, name))

    def run(self, params, ctx):
        started = time.perf_counter()
        try:
            return self.tool.run(params, ctx)
        finally:
            self.runs[ctx.execution_id].append(time.perf_counter() - started)


def run(executions: int, iterations: int, db_path: str) -> dict:
    from config import Settings
    from services.agents.llm import OpenAIProvider
    from services.container import Services
    from services.executions import service as execution_service
    from services.migrate import upgrade
    from services.notifier import Notifier
    from services.workflows import service as workflows
    from tests.support.llm_server import ScriptedLLM

    with ScriptedLLM() as llm:
        llm.default = [
            {"content": f"turn {i}", "tool_calls": [{"name": "echo", "arguments": {"i": i}}]} for i in range(iterations)
        ] + [{"content": "done STAGE_COMPLETE"}]
        settings = Settings(
            env="bench",
            database_url=f"sqlite:///{db_path}",
            instance_dir=str(Path(db_path).parent),
            demo=False,
            log_level="WARNING",
            llm_base_url=llm.base_url,
            llm_model="bench",
            llm_max_retries=0,
        )
        services = Services.build(settings, notifier=Notifier(None), spawn=lambda fn, *args: fn(*args))
        upgrade(services.db)
        provider = services.runner.llm = TimedProvider(OpenAIProvider(settings))
        echo = services.tools.tools["echo"] = TimedTool(services.tools.get("echo"))
        workspace = services.default_workspace_id()
        definition = {
            "name": "agent bench",
            "steps": [
                {
                    "id": "agent",
                    "type": "agent",
                    "goal": "Bench {{ execution.id }}",
                    "tools": ["echo"],
                    "max_tool_iterations": iterations + 1,
                }
            ],
        }
        with services.db.transaction() as session:
            wf_id = workflows.create(session, services.tools, workspace, definition).id
        per_iteration, per_step, llm_ms, ids = [], [], [], []
        started = time.perf_counter()
        for _ in range(executions):
            t0 = time.perf_counter()
            with services.db.transaction() as session:
                execution_id = execution_service.start(session, services.definitions, workspace, wf_id, {}, "normal").id
            services.runner.schedule(execution_id)  # inline: returns when the step is done
            total = time.perf_counter() - t0
            calls = provider.calls[f"{execution_id}/agent"]
            runs = echo.runs[execution_id]
            for i in range(len(calls) - 1):
                per_iteration.append((calls[i + 1][0] - calls[i][1] - (runs[i] if i < len(runs) else 0)) * 1000)
            asked = sum(end - start for start, end in calls)
            llm_ms.extend((end - start) * 1000 for start, end in calls)
            per_step.append((total - asked - sum(runs)) * 1000)
            ids.append(execution_id)
        seconds = time.perf_counter() - started
        with services.db.read() as session:
            done = {execution_service.get(session, workspace, i).status for i in ids}
        services.close()
    if done != {"completed"}:
        raise RuntimeError(f"not every execution completed: {done}")
    return {
        "executions": executions,
        "iterations": len(per_iteration),
        "seconds": round(seconds, 2),
        "iteration_p50_ms": round(percentile(per_iteration, 50), 3),
        "iteration_p90_ms": round(percentile(per_iteration, 90), 3),
        "iteration_p99_ms": round(percentile(per_iteration, 99), 3),
        "step_overhead_p50_ms": round(percentile(per_step, 50), 2),
        "llm_request_p50_ms": round(percentile(llm_ms, 50), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent-executions", type=int, default=30)
    parser.add_argument("--agent-iterations", type=int, default=10)
    args, _ = parser.parse_known_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args.agent_executions, args.agent_iterations, f"{tmp}/agent.db")
    print(
        f"\nagent steps: {result['executions']} executions x {args.agent_iterations} tool iterations "
        f"({result['iterations']} iterations measured, {result['seconds']} s)"
    )
    print(
        f"  Coach's overhead per iteration (LLM and tool time left out): p50 {result['iteration_p50_ms']} ms, "
        f"p90 {result['iteration_p90_ms']} ms, p99 {result['iteration_p99_ms']} ms (target p50 < 3 ms)"
    )
    print(
        f"  per step, start to output, less LLM and tools: p50 {result['step_overhead_p50_ms']} ms; "
        f"an LLM request (loopback HTTP, openai client) p50 {result['llm_request_p50_ms']} ms"
    )


if __name__ == "__main__":
    main()
