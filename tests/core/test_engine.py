"""The engine's choice of what runs next, driven the way the runner drives it."""

import pytest

from core.execution import states as S
from core.execution.engine import ExecutionState, Next, execute, next_action, progress, template_context
from core.tools import ToolError, ToolRegistry
from core.workflow.validation import parse_definition


class Echo:
    name, description, risk = "echo", "returns its params", "read"
    params_schema = {"type": "object"}
    honours_deadline = True

    def __init__(self):
        self.calls = []

    def run(self, params, ctx):
        self.calls.append(ctx.step_id)
        return params


class Add:
    name, description, risk = "math.add", "adds two integers", "read"
    params_schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    honours_deadline = True

    def run(self, params, ctx):
        return {"sum": params["a"] + params["b"]}


class Fail:
    name, description, risk = "fail", "always fails", "write"
    params_schema = {"type": "object"}

    def run(self, params, ctx):
        raise ToolError("the disk is full")


def make_registry(*extra):
    registry = ToolRegistry()
    for tool in (Echo(), Add(), Fail(), *extra):
        registry.register(tool)
    return registry


def define(*steps, registry=None, **extra):
    return parse_definition({"name": "wf", **extra, "steps": list(steps)}, registry or make_registry())


def echo(step_id, **kw):
    return {"id": step_id, "tool": "echo", **kw}


def new_state(defn, variables=None):
    return ExecutionState.new("ex1", defn, variables or {})


def drive(defn, state, registry, needs_human=None, sleep=lambda s: None, limit=100):
    """Do what the runner does: apply each `next_action` until a gate or an end. Returns (last Next, log)."""
    log = []
    for _ in range(limit):
        nxt = next_action(defn, state, needs_human)
        log.append((nxt.kind, nxt.step.id if nxt.step else None))
        if nxt.kind == "run":
            st = state.steps[nxt.step.id]
            outcome = execute(nxt.step, state, registry, sleep=sleep)
            st.status = S.STEP_SUCCEEDED if outcome.ok else S.STEP_FAILED
            st.output, st.error, st.attempts, st.params = (
                outcome.output,
                outcome.error,
                outcome.attempts,
                outcome.params,
            )
        elif nxt.kind == "skip":
            state.steps[nxt.step.id].status = S.STEP_SKIPPED
            state.steps[nxt.step.id].error = nxt.reason
        else:
            return nxt, log
    raise AssertionError(f"no end after {limit} actions: {log}")


def run_all(*steps, variables=None, registry=None, **kw):
    registry = registry or make_registry()
    defn = define(*steps, registry=registry)
    state = new_state(defn, variables)
    last, log = drive(defn, state, registry, **kw)
    return last, state, [sid for kind, sid in log if kind == "run"]


def statuses(state):
    return {sid: st.status for sid, st in state.steps.items()}


# --- order and branches -------------------------------------------------------------------------


def test_steps_run_in_dependency_order_and_then_the_execution_completes():
    last, state, ran = run_all(echo("c", depends_on=["b"]), echo("a", depends_on=[]), echo("b", depends_on=["a"]))
    assert ran == ["a", "b", "c"]
    assert last.kind == "complete"
    assert set(statuses(state).values()) == {S.STEP_SUCCEEDED}


def test_independent_branches_both_run_before_the_join():
    last, state, ran = run_all(echo("a"), echo("b", depends_on=[]), echo("join", depends_on=["a", "b"]))
    assert ran[:2] in (["a", "b"], ["b", "a"]) and ran[2] == "join"
    assert last.kind == "complete"


def test_an_independent_branch_is_offered_while_another_step_is_still_running():
    defn = define(echo("a"), echo("b", depends_on=[]), echo("join", depends_on=["a", "b"]))
    state = new_state(defn)
    state.steps["a"].status = S.STEP_RUNNING
    nxt = next_action(defn, state)
    assert (nxt.kind, nxt.step.id) == ("run", "b")
    state.steps["b"].status = S.STEP_SUCCEEDED
    assert next_action(defn, state).kind == "wait"


def test_a_step_waiting_on_a_human_makes_the_execution_wait_not_complete():
    defn = define(echo("a"))
    state = new_state(defn)
    state.steps["a"].status = S.STEP_WAITING
    assert next_action(defn, state) == Next("wait")


# --- when and skips -----------------------------------------------------------------------------


def test_a_false_when_skips_the_step():
    last, state, ran = run_all(echo("a", when="vars.go"), echo("b"), variables={"go": False})
    assert statuses(state) == {"a": S.STEP_SKIPPED, "b": S.STEP_SUCCEEDED}
    assert state.steps["a"].error == "when condition is false"
    assert ran == ["b"] and last.kind == "complete"


