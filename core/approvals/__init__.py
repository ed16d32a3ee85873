"""Approvals: an `approval` step, or a policy-forced review of a tool call, waiting for M people to say yes.

Pure rules, no storage (services/approvals/: service.py loads and stores, decisions.py and deadlines.py call these):
- what an approval step asks for (ApprovalSpec: approvers, quorum, separate duties, timeout, message; its fields are
  checked by core.workflow.format's ApprovalStep);
- who may decide (`check_eligible`): a member whose role satisfies one of `approvers.roles` (role hierarchy
  operator < lead < admin, so `lead` is satisfied by a lead or an admin) or who is named in `approvers.users`
  (by email or user id); with `separate_duties`, never the person who started the execution;
- how decisions add up (`decide`): `quorum` distinct people approving (an `edit` counts as its author's approve)
  approves; any one eligible reject rejects; the same person deciding twice is a 409 (their first decision stands);
- what a deadline does (`time_out`): `on_timeout` approve or reject (recorded as decided by "system"), or fail
  (the approval expires and its execution fails);
- cancelling the execution expires its pending approvals (`expire`).

A decision on an approval that is no longer pending is a 409 and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from core.errors import Conflict, Forbidden, ValidationFailed

KINDS = ("step", "tool_call", "plan", "gateway")
# kinds whose params a reviewer may edit: a tool call of a step, and an agent's call held by the MCP gateway
EDITABLE = ("tool_call", "gateway")
PENDING, APPROVED, REJECTED, EXPIRED = "pending", "approved", "rejected", "expired"
STATUSES = (PENDING, APPROVED, REJECTED, EXPIRED)
FINAL = frozenset({APPROVED, REJECTED, EXPIRED})
# the `status` filter of a list: the four statuses, and `decided` (approved or rejected by people or a timeout)
STATUS_FILTERS: dict[str, tuple[str, ...]] = {
    PENDING: (PENDING,),
    "decided": (APPROVED, REJECTED),
    EXPIRED: (EXPIRED,),
    APPROVED: (APPROVED,),
    REJECTED: (REJECTED,),
}
DECISIONS = ("approve", "reject", "edit")
ON_TIMEOUT = ("approve", "reject", "fail")
ROLES = ("operator", "lead", "admin")
RANK = {role: i for i, role in enumerate(ROLES)}
SYSTEM = "system"
DEFAULT_ROLES = ("lead",)
MAX_USERS = 100
MAX_MESSAGE = 10_000
SPEC_KEYS = ("message", "approvers", "quorum", "separate_duties", "on_timeout")  # plus timeout_s


@dataclass(frozen=True)
class ApprovalSpec:
    """What an approval step (or a policy forcing a review) asks for."""

    roles: tuple[str, ...] = DEFAULT_ROLES
    users: tuple[str, ...] = ()
    quorum: int = 1
    separate_duties: bool = False
    timeout_s: float | None = None  # None: waits for people as long as it takes
    on_timeout: str = "reject"
    message: str = ""

    @property
    def approvers(self) -> dict[str, list[str]]:
        return {"roles": list(self.roles), "users": list(self.users)}


@dataclass(frozen=True)
class Actor:
    """Who decides: their user id, email and role in the approval's workspace."""

    user_id: str
    email: str
    role: str


@dataclass(frozen=True)
class ApprovalState:
    kind: str
    status: str
    approvers: dict[str, list[str]]
    quorum: int = 1
    separate_duties: bool = False
    started_by: str | None = None  # the user id of whoever started the execution
    on_timeout: str = "reject"
    decisions: tuple[dict[str, Any], ...] = field(default_factory=tuple)


def satisfies(role: str, required: str) -> bool:
    """Whether `role` is at least `required` in the hierarchy operator < lead < admin."""
    return RANK.get(role, -1) >= RANK.get(required, len(ROLES))


