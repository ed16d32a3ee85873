"""Web Push: a person's browsers hear of Coach's events through their push services (RFC 8030), the message
encrypted for the browser (RFC 8291, aes128gcm, by pywebpush) and the request signed with this installation's VAPID
key (RFC 8292, py_vapid).

- The VAPID key pair is COACH_VAPID_PRIVATE_KEY's, or made once and kept in push_vapid_keys with the private key
  sealed like MCP headers (services/toolservers/secrets.py); browsers subscribe with its public key.
- A subscription is one browser of one person (its endpoint URL and keys). The endpoint is an outside host: it must
  be https, or http only to an address the outbound rules explicitly allow (a test's loopback push service), and it
  is checked again, after DNS, on every send (services/tools/http.py's VettedTransport); redirects are not followed.
- One outbox row per (event, subscription): sender.py sends it like an email or a webhook, with the same retries;
  a push service answering 404 or 410 says the browser unsubscribed: the subscription is removed, the row fails.
"""

from __future__ import annotations

import base64
import hashlib
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02, VapidException
from pywebpush import WebPusher
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from config import Settings
from core import notifications as N
from core.errors import NotFound, ValidationFailed
from core.tools import ToolError
from services.models.notifications import NotificationPrefs, OutboxRow, PushSubscription, VapidKeys
from services.models.users import Membership
from services.orm import table_of, utcnow
from services.tools.http import Vetter
from services.toolservers.secrets import Secrets, SecretUnreadable
from services.unit_of_work import unit_of_work

from .email import SendFailed
from .webhooks import vetter

PURPOSE = b"coach vapid private key"
KEY_ROW = "default"
GONE = (404, 410)  # the push service no longer knows the subscription: the browser unsubscribed
_keys_lock = threading.Lock()
_keys: dict[str, Vapid02] = {}  # raw private key (base64url) -> its Vapid, so a key is parsed once per process


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _public(v: Vapid02) -> str:
    return _b64(v.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))


def _parsed(private: str) -> Vapid02:
    with _keys_lock:
        if private not in _keys:
            _keys[private] = Vapid02.from_pem(private.encode()) if "BEGIN" in private else Vapid02.from_string(private)
        return _keys[private]


def _raw_private(v: Vapid02) -> str:
    return _b64(v.private_key.private_numbers().private_value.to_bytes(32, "big"))


def vapid(session: Session, settings: Settings) -> Vapid02:
    """This installation's VAPID key: COACH_VAPID_PRIVATE_KEY's, or the stored one, made on first use (two processes
    making it at once: the first insert wins, both use it)."""
    if settings.vapid_private_key:
        return _parsed(settings.vapid_private_key.strip())
    sealer = Secrets(settings.secret_key, PURPOSE)
    row = session.get(VapidKeys, KEY_ROW)
    if row is None:
        made = Vapid02()
        made.generate_keys()
        values = {
            "id": KEY_ROW,
            "public_key": _public(made),
            "created_at": utcnow(),
            "private_key": sealer.seal({"key": _raw_private(made)}),
        }
        insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
        session.execute(insert(table_of(VapidKeys)).values(values).on_conflict_do_nothing(index_elements=["id"]))
        row = session.get(VapidKeys, KEY_ROW)
        if row is None:  # (inserted, or there already)
            raise LookupError("the VAPID keys were not stored")
    return _parsed(sealer.open(row.private_key)["key"])


def public_key(db, settings: Settings) -> str:
    """The application server key browsers pass to PushManager.subscribe (base64url, uncompressed P-256 point): read
    without a write transaction once it exists."""
    if not settings.vapid_private_key:
        with db.read() as session:
            row = session.get(VapidKeys, KEY_ROW)
            if row is not None:
                return row.public_key
    with unit_of_work(db) as uow:  # made on first use
        return _public(vapid(uow.session, settings))


def subject(settings: Settings) -> str:
    return settings.vapid_subject or f"mailto:{settings.smtp_from}"


# -- subscriptions ----------------------------------------------------------------------------------------------------


def check_endpoint(session: Session, settings: Settings, workspace_id: str, url: str) -> None:
    """422 unless the endpoint is https (or http to an address the outbound rules explicitly allow) and reachable
    under the workspace's outbound rules."""
    try:
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname
    except ValueError:
        scheme, host = "", None
    if not host or scheme not in ("http", "https"):
        raise ValidationFailed("a push endpoint is an https:// URL", details={"endpoint": ["not https"]})
    try:
        address = vetter(session, settings, workspace_id).address(httpx.URL(url))
    except (ToolError, httpx.InvalidURL, ValueError) as exc:
        raise ValidationFailed(str(exc), details={"endpoint": [str(exc)]}) from None
    if scheme == "http" and address.is_global:  # only an address the rules let through on purpose may go unencrypted
        raise ValidationFailed("a push endpoint must be https", details={"endpoint": ["not https"]})


def _check_keys(p256dh: str, auth: str) -> None:
    errors: dict[str, list[str]] = {}
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), _unb64(p256dh))
    except (ValueError, TypeError):
        errors["keys.p256dh"] = ["not a base64url P-256 public key"]
    try:
        if len(_unb64(auth)) != 16:
            raise ValueError
    except (ValueError, TypeError):
        errors["keys.auth"] = ["not a base64url 16-byte secret"]
    if errors:
        raise ValidationFailed("the subscription's keys are not valid", details=errors)


