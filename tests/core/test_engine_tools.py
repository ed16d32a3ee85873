"""Running one action step: rendered params, the tool's schema, retries with backoff, timeouts, tool bugs."""

import threading
import time

import pytest

from core.execution import states as S
from core.execution.engine import MAX_BACKOFF_S, execute, run_tool
from core.tools import ToolError, ToolRegistry
from core.workflow.model import StepDef
from tests.core.test_engine import define, echo, make_registry, new_state, run_all


class Flaky:
    name, description, risk = "flaky", "fails a few times, then works", "external"
    params_schema = {"type": "object"}
    honours_deadline = True

    def __init__(self, failures):
        self.failures, self.calls = failures, 0

    def run(self, params, ctx):
        self.calls += 1
        if self.calls <= self.failures:
            raise ToolError(f"try {self.calls} failed")
        return {"ok": True, "calls": self.calls}


HANG_S = 30  # how long Hang takes to answer unless the test ends first


class Hang:
    name, description, risk = "hang", "never answers (until the test ends)", "external"
    params_schema = {"type": "object"}

    def __init__(self):
        self.release = threading.Event()

    def run(self, params, ctx):
        self.release.wait(HANG_S)
        return {"late": True}


class Slow:
    name, description, risk = "slow", "bounds its own time, but too late", "read"
    params_schema = {"type": "object"}
    honours_deadline = True

    def run(self, params, ctx):
        time.sleep(0.15)
        return {"slow": True}


class Buggy:
    name, description, risk = "buggy", "has a bug", "read"
    params_schema = {"type": "object"}

    def __init__(self, honours):
        self.honours_deadline = honours

    def run(self, params, ctx):
        return {}["missing"]


class Recorder:
    def __init__(self):
        self.delays = []

    def __call__(self, seconds):
        self.delays.append(seconds)


@pytest.fixture
def hang():
    tool = Hang()
    yield tool
    tool.release.set()  # let the abandoned worker thread finish


def action(step_id="s", tool="flaky", **kw):
    return StepDef(id=step_id, type="action", tool=tool, **kw)


# --- params -------------------------------------------------------------------------------------


def test_params_are_rendered_from_earlier_outputs_with_native_types():
    _, state, ran = run_all(
        {"id": "first", "tool": "math.add", "params": {"a": "{{ vars.x }}", "b": 2}},
        {"id": "second", "tool": "math.add", "params": {"a": "{{ steps.first.output.sum }}", "b": "{{ vars.x * 10 }}"}},
        echo("say", params={"text": "total {{ steps.second.output.sum }}"}),
        variables={"x": 1},
    )
    assert state.steps["second"].params == {"a": 3, "b": 10}
    assert state.steps["second"].output == {"sum": 13}
    assert state.steps["say"].output == {"text": "total 13"}
    assert ran == ["first", "second", "say"]


def test_rendered_params_that_violate_the_tool_schema_fail_naming_the_field():
    last, state, _ = run_all(
        {"id": "add", "tool": "math.add", "params": {"a": "{{ vars.x }}", "b": 1}}, variables={"x": "three"}
    )
    st = state.steps["add"]
    assert st.status == S.STEP_FAILED and st.attempts == 0
    assert "math.add" in st.error and "'three' is not of type 'integer'" in st.error
    # a template is judged once rendered, and the failure names the template it came from
    assert "a (written as the template '{{ vars.x }}', rendered when the step was about to run)" in st.error
    assert st.params == {"a": "three", "b": 1}


def test_params_that_cannot_be_rendered_fail_naming_the_param():
    _, state, _ = run_all(echo("a", params={"body": {"to": "{{ vars.nobody }}"}}))
    assert state.steps["a"].status == S.STEP_FAILED
    assert "params.body.to" in state.steps["a"].error and "nobody" in state.steps["a"].error


def test_corrected_params_replace_the_definitions_and_are_schema_checked():
    registry = make_registry()
    defn = define({"id": "add", "tool": "math.add", "params": {"a": 1, "b": 1}}, registry=registry)
    state = new_state(defn)
    assert execute(defn.step("add"), state, registry, params={"a": 5, "b": 5}).output == {"sum": 10}
    bad = execute(defn.step("add"), state, registry, params={"a": 5})
    assert not bad.ok and "'b' is a required property" in bad.error


def test_a_tool_that_is_no_longer_registered_fails_the_step():
    defn = define(echo("a"))
    outcome = execute(defn.step("a"), new_state(defn), ToolRegistry())
    assert not outcome.ok and "'echo' is not registered" in outcome.error


def test_a_human_input_step_cannot_be_executed_by_the_engine():
    defn = define({"id": "ask", "type": "human_input", "question": "?"})
    outcome = execute(defn.step("ask"), new_state(defn), make_registry())
    assert not outcome.ok and "human_input" in outcome.error


# --- retries ------------------------------------------------------------------------------------


def test_a_tool_failing_twice_then_succeeding_reports_three_attempts_and_backs_off_exponentially():
    sleep = Recorder()
    outcome = run_tool(action(retries=2, retry_backoff_s=0.5), Flaky(failures=2), {}, sleep=sleep)
    assert outcome.ok and outcome.attempts == 3 and outcome.output == {"ok": True, "calls": 3}
    assert sleep.delays == [0.5, 1.0]


