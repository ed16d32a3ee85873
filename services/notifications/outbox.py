"""The outbox: a notification is stored with the change that causes it, and sent after that change commits.

The hooks (`approval_opened`, `status_changed`, `demoted`) are called by the services where Coach's events happen;
each only notes the event in the session's unit of work (its `noted`, services/unit_of_work.py; no SQL). At the end
of the unit of work, before it commits (UnitOfWork.before_commit), the noted events are fanned out (`Config.fan_out`,
the outbox's settings the unit of work was given by whoever built it): who hears each (core/notifications:
routes, default recipients, preferences, quiet hours) and one `OutboxRow` per (event, recipient, channel) is added to
the same transaction, so an event and its notifications are committed together or not at all. (event_id, recipient,
channel) is unique: an event noted twice, or again by a later transaction, gives no second row.
services/notifications/sender.py sends the rows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, object_session

from core import notifications as N
from services.models.executions import Execution
from services.models.notifications import Escalation, NotificationPrefs, NotificationRoute, OutboxRow, WebhookEndpoint
from services.models.users import Membership, User
from services.notifications import slack as slack_channel
from services.orm import utcnow
from services.unit_of_work import UnitOfWork

from . import push

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Config:
    """The outbox's settings, given to every unit of work that writes notifications (its `notifications`: the
    runner's, services/container.py); a unit of work without them can note none."""

    email: bool = False  # an SMTP server is configured: email rows are written
    push: bool = True  # Web Push rows are written for the people's subscribed browsers (push.py)

    def fan_out(self, uow: UnitOfWork) -> None:
        """The unit of work's noted events made into outbox rows, then its rows noted without routing (run by
        UnitOfWork.before_commit, in the session, before the commit)."""
        _fan_out(uow.session, self, uow)


# an event noted in a session, made at its commit: (kind, event id, facts, payload), or None when moot by then
Build = Callable[[Session], "tuple[str, str, N.Facts, dict] | None"]


def _writing(session: Session | None) -> UnitOfWork | None:
    """The unit of work whose notifications a note goes with (None: the object is in no session, a transient one).
    A note in a session outside any unit of work, or in a unit of work given no outbox settings (`unit_of_work(db)`),
    would be lost: an error."""
    if session is None:
        return None
    uow = UnitOfWork.of(session)
    if uow is None or uow.notifications is None:
        raise RuntimeError(
            "a notification noted outside a unit of work that writes notifications (services/unit_of_work.py) "
            "would be lost"
        )
    return uow


def _note(session: Session | None, key: str, build: Build) -> None:
    uow = _writing(session)
    if uow is not None:
        uow.noted[key] = build  # the last note of the same thing wins (made by _fan_out, before the commit)


def note_rows(session: Session | None, key: str, build: Callable[[Session], list[OutboxRow]]) -> None:
    """Rows that need no routing, made at the commit (after the routed events'): e.g. the Slack updates of a decided
    review (slack_updates.py)."""
    uow = _writing(session)
    if uow is not None:
        uow.noted_rows[key] = build


# -- hooks ------------------------------------------------------------------------------------------------------------

WATCHED = frozenset(("waiting_decision", "waiting_clarification", "failed"))


def status_changed(ex: Execution) -> None:
    """An execution's status changed (services/executions.set_status): a suggestion waiting, a question asked, a
    run failed are read from the execution as it is when the transaction commits."""
    if ex.status in WATCHED:
        session = object_session(ex)
        uow = UnitOfWork.of(session)
        if ex.status == "waiting_decision" and uow is not None and uow.person_present:
            return  # the next suggestion of a decision's own transaction: its operator is looking at it
        _note(session, f"ex:{ex.id}", lambda s: _execution_event(s, ex))


def person_present(session: Session) -> None:
    """A person decides in this transaction (services/decisions/coaching.py): the next suggestion it opens is in front
    of them already, and is not news to send (`suggestion_waiting` is for a run that waits while nobody looks). It
    also keeps the decision path to its own statements: no routes or endpoints are read for it. (Kept on the
    session's unit of work; a session outside one has no suggestion to hold back.)"""
    uow = UnitOfWork.of(session)
    if uow is not None:
        uow.person_present = True


