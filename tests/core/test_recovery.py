"""Recovery of a failed execution, the pure rules: what may be retried, what one may resume from (and what that
skips), edited params named field by field, a retry's new key against a crash re-run's kept key, and a run's
history told in words."""

import pytest

from core.errors import Conflict, ValidationFailed
from core.execution import history as H
from core.execution import recovery as R
from core.execution import states as S
from core.execution.engine import call_key, next_action
from tests.core.test_engine import define, drive, echo, make_registry, new_state


def failed_at(defn, failed: str, done=()):
    """A state as the runner leaves it when `failed` fails: the steps in `done` succeeded, the rest pending."""
    state = new_state(defn)
    for sid in done:
        state.steps[sid].status = S.STEP_SUCCEEDED
    state.steps[failed].status, state.steps[failed].error = S.STEP_FAILED, "tool 'fail' failed: the disk is full"
    state.steps[failed].run, state.steps[failed].idempotency_key = 1, call_key("ex1", failed, 1)
    state.status = S.FAILED
    return state


CHAIN = (
    echo("a"),
    {"id": "b", "tool": "fail", "depends_on": ["a"]},
    echo("c", depends_on=["b"]),
    echo("d", depends_on=["c"]),
    echo("e", depends_on=[]),
)


def test_only_the_failed_step_of_a_failed_execution_may_be_retried():
    defn = define(*CHAIN)
    state = failed_at(defn, "b", done=["a"])
    assert R.check_retry(S.FAILED, state.steps, "b").step_id == "b"
    with pytest.raises(Conflict) as info:
        R.check_retry(S.FAILED, state.steps, "a")
    assert "did not fail (succeeded)" in info.value.message and info.value.details["failed_steps"] == ["b"]
    with pytest.raises(Conflict, match="did not fail"):
        R.check_retry(S.FAILED, state.steps, "c")
    with pytest.raises(ValidationFailed) as unknown:
        R.check_retry(S.FAILED, state.steps, "zz")
    assert "step_id" in unknown.value.details


@pytest.mark.parametrize("status", sorted(set(S.STATES) - {S.FAILED}))
def test_retry_and_resume_need_a_failed_execution(status):
    defn = define(*CHAIN)
    state = failed_at(defn, "b", done=["a"])
    for check in (
        lambda: R.check_retry(status, state.steps, "b"),
        lambda: R.resume_skips(defn, status, state.steps, "c"),
    ):
        with pytest.raises(Conflict) as info:
            check()
        assert "only a failed execution can be" in info.value.message and info.value.details["status"] == status


def test_a_rejected_step_may_be_retried_too():
    defn = define(*CHAIN)
    state = failed_at(defn, "b", done=["a"])
    state.steps["b"].status = S.STEP_REJECTED
    assert R.check_retry(S.FAILED, state.steps, "b").status == S.STEP_REJECTED


def test_resume_from_skips_the_failed_step_and_what_the_chosen_step_waits_for():
    defn = define(*CHAIN)
    state = failed_at(defn, "b", done=["a"])
    assert R.resume_skips(defn, S.FAILED, state.steps, "c") == ["b"]
    assert R.resume_skips(defn, S.FAILED, state.steps, "d") == ["b", "c"]
    # e waits for nothing: only the failed step is skipped, c and d run after it as usual
    assert R.resume_skips(defn, S.FAILED, state.steps, "e") == ["b"]


def test_resume_from_then_runs_the_rest():
    defn = define(*CHAIN)
    state = failed_at(defn, "b", done=["a"])
    for sid in R.resume_skips(defn, S.FAILED, state.steps, "d"):
        state.steps[sid].status = S.STEP_SKIPPED
    state.status = S.transition(S.FAILED, "recover")
    assert state.status == S.RESUMED
    assert next_action(defn, state).kind == "run"
    drive(defn, state, make_registry())
    assert {sid: st.status for sid, st in state.steps.items()} == {
        "a": "succeeded",
        "b": "skipped",
        "c": "skipped",
        "d": "succeeded",
        "e": "succeeded",
    }


def test_resume_from_a_step_that_ran_or_failed_is_refused():
    defn = define(*CHAIN)
    state = failed_at(defn, "b", done=["a"])
    with pytest.raises(Conflict) as ran:
        R.resume_skips(defn, S.FAILED, state.steps, "a")
    assert "already ran (succeeded)" in ran.value.message and ran.value.details["not_run"] == ["c", "d", "e"]
    with pytest.raises(Conflict, match="retry it instead"):
        R.resume_skips(defn, S.FAILED, state.steps, "b")


