"""Slack messages kept true once their review is decided anywhere (issue 33): in the web app, through the REST
decision endpoint, from an email link, from another Slack message, by its deadline or a cancel.

The outbox way, like every other delivery: when an approval becomes final, counts one more approval of its quorum,
or a held decision is taken back, the hook `approval_changed` notes it in the deciding transaction; at that
transaction's commit one `review_update` row is added per Slack message sent (or still to be sent) for the approval,
in the same transaction as the decision. The sender (sender.py) claims it after commit like any row and makes one
chat.update of the message whose channel id and ts the review's row kept, showing the approval as it is then: who
decided what and when, without buttons (or the buttons again, when the decision was taken back; or who approved so
far, buttons kept, while a quorum is under way). A failure is retried with the outbox's backoff; a review whose
message is not posted yet waits the same way; a message that never went out needs nothing. A click on the old
message before the update lands is still refused by services/decisions/slack.py (the decision's 409).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, object_session

from core import notifications as N
from services.models.notifications import OutboxRow
from services.notifications import outbox
from services.notifications import slack as slack_channel
from services.notifications.email import SendFailed
from services.orm import new_id, utcnow

UPDATE = "review_update"  # the kind of a row that updates the Slack message of another row (its `recipient`)


def approval_changed(approval) -> None:
    """An approval became final, or pending again (services/approvals: store, undo): its Slack messages are updated
    after the transaction commits."""
    session = object_session(approval)
    outbox.note_rows(session, f"slack_update:{approval.id}", lambda s: update_rows(s, approval))


def update_rows(session: Session, approval) -> list[OutboxRow]:
    """One update row per Slack review message of `approval` (none when the workspace never posted it to Slack)."""
    reviews = session.scalars(
        select(OutboxRow).where(
            OutboxRow.approval_id == approval.id, OutboxRow.channel == N.SLACK, OutboxRow.kind != UPDATE
        )
    ).all()
    if not reviews:
        return []
    now, event_id = utcnow(), f"slack_update:{approval.id}:{new_id()}"  # each change is its own event
    return [
        OutboxRow(
            workspace_id=r.workspace_id,
            event_id=event_id,
            kind=UPDATE,
            channel=N.SLACK,
            recipient=r.id,
            address=r.address,
            approval_id=approval.id,
            payload={"approval_id": approval.id, "of": r.id},
            next_attempt_at=now,
            created_at=now,
        )
        for r in reviews
    ]


def prepare(session: Session, settings, row: OutboxRow) -> slack_channel.Prepared:
    """chat.update of the review row's message with the approval as it is now. Raises SendFailed (retried later)
    while that message is not posted yet; nothing to send when it never will be."""
    review = session.get(OutboxRow, (row.payload or {}).get("of") or row.recipient)
    if review is None or (not review.slack_ts and review.status in (N.SENT, N.FAILED)):
        return slack_channel.Prepared(None, "", None)  # the message never went out: nothing shows stale buttons
    if not review.slack_ts or not review.slack_channel:
        raise SendFailed("the review's Slack message is not posted yet")
    config = slack_channel.app_config(session, settings, row.workspace_id)
    message = slack_channel.current_message(session, settings, review)
    return slack_channel.Prepared(config, review.slack_channel, message, ts=review.slack_ts)