def approval_opened(session: Session, approval) -> None:
    """An approval or a policy-forced review was opened (services/approvals, services/gateway/calls)."""
    _note(session, f"approval:{approval.id}", lambda s: _approval_event(s, approval))


def demoted(session: Session, workspace_id: str, workflow_id: str, step_id: str | None, reason: str, seq: int) -> None:
    """Spot checks demoted a workflow or a step to coaching (services/evidence)."""
    facts = N.Facts(N.DEMOTION, workspace_id, workflow_id=workflow_id)
    payload = {
        "workflow_id": workflow_id,
        "step_id": step_id,
        "reason": reason,
        "subject": f"Demoted to coaching: {'step ' + step_id if step_id else 'workflow'}",
        "text": f"Spot checks demoted this {'step' if step_id else 'workflow'} to coaching: {reason}",
    }
    event_id = f"demotion:{workspace_id}:{seq}"
    _note(session, event_id, lambda s: (N.DEMOTION, event_id, facts, payload))


def approval_event(session: Session, approval, kind: str, event_id: str) -> None:
    """A later event about an approval (deadline near, escalation), noted by the scanner in its own transaction."""
    _note(session, event_id, lambda s: _approval_event(s, approval, kind, event_id))


def escalate(session: Session, approval, route: NotificationRoute, event_id: str, now: datetime) -> int:
    """A review still undecided after its route's set time: its escalation people / endpoint hear of it (rows added to
    the caller's transaction, the scanner's). Returns the rows added."""
    made = _approval_event(session, approval, N.ESCALATION, event_id)
    if made is None:
        return 0
    uow = _writing(session)
    config = uow.notifications if uow is not None and isinstance(uow.notifications, Config) else Config()
    routes, endpoints = _workspace_config(session, approval.workspace_id)
    rows = plan_rows(
        session,
        config,
        made[2],
        event_id,
        made[3],
        routes,
        endpoints,
        now,
        users=list(route.escalate_users or []),
        endpoint_ids=[route.escalate_endpoint_id] if route.escalate_endpoint_id else [],
    )
    session.add_all(rows)
    return len(rows)


def _approval_event(session: Session, a, kind: str | None = None, event_id: str | None = None):
    if a.status != "pending":
        return None
    kind = kind or (N.APPROVAL_REQUESTED if a.kind in ("step", "plan") else N.REVIEW_HELD)
    ex = session.get(Execution, a.execution_id) if a.execution_id else None
    facts = N.Facts(
        kind,
        a.workspace_id,
        workflow_id=ex.workflow_id if ex else None,
        tool=a.tool,
        approvers=dict(a.approvers or {}),
        started_by=a.started_by,
        separate_duties=a.separate_duties,
    )
    title = {N.DEADLINE_NEAR: "Deadline near", N.ESCALATION: "Still waiting"}.get(kind, "Waiting for you")
    payload = {
        "approval_id": a.id,
        "execution_id": a.execution_id,
        "step_id": a.step_id,
        "approval_kind": a.kind,
        "tool": a.tool,
        "params": a.params,
        "policy": a.policy,
        "message": a.message,
        "agent": a.agent,
        "deadline": a.deadline.isoformat() if a.deadline else None,
        "subject": f"{title}: {a.message[:120]}",
        "text": a.message,
    }
    return kind, event_id or f"approval:{a.id}", facts, payload


