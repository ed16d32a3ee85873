"""The one table of execution transitions: every legal move works, every other one is a Conflict."""

import pytest

from core.errors import Conflict
from core.execution import states as S

LEGAL = [
    (trigger, source, target) for trigger, (sources, target) in S.TRANSITIONS.items() for source in sorted(sources)
]
ILLEGAL = [
    (trigger, source) for trigger, (sources, _) in S.TRANSITIONS.items() for source in S.STATES if source not in sources
]


@pytest.mark.parametrize("trigger, source, target", LEGAL)
def test_each_trigger_from_an_allowed_state_leads_to_its_target(trigger, source, target):
    assert S.transition(source, trigger) == target


@pytest.mark.parametrize("trigger, source", ILLEGAL)
def test_each_trigger_from_any_other_state_is_a_conflict(trigger, source):
    with pytest.raises(Conflict) as info:
        S.transition(source, trigger)
    assert info.value.code == "conflict"
    assert info.value.details == {"status": source, "action": trigger}


@pytest.mark.parametrize("trigger, source", [(t, s) for t in S.TRANSITIONS for s in S.STATES])
def test_can_agrees_with_transition(trigger, source):
    try:
        S.transition(source, trigger)
        allowed = True
    except Conflict:
        allowed = False
    assert S.can(source, trigger) is allowed


@pytest.mark.parametrize("terminal", sorted(S.TERMINAL))
def test_terminal_states_allow_nothing_but_a_persons_recovery_of_a_failure(terminal):
    for trigger in S.TRANSITIONS:
        if (terminal, trigger) == (S.FAILED, "recover"):  # retry a step, resume from one (core/execution/recovery.py)
            assert S.transition(terminal, trigger) == S.RESUMED
            continue
        assert not S.can(terminal, trigger)
        with pytest.raises(Conflict, match=f"already {terminal}"):
            S.transition(terminal, trigger)


def test_the_table_only_names_known_states():
    for trigger, (sources, target) in S.TRANSITIONS.items():
        assert sources <= set(S.STATES), trigger
        assert target in S.STATES, trigger


def test_states_are_the_ones_the_design_lists():
    # draft and approved: a plan before it runs (docs/plans.md)
    assert set(S.STATES) == {
        "draft",
        "approved",
        "pending",
        "running",
        "paused",
        "waiting_decision",
        "waiting_clarification",
        "waiting_correction",
        "waiting_approval",
        "resumed",
        "completed",
        "failed",
        "cancelled",
    }
    assert S.TERMINAL == {"completed", "failed", "cancelled"}
    assert S.ACTIVE | S.TERMINAL == set(S.STATES) and not S.ACTIVE & S.TERMINAL
    assert S.WAITING <= S.ACTIVE and S.RUNNABLE <= S.ACTIVE


def test_every_non_terminal_state_can_be_cancelled_and_failed():
    for state in S.ACTIVE:
        assert S.transition(state, "cancel") == S.CANCELLED
        assert S.transition(state, "fail") == S.FAILED


def test_every_non_terminal_state_has_a_way_forward_other_than_cancel_or_fail():
    for state in S.ACTIVE:
        assert any(S.can(state, t) for t in S.TRANSITIONS if t not in ("cancel", "fail")), state


def test_every_waiting_state_can_be_left_by_a_human():
    for state in S.WAITING:
        targets = {target for t, (sources, target) in S.TRANSITIONS.items() if state in sources}
        assert targets & {S.RUNNING, S.RESUMED}, state


def test_a_conflict_message_names_the_state_and_the_action():
    with pytest.raises(Conflict, match="cannot await decision an execution that is paused"):
        S.transition(S.PAUSED, "await_decision")


def test_an_unknown_trigger_is_a_programming_error_not_a_conflict():
    with pytest.raises(ValueError, match="teleport"):
        S.transition(S.RUNNING, "teleport")


def test_step_states_that_let_dependents_run_are_done_states():
    assert S.STEP_SATISFIES <= S.STEP_DONE
    assert S.STEP_PENDING not in S.STEP_DONE and S.STEP_RUNNING not in S.STEP_DONE and S.STEP_WAITING not in S.STEP_DONE


def test_a_plan_is_approved_then_executed_and_a_draft_cannot_be_executed():
    assert S.transition(S.DRAFT, "approve_plan") == S.APPROVED
    assert S.transition(S.APPROVED, "execute") == S.PENDING
    assert S.transition(S.APPROVED, "revise") == S.DRAFT
    with pytest.raises(Conflict):
        S.transition(S.DRAFT, "execute")
    assert S.DRAFT not in S.RUNNABLE and S.APPROVED not in S.RUNNABLE  # a restart never runs a plan not executed


def test_a_step_paused_for_clarification_may_be_corrected_then_resumed():
    assert S.transition(S.WAITING_CLARIFICATION, "await_correction") == S.WAITING_CORRECTION
    assert S.transition(S.WAITING_CORRECTION, "resume") == S.RESUMED
