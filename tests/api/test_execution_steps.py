"""How steps run inside an execution, seen through the API: failures, timeouts, retries, when, branches, skips."""

from __future__ import annotations

import threading
import time

import pytest

from core.tools import ToolError

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


def _steps(execution: dict) -> dict:
    return {s["step_id"]: s for s in execution["steps"]}


HANG_S = 30  # how long HangingTool takes to answer unless the test ends first


class HangingTool:
    """Sleeps far past any step timeout and does not watch the deadline itself."""

    name = "test.hang"
    description = "hangs"
    params_schema = {"type": "object"}
    risk = "read"

    def __init__(self) -> None:
        self.release = threading.Event()

    def run(self, params, ctx):
        self.release.wait(HANG_S)
        return {"finished": True}


class FlakyTool:
    """Raises ToolError `failures` times, then succeeds."""

    name = "test.flaky"
    description = "fails, then works"
    params_schema = {"type": "object"}
    risk = "read"

    def __init__(self, failures: int = 2) -> None:
        self.failures, self.calls = failures, 0

    def run(self, params, ctx):
        self.calls += 1
        if self.calls <= self.failures:
            raise ToolError(f"flaky failure {self.calls}")
        return {"calls": self.calls}


def test_failing_step_fails_the_execution_naming_the_step_and_reason(api):
    ex = api.run(
        [
            {"id": "first", "tool": "noop"},
            {"id": "read", "tool": "file.read", "params": {"path": "missing.txt"}},
            {"id": "later", "tool": "echo", "params": {"x": 1}},
        ]
    )
    assert ex["status"] == "failed"
    assert ex["error"]["step_id"] == "read"
    assert "no such file" in ex["error"]["message"] and "missing.txt" in ex["error"]["message"]
    steps = _steps(ex)
    assert steps["first"]["status"] == "succeeded"
    assert steps["read"]["status"] == "failed" and "missing.txt" in steps["read"]["error"]
    assert steps["later"]["status"] == "pending" and steps["later"]["output"] is None


def test_shell_step_past_its_timeout_fails_as_timed_out(api):
    started = time.monotonic()
    api.allow("shell.run")
    ex = api.run([{"id": "nap", "tool": "shell.run", "timeout_s": 0.5, "params": {"command": ["sleep", "30"]}}])
    assert time.monotonic() - started < 30  # killed at its timeout, not waited for
    assert ex["status"] == "failed" and ex["error"]["step_id"] == "nap"
    assert "timed out" in ex["error"]["message"]


def test_hanging_custom_tool_is_stopped_by_the_step_timeout(api, services):
    tool = HangingTool()
    services.tools.register(tool)
    try:
        started = time.monotonic()
        ex = api.run([{"id": "hang", "tool": "test.hang", "timeout_s": 0.3}])
        assert time.monotonic() - started < HANG_S  # given up at its timeout
        assert ex["status"] == "failed" and ex["error"]["step_id"] == "hang"
        assert "timed out" in ex["error"]["message"]
    finally:
        tool.release.set()


def test_flaky_tool_succeeds_within_its_retries(api, services):
    tool = FlakyTool(failures=2)
    services.tools.register(tool)
    ex = api.run([{"id": "try", "tool": "test.flaky", "retries": 2, "retry_backoff_s": 0.01}])
    assert ex["status"] == "completed"
    step = _steps(ex)["try"]
    assert step["status"] == "succeeded" and step["attempts"] == 3 and step["output"] == {"calls": 3}


def test_flaky_tool_fails_after_its_retries_run_out(api, services):
    services.tools.register(FlakyTool(failures=2))
    ex = api.run([{"id": "try", "tool": "test.flaky", "retries": 1, "retry_backoff_s": 0.01}])
    assert ex["status"] == "failed" and ex["error"]["step_id"] == "try"
    assert "after 2 attempts" in ex["error"]["message"]
    assert "flaky failure 2" in ex["error"]["message"]
    assert _steps(ex)["try"]["attempts"] == 2


def test_false_when_skips_the_step(api):
    wf = api.workflow(
        [
            {"id": "maybe", "tool": "echo", "when": "vars.go", "params": {"x": 1}},
            {"id": "always", "tool": "echo", "params": {"y": 2}},
        ],
        variables={"go": {"type": "boolean", "default": False}},
    )
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "completed"
    steps = _steps(ex)
    assert steps["maybe"]["status"] == "skipped" and steps["maybe"]["output"] is None
    assert steps["always"]["status"] == "succeeded"
    on = api.settle(api.start(wf["id"], {"go": True})["execution_id"])
    assert _steps(on)["maybe"]["status"] == "succeeded"


def test_decision_runs_the_then_branch_and_skips_the_else_branch(api):
    wf = api.workflow(
        [
            {"id": "measure", "tool": "echo", "params": {"n": "{{ vars.n }}"}},
            {
                "id": "big",
                "type": "decision",
                "condition": "steps.measure.output.n > 10",
                "then": ["shout"],
                "else": ["whisper"],
            },
            {"id": "shout", "tool": "echo", "depends_on": [], "params": {"say": "BIG"}},
            {"id": "whisper", "tool": "echo", "depends_on": [], "params": {"say": "small"}},
        ],
        variables={"n": {"type": "integer", "default": 50}},
    )
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "completed"
    steps = _steps(ex)
    assert steps["big"]["output"]["branch"] == "then"
    assert steps["shout"]["status"] == "succeeded" and steps["whisper"]["status"] == "skipped"
    small = _steps(api.settle(api.start(wf["id"], {"n": 1})["execution_id"]))
    assert small["big"]["output"]["branch"] == "else"
    assert small["shout"]["status"] == "skipped" and small["whisper"]["status"] == "succeeded"


def test_step_reading_a_skipped_output_is_skipped_but_a_depends_on_only_step_runs(api):
    ex = api.run(
        [
            {"id": "off", "tool": "echo", "when": "false", "params": {"v": 1}},
            {"id": "reader", "tool": "echo", "depends_on": [], "params": {"got": "{{ steps.off.output.v }}"}},
            {"id": "follower", "tool": "echo", "depends_on": ["off"], "params": {"ran": True}},
        ]
    )
    assert ex["status"] == "completed"
    steps = _steps(ex)
    assert steps["off"]["status"] == "skipped"
    assert steps["reader"]["status"] == "skipped"
    assert steps["follower"]["status"] == "succeeded" and steps["follower"]["output"] == {"ran": True}


def test_failing_validation_step_fails_the_execution_with_its_message(api):
    ex = api.run(
        [
            {"id": "fetch", "tool": "echo", "params": {"total": 0}},
            {"id": "positive", "type": "validation", "condition": "steps.fetch.output.total > 0"},
            {"id": "after", "tool": "noop"},
        ]
    )
    assert ex["status"] == "failed"
    assert ex["error"]["step_id"] == "positive"
    assert "validation failed" in ex["error"]["message"]
    assert "steps.fetch.output.total > 0" in ex["error"]["message"]
    assert _steps(ex)["after"]["status"] == "pending"


def test_passing_validation_step_lets_the_execution_complete(api):
    ex = api.run(
        [
            {"id": "fetch", "tool": "echo", "params": {"items": [1, 2]}},
            {
                "id": "shape",
                "type": "validation",
                "target": "steps.fetch.output.items",
                "schema": {"type": "array", "minItems": 1},
            },
        ]
    )
    assert ex["status"] == "completed", ex
    assert _steps(ex)["shape"]["output"] == {"valid": True}