def test_retries_through_execute_and_the_drive():
    registry = make_registry(Flaky(failures=2))
    sleep = Recorder()
    last, state, _ = run_all(
        {"id": "f", "tool": "flaky", "retries": 3, "retry_backoff_s": 2}, registry=registry, sleep=sleep
    )
    assert state.steps["f"].status == S.STEP_SUCCEEDED and state.steps["f"].attempts == 3
    assert sleep.delays == [2, 4] and last.kind == "complete"


def test_running_out_of_retries_fails_with_the_last_error_and_the_attempt_count():
    sleep = Recorder()
    outcome = run_tool(action(retries=2, retry_backoff_s=1), Flaky(failures=5), {}, sleep=sleep)
    assert not outcome.ok and outcome.attempts == 3
    assert outcome.error == "tool 'flaky' failed: try 3 failed (after 3 attempts)"
    assert sleep.delays == [1, 2]


def test_no_retries_means_one_attempt_and_no_sleep():
    sleep = Recorder()
    outcome = run_tool(action(), Flaky(failures=1), {}, sleep=sleep)
    assert not outcome.ok and outcome.attempts == 1 and sleep.delays == []
    assert outcome.error == "tool 'flaky' failed: try 1 failed"


def test_backoff_is_capped():
    sleep = Recorder()
    run_tool(action(retries=6, retry_backoff_s=5), Flaky(failures=99), {}, sleep=sleep)
    assert sleep.delays == [5, 10, 20, MAX_BACKOFF_S, MAX_BACKOFF_S, MAX_BACKOFF_S]


# --- timeouts and tool bugs ---------------------------------------------------------------------


def test_a_hanging_tool_fails_with_timed_out_within_about_its_timeout(hang):
    started = time.monotonic()
    outcome = run_tool(action(tool="hang", timeout_s=0.2), hang, {})
    elapsed = time.monotonic() - started
    assert not outcome.ok and "timed out after 0.2s" in outcome.error
    assert 0.15 < elapsed < HANG_S  # not before its timeout; given up long before the tool would answer


def test_a_hanging_tool_times_out_through_execute(hang):
    registry = make_registry(hang)
    started = time.monotonic()
    last, state, _ = run_all({"id": "h", "tool": "hang", "timeout_s": 0.2}, echo("after"), registry=registry)
    assert time.monotonic() - started < HANG_S
    assert state.steps["h"].status == S.STEP_FAILED and "timed out after 0.2s" in state.steps["h"].error
    assert last.kind == "fail" and "'h'" in last.reason


def test_a_tool_that_honours_the_deadline_but_overruns_it_still_times_out():
    outcome = run_tool(action(tool="slow", timeout_s=0.05), Slow(), {})
    assert not outcome.ok and "timed out after 0.05s" in outcome.error


def test_a_tool_that_answers_in_time_gets_its_deadline_in_the_context():
    seen = {}

    class Peek:
        name, description, risk, params_schema = "peek", "", "read", {"type": "object"}

        def run(self, params, ctx):
            seen.update(step=ctx.step_id, execution=ctx.execution_id, remaining=ctx.remaining())
            return "ok"

    outcome = run_tool(action("peek_step", tool="peek", timeout_s=5), Peek(), {}, execution_id="ex9")
    assert outcome.ok and outcome.output == "ok"
    # what is left of the 5 s: less than all of it, however long a loaded machine took to get there (it had "more
    # than 4 s", which a machine that stalled a second between the start and the call failed)
    assert seen["step"] == "peek_step" and seen["execution"] == "ex9" and 0 < seen["remaining"] <= 5


@pytest.mark.parametrize("honours", [False, True])
def test_a_tool_raising_an_unexpected_exception_fails_the_step_not_the_caller(honours):
    registry = make_registry(Buggy(honours))
    _, state, _ = run_all({"id": "b", "tool": "buggy"}, registry=registry)
    assert state.steps["b"].status == S.STEP_FAILED
    assert state.steps["b"].error == "tool 'buggy' failed: KeyError: 'missing'"


def test_an_unexpected_exception_is_retried_like_any_failure():
    sleep = Recorder()
    outcome = run_tool(action(tool="buggy", retries=1, retry_backoff_s=0), Buggy(True), {}, sleep=sleep)
    assert not outcome.ok and outcome.attempts == 2 and sleep.delays == [0]


class Whose:
    name, description, risk = "whose", "says which workspace it runs for", "read"
    params_schema = {"type": "object"}
    honours_deadline = True

    def run(self, params, ctx):
        return {"workspace_id": ctx.workspace_id, "execution_id": ctx.execution_id}


@pytest.mark.parametrize("honours", [True, False])
def test_every_tool_call_knows_the_workspace_it_runs_for(honours):
    tool = Whose()
    tool.honours_deadline = honours  # inline, and in the watchdog thread
    registry = make_registry(tool)
    defn = define({"id": "who", "tool": "whose"}, registry=registry)
    state = new_state(defn)
    state.workspace_id = "ws-a"
    outcome = execute(defn.step("who"), state, registry)
    assert outcome.ok and outcome.output == {"workspace_id": "ws-a", "execution_id": "ex1"}
    step = defn.step("who")
    assert run_tool(step, tool, {}, execution_id="e", workspace_id="ws-b").output["workspace_id"] == "ws-b"
