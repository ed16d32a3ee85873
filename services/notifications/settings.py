"""Who hears what: a person's own preferences, and a workspace's routes (admin)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from core import notifications as N
from core.errors import ValidationFailed
from services.audit import service as audit
from services.models.notifications import NotificationPrefs, NotificationRoute, WebhookEndpoint
from services.models.users import Membership, User
from services.orm import in_workspace, utcnow


def prefs_view(p: NotificationPrefs | None) -> dict[str, Any]:
    kinds = {k: N.wants_email({"kinds": (p.kinds if p else {})}, k) for k in N.KINDS}
    push_kinds = {k: N.wants_push({"push_kinds": (p.push_kinds if p else {})}, k) for k in N.KINDS}
    return {
        "email": p.email if p else True,
        "kinds": kinds,
        "push": p.push if p else True,
        "push_kinds": push_kinds,
        "quiet_start": p.quiet_start if p else None,
        "quiet_end": p.quiet_end if p else None,
        "timezone": p.timezone if p else "UTC",
        "kinds_available": list(N.KINDS),
    }


def get_prefs(session: Session, user_id: str) -> dict[str, Any]:
    return prefs_view(session.get(NotificationPrefs, user_id))


def put_prefs(session: Session, user_id: str, body: dict[str, Any]) -> dict[str, Any]:
    errors: dict[str, list[str]] = {}
    start, end = body.get("quiet_start"), body.get("quiet_end")
    for field, value in (("quiet_start", start), ("quiet_end", end)):
        if value:
            try:
                N.parse_clock(value)
            except ValueError as exc:
                errors[field] = [str(exc)]
    if bool(start) != bool(end):
        errors.setdefault("quiet_end" if start else "quiet_start", []).append("give both ends of the quiet hours")
    try:
        N.zone(body.get("timezone") or "UTC")
    except ValueError as exc:
        errors["timezone"] = [str(exc)]
    for field in ("kinds", "push_kinds"):
        unknown = sorted(set(body.get(field) or {}) - set(N.KINDS))
        if unknown:
            errors[field] = [f"unknown event kinds {unknown}; one of {list(N.KINDS)}"]
    if errors:
        raise ValidationFailed("the notification settings are not valid", details=errors)
    p = session.get(NotificationPrefs, user_id)
    if p is None:
        p = NotificationPrefs(user_id=user_id, email=True, kinds={}, push=True, push_kinds={}, timezone="UTC")
        session.add(p)
    p.email = body.get("email", True)
    p.kinds = dict(body.get("kinds") or {})
    p.push = body.get("push", True)
    p.push_kinds = dict(body.get("push_kinds") or {})
    p.quiet_start, p.quiet_end = start or None, end or None
    p.timezone = body.get("timezone") or "UTC"
    p.updated_at = utcnow()
    return prefs_view(p)


def route_view(r: NotificationRoute) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": r.name,
        "events": list(r.events or []),
        "workflow_id": r.workflow_id,
        "tool": r.tool,
        "users": list(r.users or []),
        "endpoint_id": r.endpoint_id,
        "escalate_after_s": r.escalate_after_s,
        "escalate_users": list(r.escalate_users or []),
        "escalate_endpoint_id": r.escalate_endpoint_id,
        "slack_channel": r.slack_channel,
        "enabled": r.enabled,
        "created_at": r.created_at,
    }


def list_routes(session: Session, workspace_id: str) -> list[dict[str, Any]]:
    rows = session.scalars(
        select(NotificationRoute)
        .where(NotificationRoute.workspace_id == workspace_id)
        .order_by(NotificationRoute.created_at)
    ).all()
    return [route_view(r) for r in rows]


def _route(session: Session, workspace_id: str, route_id: str) -> NotificationRoute:
    return in_workspace(session, NotificationRoute, workspace_id, route_id, "notification route")


def _check_endpoints(session: Session, workspace_id: str, body: dict[str, Any]) -> None:
    for field in ("endpoint_id", "escalate_endpoint_id"):
        endpoint_id = body.get(field)
        if endpoint_id:
            e = session.get(WebhookEndpoint, endpoint_id)
            if e is None or e.workspace_id != workspace_id:
                raise ValidationFailed(
                    "no such webhook endpoint in this workspace", details={field: [f"unknown endpoint {endpoint_id}"]}
                )
    _check_members(session, workspace_id, body)
    if not body.get("users") and not body.get("endpoint_id") and not body.get("slack_channel"):
        raise ValidationFailed(
            "a route needs users, a webhook endpoint or a Slack channel",
            details={"users": ["give users, an endpoint_id or a slack_channel"]},
        )


def _check_members(session: Session, workspace_id: str, body: dict[str, Any]) -> None:
    """A route's users (and escalation users) are members of this workspace, by email or user id: anyone else would
    silently never be told (a typo, another workspace's member)."""
    details = {}
    for field in ("users", "escalate_users"):
        given = [u for u in body.get(field) or [] if u]
        if not given:
            continue
        lowered = {u.strip().lower() for u in given}
        known = session.execute(
            select(User.id, User.email)
            .join(Membership, Membership.user_id == User.id)
            .where(
                Membership.workspace_id == workspace_id, or_(User.id.in_(given), func.lower(User.email).in_(lowered))
            )
        ).all()
        names = {v for row in known for v in (row.id, row.email.lower())}
        unknown = [u for u in given if u not in names and u.strip().lower() not in names]
        if unknown:
            details[field] = [f"not a member of this workspace: {', '.join(unknown)}"]
    if details:
        raise ValidationFailed("a route can only notify members of this workspace", details=details)


FIELDS = (
    "name",
    "events",
    "workflow_id",
    "tool",
    "users",
    "endpoint_id",
    "escalate_after_s",
    "escalate_users",
    "escalate_endpoint_id",
    "slack_channel",
    "enabled",
)


def save_route(
    session: Session, workspace_id: str, body: dict[str, Any], actor: str, route_id: str | None = None
) -> dict[str, Any]:
    _check_endpoints(session, workspace_id, body)
    r = _route(session, workspace_id, route_id) if route_id else None
    before = route_view(r) if r else None
    if r is None:
        r = NotificationRoute(workspace_id=workspace_id)
        session.add(r)
    for field in FIELDS:
        default: list[str] | bool | None = (
            [] if field in ("events", "users", "escalate_users") else (True if field == "enabled" else None)
        )
        value = body.get(field, default)
        if field == "slack_channel":
            value = value or None  # "" clears it
        setattr(
            r, field, list(value) if isinstance(value, list) else ("" if field == "name" and value is None else value)
        )
    after = route_view(r)
    audit.record(
        session,
        workspace_id,
        actor,
        "notification_route_" + ("update" if before else "create"),
        target_type="notification_route",
        target_id=r.id,
        before=before,
        after=after,
    )
    return after


def delete_route(session: Session, workspace_id: str, route_id: str, actor: str) -> None:
    r = _route(session, workspace_id, route_id)
    before = route_view(r)
    session.delete(r)
    audit.record(
        session,
        workspace_id,
        actor,
        "notification_route_delete",
        target_type="notification_route",
        target_id=route_id,
        before=before,
    )