def check_eligible(state: ApprovalState, actor: Actor) -> None:
    """Forbidden (403) unless `actor` may decide this approval."""
    if state.separate_duties and state.started_by and actor.user_id == state.started_by:
        raise Forbidden(
            "separation of duties: you started this execution, so someone else must approve it",
            details={"separate_duties": True},
        )
    named = {u.lower() for u in state.approvers.get("users", [])}
    if actor.email.lower() in named or actor.user_id.lower() in named:
        return
    roles = state.approvers.get("roles", [])
    if any(satisfies(actor.role, r) for r in roles):
        return
    raise Forbidden(
        f"you may not decide this approval: it needs the role {' or '.join(roles) or '(none)'}"
        f"{' or one of the named users' if named else ''}; you are {actor.role}",
        details={"approvers": state.approvers, "role": actor.role},
    )


def approvals_counted(decisions: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> set[str]:
    """The distinct people whose approval counts: approves and edits since the last edit (an edit changes what
    is approved, so approvals of the params before it no longer count)."""
    counted: set[str] = set()
    for d in decisions:
        if d["decision"] == "edit":
            counted = {d["user"]}
        elif d["decision"] == "approve":
            counted.add(d["user"])
    return counted


def check_open(state: ApprovalState) -> None:
    """Conflict unless pending; an expired approval's says why it expired (its execution was cancelled, the agent
    identity whose call it reviews was revoked)."""
    if state.status != PENDING:
        last = state.decisions[-1] if state.decisions else {}
        reason = last.get("comment") if state.status == EXPIRED and last.get("decision") == "expire" else None
        raise Conflict(
            f"this approval is already {state.status}" + (f": {reason}" if reason else ""),
            details={"status": state.status, **({"reason": reason} if reason else {})},
        )


def decide(state: ApprovalState, actor: Actor, decision: str, comment: str | None, at: datetime) -> ApprovalState:
    """The approval after `actor`'s decision; raises Conflict (not pending, already decided by them), Forbidden
    (not eligible) or ValidationFailed (an unknown decision, or `edit` on an approval that is not a tool call).
    Checking `edit`'s params against the tool is the caller's (it knows the tools)."""
    if decision not in DECISIONS:
        raise ValidationFailed("unknown decision", details={"decision": [f"must be one of {list(DECISIONS)}"]})
    check_open(state)
    if decision == "edit" and state.kind not in EDITABLE:
        raise ValidationFailed(
            "only a tool call's approval can be edited",
            details={"decision": [f"edit is for tool_call approvals; this one is a {state.kind}"]},
        )
    check_eligible(state, actor)
    if any(d["user_id"] == actor.user_id for d in state.decisions if d.get("user_id")):
        raise Conflict("already decided by you: your first decision stands", details={"user": actor.email})
    entry = {"user": actor.email, "user_id": actor.user_id, "decision": decision, "comment": comment or "", "at": at}
    decisions = (*state.decisions, entry)
    if decision == "reject":
        status = REJECTED
    else:
        status = APPROVED if len(approvals_counted(decisions)) >= state.quorum else PENDING
    return replace(state, status=status, decisions=decisions)


def is_due(status: str, deadline: datetime | None, now: datetime) -> bool:
    return status == PENDING and deadline is not None and deadline <= now


def time_out(state: ApprovalState, at: datetime, timeout_s: float | None = None) -> ApprovalState:
    """What the deadline does to a pending approval: on_timeout approve / reject (decided by "system") or fail
    (expired; the caller fails the execution)."""
    check_open(state)
    waited = f" after {timeout_s:g}s" if timeout_s else ""
    if state.on_timeout == "fail":
        status, decision = EXPIRED, "expire"
        comment = f"no decision{waited}: the approval expired and the execution fails"
    else:
        status = APPROVED if state.on_timeout == "approve" else REJECTED
        decision = state.on_timeout
        comment = f"no decision{waited}: {decision}d on timeout"
    entry = {"user": SYSTEM, "user_id": None, "decision": decision, "comment": comment, "at": at}
    return replace(state, status=status, decisions=(*state.decisions, entry))


def expire(state: ApprovalState, at: datetime, actor: str, reason: str) -> ApprovalState:
    """A pending approval whose execution ended some other way (cancelled): it leaves every queue."""
    check_open(state)
    entry = {"user": actor, "user_id": None, "decision": "expire", "comment": reason, "at": at}
    return replace(state, status=EXPIRED, decisions=(*state.decisions, entry))
