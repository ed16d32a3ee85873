"""core.approvals: approval steps in definitions, who may decide, quorum, separate duties, timeouts."""

from datetime import UTC, datetime

import pytest

from core import approvals as A
from core.errors import Conflict, Forbidden, ValidationFailed
from core.execution import states as S
from core.execution.engine import ExecutionState, next_action
from core.workflow.validation import parse_definition
from tests.core.test_workflow_validation import echo, errors_of, wf

AT = datetime(2026, 1, 1, tzinfo=UTC)
ADA = A.Actor("u-ada", "ada@x.test", "lead")
BOB = A.Actor("u-bob", "bob@x.test", "admin")
OPS = A.Actor("u-ops", "ops@x.test", "operator")


def state(**kw) -> A.ApprovalState:
    base = {"kind": "step", "status": A.PENDING, "approvers": {"roles": ["lead"], "users": []}}
    return A.ApprovalState(**{**base, **kw})


def approval_step(**kw) -> dict:
    return {"id": "sign_off", "type": "approval", **kw}


# --- definitions ---------------------------------------------------------------------------------------


def test_an_approval_step_gets_the_defaults(tools):
    step = parse_definition(wf(approval_step()), tools).step("sign_off")
    assert step.type == "approval"
    assert step.approval == A.ApprovalSpec(
        roles=("lead",), users=(), quorum=1, separate_duties=False, timeout_s=None, on_timeout="reject", message=""
    )


def test_an_approval_step_keeps_what_it_asks_for_and_waits_for_the_steps_its_message_reads(tools):
    defn = parse_definition(
        wf(
            echo("total"),
            {"id": "other", "tool": "echo"},
            approval_step(
                message="Pay {{ steps.total.output.sum }}?",
                approvers={"roles": ["lead"], "users": ["Boss@X.test"]},
                quorum=2,
                separate_duties=True,
                timeout_s=3600,
                on_timeout="fail",
                depends_on=[],
            ),
        ),
        tools,
    )
    step = defn.step("sign_off")
    assert step.approval == A.ApprovalSpec(
        roles=("lead",),
        users=("boss@x.test",),
        quorum=2,
        separate_duties=True,
        timeout_s=3600.0,
        on_timeout="fail",
        message="Pay {{ steps.total.output.sum }}?",
    )
    assert step.requires == ("total",) and step.extra == {}


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"quorum": 0}, "quorum"),
        ({"quorum": -1}, "quorum"),
        ({"quorum": 1.5}, "quorum"),
        ({"quorum": True}, "quorum"),
        ({"quorum": 3, "approvers": {"users": ["a@x.test", "b@x.test"]}}, "quorum"),
        ({"approvers": {"roles": ["boss"]}}, "approvers.roles[0]"),
        ({"approvers": {"roles": "lead"}}, "approvers.roles"),
        ({"approvers": ["lead"]}, "approvers"),
        ({"approvers": {"roles": [], "users": []}}, "approvers"),
        ({"approvers": {"users": [""]}}, "approvers.users"),
        ({"approvers": {"groups": ["x"]}}, "approvers"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": -5}, "timeout_s"),
        ({"timeout_s": "1h"}, "timeout_s"),
        ({"on_timeout": "ignore"}, "on_timeout"),
        ({"message": 5}, "message"),
        ({"message": "{{ oops"}, "message"),
        ({"separate_duties": "yes"}, "separate_duties"),
    ],
)
def test_a_bad_approval_field_is_named(fields, where, tools):
    details = errors_of(wf(approval_step(**fields)), tools)
    assert list(details) == [f"steps[0].{where}"], details


def test_a_quorum_that_roles_can_meet_is_accepted_whatever_the_named_users(tools):
    step = parse_definition(
        wf(approval_step(quorum=5, approvers={"roles": ["operator"], "users": ["a@x.test"]})), tools
    ).step("sign_off")
    assert step.approval.quorum == 5


def test_the_engine_stops_at_an_approval_step_as_a_gate(tools):
    defn = parse_definition(wf(echo("a"), approval_step()), tools)
    st = ExecutionState.new("ex", defn, {})
    st.steps["a"].status = S.STEP_SUCCEEDED
    nxt = next_action(defn, st)
    assert (nxt.kind, nxt.step.id, nxt.reason) == ("gate", "sign_off", "approval")


# --- who may decide --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("role", "ok"), [("operator", False), ("lead", True), ("admin", True)])
def test_role_lead_is_satisfied_by_a_lead_or_an_admin(role, ok):
    actor = A.Actor("u", "u@x.test", role)
    if ok:
        A.check_eligible(state(), actor)
    else:
        with pytest.raises(Forbidden, match="needs the role lead"):
            A.check_eligible(state(), actor)


