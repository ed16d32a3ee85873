"""What each of the five decisions does (docs/design.md#decisions), to a step and to an agent's tool call:
core/coaching."""

from __future__ import annotations

import pytest

from core.coaching import decisions as D
from core.execution import states as S


def test_accept_and_correct_run_the_step_with_the_suggested_or_corrected_params():
    accept = D.for_step("accept", suggested={"a": 1})
    assert (accept.status, accept.trigger, accept.params, accept.record_correction) == (
        S.STEP_PENDING,
        "decide",
        {"a": 1},
        False,
    )
    correct = D.for_step("correct", suggested={"a": 1}, correction={"a": 2})
    assert (correct.params, correct.record_correction) == ({"a": 2}, True)


def test_manual_and_skip_end_the_step_without_running_it():
    manual = D.for_step("manual", suggested={"a": 1}, manual_output={"done": True})
    assert (manual.status, manual.output, manual.finished) == (S.STEP_SUCCEEDED, {"done": True}, True)
    skip = D.for_step("skip", suggested={"a": 1})
    assert (skip.status, skip.error, skip.finished) == (S.STEP_SKIPPED, "skipped by the operator", True)


def test_reject_asks_for_a_correction_or_stops_the_execution():
    ask = D.for_step("reject", suggested={}, feedback="wrong amount", operator="ann")
    assert (ask.status, ask.trigger, ask.ask_correction) == (None, "await_correction", True)
    assert ask.error == "rejected by ann: wrong amount"
    stop = D.for_step("reject", suggested={}, feedback="no", operator="ann", on_reject="stop")
    assert (stop.status, stop.trigger, stop.failure) == (S.STEP_REJECTED, "fail", "rejected by ann: no")


def test_a_decision_after_a_reject_moves_the_execution_on_by_its_correction():
    assert D.for_step("skip", suggested={}, correcting=True).trigger == "correct"


def test_a_tool_call_runs_on_accept_and_correct():
    assert D.for_tool_call("accept", suggested={"p": 1}).run_with == {"p": 1}
    corrected = D.for_tool_call("correct", suggested={"p": 1}, correction={"p": 2})
    assert corrected.run_with == {"p": 2} and corrected.record_correction and corrected.result is None


@pytest.mark.parametrize(
    "kind,extra,result,error",
    [
        ("manual", {"manual_output": {"rows": 3}}, 'done by hand by the operator; the result: {"rows": 3}', False),
        ("manual", {"manual_output": "42"}, "done by hand by the operator; the result: 42", False),
        ("skip", {}, "skipped by the operator: the call was not run", False),
        (
            "reject",
            {"feedback": "wrong file"},
            "rejected by the operator: wrong file. The call was not run. Do not repeat this call.",
            True,
        ),
    ],
)
def test_a_tool_call_that_does_not_run_gets_its_one_result_for_the_llm(kind, extra, result, error):
    effect = D.for_tool_call(kind, suggested={"p": 1}, **extra)
    assert (effect.run_with, effect.result, effect.error) == (None, result, error)


def test_every_decision_bumps_one_counter_of_the_session():
    assert set(D.STAT_OF) == set(D.DECISIONS)
    with pytest.raises(ValueError):
        D.for_step("approve", suggested={})
    with pytest.raises(ValueError):
        D.for_tool_call("approve", suggested={})