def _execution_event(session: Session, ex: Execution):
    gate = ex.gate or {}
    base = {"execution_id": ex.id, "workflow_id": ex.workflow_id, "step_id": gate.get("step_id")}
    if ex.status == "waiting_decision" and gate.get("suggestion_id"):
        kind, event_id = N.SUGGESTION_WAITING, f"suggestion:{gate['suggestion_id']}"
        payload = {
            **base,
            "suggestion_id": gate["suggestion_id"],
            "subject": f"A suggestion waits: step {gate.get('step_id')}",
            "text": f"Step {gate.get('step_id')} waits for your decision in coaching.",
        }
    elif ex.status == "waiting_clarification":
        kind, event_id = N.CLARIFICATION_ASKED, f"clarification:{ex.id}:{gate.get('step_id')}:{gate.get('paused_at')}"
        question = gate.get("question") or ""
        payload = {**base, "question": question, "subject": f"A question: {question[:120]}", "text": question}
    elif ex.status == "failed":
        error = ex.error or {}
        kind, event_id = N.RUN_FAILED, f"run_failed:{ex.id}:{ex.finished_at.isoformat() if ex.finished_at else ''}"
        payload = {
            **base,
            "step_id": error.get("step_id"),
            "error": error.get("message"),
            "subject": "A run failed",
            "text": str(error.get("message") or "The run failed."),
        }
    else:
        return None
    facts = N.Facts(kind, ex.workspace_id, workflow_id=ex.workflow_id, started_by=ex.started_by, tool=None)
    return kind, event_id, facts, payload


# -- the fan-out, in the event's own transaction ----------------------------------------------------------------


def _fan_out(session: Session, config: Config, uow: UnitOfWork) -> None:
    noted, uow.noted = uow.noted, {}
    direct, uow.noted_rows = uow.noted_rows, {}
    if not noted and not direct:
        return
    try:
        if noted:
            _write_rows(session, config, noted)
        for build in (direct or {}).values():
            session.add_all(build(session))
    except SQLAlchemyError:
        raise  # the transaction failed (a transient error is tried again whole, by its caller's retry layer)
    except Exception:  # a bug here must not undo the change that caused the event: the notification is lost
        log.exception("the notifications of %s could not be planned", [*(noted or {}), *(direct or {})])


def _write_rows(session: Session, config: Config, noted: dict) -> None:
    now = utcnow()
    made = [m for m in (build(session) for build in noted.values()) if m is not None]
    if not made:
        return
    by_workspace: dict[str, tuple[list, list]] = {}
    for kind, event_id, facts, payload in made:
        if facts.workspace_id not in by_workspace:
            by_workspace[facts.workspace_id] = _workspace_config(session, facts.workspace_id)
        routes, endpoints = by_workspace[facts.workspace_id]
        rows = plan_rows(session, config, facts, event_id, payload, routes, endpoints, now)
        existing = (
            set(
                session.execute(
                    select(OutboxRow.recipient, OutboxRow.channel).where(OutboxRow.event_id == event_id)
                ).all()
            )
            if rows
            else set()
        )
        for row in rows:
            if (row.recipient, row.channel) not in existing:
                session.add(row)
        if kind in (N.APPROVAL_REQUESTED, N.REVIEW_HELD):
            _arm_escalations(session, facts, payload["approval_id"], routes, now)


def _workspace_config(session: Session, workspace_id: str) -> tuple[list, list]:
    routes = session.scalars(
        select(NotificationRoute).where(
            NotificationRoute.workspace_id == workspace_id, NotificationRoute.enabled.is_(True)
        )
    ).all()
    endpoints = session.scalars(
        select(WebhookEndpoint).where(WebhookEndpoint.workspace_id == workspace_id, WebhookEndpoint.enabled.is_(True))
    ).all()
    return list(routes), list(endpoints)


def route_dict(r: NotificationRoute) -> dict[str, Any]:
    return {
        "id": r.id,
        "events": r.events or [],
        "workflow_id": r.workflow_id,
        "tool": r.tool,
        "users": r.users or [],
        "endpoint_id": r.endpoint_id,
        "slack_channel": r.slack_channel,
        "enabled": r.enabled,
    }


def members(session: Session, workspace_id: str) -> list[N.Member]:
    rows = session.execute(
        select(User.id, User.email, Membership.role)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.workspace_id == workspace_id, Membership.disabled.is_(False), User.disabled.is_(False))
    ).all()
    return [N.Member(r.id, r.email, r.role) for r in rows]


