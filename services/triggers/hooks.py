"""Incoming webhooks: a workflow's hooks (create, list, revoke; leads) and a signed delivery that starts it.

A delivery is idempotent by the sender's delivery id: the first one starts an execution and records it
(TriggerStart, unique per hook and delivery id); a repeat answers that execution and starts nothing. Two copies
arriving at once are serial under the workspace's lock (audit.lock_workspace) on PostgreSQL and under SQLite's
one writer; the unique constraint stays the last word (a copy that loses to it answers the winner's execution).
"""

from __future__ import annotations

import secrets as token_source
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core import triggers as T
from core.errors import Conflict, Gone, NotFound
from services.audit import service as audit
from services.db import Database, retrying
from services.models.executions import Execution
from services.models.triggers import TriggerHook, TriggerStart
from services.orm import in_workspace, utcnow
from services.toolservers.secrets import Secrets, SecretUnreadable
from services.triggers import starts

PURPOSE = b"coach trigger hook secrets"
SECRET_PREFIX = "whsec_"


def sealer(secret_key: str) -> Secrets:
    return Secrets(secret_key, PURPOSE)


def list_hooks(session: Session, workspace_id: str, workflow_id: str) -> list[TriggerHook]:
    return list(
        session.scalars(
            select(TriggerHook)
            .where(TriggerHook.workspace_id == workspace_id, TriggerHook.workflow_id == workflow_id)
            .order_by(TriggerHook.created_at.desc())
        ).all()
    )


def create(
    session: Session,
    sealed: Secrets,
    definitions,
    workspace_id: str,
    workflow_id: str,
    data: dict[str, Any],
    actor: str,
) -> tuple[TriggerHook, str]:
    """A new hook, and its secret (shown this once; stored sealed)."""
    audit.lock_workspace(session, workspace_id)
    _, defn = starts.definition(session, definitions, workspace_id, workflow_id)
    mapping = T.check_mapping(data.get("mapping"), defn)
    secret = SECRET_PREFIX + token_source.token_urlsafe(32)
    row = TriggerHook(
        workspace_id=workspace_id,
        workflow_id=workflow_id,
        name=data["name"],
        secret=sealed.seal({"secret": secret}),
        mapping=mapping,
        mode=data.get("mode"),
        created_by=actor,
    )
    session.add(row)
    audit.record(
        session,
        workspace_id,
        actor,
        "hook_create",
        target_type="hook",
        target_id=row.id,
        after={"workflow_id": workflow_id, "name": row.name, "mapping": mapping, "mode": row.mode},
    )
    return row, secret


def revoke(session: Session, workspace_id: str, workflow_id: str, hook_id: str, actor: str) -> TriggerHook:
    audit.lock_workspace(session, workspace_id)
    row = in_workspace(session, TriggerHook, workspace_id, hook_id, "hook", workflow_id=workflow_id)
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        audit.record(
            session,
            workspace_id,
            actor,
            "hook_revoke",
            target_type="hook",
            target_id=row.id,
            after={"workflow_id": workflow_id, "name": row.name},
        )
    return row


def view(row: TriggerHook) -> dict[str, Any]:
    return {
        "id": row.id,
        "workflow_id": row.workflow_id,
        "name": row.name,
        "mapping": row.mapping or {},
        "mode": row.mode,
        "path": f"/api/hooks/{row.id}",
        "created_by": row.created_by,
        "created_at": row.created_at,
        "last_used_at": row.last_used_at,
        "revoked_at": row.revoked_at,
        "active": row.revoked_at is None,
    }


# -- a delivery ----------------------------------------------------------------------------------------------------


@dataclass
class Delivery:
    hook_id: str
    workspace_id: str
    delivery_id: str
    body: bytes


def authenticate(db: Database, sealed: Secrets, hook_id: str, headers, body: bytes, now: float) -> Delivery:
    """The hook's delivery, once its signature checks out: NotFound (404) for an unknown hook, Gone (410) for a
    revoked one, Unauthorized (401) for a missing, stale or wrong signature, BadRequest (400) without a delivery
    id. Nothing is written."""
    with db.read() as session:
        row = session.get(TriggerHook, hook_id)
        if row is None:
            raise NotFound(f"hook {hook_id} not found")
        if row.revoked_at is not None:
            raise Gone(f"hook {hook_id} was revoked: it starts nothing any more", code="hook_revoked")
        workspace_id, stored = row.workspace_id, row.secret
    try:
        secret = sealed.open(stored)["secret"]
    except (SecretUnreadable, KeyError):
        raise Conflict(
            "this hook's secret cannot be read by the server (was COACH_SECRET_KEY changed?): create a new hook",
            code="hook_secret_unreadable",
        ) from None
    T.verify(secret, headers.get(T.TIMESTAMP_HEADER), headers.get(T.SIGNATURE_HEADER), body, now)
    return Delivery(hook_id, workspace_id, T.delivery_id(headers.get(T.DELIVERY_HEADER)), body)


def deliver(runner, delivery: Delivery, payload: Any) -> tuple[Execution, bool]:
    """Start the hook's workflow with the variables mapped from `payload` (422 naming the body's field when they
    do not fit; nothing starts), in a unit of work of the runner's that hands it the new execution once it commits.
    Returns (execution, new): new False for a delivery id seen before, whose first execution is returned."""
    db, definitions, settings = runner.db, runner.definitions, runner.settings

    def once() -> tuple[Execution, bool]:
        with runner.command() as uow:
            session = uow.session
            audit.lock_workspace(session, delivery.workspace_id)
            hook = session.get(TriggerHook, delivery.hook_id)
            if hook is None or hook.revoked_at is not None:  # revoked since the signature was checked
                raise Gone(f"hook {delivery.hook_id} was revoked: it starts nothing any more", code="hook_revoked")
            first = _first(session, delivery)
            if first is not None:
                return first, False
            _, defn = starts.definition(session, definitions, hook.workspace_id, hook.workflow_id)
            variables = T.variables_from_body(payload, hook.mapping, defn)
            ex = starts.start(
                session,
                definitions,
                settings,
                workspace_id=hook.workspace_id,
                workflow_id=hook.workflow_id,
                variables=variables,
                mode=hook.mode,
                trigger={"kind": "webhook", "hook_id": hook.id, "name": hook.name, "delivery_id": delivery.delivery_id},
            )
            hook.last_used_at = utcnow()
            session.flush()  # the unique (hook_id, delivery_id) speaks here, inside the retried try
            uow.run_next(ex.id)
            return ex, True

    try:
        return retrying(once, what=f"delivery {delivery.delivery_id} of hook {delivery.hook_id}")
    except IntegrityError:  # a copy of this delivery committed first: its execution is the answer
        with db.read() as session:
            first = _first(session, delivery)
            if first is None:
                raise
            return first, False


def _first(session: Session, delivery: Delivery) -> Execution | None:
    execution_id = session.scalar(
        select(TriggerStart.execution_id).where(
            TriggerStart.hook_id == delivery.hook_id, TriggerStart.delivery_id == delivery.delivery_id
        )
    )
    return session.get(Execution, execution_id) if execution_id else None
