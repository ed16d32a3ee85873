"""A workspace's review settings (GET|PUT /api/workspace/reviews; docs/autonomy.md#check-suggestions): the floor
under which an accept counts as fast, the rate of check suggestions and the bars of evidence from attentive
operators. No row or NULL: the default (core/coaching/attention.py, core/coaching/checks.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from core.coaching import attention as A
from core.coaching import checks as C
from core.errors import NotFound, ValidationFailed
from services.audit import service as audit
from services.models.metrics import WorkspaceReviewFloor
from services.models.users import Workspace
from services.unit_of_work import UnitOfWork

CHECK_SETTINGS = ("check_rate", "evidence_from", "min_checks", "min_catch_rate", "max_fast_share")


def get_floor(session: Session, workspace_id: str) -> dict[str, Any]:
    """GET /api/workspace/reviews: every setting as it applies (the default where the workspace set none). Read once
    per unit of work (its `review_settings`; a copy each time): a decision asks twice (whether it is evidence,
    services/coaching/counting.py; whether the next suggestion is a check, services/coaching/checks.py), and
    session.get remembers no missing row, which a workspace at the defaults has. set_settings replaces them."""
    uow = UnitOfWork.of(session)  # (a session outside any unit of work remembers nothing: it reads each time)
    if uow is None:
        return _read(session, workspace_id)
    if workspace_id not in uow.review_settings:
        uow.review_settings[workspace_id] = _read(session, workspace_id)
    return dict(uow.review_settings[workspace_id])


def _read(session: Session, workspace_id: str) -> dict[str, Any]:
    own = session.get(WorkspaceReviewFloor, workspace_id)
    floor = own.attentive_floor_ms if own is not None else None
    body: dict[str, Any] = {
        "attentive_floor_ms": floor if floor is not None else A.DEFAULT_FLOOR_MS,
        "default_ms": A.DEFAULT_FLOOR_MS,
        "min_ms": A.MIN_FLOOR_MS,
        "max_ms": A.MAX_FLOOR_MS,
        "workspace": floor is not None,
    }
    for name in CHECK_SETTINGS:
        value = getattr(own, name) if own is not None else None
        body[name] = C.DEFAULTS[name] if value is None else value
    body["max_check_rate"] = C.MAX_CHECK_RATE
    body["defaults"] = dict(C.DEFAULTS)
    return body


def checks_on(settings: dict[str, Any]) -> bool:
    """Whether the workspace counts its operators' fast accepts for the attentive bar: checks or the restriction on."""
    return settings["check_rate"] > 0 or settings["evidence_from"] == C.ATTENTIVE


def set_floor(session: Session, workspace_id: str, floor_ms: Any, actor: str) -> dict[str, Any]:
    """Set the workspace's floor (None: back to the default), audited `attentive_floor`."""
    return set_settings(session, workspace_id, {"attentive_floor_ms": floor_ms}, actor)


def set_settings(session: Session, workspace_id: str, values: dict[str, Any], actor: str) -> dict[str, Any]:
    """Set the given settings (None: that one back to its default): the floor audited `attentive_floor`, the others
    `review_settings`. A ValidationFailed naming the field for a bad value, before anything changes."""
    if not values:
        raise ValidationFailed("nothing to set", details={"attentive_floor_ms": ["give at least one setting"]})
    values = dict(values)
    floor_given = "attentive_floor_ms" in values
    floor_ms = values.pop("attentive_floor_ms", None)
    if floor_ms is not None:
        floor_ms = A.check_floor(floor_ms)
    checked = C.check_settings(values)
    if session.get(Workspace, workspace_id) is None:
        raise NotFound(f"workspace {workspace_id} not found")
    # PostgreSQL: under the workspace's lock (the audit chain's), two first settings at once are one after the other
    audit.lock_workspace(session, workspace_id)
    before = get_floor(session, workspace_id)
    own = session.get(WorkspaceReviewFloor, workspace_id)
    if own is None:
        own = WorkspaceReviewFloor(workspace_id=workspace_id, updated_by=actor)
        session.add(own)
    if floor_given:
        own.attentive_floor_ms = floor_ms
    for name, value in checked.items():
        setattr(own, name, value)
    own.updated_by = actor
    if own.attentive_floor_ms is None and all(getattr(own, n) is None for n in CHECK_SETTINGS):
        if own in session.new:
            session.expunge(own)
        else:
            session.delete(own)  # every setting at its default: no row
    session.flush()
    uow = UnitOfWork.of(session)
    if uow is not None:  # (get_floor reads them again, now as they are set)
        uow.review_settings.pop(workspace_id, None)
    after = get_floor(session, workspace_id)
    if floor_given:
        audit.record(
            session,
            workspace_id,
            actor,
            "attentive_floor",
            target_type="workspace",
            target_id=workspace_id,
            before={"attentive_floor_ms": before["attentive_floor_ms"]},
            after={"attentive_floor_ms": after["attentive_floor_ms"]},
            result="ok",
        )
    if checked:
        audit.record(
            session,
            workspace_id,
            actor,
            "review_settings",
            target_type="workspace",
            target_id=workspace_id,
            before={n: before[n] for n in checked},
            after={n: after[n] for n in checked},
            result="ok",
        )
    return after
