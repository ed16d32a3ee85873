"""A correction whose step then fails because of it (issue 31, item 1): its decision is marked
(core.coaching.soundness.FAILED_STEP), it is taken back out of its step's correction pack so that it counts towards
no learned rule, and the audit log says so. Called by the runner when a step fails, in that transaction."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.coaching.corrections import Change, diff_params
from core.coaching.soundness import FAILED_STEP, blamed
from core.workflow import WorkflowDef
from services.audit import service as audit
from services.coaching import corrections
from services.executions import service as executions
from services.models.coaching import Decision, Suggestion
from services.models.executions import Execution
from services.unit_of_work import UnitOfWork


def _correction_of(session: Session, ex: Execution, step_id: str) -> tuple[Suggestion, Decision] | None:
    sug = session.scalars(
        select(Suggestion)
        .where(
            Suggestion.execution_id == ex.id,
            Suggestion.step_id == step_id,
            Suggestion.kind == "step",
            Suggestion.status == "decided",
        )
        .order_by(Suggestion.decided_at.desc())
        .limit(1)
    ).first()
    decision = session.get(Decision, sug.id) if sug is not None else None
    if sug is None or decision is None or decision.decision != "correct" or decision.outcome is not None:
        return None
    return sug, decision


def on_step_failed(
    uow: UnitOfWork, ex: Execution, defn: WorkflowDef | None, step_id: str | None, message: str
) -> list[str]:
    """Blame the corrections of this run the failure of `step_id` is put down to (core.coaching.soundness.blamed);
    returns the corrected steps blamed."""
    session = uow.session
    if not step_id or defn is None or step_id not in defn.order:
        return []
    step = defn.step(step_id)
    candidates = [
        s
        for s in dict.fromkeys((step_id, *step.reads))
        if s in ex.steps and executions.step_state(ex, s).decision == "correct"
    ]
    found: dict[str, tuple[Suggestion, Decision, list[Change]]] = {}
    for candidate in candidates:
        pair = _correction_of(session, ex, candidate)
        if pair is not None:
            sug, decision = pair
            found[candidate] = (
                sug,
                decision,
                diff_params(
                    sug.params if isinstance(sug.params, dict) else {},
                    decision.correction if isinstance(decision.correction, dict) else {},
                ),
            )
    guilty = blamed(step_id, message, step.reads, {k: v[2] for k, v in found.items()})
    for corrected in guilty:
        sug, decision, changes = found[corrected]
        decision.outcome = FAILED_STEP
        pack = corrections.discount(uow, ex.workspace_id, ex.workflow_id, corrected, changes, cause="correction_failed")
        audit.record(
            session,
            ex.workspace_id,
            "system",
            "correction_failed",
            target_type="suggestion",
            target_id=sug.id,
            execution_id=ex.id,
            after={
                "step_id": corrected,
                "failed_step_id": step_id,
                "error": message[:500],
                "operator": decision.operator,
                "changes": [c.to_dict() for c in changes],
                "pack_id": pack.id if pack is not None else None,
                "discounted": pack is not None,
            },
        )
    return guilty
