"""A person's decision counted where it is evidence (docs/autonomy.md#check-suggestions, #regions-at-work): judged
first (is its operator attentive, does it go into the readiness tests), then counted for the region its call fell in
(services/regions) and for the workflow, its version, the step and the operator (services/metrics/evidence.py), in
the caller's transaction. Called by the decisions of services/coaching (decide, undo)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from core.coaching import checks as C
from core.coaching.counters import ACCEPT, REJECT
from core.workflow import WorkflowDef
from services.metrics import attention, evidence, review_settings
from services.metrics import service as metrics
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.models.workflows import Workflow
from services.regions import service as regions
from services.unit_of_work import UnitOfWork


def attention_of(
    session: Session, workspace_id: str, operator: str, kind: str, latency_ms: float
) -> tuple[str | None, bool, bool]:
    """Whether a decision is readiness evidence (docs/autonomy.md#check-suggestions), judged before it counts: (its
    mark for the decision row, whether it goes into the readiness tests, whether its operator is attentive). With
    checks and the restriction off nothing is judged (None, True, False); else the operator's figures are read and
    an accept is counted for their fast-accept share (scope `fast`: under the floor an accept, else a reject)."""
    settings = review_settings.get_floor(session, workspace_id)
    if not review_settings.checks_on(settings):
        return None, True, False
    attentive = attention.is_attentive(session, workspace_id, operator, settings)
    if kind == ACCEPT:
        metrics.record_decision(
            session,
            workspace_id,
            [(attention.FAST_SCOPE, operator)],
            ACCEPT if latency_ms < settings["attentive_floor_ms"] else REJECT,
            latency_ms,
        )
    if attentive:
        return "attentive", True, True
    if settings["evidence_from"] == C.ATTENTIVE:
        return "left_out", False, False
    return "counted", True, False


def count_person(
    uow: UnitOfWork,
    defn: WorkflowDef,
    ex: Execution,
    wf: Workflow,
    sug: Suggestion,
    kind: str,
    latency_ms: float,
    operator: str,
) -> str | None:
    """A person's decision counted everywhere it is evidence: judged first (attention_of), then counted for the
    region its call fell in (services.regions) and for the workflow, its version, the step and the operator
    (count_decision). Returns its evidence mark, which its decision row keeps (None: nothing was judged)."""
    session = uow.session
    if wf.kind == "plan":
        mark, in_evidence, attentive = None, True, False
    else:
        mark, in_evidence, attentive = attention_of(session, ex.workspace_id, operator, kind, latency_ms)
    region_spot = regions.count_suggestion(
        uow,
        sug,
        kind,
        latency_ms,
        metrics.workflow_thresholds(wf),
        evidence=in_evidence,
        attentive=attentive,
    )
    evidence.count_decision(
        uow,
        defn,
        ex,
        wf,
        sug,
        kind,
        latency_ms,
        operator,
        region_spot=region_spot,
        in_evidence=in_evidence,
        attentive=attentive,
    )
    return mark
