"""Outgoing webhooks: a workspace's endpoints (admin), and one delivery (a JSON POST signed with the endpoint's
secret, `X-Coach-Signature: sha256=<HMAC of the body>`, `X-Coach-Delivery: <id>` so a receiver drops repeats).

The URL is checked by the workspace's outbound rules (core/outbound) when it is set and again, after DNS, on every
delivery (services/tools/http.py's VettedTransport); redirects are not followed. The secret is sealed at rest
(services/toolservers/secrets.py) and shown once, when the endpoint is made."""

from __future__ import annotations

import secrets as random_secrets
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from sqlalchemy import select
from sqlalchemy.orm import Session
from standardwebhooks import Webhook

from config import Settings
from core import notifications as N
from core.errors import ValidationFailed
from core.outbound import parse_entries, parse_entry
from core.tools import ToolError
from services.audit import service as audit
from services.models.notifications import OutboxRow, WebhookEndpoint
from services.orm import in_workspace, utcnow
from services.policies import outbound
from services.tools.http import VettedTransport, Vetter
from services.toolservers.secrets import Secrets, SecretUnreadable

from .email import SendFailed

PURPOSE = b"coach webhook endpoint secret"


def sealer(settings: Settings) -> Secrets:
    return Secrets(settings.secret_key, PURPOSE)


def vetter(session: Session, settings: Settings, workspace_id: str) -> Vetter:
    lists = outbound.get_lists(session, workspace_id)
    return Vetter(
        parse_entries(settings.outbound_allow),
        tuple(parse_entry(e) for e in lists.allow),
        tuple(parse_entry(e) for e in lists.deny),
    )


def check_url(session: Session, settings: Settings, workspace_id: str, url: str) -> None:
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host = None
    if not host or parts.scheme.lower() not in ("http", "https"):
        raise ValidationFailed("the URL must be an http:// or https:// address", details={"url": ["not http(s)"]})
    try:
        vetter(session, settings, workspace_id).address(httpx.URL(url))
    except (ToolError, httpx.InvalidURL, ValueError) as exc:
        raise ValidationFailed(str(exc), details={"url": [str(exc)]}) from None


def view(e: WebhookEndpoint, deliveries: list[OutboxRow] | None = None) -> dict[str, Any]:
    return {
        "id": e.id,
        "name": e.name,
        "url": e.url,
        "events": list(e.events or []),
        "enabled": e.enabled,
        "failing": e.failing,
        "consecutive_failures": e.consecutive_failures,
        "last_status": e.last_status,
        "last_error": e.last_error,
        "last_delivery_at": e.last_delivery_at,
        "created_at": e.created_at,
        "deliveries": [delivery_view(d) for d in deliveries or []],
    }


def delivery_view(d: OutboxRow) -> dict[str, Any]:
    return {
        "id": d.id,
        "event": d.kind,
        "event_id": d.event_id,
        "status": d.status,
        "attempts": d.attempts,
        "next_attempt_at": d.next_attempt_at if d.status == N.PENDING else None,
        "last_status": d.last_status,
        "last_error": d.last_error,
        "sent_at": d.sent_at,
        "created_at": d.created_at,
    }


def list_endpoints(session: Session, workspace_id: str) -> list[dict[str, Any]]:
    rows = session.scalars(
        select(WebhookEndpoint).where(WebhookEndpoint.workspace_id == workspace_id).order_by(WebhookEndpoint.created_at)
    ).all()
    out = []
    for e in rows:
        recent = session.scalars(
            select(OutboxRow)
            .where(OutboxRow.workspace_id == workspace_id, OutboxRow.recipient == e.id)
            .order_by(OutboxRow.created_at.desc())
            .limit(10)
        ).all()
        out.append(view(e, list(recent)))
    return out