def test_a_named_user_may_decide_whatever_their_role_by_email_or_id():
    by_email = state(approvers={"roles": [], "users": ["ops@x.test"]})
    by_id = state(approvers={"roles": [], "users": ["u-ops"]})
    A.check_eligible(by_email, A.Actor("u-ops", "OPS@x.test", "operator"))
    A.check_eligible(by_id, OPS)
    with pytest.raises(Forbidden):
        A.check_eligible(by_email, A.Actor("u-2", "else@x.test", "admin"))


def test_separate_duties_refuses_whoever_started_the_execution_even_an_admin():
    st = state(separate_duties=True, started_by="u-bob")
    with pytest.raises(Forbidden, match="separation of duties"):
        A.decide(st, BOB, "approve", None, AT)
    assert A.decide(st, ADA, "approve", None, AT).status == A.APPROVED
    assert A.decide(state(started_by="u-bob"), BOB, "approve", None, AT).status == A.APPROVED  # off by default


# --- quorum ----------------------------------------------------------------------------------------------


def test_quorum_two_needs_two_distinct_people():
    st = state(quorum=2)
    once = A.decide(st, ADA, "approve", "fine", AT)
    assert once.status == A.PENDING and len(once.decisions) == 1
    with pytest.raises(Conflict, match="already decided by you"):
        A.decide(once, ADA, "approve", "again", AT)
    twice = A.decide(once, BOB, "approve", None, AT)
    assert twice.status == A.APPROVED
    assert [(d["user"], d["decision"], d["comment"]) for d in twice.decisions] == [
        ("ada@x.test", "approve", "fine"),
        ("bob@x.test", "approve", ""),
    ]


def test_one_reject_rejects_whatever_the_approvals_before():
    st = A.decide(state(quorum=3), ADA, "approve", None, AT)
    assert A.decide(st, BOB, "reject", "no", AT).status == A.REJECTED


def test_a_decided_approval_takes_no_more_decisions():
    for status in (A.APPROVED, A.REJECTED, A.EXPIRED):
        with pytest.raises(Conflict, match=f"already {status}"):
            A.decide(state(status=status), ADA, "approve", None, AT)


def test_an_edit_counts_as_its_authors_approve_and_resets_earlier_approvals():
    st = state(kind="tool_call", quorum=2)
    st = A.decide(st, ADA, "approve", None, AT)
    st = A.decide(st, BOB, "edit", "smaller", AT)
    assert st.status == A.PENDING and A.approvals_counted(st.decisions) == {"bob@x.test"}
    carol = A.Actor("u-carol", "carol@x.test", "lead")
    assert A.decide(st, carol, "approve", None, AT).status == A.APPROVED


def test_edit_is_only_for_tool_call_approvals_and_unknown_decisions_are_refused():
    with pytest.raises(ValidationFailed) as edit:
        A.decide(state(), ADA, "edit", None, AT)
    assert "decision" in edit.value.details
    with pytest.raises(ValidationFailed):
        A.decide(state(), ADA, "maybe", None, AT)


def test_an_ineligible_decision_changes_nothing():
    st = state(quorum=2)
    with pytest.raises(Forbidden):
        A.decide(st, OPS, "reject", None, AT)
    assert st.decisions == () and st.status == A.PENDING


# --- timeouts and cancel ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("on_timeout", "status", "decision"),
    [("approve", A.APPROVED, "approve"), ("reject", A.REJECTED, "reject"), ("fail", A.EXPIRED, "expire")],
)
def test_a_timeout_does_what_on_timeout_says_as_system(on_timeout, status, decision):
    st = A.time_out(state(on_timeout=on_timeout, quorum=2), AT, 60)
    assert st.status == status
    assert (st.decisions[-1]["user"], st.decisions[-1]["decision"]) == (A.SYSTEM, decision)
    assert "60s" in st.decisions[-1]["comment"]
    with pytest.raises(Conflict):
        A.time_out(st, AT)  # fires once


def test_is_due_only_for_pending_approvals_past_their_deadline():
    assert A.is_due(A.PENDING, AT, AT)
    assert not A.is_due(A.PENDING, None, AT)
    assert not A.is_due(A.APPROVED, AT, AT)
    assert not A.is_due(A.PENDING, datetime(2027, 1, 1, tzinfo=UTC), AT)


def test_expire_takes_a_pending_approval_out_and_only_a_pending_one():
    st = A.expire(state(), AT, "ada@x.test", "execution cancelled")
    assert st.status == A.EXPIRED and st.decisions[-1]["decision"] == "expire"
    with pytest.raises(Conflict):
        A.expire(st, AT, "ada@x.test", "again")