def plan_rows(
    session: Session,
    config: Config,
    facts: N.Facts,
    event_id: str,
    payload: dict,
    routes: list,
    endpoints: list,
    now: datetime,
    *,
    users: list[str] | None = None,
    endpoint_ids: list[str] | None = None,
) -> list[OutboxRow]:
    """The outbox rows of one event. `users` / `endpoint_ids`: these recipients instead of the routing (an
    escalation's)."""
    matched = N.matching_routes([route_dict(r) for r in routes], facts) if users is None else []
    if users is None:
        endpoint_ids = [r["endpoint_id"] for r in matched if r["endpoint_id"]] + [
            e.id for e in endpoints if facts.kind in (e.events or [])
        ]
    # no email, no browser subscribed in the workspace and no Slack: no person to look up
    pushing = config.push and push.anyone_subscribed(session, facts.workspace_id)
    slack_on = facts.kind in N.DECIDABLE and slack_channel.enabled(session, facts.workspace_id)
    everyone = members(session, facts.workspace_id) if config.email or pushing or slack_on else []
    if users is None:
        named = [u for r in matched for u in r["users"]]
        chosen = _resolve(everyone, named) if named else N.default_recipients(facts, everyone)
    else:
        chosen = _resolve(everyone, users)
    if facts.kind in N.DECIDABLE:  # a route's or an escalation's people too: never one who may not decide it
        chosen = [u for u in chosen if N.may_decide(facts, u)]
    rows: list[OutboxRow] = []
    base = dict(
        workspace_id=facts.workspace_id,
        event_id=event_id,
        kind=facts.kind,
        payload=payload,
        next_attempt_at=now,
        created_at=now,
        approval_id=payload.get("approval_id"),
    )
    if chosen:
        emails = {m.user_id: m.email for m in everyone}
        prefs = {
            p.user_id: p
            for p in session.scalars(select(NotificationPrefs).where(NotificationPrefs.user_id.in_(chosen)))
        }
        holds: dict[str, dict] = {}
        for user_id in dict.fromkeys(chosen):
            p = prefs.get(user_id)
            held = N.quiet_until(now, p.quiet_start, p.quiet_end, p.timezone) if p else None
            holds[user_id] = hold = {"next_attempt_at": held, "held_reason": "quiet hours"} if held else {}
            if config.email and N.wants_email({"email": p.email, "kinds": p.kinds} if p else None, facts.kind):
                rows.append(OutboxRow(**{**base, **hold}, channel=N.EMAIL, recipient=user_id, address=emails[user_id]))
        if pushing:
            rows += push.rows_for(session, base, facts.kind, list(holds), prefs, holds)
    if slack_on:
        channels = [r["slack_channel"] for r in matched if r.get("slack_channel")]
        rows += slack_channel.rows(session, base, facts.kind, chosen, channels)
    by_id = {e.id: e for e in endpoints}
    for endpoint_id in dict.fromkeys(endpoint_ids or []):
        endpoint = by_id.get(endpoint_id)
        if endpoint is not None:
            rows.append(OutboxRow(**base, channel=N.WEBHOOK, recipient=endpoint.id, address=endpoint.url))
    return rows


def _resolve(everyone: list[N.Member], named: list[str]) -> list[str]:
    """User ids of the members named by email or id (others are ignored: not in this workspace)."""
    wanted = {n.lower() for n in named}
    return [m.user_id for m in everyone if m.email.lower() in wanted or m.user_id.lower() in wanted]


def _arm_escalations(session: Session, facts: N.Facts, approval_id: str, routes: list, now: datetime) -> None:
    for r in routes:
        if (
            r.escalate_after_s
            and N.route_matches(route_dict(r), facts)
            and (r.escalate_users or r.escalate_endpoint_id)
        ):
            session.add(
                Escalation(
                    workspace_id=facts.workspace_id,
                    approval_id=approval_id,
                    route_id=r.id,
                    due_at=now + timedelta(seconds=r.escalate_after_s),
                    created_at=now,
                )
            )