def get(session: Session, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
    return in_workspace(session, WebhookEndpoint, workspace_id, endpoint_id, "webhook endpoint")


def create(session: Session, settings: Settings, workspace_id: str, body: dict, actor: str) -> dict[str, Any]:
    """A new endpoint; the answer carries its secret, this once."""
    check_url(session, settings, workspace_id, body["url"])
    secret = body.get("secret") or random_secrets.token_urlsafe(32)
    e = WebhookEndpoint(
        workspace_id=workspace_id,
        name=body.get("name") or "",
        url=body["url"],
        events=list(body.get("events") or []),
        secret=sealer(settings).seal({"secret": secret}),
        enabled=body.get("enabled", True),
    )
    session.add(e)
    audit.record(
        session,
        workspace_id,
        actor,
        "webhook_endpoint_create",
        target_type="webhook_endpoint",
        target_id=e.id,
        after={"url": e.url, "events": e.events},
    )
    return {**view(e), "secret": secret}


def update(
    session: Session, settings: Settings, workspace_id: str, endpoint_id: str, body: dict, actor: str
) -> dict[str, Any]:
    e = get(session, workspace_id, endpoint_id)
    before = {"url": e.url, "events": e.events, "enabled": e.enabled}
    if "url" in body:
        check_url(session, settings, workspace_id, body["url"])
        e.url = body["url"]
    for key in ("name", "events", "enabled"):
        if key in body:
            setattr(e, key, list(body[key]) if key == "events" else body[key])
    audit.record(
        session,
        workspace_id,
        actor,
        "webhook_endpoint_update",
        target_type="webhook_endpoint",
        target_id=e.id,
        before=before,
        after={"url": e.url, "events": e.events, "enabled": e.enabled},
    )
    return view(e)


def delete(session: Session, workspace_id: str, endpoint_id: str, actor: str) -> None:
    e = get(session, workspace_id, endpoint_id)
    session.delete(e)
    audit.record(
        session,
        workspace_id,
        actor,
        "webhook_endpoint_delete",
        target_type="webhook_endpoint",
        target_id=endpoint_id,
        before={"url": e.url},
    )


def prepare(session: Session, settings: Settings, row: OutboxRow) -> tuple[str, bytes, dict[str, str], Vetter]:
    """What to POST for the row (url, body, headers) and the vetter of the workspace's outbound rules, read in a
    short session; SendFailed when the endpoint is gone or disabled."""
    e = session.get(WebhookEndpoint, row.recipient)
    if e is None or not e.enabled:
        raise SendFailed("the endpoint was removed or disabled")
    body = orjson.dumps(
        {
            "id": row.id,
            "event": row.kind,
            "event_id": row.event_id,
            "workspace_id": row.workspace_id,
            "created_at": row.created_at.isoformat(),
            "data": row.payload,
        },
        option=orjson.OPT_NAIVE_UTC,
    )
    try:
        secret = sealer(settings).open(e.secret)["secret"]
    except SecretUnreadable:  # COACH_SECRET_KEY changed since the endpoint was made: this row fails, not the round
        raise SendFailed(
            "the endpoint's signing secret cannot be read (COACH_SECRET_KEY changed since it was "
            "made): delete the endpoint and make it again, with its secret"
        ) from None
    # Standard Webhooks (standardwebhooks.com) through its library: webhook-id (the same on every retry of the
    # delivery), webhook-timestamp (this attempt's, so a receiver can refuse a replay) and webhook-signature over
    # "<id>.<timestamp>.<body>", keyed by the secret's bytes; X-Coach-Signature stays for receivers written
    # against it (docs/notifications.md: until they move)
    sent_at = utcnow()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Coach-Webhooks/1",
        "webhook-id": row.id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": Webhook(secret.encode("utf-8")).sign(row.id, sent_at, body.decode("utf-8")),
        "X-Coach-Signature": N.signature(secret, body),
        "X-Coach-Delivery": row.id,
        "X-Coach-Event": row.kind,
    }
    return e.url, body, headers, vetter(session, settings, row.workspace_id)


def post(
    settings: Settings, url: str, body: bytes, headers: dict[str, str], vetter: Vetter, who: str = "the endpoint"
) -> int:
    """One POST of a delivery (a webhook's, or a Web Push message to a push service: `who`), outside any
    transaction, through the workspace's outbound rules: the HTTP status when 2xx, SendFailed otherwise."""
    try:
        with httpx.Client(
            transport=VettedTransport(vetter), timeout=settings.webhook_timeout_s, follow_redirects=False
        ) as client:
            response = client.post(url, content=body, headers=headers)
    except (httpx.HTTPError, ToolError) as exc:
        raise SendFailed(f"{type(exc).__name__}: {exc}") from exc
    if not 200 <= response.status_code < 300:
        failed = SendFailed(f"{who} answered {response.status_code}")
        failed.status = response.status_code  # type: ignore[attr-defined]
        raise failed
    return response.status_code