def endpoint_hash(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


def subscription_view(s: PushSubscription) -> dict[str, Any]:
    return {
        "id": s.id,
        "endpoint": s.endpoint,
        "user_agent": s.user_agent,
        "last_status": s.last_status,
        "last_sent_at": s.last_sent_at,
        "created_at": s.created_at,
    }


def subscribe(
    session: Session, settings: Settings, workspace_id: str, user_id: str, body: dict, user_agent: str = ""
) -> dict[str, Any]:
    """Store this browser's subscription for the person (the same endpoint again: updated, and moved to whoever
    is signed in on that browser now)."""
    endpoint, keys = body["endpoint"], body["keys"]
    check_endpoint(session, settings, workspace_id, endpoint)
    _check_keys(keys["p256dh"], keys["auth"])
    s = session.scalar(select(PushSubscription).where(PushSubscription.endpoint_hash == endpoint_hash(endpoint)))
    if s is None:
        s = PushSubscription(endpoint=endpoint, endpoint_hash=endpoint_hash(endpoint), created_at=utcnow())
        session.add(s)
    s.user_id, s.p256dh, s.auth, s.user_agent = user_id, keys["p256dh"], keys["auth"], (user_agent or "")[:300]
    session.flush()
    return subscription_view(s)


def list_subscriptions(session: Session, user_id: str) -> list[dict[str, Any]]:
    rows = session.scalars(
        select(PushSubscription).where(PushSubscription.user_id == user_id).order_by(PushSubscription.created_at)
    ).all()
    return [subscription_view(s) for s in rows]


def unsubscribe(session: Session, user_id: str, endpoint: str) -> None:
    s = session.scalar(
        select(PushSubscription).where(
            PushSubscription.endpoint_hash == endpoint_hash(endpoint), PushSubscription.user_id == user_id
        )
    )
    if s is None:
        raise NotFound("this browser has no push subscription here")
    session.delete(s)


# -- the outbox -------------------------------------------------------------------------------------------------------


def anyone_subscribed(session: Session, workspace_id: str) -> bool:
    """Whether a member of the workspace has a browser subscribed (else an event needs no push lookup at all)."""
    return (
        session.execute(
            select(PushSubscription.id)
            .join(Membership, Membership.user_id == PushSubscription.user_id)
            .where(Membership.workspace_id == workspace_id)
            .limit(1)
        ).first()
        is not None
    )


def rows_for(
    session: Session,
    base: dict[str, Any],
    kind: str,
    user_ids: list[str],
    prefs: dict[str, NotificationPrefs],
    holds: dict[str, dict],
) -> list[OutboxRow]:
    """One row per subscribed browser of each person who wants `kind` pushed (held through their quiet hours)."""
    wanting = [
        u
        for u in user_ids
        if N.wants_push({"push": prefs[u].push, "push_kinds": prefs[u].push_kinds} if u in prefs else None, kind)
    ]
    if not wanting:
        return []
    subs = session.scalars(
        select(PushSubscription).where(PushSubscription.user_id.in_(wanting)).order_by(PushSubscription.created_at)
    ).all()
    return [
        OutboxRow(**{**base, **holds.get(s.user_id, {})}, channel=N.PUSH, recipient=s.id, address=s.endpoint)
        for s in subs
    ]


def prepare(session: Session, settings: Settings, row: OutboxRow) -> tuple[str, bytes, dict[str, str], Vetter]:
    """The encrypted, signed request of one row (url, body, headers) and the workspace's vetter; SendFailed when
    the subscription is gone."""
    s = session.get(PushSubscription, row.recipient)
    if s is None:
        raise SendFailed("the browser's push subscription was removed")
    message = orjson.dumps(N.push_message(row.kind, row.event_id, row.payload or {}))
    body = WebPusher({"endpoint": s.endpoint, "keys": {"p256dh": s.p256dh, "auth": s.auth}}).encode(message)["body"]
    parts = urlsplit(s.endpoint)
    claims = {"aud": f"{parts.scheme}://{parts.netloc}", "sub": subject(settings), "exp": int(time.time()) + 12 * 3600}
    try:
        signed = vapid(session, settings).sign(claims)
    except (VapidException, SecretUnreadable) as exc:  # e.g. COACH_SECRET_KEY changed: the stored key is unreadable
        raise SendFailed(f"VAPID: {exc}") from exc
    headers = {
        "Authorization": signed["Authorization"],
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
        "TTL": str(int(settings.push_ttl_s)),
        "Urgency": "high" if row.kind in N.DECIDABLE else "normal",
        # a push service replaces an undelivered message with the same topic (at most 32 base64url chars)
        "Topic": _b64(hashlib.sha256(row.event_id.encode()).digest()[:24]),
    }
    return s.endpoint, body, headers, vetter(session, settings, row.workspace_id)


def record(session: Session, row: OutboxRow, status: int | None, now) -> bool:
    """Note how a push went on its subscription; True when the browser unsubscribed (404 / 410): the subscription
    is removed and the row is not tried again."""
    s = session.get(PushSubscription, row.recipient)
    if s is None:
        return True
    if status in GONE:
        session.delete(s)
        return True
    s.last_status, s.last_sent_at = status, now
    return False