def test_a_true_when_in_braces_runs_the_step():
    _, state, ran = run_all(echo("a", when="{{ vars.go }}"), variables={"go": True})
    assert ran == ["a"]


def test_a_when_that_cannot_be_evaluated_fails_naming_the_step():
    last, _, ran = run_all(echo("a", when="vars.nope > 1"), variables={})
    assert last.kind == "fail" and "'a'" in last.reason and "nope" in last.reason
    assert ran == []


def test_step_reading_a_skipped_steps_output_is_skipped():
    last, state, ran = run_all(echo("a", when="false"), echo("b", depends_on=[], params={"x": "{{ steps.a.output }}"}))
    assert statuses(state) == {"a": S.STEP_SKIPPED, "b": S.STEP_SKIPPED}
    assert "'a'" in state.steps["b"].error
    assert last.kind == "complete"


def test_skips_propagate_through_a_chain_of_reads():
    _, state, _ = run_all(
        echo("a", when="false"),
        echo("b", params={"x": "{{ steps.a.output }}"}),
        echo("c", params={"x": "{{ steps.b.output }}"}),
    )
    assert set(statuses(state).values()) == {S.STEP_SKIPPED}


def test_a_when_reading_a_skipped_step_skips_without_evaluating():
    _, state, _ = run_all(echo("a", when="false"), echo("b", when="steps.a.output.x > 1"))
    assert state.steps["b"].status == S.STEP_SKIPPED


def test_step_that_only_depends_on_a_skipped_step_runs():
    _, state, ran = run_all(echo("a", when="false"), echo("b", depends_on=["a"]))
    assert statuses(state) == {"a": S.STEP_SKIPPED, "b": S.STEP_SUCCEEDED}
    assert ran == ["b"]


# --- decisions ----------------------------------------------------------------------------------


def decision_flow(**variables):
    return run_all(
        {"id": "route", "type": "decision", "condition": "vars.n > 10", "then": ["big"], "else": ["small"]},
        echo("big", depends_on=[]),
        echo("small", depends_on=[]),
        echo("after", depends_on=["big", "small"]),
        variables=variables,
    )


def test_a_true_decision_runs_then_and_skips_else():
    last, state, ran = decision_flow(n=11)
    assert state.steps["route"].output == {"result": True, "branch": "then"}
    assert statuses(state) == {
        "route": S.STEP_SUCCEEDED,
        "big": S.STEP_SUCCEEDED,
        "small": S.STEP_SKIPPED,
        "after": S.STEP_SUCCEEDED,
    }
    assert "route" in state.steps["small"].error
    assert ran == ["route", "big", "after"] and last.kind == "complete"


def test_a_false_decision_runs_else_and_skips_then():
    _, state, ran = decision_flow(n=1)
    assert state.steps["route"].output == {"result": False, "branch": "else"}
    assert statuses(state)["big"] == S.STEP_SKIPPED and statuses(state)["small"] == S.STEP_SUCCEEDED
    assert ran == ["route", "small", "after"]


def test_a_skipped_decision_skips_both_branches():
    _, state, _ = run_all(
        {"id": "route", "type": "decision", "when": "false", "condition": "true", "then": ["yes"], "else": ["no"]},
        echo("yes"),
        echo("no"),
    )
    assert statuses(state) == {"route": S.STEP_SKIPPED, "yes": S.STEP_SKIPPED, "no": S.STEP_SKIPPED}


def test_a_decision_whose_output_is_not_an_object_does_not_crash_next_action():
    defn = define({"id": "route", "type": "decision", "condition": "true", "then": ["yes"]}, echo("yes"))
    state = new_state(defn)
    state.steps["route"].status, state.steps["route"].output = S.STEP_SUCCEEDED, "then"
    assert next_action(defn, state).kind in ("run", "skip", "fail")


# --- validation steps ---------------------------------------------------------------------------


def test_a_validation_whose_condition_holds_succeeds():
    last, state, _ = run_all(
        echo("a", params={"n": 3}), {"id": "check", "type": "validation", "condition": "steps.a.output.n == 3"}
    )
    assert state.steps["check"].status == S.STEP_SUCCEEDED and state.steps["check"].output == {"valid": True}
    assert last.kind == "complete"


def test_a_validation_whose_condition_is_false_fails_quoting_it():
    last, state, _ = run_all(
        echo("a", params={"n": 3}), {"id": "check", "type": "validation", "condition": "steps.a.output.n > 5"}
    )
    assert state.steps["check"].status == S.STEP_FAILED
    assert "condition is false: steps.a.output.n > 5" in state.steps["check"].error


