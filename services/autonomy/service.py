"""A workflow's autonomy: its mode and its steps' modes, the thresholds it is held to and the levels its evidence
reaches (docs/autonomy.md). Promotions check the evidence (services/metrics) of the workflow's definition
(services/workflows); every change is audited and pushed as `workflow_level_changed`."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from core.agent.spec import resolve_tools
from core.coaching import autonomy
from core.coaching.levels import LevelThresholds
from core.errors import Conflict, NotFound, ValidationFailed
from services.audit import service as audit
from services.metrics import service as metrics
from services.models.workflows import Workflow
from services.orm import utcnow
from services.unit_of_work import UnitOfWork
from services.workflows.service import get, version_row
from services.workflows.service import view as definition_view


def view(session: Session, wf: Workflow, version: int | None = None) -> dict[str, Any]:
    """A workflow as the API shows it: its version as written (services.workflows.service.view) and its level."""
    return {**definition_view(session, wf, version), **level_of(session, wf)}


def level_of(session: Session, wf: Workflow) -> dict[str, Any]:
    limits = metrics.workflow_thresholds(wf)
    snap = metrics.load(session, wf.workspace_id, "workflow", wf.id, limits).snapshot()
    return {"level": snap["level"], "auto_ready": snap["auto_ready"], "thresholds": limits.to_dict()}


def set_mode(
    uow: UnitOfWork,
    workspace_id: str,
    workflow_id: str,
    mode: str,
    *,
    force: bool = False,
    actor: str = "system",
    reason: str | None = None,
) -> Workflow:
    """Promote to AUTO (only when the evidence says AUTO-ready, unless forced) or demote to coaching; a change
    is audited and pushed to the workspace's dashboards as `workflow_level_changed` (with the new mode), as a
    demotion by spot checks is."""
    session = uow.session
    if mode not in ("coaching", "auto"):
        raise ValidationFailed("unknown mode", details={"mode": ["must be 'coaching' or 'auto'"]})
    wf = get(session, workspace_id, workflow_id)
    promoting = mode == "auto" and wf.mode != "auto"
    reason = autonomy.check_force(force and promoting, reason)
    if promoting and not force:
        level = level_of(session, wf)
        if not level["auto_ready"]:
            raise Conflict(
                "this workflow is not AUTO-ready yet", details={"level": level["level"], "auto_ready": False}
            )
    before = wf.mode
    wf.mode, wf.updated_at = mode, utcnow()
    if before != mode:
        level = level_of(session, wf)
        extra: dict[str, Any] = {"reason": reason} if reason else {}
        if mode == "auto":  # which of its steps have no evidence of their own yet: the lead was shown them
            extra["steps_not_ready"] = not_ready_steps(session, wf)
        recorded = audit.record(
            session,
            workspace_id,
            actor,
            "promotion" if mode == "auto" else "demotion",
            target_type="workflow",
            target_id=wf.id,
            before={"mode": before},
            after={"mode": mode, "forced": force, **level, **extra},
        )
        uow.events.add(
            "workflow_level_changed",
            {
                "workflow_id": wf.id,
                "level": level["level"],
                "previous_level": level["level"],
                "auto_ready": level["auto_ready"],
                "mode": mode,
                "previous_mode": before,
                "reason": f"{'promoted' if mode == 'auto' else 'demoted'} by {actor}" + (" (forced)" if force else ""),
                "audit_seq": recorded.seq,
            },
            workspace=workspace_id,
        )
    return wf


def not_ready_steps(session: Session, wf: Workflow) -> list[dict[str, Any]]:
    """The tool and agent steps of the workflow's current version that are not AUTO-ready on their own evidence
    (core.coaching.autonomy.steps_not_ready), in the definition's order."""
    written = [s for s in version_row(session, wf).definition.get("steps") or [] if isinstance(s, dict)]
    tool_steps = [s["id"] for s in written if (s.get("type") or "action") in ("action", "agent")]
    steps = metrics.workflow_view(session, wf)["steps"]
    return autonomy.steps_not_ready(steps, tool_steps, autonomy.step_modes(wf.settings))


