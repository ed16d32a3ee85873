"""Sending the outbox, after commit: claim due rows (pending and due, or `sending` with a lease run out: their
sender died), send each outside any transaction, record the outcome. A failure is tried again later on a bounded
exponential schedule (core/notifications.retry_delay) stored as next_attempt_at, and fails for good after the last
try; a webhook endpoint whose last delivery failed is shown failing until one succeeds.

`run_once` is the one code path: the server's background scanner (`Scanner`, every COACH_NOTIFY_SCAN_S) calls it,
and so does the Celery task `coach.notify` (services/worker.py) when workers run. It also fires due
escalations and notes "deadline near" for approvals whose deadline comes within COACH_NOTIFY_DEADLINE_NEAR_S.
"""

from __future__ import annotations

import logging
import threading
import uuid
from datetime import datetime, timedelta

from sqlalchemy import exists, literal, or_, select, update

from core import notifications as N
from services.db import row_locks
from services.models.approvals import Approval
from services.models.notifications import Escalation, NotificationRoute, OutboxRow, WebhookEndpoint
from services.orm import utcnow

from . import email as mail
from . import links, outbox, push, slack_updates, webhooks
from . import slack as slack_channel
from .email import SendFailed

log = logging.getLogger(__name__)
BATCH = 50
# the marker row (an Escalation with this route id, fired at once) that says an approval's "deadline near" was noted
DEADLINE_MARK = "deadline_near"


def _any(services, query) -> bool:
    """Whether `query` finds a row, read without a write transaction: an idle round takes no write lock (SQLite's
    write transactions begin IMMEDIATE)."""
    with services.db.read() as session:
        return session.execute(query.with_only_columns(literal(1)).limit(1)).first() is not None


def claim(services, owner: str, now: datetime, limit: int = BATCH) -> list[str]:
    """Take up to `limit` due rows for `owner`: status sending, a lease until now + COACH_NOTIFY_LEASE_S, one more
    attempt counted. Concurrent claimers never take the same row (row locks skipped on PostgreSQL; SQLite's write
    transactions run one at a time)."""
    due = or_(OutboxRow.status == N.PENDING, (OutboxRow.status == N.SENDING) & (OutboxRow.lease_until <= now))
    query = (
        select(OutboxRow.id)
        .where(due, OutboxRow.next_attempt_at <= now)
        .order_by(OutboxRow.next_attempt_at)
        .limit(limit)
    )
    if not _any(services, query):
        return []
    with services.command() as uow:
        session = uow.session
        if row_locks(session):
            query = query.with_for_update(skip_locked=True)
        ids = list(session.scalars(query))
        if ids:
            session.execute(
                update(OutboxRow)
                .where(OutboxRow.id.in_(ids))
                .values(
                    status=N.SENDING,
                    claimed_by=owner,
                    attempts=OutboxRow.attempts + 1,
                    lease_until=now + timedelta(seconds=services.settings.notify_lease_s),
                )
            )
    return ids


def send_one(services, row_id: str, owner: str, now: datetime | None = None) -> str:
    """Send one claimed row and record how it went: its status afterwards."""
    now = now or utcnow()
    with services.command() as uow:  # what to send (an email's links are made and kept here)
        session = uow.session
        row = session.get(OutboxRow, row_id)
        if row is None or row.status != N.SENDING or row.claimed_by != owner:
            return row.status if row is not None else "gone"  # taken over by another sender meanwhile
        message = request = post = None
        row_channel = row.channel
        prepared_error: str | None
        try:
            if row.channel == N.EMAIL:
                lines = [row.payload.get("text") or ""] + links.lines_for(session, services, row, now)
                message = mail.compose(
                    services.settings, row.address, row.id, row.payload.get("subject") or row.kind, lines
                )
            elif row.channel == N.SLACK and row.kind == slack_updates.UPDATE:
                post = slack_updates.prepare(session, services.settings, row)
            elif row.channel == N.SLACK:
                post = slack_channel.prepare(session, services.settings, row)
            elif row.channel == N.PUSH:
                request = push.prepare(session, services.settings, row)
            else:
                request = webhooks.prepare(session, services.settings, row)
        except SendFailed as exc:
            prepared_error = str(exc)
        except Exception as exc:  # a bug must not stop the other rows: this one is retried like a failed send
            log.exception("preparing notification %s failed", row_id)
            prepared_error = f"{type(exc).__name__}: {exc}"
        else:
            prepared_error = None
    if prepared_error is not None:
        return _record(services, row_id, owner, prepared_error, prepared_error, None, now)
    status, error, posted = None, None, None
    try:
        if message is not None:
            mail.send(services.settings, message)
        elif post is not None:
            posted = slack_channel.send(services.settings, post)
        else:  # a webhook, or a push message to its push service: the same POST through the outbound rules
            assert request is not None  # (prepared above, as message or post is for the other channels)
            status = webhooks.post(
                services.settings, *request, who="the push service" if row_channel == N.PUSH else "the endpoint"
            )
        outcome = None
    except SendFailed as exc:
        outcome, error, status = str(exc), str(exc), getattr(exc, "status", None)
    except Exception as exc:  # a bug must not stop the other rows; the row is retried like a failed send
        log.exception("sending notification %s failed", row_id)
        outcome = error = f"{type(exc).__name__}: {exc}"
    return _record(services, row_id, owner, outcome, error, status, utcnow() if now is None else now, posted)


