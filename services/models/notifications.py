"""Notification tables (migration 0028_notifications): the outbox, people's preferences, a workspace's routes and
webhook endpoints, pending escalations, and the action links sent by email."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Float, Index, Integer, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, new_id, utcnow


class OutboxRow(FilledAtInit, Base):
    """One message to one recipient on one channel for one event, stored in the event's own transaction and sent
    after it commits by whoever claims it (status pending → sending → sent / failed; a claim whose sender died is
    taken again once its lease ran out). (event_id, recipient, channel) is unique: never sent twice."""

    __tablename__ = "notification_outbox"
    __table_args__ = (
        UniqueConstraint("event_id", "recipient", "channel", name="uq_notification_outbox_event_recipient"),
        Index("ix_notification_outbox_due", "status", "next_attempt_at"),
        Index("ix_notification_outbox_ws_recipient", "workspace_id", "recipient", "created_at"),
        Index("ix_notification_outbox_approval", "approval_id", "channel"),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(String(32))
    event_id: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(32))
    channel: Mapped[str] = mapped_column(String(16))  # email | webhook | push | slack
    # a user id (email, a Slack DM), a webhook endpoint id, a push subscription id (one browser of a person), a Slack
    # channel ("channel", "channel:<id or #name>"), or for a Slack update the id of the row whose message it updates
    recipient: Mapped[str] = mapped_column(String(64))
    address: Mapped[str] = mapped_column(String(2000), default="")  # the email address or URL, as it was
    payload: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    held_reason: Mapped[str | None] = mapped_column(String(200), nullable=True)  # e.g. quiet hours
    lease_until: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    claimed_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    last_status: Mapped[int | None] = mapped_column(Integer, nullable=True)  # a webhook's HTTP status
    sent_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # 0036_slack_message_updates: the approval the row is about, and where its Slack message went (chat.postMessage's
    # channel id and ts), which chat.update needs once the approval is decided anywhere
    approval_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    slack_channel: Mapped[str | None] = mapped_column(String(32), nullable=True)
    slack_ts: Mapped[str | None] = mapped_column(String(32), nullable=True)


class NotificationPrefs(Base):
    """One person's choices, in every workspace they belong to: email on/off (and per event kind), quiet hours."""

    __tablename__ = "notification_prefs"
    user_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    email: Mapped[bool] = mapped_column(default=True)
    kinds: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)  # kind -> bool
    push: Mapped[bool] = mapped_column(default=True)  # Web Push to the browsers they subscribed (0031_web_push)
    push_kinds: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)  # kind -> bool
    quiet_start: Mapped[str | None] = mapped_column(String(5), nullable=True)  # "22:00"
    quiet_end: Mapped[str | None] = mapped_column(String(5), nullable=True)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class NotificationRoute(FilledAtInit, Base):
    """A workspace's route: events (of this workflow, of this tool) → users, a webhook endpoint and/or a Slack
    channel; a review still undecided `escalate_after_s` later goes to `escalate_users` / `escalate_endpoint_id`."""

    __tablename__ = "notification_routes"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(String(32), index=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    events: Mapped[list[str]] = mapped_column(JsonType, default=list)
    workflow_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    tool: Mapped[str | None] = mapped_column(String(200), nullable=True)
    users: Mapped[list[str]] = mapped_column(JsonType, default=list)  # emails or user ids
    endpoint_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    escalate_after_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    escalate_users: Mapped[list[str]] = mapped_column(JsonType, default=list)
    escalate_endpoint_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    enabled: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # a Slack channel id or #name (0036_slack_message_updates): the route's reviews go there, not the default channel
    slack_channel: Mapped[str | None] = mapped_column(String(81), nullable=True)


class WebhookEndpoint(FilledAtInit, Base):
    """An outgoing webhook of a workspace: its URL, the events it hears, its signing secret (sealed at rest), and
    how its deliveries went (failing after repeated failures, until one succeeds)."""

    __tablename__ = "webhook_endpoints"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(String(32), index=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    url: Mapped[str] = mapped_column(String(2000))
    events: Mapped[list[str]] = mapped_column(JsonType, default=list)
    secret: Mapped[str] = mapped_column(Text)  # Fernet-sealed (services/toolservers/secrets.py)
    enabled: Mapped[bool] = mapped_column(default=True)
    failing: Mapped[bool] = mapped_column(default=False)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    last_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    last_delivery_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class Escalation(FilledAtInit, Base):
    """A review's escalation step, due at a time; the scanner fires it once if the review is still pending."""

    __tablename__ = "notification_escalations"
    __table_args__ = (
        UniqueConstraint("approval_id", "route_id", name="uq_notification_escalations_approval_route"),
        Index(
            "ix_notification_escalations_due",
            "due_at",
            sqlite_where=text("due_at IS NOT NULL"),
            postgresql_where=text("due_at IS NOT NULL"),
        ),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(String(32))
    approval_id: Mapped[str] = mapped_column(String(32))
    route_id: Mapped[str] = mapped_column(String(32))
    due_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)  # NULL once fired or moot
    fired_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class ActionLink(FilledAtInit, Base):
    """The approve / reject links of one email to one person: single-use (used_at), expiring, bound to the user."""

    __tablename__ = "notification_action_links"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(String(32))
    approval_id: Mapped[str] = mapped_column(String(32), index=True)
    user_id: Mapped[str] = mapped_column(String(32))
    outbox_id: Mapped[str] = mapped_column(String(32))
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    used_decision: Mapped[str | None] = mapped_column(String(16), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class PushSubscription(FilledAtInit, Base):
    """One browser of a person that accepted Web Push (its PushSubscription: the push service's endpoint URL and the
    keys to encrypt for it). Removed when the person turns it off, or when the push service answers 404 / 410 (the
    browser unsubscribed). Migration 0031_web_push."""

    __tablename__ = "push_subscriptions"
    __table_args__ = (UniqueConstraint("endpoint_hash", name="uq_push_subscriptions_endpoint"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(String(32), index=True)
    endpoint: Mapped[str] = mapped_column(String(2000))
    endpoint_hash: Mapped[str] = mapped_column(String(64))  # sha256 of the endpoint: unique, indexable at any length
    p256dh: Mapped[str] = mapped_column(String(200))  # the browser's public key (base64url, uncompressed P-256 point)
    auth: Mapped[str] = mapped_column(String(100))  # the browser's auth secret (base64url, 16 bytes)
    user_agent: Mapped[str] = mapped_column(String(300), default="")
    last_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_sent_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class VapidKeys(Base):
    """This installation's VAPID key pair, made once (when COACH_VAPID_PRIVATE_KEY does not give one): the public key
    browsers subscribe with, the private key sealed (services/toolservers/secrets.py)."""

    __tablename__ = "push_vapid_keys"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "default": one row
    public_key: Mapped[str] = mapped_column(String(200))  # base64url, uncompressed P-256 point
    private_key: Mapped[str] = mapped_column(Text)  # Fernet-sealed {"key": base64url raw 32 bytes}
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