def set_step_mode(
    uow: UnitOfWork,
    workspace_id: str,
    workflow_id: str,
    step_id: str,
    mode: str,
    *,
    force: bool = False,
    actor: str = "system",
    reason: str | None = None,
) -> Workflow:
    """Promote one step to AUTO (only when its own evidence says AUTO-ready, unless forced), set it back to
    coaching (it follows its workflow again), or pin it to always_review (core.coaching.autonomy). A change
    is audited and pushed to the workspace's dashboards as `workflow_level_changed` with the step's id."""
    session = uow.session
    wf = get(session, workspace_id, workflow_id)
    written = {s["id"]: s for s in version_row(session, wf).definition["steps"] if isinstance(s, dict)}
    types = {k: s.get("type") or "action" for k, s in written.items()}
    # `<agent step>:<tool>`: the calls of one tool by an agent step, which have their own evidence and mode
    owner, _, tool = step_id.partition(":")
    if tool and types.get(owner) == "agent":
        if not resolve_tools(written[owner].get("tools") or [], [tool]):
            raise NotFound(
                f"agent step {owner!r} does not call tool {tool!r}",
                details={"step_id": step_id, "tools": written[owner].get("tools")},
            )
    elif step_id not in types:
        raise NotFound(
            f"workflow {workflow_id} has no step {step_id!r} in its current version",
            details={"step_id": step_id, "steps": list(types)},
        )
    elif types[step_id] not in ("action", "agent"):
        raise Conflict(
            f"step {step_id!r} is a {types[step_id]} step: only tool steps and agent steps are "
            "suggested, so only they have a mode",
            details={"step_id": step_id, "type": types[step_id]},
        )
    before = autonomy.step_modes(wf.settings).get(step_id, autonomy.COACHING)
    reason = autonomy.check_force(force and mode == autonomy.AUTO and before != autonomy.AUTO, reason)
    level = step_level(session, wf, step_id)
    autonomy.check_step_mode(before, mode, auto_ready=level["auto_ready"], force=force)
    if before == mode:
        return wf
    wf.settings, wf.updated_at = autonomy.with_step_mode(wf.settings, step_id, mode), utcnow()
    action = {"auto": "step_promotion", "always_review": "step_pin"}.get(mode, "step_demotion")
    recorded = audit.record(
        session,
        workspace_id,
        actor,
        action,
        target_type="step",
        target_id=f"{wf.id}/{step_id}",
        before={"mode": before},
        after={"mode": mode, "forced": force, **level, **({"reason": reason} if reason else {})},
    )
    uow.events.add(
        "workflow_level_changed",
        {
            "workflow_id": wf.id,
            "step_id": step_id,
            "level": level["level"],
            "previous_level": level["level"],
            "auto_ready": level["auto_ready"],
            "mode": mode,
            "previous_mode": before,
            "workflow_mode": wf.mode,
            "reason": f"step set to {mode} by {actor}" + (" (forced)" if force else ""),
            "audit_seq": recorded.seq,
        },
        workspace=workspace_id,
    )
    return wf


def step_level(session: Session, wf: Workflow, step_id: str) -> dict[str, Any]:
    limits = metrics.workflow_thresholds(wf)
    snap = metrics.load(session, wf.workspace_id, "step", f"{wf.id}/{step_id}", limits).snapshot()
    return {"level": snap["level"], "auto_ready": snap["auto_ready"]}


def set_thresholds(
    session: Session, workspace_id: str, workflow_id: str, values: dict[str, Any], actor: str = "system"
) -> Workflow:
    wf = get(session, workspace_id, workflow_id)
    try:
        merged = LevelThresholds.from_dict({**metrics.workflow_thresholds(wf).to_dict(), **values})
    except (TypeError, ValueError) as exc:
        # the schema checks each field alone; what fails here is a combination (auto_min_window > window),
        # so name the fields the client sent: those are the ones it can change (docs/api.md)
        raise ValidationFailed(
            "thresholds are invalid", details={name: [str(exc)] for name in values} or {"thresholds": [str(exc)]}
        ) from None
    before = metrics.workflow_thresholds(wf).to_dict()
    wf.settings = {**(wf.settings or {}), "thresholds": merged.to_dict()}
    audit.record(
        session,
        workspace_id,
        actor,
        "thresholds_change",
        target_type="workflow",
        target_id=wf.id,
        before=before,
        after=merged.to_dict(),
    )
    return wf