def test_resume_from_a_step_that_reads_a_skipped_output_is_refused():
    defn = define(echo("a"), {"id": "b", "tool": "fail"}, echo("c", params={"message": "{{ steps.b.output.x }}"}))
    state = failed_at(defn, "b", done=["a"])
    with pytest.raises(Conflict) as info:
        R.resume_skips(defn, S.FAILED, state.steps, "c")
    assert "reads the output of step 'b'" in info.value.message and info.value.details["reads"] == ["b"]


def test_a_retry_is_a_new_run_with_a_new_key_a_crash_rerun_keeps_its_key():
    # the runner (services/orchestration/runner.py drive) keeps the key of a step whose key is set (a crash re-run) and
    # makes the next run's key when it is cleared, which a retry does
    first = call_key("ex1", "b", 1)
    assert call_key("ex1", "b", 1) == first  # a crash re-run of run 1
    assert call_key("ex1", "b", 2) != first  # the retry: run 2


def test_edited_params_are_checked_against_the_tools_schema_naming_each_field():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer"},
            "deep": {"type": "object", "properties": {"n": {"type": "number"}}},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert R.params_problems(schema, {"a": 1, "b": 2}) == {}
    problems = R.params_problems(schema, {"a": "abc", "deep": {"n": "x"}, "zz": 1})
    assert set(problems) == {"params.a", "params.b", "params.deep.n", "params"}
    assert problems["params.b"] == ["is required"] and "not of type 'integer'" in problems["params.a"][0]
    assert R.params_problems(schema, ["a"]) == {"params": ["must be an object"]}


def test_the_retry_record_says_what_was_done():
    entry = R.retry_entry(
        "retry",
        "b",
        "op@x",
        "2026-01-01T00:00:00+00:00",
        error="boom",
        run=1,
        params_before={"p": 1},
        params_after={"p": 2},
    )
    assert entry["edited"] and entry["failed_run"] == 1 and entry["params_after"] == {"p": 2}
    control = R.with_entry(R.with_entry(None, entry), R.retry_entry("resume_from", "d", "op@x", "t", skipped=["b"]))
    assert [e["kind"] for e in control["retries"]] == ["retry", "resume_from"]
    assert control["retries"][1]["skipped"] == ["b"]


def test_a_rerun_needs_an_execution_that_ended():
    for status in S.TERMINAL:
        R.check_rerun(status)
    with pytest.raises(Conflict, match="still running"):
        R.check_rerun(S.RUNNING)


def test_changes_are_field_by_field_and_keep_types():
    assert R.changes({"total": 5, "to": "a"}, {"total": "5", "to": "a", "cc": "b"}) == [
        {"path": "total", "before": 5, "after": "5", "change": "changed"},
        {"path": "cc", "before": None, "after": "b", "change": "added"},
    ]
    assert R.changes({"x": {"y": 1}}, {}) == [{"path": "x", "before": {"y": 1}, "after": None, "change": "removed"}]
    assert R.changes([1], [1]) == []


