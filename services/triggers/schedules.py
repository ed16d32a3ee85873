"""Cron schedules of a workflow (create, list, change, delete; leads), and the scan that fires them.

Exactly once across instances: every instance's runner scans for due schedules (Runner.fire_due, every
COACH_APPROVAL_SCAN_S, and at start). A due schedule is claimed by a conditional UPDATE that moves its
`next_fire_at` on (… WHERE id = ? AND next_fire_at = <the value read>), in the same transaction that starts the
execution: only the instance whose UPDATE changed the row starts it, and a process killed before the commit
leaves the schedule due for the next scan. Slots missed while no server ran fire once (the next fire time is
the first slot after now), not once each.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core import triggers as T
from core.errors import CoachError, NotFound, ValidationFailed
from core.workflow import validate_variables
from services.audit import service as audit
from services.db import retrying, rowcount
from services.models.triggers import TriggerSchedule, TriggerStart
from services.orm import in_workspace, utcnow
from services.triggers import starts

log = logging.getLogger(__name__)
PREVIEW = 5  # next fire times shown
SCAN_BATCH = 100


def list_schedules(session: Session, workspace_id: str, workflow_id: str) -> list[TriggerSchedule]:
    return list(
        session.scalars(
            select(TriggerSchedule)
            .where(TriggerSchedule.workspace_id == workspace_id, TriggerSchedule.workflow_id == workflow_id)
            .order_by(TriggerSchedule.created_at)
        ).all()
    )


def preview(cron: Any, timezone: Any, now: datetime | None = None, count: int = PREVIEW) -> dict[str, Any]:
    """What a schedule with this cron expression and zone would do: its next fire times and the rule in words
    (ValidationFailed naming `cron` or `timezone` when they do not parse)."""
    text = T.check_cron(cron)
    T.zone(timezone)
    return {
        "cron": text,
        "timezone": timezone,
        "description": T.describe(text),
        "next_fire_times": T.next_fires(text, timezone, now or utcnow(), count),
    }


def _checked(
    session: Session, definitions, row_or_data: dict[str, Any], workspace_id: str, workflow_id: str
) -> dict[str, Any]:
    errors: dict[str, list[str]] = {}
    values = dict(row_or_data)
    for check, key in ((T.check_cron, "cron"), (T.zone, "timezone")):
        try:
            result = check(values[key])
            if key == "cron":
                values["cron"] = result
        except CoachError as exc:
            errors.update(exc.details)
    try:
        _, defn = starts.definition(session, definitions, workspace_id, workflow_id)
        values["variables"] = validate_variables(defn, values.get("variables") or {})
    except CoachError as exc:
        if isinstance(exc, NotFound):
            raise
        errors.update(exc.details)
    if errors:
        raise ValidationFailed("the schedule is invalid", details=errors)
    return values


def create(
    session: Session,
    definitions,
    workspace_id: str,
    workflow_id: str,
    data: dict[str, Any],
    actor: str,
    now: datetime | None = None,
) -> TriggerSchedule:
    audit.lock_workspace(session, workspace_id)
    values = _checked(session, definitions, data, workspace_id, workflow_id)
    now = now or utcnow()
    enabled = bool(values.get("enabled", True))
    row = TriggerSchedule(
        workspace_id=workspace_id,
        workflow_id=workflow_id,
        name=values["name"],
        cron=values["cron"],
        timezone=values["timezone"],
        variables=values["variables"],
        mode=values.get("mode"),
        enabled=enabled,
        created_by=actor,
        next_fire_at=T.next_fire(values["cron"], values["timezone"], now) if enabled else None,
    )
    session.add(row)
    audit.record(
        session, workspace_id, actor, "schedule_create", target_type="schedule", target_id=row.id, after=_audited(row)
    )
    return row


def change(
    session: Session,
    definitions,
    workspace_id: str,
    workflow_id: str,
    schedule_id: str,
    data: dict[str, Any],
    actor: str,
    now: datetime | None = None,
) -> TriggerSchedule:
    """Change some of name, cron, timezone, variables, mode, enabled. A new rule or enabling it again counts from
    now; a fire claimed meanwhile by a scanner is not repeated (its claim needs the old next_fire_at)."""
    audit.lock_workspace(session, workspace_id)
    row = in_workspace(session, TriggerSchedule, workspace_id, schedule_id, "schedule", workflow_id=workflow_id)
    before = _audited(row)
    merged = {
        **before,
        **{k: v for k, v in data.items() if k in ("name", "cron", "timezone", "variables", "mode", "enabled")},
    }
    values = _checked(session, definitions, merged, workspace_id, workflow_id)
    now = now or utcnow()
    retimed = (values["cron"], values["timezone"], bool(values["enabled"])) != (row.cron, row.timezone, row.enabled)
    row.name, row.cron, row.timezone = values["name"], values["cron"], values["timezone"]
    row.variables, row.mode, row.enabled = values["variables"], values.get("mode"), bool(values["enabled"])
    if retimed:
        row.next_fire_at = T.next_fire(row.cron, row.timezone, now) if row.enabled else None
    row.updated_at = now
    audit.record(
        session,
        workspace_id,
        actor,
        "schedule_update",
        target_type="schedule",
        target_id=row.id,
        before=before,
        after=_audited(row),
    )
    return row


def delete(session: Session, workspace_id: str, workflow_id: str, schedule_id: str, actor: str) -> None:
    """Gone for good; the executions it started keep saying they came from a schedule (by its name)."""
    audit.lock_workspace(session, workspace_id)
    row = in_workspace(session, TriggerSchedule, workspace_id, schedule_id, "schedule", workflow_id=workflow_id)
    session.execute(
        update(TriggerStart)
        .where(TriggerStart.schedule_id == row.id)
        .values(schedule_id=None)
        .execution_options(synchronize_session=False)
    )
    audit.record(
        session, workspace_id, actor, "schedule_delete", target_type="schedule", target_id=row.id, before=_audited(row)
    )
    session.delete(row)


def _audited(row: TriggerSchedule) -> dict[str, Any]:
    return {
        "name": row.name,
        "cron": row.cron,
        "timezone": row.timezone,
        "variables": row.variables,
        "mode": row.mode,
        "enabled": row.enabled,
    }


def view(row: TriggerSchedule, now: datetime | None = None) -> dict[str, Any]:
    upcoming: list[datetime] = []
    if row.enabled and row.next_fire_at is not None:
        upcoming = [row.next_fire_at] + T.next_fires(row.cron, row.timezone, row.next_fire_at, PREVIEW - 1)
    return {
        "id": row.id,
        "workflow_id": row.workflow_id,
        "name": row.name,
        "cron": row.cron,
        "timezone": row.timezone,
        "description": T.describe(row.cron),
        "variables": row.variables or {},
        "mode": row.mode,
        "enabled": row.enabled,
        "next_fire_at": row.next_fire_at,
        "next_fire_times": upcoming,
        "last_fired_at": row.last_fired_at,
        "last_execution_id": row.last_execution_id,
        "last_error": row.last_error or "",
        "created_by": row.created_by,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


# -- the scan ------------------------------------------------------------------------------------------------------


def due(session: Session, now: datetime) -> list[tuple[str, str, datetime]]:
    """(id, workspace_id, next_fire_at) of the schedules due at `now`."""
    rows = session.execute(
        select(TriggerSchedule.id, TriggerSchedule.workspace_id, TriggerSchedule.next_fire_at)
        .where(
            TriggerSchedule.next_fire_at.is_not(None),
            TriggerSchedule.next_fire_at <= now,
            TriggerSchedule.enabled.is_(True),
        )
        .order_by(TriggerSchedule.next_fire_at)
        .limit(SCAN_BATCH)
    )
    return [(i, w, at) for i, w, at in rows if at is not None]  # (the query's is_not(None), for the type checker)


def fire(
    session: Session, definitions, settings, schedule_id: str, workspace_id: str, slot: datetime, now: datetime
) -> tuple[bool, str | None]:
    """Claim the schedule's fire due at `slot` and start its execution, in the caller's transaction. Returns
    (claimed, execution id): not claimed when another scanner (or a change) moved next_fire_at first; claimed
    without an execution when the start was refused (the reason is kept in last_error and audited)."""
    audit.lock_workspace(session, workspace_id)  # the first lock, as in every transaction writing the workspace
    row = session.execute(
        select(
            TriggerSchedule.cron,
            TriggerSchedule.timezone,
            TriggerSchedule.workflow_id,
            TriggerSchedule.variables,
            TriggerSchedule.mode,
            TriggerSchedule.name,
        ).where(TriggerSchedule.id == schedule_id)
    ).first()
    if row is None:
        return False, None
    cron, zone_name, workflow_id, variables, mode, name = row
    try:
        following = T.after_missed(slot, now, cron, zone_name)
    except CoachError:  # its zone is no longer known to this machine: it stops, saying why
        following = None
    stopped = (
        {}
        if following is not None
        else {
            "enabled": False,
            "last_error": f"the time zone {zone_name!r} is unknown on this server: the schedule stops",
        }
    )
    claimed = rowcount(
        session.execute(
            update(TriggerSchedule)
            .where(
                TriggerSchedule.id == schedule_id,
                TriggerSchedule.next_fire_at == slot,
                TriggerSchedule.enabled.is_(True),
            )
            .values(next_fire_at=following, last_fired_at=now, **stopped)
            .execution_options(synchronize_session=False)
        )
    )
    if claimed != 1:
        return False, None
    trigger = {"kind": "schedule", "schedule_id": schedule_id, "name": name, "fire_at": slot}
    try:
        ex = starts.start(
            session,
            definitions,
            settings,
            workspace_id=workspace_id,
            workflow_id=workflow_id,
            variables=variables or {},
            mode=mode,
            trigger=trigger,
        )
    except CoachError as exc:
        gone = isinstance(exc, NotFound)
        reason = f"{exc.message}" + (": the schedule is disabled" if gone else "")
        session.execute(
            update(TriggerSchedule)
            .where(TriggerSchedule.id == schedule_id)
            .values(
                last_error=reason[:2000],
                last_execution_id=None,
                **({"enabled": False, "next_fire_at": None} if gone else {}),
            )
            .execution_options(synchronize_session=False)
        )
        starts.refused(session, workspace_id, trigger, reason)
        return True, None
    session.execute(
        update(TriggerSchedule)
        .where(TriggerSchedule.id == schedule_id)
        .values(last_execution_id=ex.id, last_error="")
        .execution_options(synchronize_session=False)
    )
    return True, ex.id


def fire_due(runner, now: datetime | None = None) -> int:
    """Fire every due schedule, each in a unit of work of its own that hands the execution it started to the runner
    once it commits. Returns how many executions this instance started."""
    now = now or utcnow()
    with runner.db.read() as session:
        found = due(session, now)
    started = 0
    for schedule_id, workspace_id, slot in found:

        def once(schedule_id=schedule_id, workspace_id=workspace_id, slot=slot):
            with runner.command() as uow:
                fired = fire(uow.session, runner.definitions, runner.settings, schedule_id, workspace_id, slot, now)
                if fired[1] is not None:
                    uow.run_next(fired[1])
                return fired

        try:
            _, execution_id = retrying(once, what=f"firing schedule {schedule_id}")
        except Exception:  # one bad row must not stop the others
            log.exception("firing schedule %s failed (the next scan tries again)", schedule_id)
            continue
        if execution_id is not None:
            started += 1
    return started
