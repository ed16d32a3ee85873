"""Interactive control's pure rules: where an execution stops for clarification, what a correction may change and
how its errors are named, what a resume leaves, and the execution-state view."""

import pytest

from core import plans as P
from core.errors import Conflict, ValidationFailed
from core.execution import control as C
from core.execution import states as S
from core.execution.engine import clarification_for, next_action
from tests.core.test_engine import define, echo, new_state


def test_a_breakpoint_stops_before_its_step_and_a_resume_lets_it_run():
    defn = define(echo("a"), echo("b"))
    state = new_state(defn)
    state.breakpoints = {"a": "Proceed?"}
    nxt = next_action(defn, state)
    assert (nxt.kind, nxt.step.id, nxt.reason) == ("gate", "a", "clarification")
    state.breakpoints, state.clarified = {}, frozenset({"a"})
    assert next_action(defn, state).kind == "run"


def test_requires_clarification_asks_once_with_its_question():
    defn = define(echo("a", requires_clarification=True, clarification_question="Sure?"))
    state = new_state(defn)
    nxt = next_action(defn, state)
    assert nxt.reason == "clarification"
    assert clarification_for(nxt.step, state) == "Sure?"
    state.clarified = frozenset({"a"})
    assert next_action(defn, state).kind == "run"


def test_a_skipped_step_does_not_stop_for_its_breakpoint():
    defn = define(echo("a", when="false"))
    state = new_state(defn)
    state.breakpoints = {"a": "?"}
    assert next_action(defn, state).kind == "skip"


def test_a_correction_changes_only_correctable_fields():
    defn = define(echo("a"), echo("b", params={"message": "b"}))
    before, after, index = C.corrected_step(defn, "b", {"params": {"message": "x"}, "retries": 2})
    assert index == 1 and after["params"] == {"message": "x"} and after["retries"] == 2 and after["id"] == "b"
    assert before["params"] != after["params"]
    with pytest.raises(ValidationFailed) as info:
        C.corrected_step(defn, "b", {"id": "c", "type": "decision"})
    assert set(info.value.details) == {"correction.updated_step.id", "correction.updated_step.type"}
    with pytest.raises(ValidationFailed) as info:
        C.corrected_step(defn, "b", {})
    assert set(info.value.details) == {"correction.updated_step"}


def test_the_validators_paths_of_the_corrected_step_are_named_as_the_request():
    error = ValidationFailed("x", details={"steps[1].tool": ["unknown"], "steps[1]": ["reads"], "steps[0].id": ["?"]})
    named = C.correction_paths(error, 1).details
    assert named == {
        "correction.updated_step.tool": ["unknown"],
        "correction.updated_step": ["reads"],
        "steps[0].id": ["?"],
    }


@pytest.mark.parametrize("step_status", [S.STEP_RUNNING, S.STEP_SUCCEEDED, S.STEP_FAILED, S.STEP_SKIPPED])
def test_a_step_that_ran_cannot_be_corrected_or_paused(step_status):
    with pytest.raises(Conflict):
        C.check_correctable(S.RUNNING, step_status, "a", None)
    with pytest.raises(Conflict):
        C.check_pausable(S.RUNNING, step_status, "a")


def test_a_waiting_step_is_corrected_only_while_paused_for_clarification():
    with pytest.raises(Conflict, match="pause it first"):
        C.check_correctable(S.WAITING_DECISION, S.STEP_WAITING, "a", {"kind": "decision", "step_id": "a"})
    C.check_correctable(S.WAITING_CLARIFICATION, S.STEP_WAITING, "a", {"kind": "clarification", "step_id": "a"})


def test_resume_applies_to_clarification_pauses_only():
    assert C.resume_refusal(S.WAITING_CLARIFICATION, {"kind": "clarification", "step_id": "a"}) is None
    assert "answer" in C.resume_refusal(S.WAITING_CLARIFICATION, {"kind": "human_input"}).message
    with pytest.raises(Conflict):
        C.resume_refusal(S.RUNNING, None)  # the table first


def test_after_resume_and_the_state_view():
    gate = {"kind": "clarification", "step_id": "a", "question": "Q?", "paused_at": "t0"}
    paused = C.state_view(S.WAITING_CLARIFICATION, gate, {"breakpoints": {"a": "Q?"}})
    assert {k: paused[k] for k in ("state", "step_id", "question", "paused_at", "feedback")} == {
        "state": S.WAITING_CLARIFICATION,
        "step_id": "a",
        "question": "Q?",
        "paused_at": "t0",
        "feedback": None,
    }
    control = C.after_resume({"breakpoints": {"a": "Q?", "b": "R?"}}, gate, "fine", "t1")
    assert control["breakpoints"] == {"b": "R?"} and control["clarified"] == ["a"]
    assert control["feedback"] == {"a": "fine"}
    view = C.state_view(S.RUNNING, None, control)
    assert (view["state"], view["step_id"], view["question"], view["paused_at"], view["feedback"]) == (
        S.RUNNING,
        "a",
        "Q?",
        "t0",
        "fine",
    )


def test_an_operator_may_approve_only_a_plan_whose_every_call_is_allowed():
    assert P.approver_role(["allow", "allow"]) == "operator"
    assert P.approver_role([]) == "operator"
    assert P.approver_role(["allow", "require_review"]) == "lead"
    assert P.approver_role(["allow", None]) == "lead"  # params not known before it runs
    assert P.definition({"steps": [], "mode": "coaching"}) == {"steps": [], "name": P.DEFAULT_NAME}