def _record(
    services,
    row_id: str,
    owner: str,
    outcome: str | None,
    error: str | None,
    status: int | None,
    now: datetime,
    posted=None,
) -> str:
    with services.command() as uow:
        session = uow.session
        row = session.get(OutboxRow, row_id)
        if row is None or row.claimed_by != owner or row.status != N.SENDING:
            return row.status if row is not None else "gone"
        row.lease_until, row.last_status = None, status
        if posted is not None:  # a Slack message: where it went, for its chat.update once decided
            row.slack_channel, row.slack_ts = posted.channel, posted.ts
        if outcome is None:
            row.status, row.sent_at, row.last_error = N.SENT, now, None
        else:
            delay = N.retry_delay(row.attempts)
            row.last_error = error
            if delay is None:
                row.status = N.FAILED
            else:
                row.status, row.next_attempt_at = N.PENDING, now + timedelta(seconds=delay)
        if row.channel == N.PUSH and push.record(session, row, status, now) and outcome is not None:
            row.status = N.FAILED  # the browser unsubscribed (404 / 410: its subscription removed): not tried again
        if row.channel == N.WEBHOOK:
            endpoint = session.get(WebhookEndpoint, row.recipient)
            if endpoint is not None:
                endpoint.last_delivery_at, endpoint.last_status = now, status
                if outcome is None:
                    endpoint.failing, endpoint.consecutive_failures, endpoint.last_error = False, 0, None
                else:
                    endpoint.failing, endpoint.last_error = True, error
                    endpoint.consecutive_failures = (endpoint.consecutive_failures or 0) + 1
        return row.status


def deliver_due(services, now: datetime | None = None, owner: str | None = None) -> dict[str, int]:
    """Claim what is due and send it: {status: count} of the rows handled."""
    owner = owner or f"{services.settings.instance_id or 'coach'}:{uuid.uuid4().hex[:12]}"
    counts: dict[str, int] = {}
    for row_id in claim(services, owner, now or utcnow()):
        status = send_one(services, row_id, owner, now)
        counts[status] = counts.get(status, 0) + 1
    return counts


def fire_escalations(services, now: datetime) -> int:
    """Due escalation steps whose review is still pending: its next people / endpoint are notified, once."""
    fired = 0
    query = select(Escalation).where(Escalation.due_at <= now).order_by(Escalation.due_at).limit(BATCH)
    if not _any(services, query):
        return 0
    with services.command() as uow:
        session = uow.session
        for esc in session.scalars(query.with_for_update(skip_locked=True) if row_locks(session) else query).all():
            esc.due_at, esc.fired_at = None, now
            a = session.get(Approval, esc.approval_id)
            route = session.get(NotificationRoute, esc.route_id)
            if a is None or route is None or a.status != "pending":
                continue
            event_id = f"escalation:{esc.id}"
            outbox.escalate(session, a, route, event_id, now)
            fired += 1
    return fired


def note_deadlines(services, now: datetime) -> int:
    """Pending approvals whose deadline is near: a "deadline near" event each, once (its marker row)."""
    horizon = now + timedelta(seconds=services.settings.notify_deadline_near_s)
    noted = 0
    marked = exists().where(Escalation.approval_id == Approval.id, Escalation.route_id == DEADLINE_MARK)
    query = (
        select(Approval)
        .where(Approval.due_at.is_not(None), Approval.due_at <= horizon, Approval.due_at > now, ~marked)
        .limit(BATCH)
    )
    if not _any(services, query):
        return 0
    with services.command() as uow:
        session = uow.session
        rows = session.scalars(query).all()
        for a in rows:
            session.add(
                Escalation(
                    workspace_id=a.workspace_id,
                    approval_id=a.id,
                    route_id=DEADLINE_MARK,
                    due_at=None,
                    fired_at=now,
                    created_at=now,
                )
            )
            outbox.approval_event(session, a, N.DEADLINE_NEAR, f"deadline_near:{a.id}")
            noted += 1
    return noted


def run_once(services, now: datetime | None = None) -> dict[str, int]:
    """One round: escalations and deadlines noted, then the outbox sent."""
    now = now or utcnow()
    fire_escalations(services, now)
    note_deadlines(services, now)
    return deliver_due(services, now)


class Scanner:
    """The server's background sender: run_once every COACH_NOTIFY_SCAN_S seconds, until stopped."""

    def __init__(self, services):
        self.services, self._stop, self._thread = services, threading.Event(), None

    def start(self) -> None:
        interval = self.services.settings.notify_scan_s
        if interval <= 0 or self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    run_once(self.services)
                except Exception:
                    log.exception("the notification scan failed")

        self._thread = threading.Thread(target=loop, name="notifications", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
