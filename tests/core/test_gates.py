"""Deadlines on human gates (core.gates): what a definition may say, and what a deadline does to each gate."""

from datetime import UTC, datetime, timedelta

import pytest

from core import gates as G
from core.workflow.validation import parse_definition
from tests.core.test_workflow_validation import echo, errors_of, wf

ASK = {"id": "ask", "type": "human_input", "question": "Which account?"}


def step_timeout(defn, step_id):
    return defn.step(step_id).human_timeout


# --- definitions --------------------------------------------------------------------------------------------------


def test_a_step_without_deadline_waits_as_long_as_it_takes(tools):
    assert step_timeout(parse_definition(wf(echo("a"), ASK), tools), "a") is None


def test_a_steps_own_deadline_and_action(tools):
    defn = parse_definition(
        wf(
            echo("a", human_timeout_s=60, on_human_timeout="accept"),
            {**ASK, "human_timeout_s": 5, "on_human_timeout": "answer", "timeout_answer": "none"},
        ),
        tools,
    )
    assert step_timeout(defn, "a") == G.HumanTimeout(60.0, "accept")
    assert step_timeout(defn, "ask") == G.HumanTimeout(5.0, "answer", "none")


def test_a_deadline_alone_fails_the_gate_by_default(tools):
    assert step_timeout(parse_definition(wf(echo("a", human_timeout_s=1.5)), tools), "a") == G.HumanTimeout(1.5, "fail")


def test_the_workflow_default_reaches_every_gated_step_where_its_action_fits(tools):
    defn = parse_definition(
        wf(
            echo("a"),
            ASK,
            echo("b", on_human_timeout="skip"),
            echo("c", human_timeout_s=9),
            {"id": "d", "type": "decision", "condition": "true"},
            human_timeout_s=30,
            on_human_timeout="accept",
        ),
        tools,
    )
    assert step_timeout(defn, "a") == G.HumanTimeout(30.0, "accept")
    assert step_timeout(defn, "ask") == G.HumanTimeout(30.0, "fail")  # accept does not fit a question
    assert step_timeout(defn, "b") == G.HumanTimeout(30.0, "skip")
    assert step_timeout(defn, "c") == G.HumanTimeout(9.0, "accept")
    assert step_timeout(defn, "d") is None
    assert defn.source["human_timeout_s"] == 30 and defn.source["on_human_timeout"] == "accept"


def test_a_step_opts_out_of_the_workflow_default_with_null(tools):
    defn = parse_definition(wf(echo("a", human_timeout_s=None), human_timeout_s=30), tools)
    assert step_timeout(defn, "a") is None


@pytest.mark.parametrize(
    "step, field",
    [
        (echo("a", human_timeout_s=0), "steps[0].human_timeout_s"),
        (echo("a", human_timeout_s=-1), "steps[0].human_timeout_s"),
        (echo("a", human_timeout_s="60"), "steps[0].human_timeout_s"),
        (echo("a", human_timeout_s=True), "steps[0].human_timeout_s"),
        (echo("a", human_timeout_s=float("inf")), "steps[0].human_timeout_s"),
        (echo("a", on_human_timeout="skip"), "steps[0].on_human_timeout"),  # no seconds anywhere
        (echo("a", human_timeout_s=5, on_human_timeout="answer", timeout_answer=1), "steps[0].on_human_timeout"),
        (echo("a", human_timeout_s=5, on_human_timeout="later"), "steps[0].on_human_timeout"),
        (echo("a", human_timeout_s=5, timeout_answer="x"), "steps[0].timeout_answer"),
        ({**ASK, "human_timeout_s": 5, "on_human_timeout": "accept"}, "steps[0].on_human_timeout"),
        ({**ASK, "human_timeout_s": 5, "on_human_timeout": "answer"}, "steps[0].timeout_answer"),
        ({"id": "d", "type": "decision", "condition": "true", "human_timeout_s": 5}, "steps[0].human_timeout_s"),
        ({"id": "ok", "type": "approval", "on_human_timeout": "skip"}, "steps[0].on_human_timeout"),
    ],
)
def test_a_bad_step_deadline_is_refused_naming_the_field(step, field, tools):
    details = errors_of(wf(step), tools)
    assert list(details) == [field], details


@pytest.mark.parametrize(
    "extra, field",
    [
        ({"human_timeout_s": 0}, "human_timeout_s"),
        ({"on_human_timeout": "skip"}, "on_human_timeout"),
        ({"human_timeout_s": 5, "on_human_timeout": "answer"}, "on_human_timeout"),
        ({"human_timeout_s": 5, "timeout_answer": "x"}, "timeout_answer"),
    ],
)
def test_a_bad_workflow_default_is_refused_naming_the_field(extra, field, tools):
    details = errors_of(wf(echo("a"), **extra), tools)
    assert field in details, details


def test_the_approval_steps_own_timeout_is_untouched(tools):
    defn = parse_definition(
        wf({"id": "ok", "type": "approval", "timeout_s": 60, "on_timeout": "approve"}, human_timeout_s=10), tools
    )
    step = defn.step("ok")
    assert step.human_timeout is None and step.approval.timeout_s == 60 and step.approval.on_timeout == "approve"


# --- what a deadline does -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, configured, action",
    [
        (G.SUGGESTION, "accept", "accept"),
        (G.SUGGESTION, "skip", "skip"),
        (G.SUGGESTION, "fail", "fail"),
        (G.CORRECTION, "skip", "skip"),
        (G.CORRECTION, "fail", "fail"),
        (G.CORRECTION, "accept", "fail"),
        (G.CLARIFICATION, "answer", "answer"),
        (G.CLARIFICATION, "skip", "skip"),
        (G.CLARIFICATION, "accept", "fail"),
    ],
)
def test_each_gate_takes_the_actions_that_fit_it_and_fails_otherwise(kind, configured, action):
    assert G.action_for(kind, configured) == action


NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_gate_is_due_only_while_its_execution_waits_at_it_and_its_deadline_passed():
    past, future = NOW - timedelta(seconds=1), NOW + timedelta(seconds=1)
    assert G.is_due("waiting_decision", G.SUGGESTION, past, NOW)
    assert G.is_due("waiting_decision", G.SUGGESTION, NOW, NOW)
    assert not G.is_due("waiting_decision", G.SUGGESTION, future, NOW)
    assert not G.is_due("waiting_decision", G.SUGGESTION, None, NOW)
    assert not G.is_due("paused", G.SUGGESTION, past, NOW)
    assert not G.is_due("running", G.SUGGESTION, past, NOW)
    assert G.is_due("waiting_correction", G.CORRECTION, past, NOW)
    assert G.is_due("waiting_clarification", G.CLARIFICATION, past, NOW)
    assert not G.is_due("waiting_approval", "approval", past, NOW)  # approvals keep their own deadlines


def test_the_deadline_is_the_opening_plus_the_timeout_and_the_message_says_what_happened():
    assert G.deadline(NOW, G.HumanTimeout(90, "skip")) == NOW + timedelta(seconds=90)
    assert G.deadline(NOW, None) is None
    assert G.message(G.SUGGESTION, "skip", 90) == "no decision within 90s: skipped"
    assert G.message(G.CLARIFICATION, "fail", 1.5) == "no answer within 1.5s: the execution fails"