def test_a_validation_against_a_schema_fails_naming_the_field_and_the_problem():
    _, state, _ = run_all(
        echo("a", params={"rows": [{"amount": 1}, {"amount": "x"}]}),
        {
            "id": "check",
            "type": "validation",
            "target": "steps.a.output.rows",
            "schema": {"type": "array", "items": {"type": "object", "properties": {"amount": {"type": "number"}}}},
        },
    )
    error = state.steps["check"].error
    assert state.steps["check"].status == S.STEP_FAILED
    assert error.startswith("validation failed") and "1/amount" in error and "'x' is not of type 'number'" in error


def test_a_validation_reading_a_missing_field_fails_with_the_template_error():
    _, state, _ = run_all(echo("a"), {"id": "check", "type": "validation", "condition": "steps.a.output.nope"})
    assert state.steps["check"].status == S.STEP_FAILED and "nope" in state.steps["check"].error


# --- gates and failures -------------------------------------------------------------------------


def test_human_input_returns_a_gate_and_nothing_after_it_runs():
    last, _, ran = run_all(echo("a"), {"id": "ask", "type": "human_input", "question": "ok?"}, echo("b"))
    assert (last.kind, last.step.id, last.reason) == ("gate", "ask", "human_input")
    assert ran == ["a"]


def test_needs_human_turns_a_ready_step_into_a_gate():
    seen = []

    def needs_human(step, state):
        seen.append(step.id)
        return "coaching" if step.id == "b" else None

    last, state, ran = run_all(echo("a"), echo("b"), needs_human=needs_human)
    assert (last.kind, last.step.id, last.reason) == ("gate", "b", "coaching")
    assert ran == ["a"] and seen == ["a", "b"]
    assert state.steps["b"].status == S.STEP_PENDING


def test_needs_human_is_not_asked_about_skipped_steps():
    seen = []
    run_all(echo("a", when="false"), echo("b"), needs_human=lambda step, state: seen.append(step.id))
    assert seen == ["b"]


def test_a_failed_dependency_fails_the_execution_naming_the_step():
    last, state, ran = run_all({"id": "a", "tool": "fail"}, echo("b"))
    assert state.steps["a"].status == S.STEP_FAILED and "the disk is full" in state.steps["a"].error
    assert (last.kind, last.step.id) == ("fail", "b")
    assert "'a'" in last.reason and "failed" in last.reason
    assert ran == ["a"]


@pytest.mark.parametrize("status", [S.STEP_REJECTED, S.STEP_CANCELLED])
def test_a_rejected_or_cancelled_dependency_also_fails(status):
    defn = define(echo("a"), echo("b"))
    state = new_state(defn)
    state.steps["a"].status = status
    nxt = next_action(defn, state)
    assert nxt.kind == "fail" and status in nxt.reason


def test_a_failed_step_that_nothing_depends_on_still_fails_the_execution():
    last, _, _ = run_all(echo("a"), {"id": "b", "tool": "fail", "depends_on": []})
    assert last.kind == "fail"


# --- progress and context -----------------------------------------------------------------------


def test_progress_counts_done_steps_of_every_kind():
    defn = define(echo("a"), echo("b"), echo("c"))
    state = new_state(defn)
    assert progress(state) == {"done": 0, "total": 3, "percent": 0.0}
    state.steps["a"].status = S.STEP_SUCCEEDED
    state.steps["b"].status = S.STEP_RUNNING
    assert progress(state) == {"done": 1, "total": 3, "percent": 33.3}
    state.steps["b"].status, state.steps["c"].status = S.STEP_SKIPPED, S.STEP_FAILED
    assert progress(state) == {"done": 3, "total": 3, "percent": 100.0}


def test_progress_during_a_drive_ends_at_all_steps():
    _, state, _ = decision_flow(n=11)
    assert progress(state) == {"done": 4, "total": 4, "percent": 100.0}


def test_template_context_exposes_vars_step_outputs_and_the_execution():
    defn = define(echo("a"))
    state = new_state(defn, {"who": "w"})
    state.steps["a"].output = {"x": 1}
    assert template_context(state) == {
        "vars": {"who": "w"},
        "steps": {"a": {"output": {"x": 1}, "status": "pending"}},
        "execution": {"id": "ex1", "mode": "normal"},
        "feedback": {"a": None},
    }
    state.feedback = {"a": "looks right"}
    assert template_context(state)["feedback"] == {"a": "looks right"}