def test_history_tells_decisions_questions_approvals_and_retries_in_words():
    steps = [
        {
            "step_id": "pay",
            "name": "Pay",
            "type": "action",
            "status": "succeeded",
            "attempts": 1,
            "finished_at": "2026-01-01T00:00:09+00:00",
        },
        {
            "step_id": "ask",
            "name": "Ask",
            "type": "human_input",
            "status": "succeeded",
            "output": {"answer": "blue"},
            "finished_at": "2026-01-01T00:00:10+00:00",
        },
    ]
    suggestions = [
        {
            "id": "s1",
            "step_id": "pay",
            "params": {"total": 5},
            "source": "definition",
            "created_at": "2026-01-01T00:00:01+00:00",
            "status": "decided",
        }
    ]
    decisions = {
        "s1": {
            "decision": "correct",
            "correction": {"total": 7},
            "operator": "op@x",
            "feedback": None,
            "created_at": "2026-01-01T00:00:02+00:00",
        }
    }
    approvals = [
        {
            "id": "ap1",
            "step_id": "pay",
            "kind": "step",
            "quorum": 2,
            "message": "Pay?",
            "created_at": "2026-01-01T00:00:03+00:00",
            "decisions": [
                {"user": "lead@x", "decision": "approve", "comment": "fine", "at": "2026-01-01T00:00:04+00:00"},
                {"user": "boss@x", "decision": "reject", "comment": "too much", "at": "2026-01-01T00:00:05+00:00"},
            ],
        }
    ]
    audit = [
        {
            "action": "pause",
            "actor": "op@x",
            "target_type": "step",
            "target_id": "ex/pay",
            "before": None,
            "after": {"step_id": "pay", "question": "Which account?"},
            "created_at": "2026-01-01T00:00:06+00:00",
        },
        {
            "action": "resume",
            "actor": "op@x",
            "target_type": "step",
            "target_id": "ex/pay",
            "before": {"question": "Which account?"},
            "after": {"step_id": "pay", "feedback": "the blue one"},
            "created_at": "2026-01-01T00:00:07+00:00",
        },
        {
            "action": "retry",
            "actor": "op@x",
            "target_type": "step",
            "target_id": "ex/pay",
            "before": {"error": "disk full", "run": 1},
            "after": {
                "step_id": "pay",
                "edited": True,
                "params": {"total": 8},
                "params_before": {"total": 7},
                "next_run": 2,
            },
            "created_at": "2026-01-01T00:00:08+00:00",
        },
        {
            "action": "execution_start",
            "actor": "op@x",
            "target_type": "execution",
            "target_id": "ex",
            "after": {"mode": "coaching", "variables": {}},
            "created_at": "2026-01-01T00:00:00+00:00",
        },
    ]
    per_step, wide = H.build(steps, suggestions, decisions, approvals, audit)
    pay = [e["text"] for e in per_step[0]["events"]]
    assert pay == [
        'Suggested (definition): {"total": 5}',
        "Corrected by op@x: 1 change",
        "Approval asked for (2 needed): Pay?",
        "Approved by lead@x: “fine”",
        "Rejected by boss@x: “too much”",
        "Paused by op@x before this step: “Which account?”",
        "Resumed by op@x with the answer: “the blue one”",
        "Retried by op@x as run 2 with changed params, after: disk full",
        "Succeeded",
    ]
    corrected = per_step[0]["events"][1]
    assert corrected["changes"] == [{"path": "total", "before": 5, "after": 7, "change": "changed"}]
    resumed = per_step[0]["events"][6]
    assert (resumed["question"], resumed["answer"], resumed["actor"]) == ("Which account?", "the blue one", "op@x")
    assert per_step[0]["events"][7]["changes"] == [{"path": "total", "before": 7, "after": 8, "change": "changed"}]
    assert [e["text"] for e in per_step[1]["events"]] == ["Answered: “blue”"]
    assert [e["kind"] for e in wide] == ["start"]


def test_a_rejection_is_told_with_its_reason_not_as_data():
    suggestions = [{"id": "s1", "step_id": "x", "params": {}, "created_at": "2026-01-01T00:00:01"}]
    decisions = {
        "s1": {
            "decision": "reject",
            "feedback": "wrong customer",
            "operator": "op@x",
            "created_at": "2026-01-01T00:00:02",
        }
    }
    steps = [
        {
            "step_id": "x",
            "name": "x",
            "type": "action",
            "status": "rejected",
            "error": "wrong customer",
            "finished_at": "2026-01-01T00:00:02",
        }
    ]
    per_step, _ = H.build(steps, suggestions, decisions, [], [])
    texts = [e["text"] for e in per_step[0]["events"]]
    assert "Rejected by op@x: wrong customer" in texts and "Rejected: wrong customer" in texts
    assert all("{" not in t for t in texts[1:])


@pytest.mark.parametrize(
    "after,text",
    [
        ({"tool": "file.read", "run": 1}, "Run 1 of file.read started"),
        ({"tool": None, "run": 0}, "The agent started"),
        ({"tool": "echo", "run": None}, "echo started"),
    ],
)
def test_a_run_is_told_without_a_run_0_or_a_tool_called_none(after, text):
    rows = [
        {
            "action": "tool_call",
            "actor": "system",
            "created_at": "2026-01-01T00:00:01",
            "target_type": "step",
            "target_id": "e1/x",
            "after": {"step_id": "x", "idempotency_key": "k", **after},
            "result": "started",
        }
    ]
    assert [e["text"] for e in H.audit_events(rows)] == [text]
