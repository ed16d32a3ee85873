"""Evidence and its consequences: a decision counted into the metrics (the workflow, its version, the step; an agent's
tool within its step; spot checks; the workspace's and the operators' totals are counted from the decisions when read,
services/metrics/totals.py), the events when a level changes, and the demotion that
spot checks showing acceptance below the bar bring. The rules (the sequential tests, levels, when to demote) are
core/coaching; this writes their state (services/metrics/service.py) in the caller's transaction."""

from __future__ import annotations

from sqlalchemy import select

from core.coaching import autonomy
from core.coaching.autonomy import tool_unit
from core.coaching.metrics import MetricsState, should_demote
from core.workflow import WorkflowDef
from services.audit import service as audit
from services.metrics import service as metrics
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.models.workflows import Workflow, workflow_of
from services.notifications import outbox as notification_outbox
from services.unit_of_work import UnitOfWork


def count_decision(
    uow: UnitOfWork,
    defn: WorkflowDef,
    ex: Execution,
    wf: Workflow,
    sug: Suggestion,
    kind: str,
    latency_ms: float,
    operator: str,
    *,
    region_spot: bool = False,
    in_evidence: bool = True,
    attentive: bool = False,
) -> None:
    """`region_spot`: the decision is a spot check of a call in an AUTO region (services.regions counted it for the
    region's own test): it does not go to its step's demotion test. `in_evidence` False: not in the readiness tests
    of the workflow, its version and the step; `attentive`: by an attentive operator (services/coaching/counting.py
    attention_of)."""
    session = uow.session
    if wf.kind == "plan":  # a plan has no workflow to learn about: its decisions count per tool
        metrics.record_decision(
            session,
            ex.workspace_id,
            metrics.plan_scopes(sug.tool),
            kind,
            latency_ms,
            levels=(),
        )
        return
    thresholds = metrics.workflow_thresholds(wf)
    scopes = metrics.workflow_scopes(ex.workflow_id, ex.workflow_version, sug.step_id)
    # an agent's tool call counts for its agent step and for that tool within it (its own readiness and pack)
    unit = tool_unit(sug.step_id, sug.tool) if sug.kind == "tool_call" else sug.step_id
    units = [sug.step_id] if unit == sug.step_id else [sug.step_id, unit]
    if unit != sug.step_id:
        scopes.append(("step", f"{ex.workflow_id}/{unit}"))
    if sug.purpose == "spot_check":
        # the workflow's spot checks while it is in AUTO, and each step's (a step promoted on its own)
        if wf.mode == "auto":
            scopes.append(("spot", ex.workflow_id))
        scopes += [("spot", f"{ex.workflow_id}/{u}") for u in units]
    # the step after this one in the definition's order is usually the next suggestion: read its row now too
    order = defn.order
    following = order.index(sug.step_id) + 1 if sug.step_id in order else len(order)
    ahead = [("step", f"{ex.workflow_id}/{order[following]}")] if following < len(order) and unit == sug.step_id else []
    levels = (("workflow", ex.workflow_id), *[("step", f"{ex.workflow_id}/{u}") for u in units])
    # an operator below the lead's bars: their decision is not in the readiness tests of the workflow, its version
    # and the step (their spot checks still count: a demotion takes every decision)
    left_out = () if in_evidence else (*levels, ("version", f"{ex.workflow_id}@{ex.workflow_version}"))
    states = metrics.record_decision(
        session,
        ex.workspace_id,
        scopes,
        kind,
        latency_ms,
        thresholds,
        ahead=ahead,
        levels=levels,
        left_out=left_out,
        attentive=attentive,
    )
    wf_state, level_before = states[("workflow", ex.workflow_id)]
    snapshot = wf_state.snapshot()
    uow.events.add("metrics_update", {"workflow_id": wf.id, **snapshot}, workspace=ex.workspace_id, plain=True)
    if snapshot["level"] != level_before:
        uow.events.add(
            "workflow_level_changed",
            {
                "workflow_id": wf.id,
                "level": snapshot["level"],
                "previous_level": level_before,
                "auto_ready": snapshot["auto_ready"],
                "mode": wf.mode,
            },
            workspace=ex.workspace_id,
        )
    step_modes = autonomy.step_modes(wf.settings)
    for u in units:
        step_state, step_before = states[("step", f"{ex.workflow_id}/{u}")]
        step_level = step_state.assess()
        if step_level.level != step_before:
            uow.events.add(
                "workflow_level_changed",
                {
                    "workflow_id": wf.id,
                    "step_id": u,
                    "level": step_level.level,
                    "previous_level": step_before,
                    "auto_ready": step_level.auto_ready,
                    "mode": step_modes.get(u, autonomy.COACHING),
                    "workflow_mode": wf.mode,
                },
                workspace=ex.workspace_id,
            )
    if sug.purpose == "spot_check" and not region_spot:
        # a tool promoted on its own within its agent step is demoted on its own (a call in an AUTO region is
        # that region's spot check, counted by services.regions, not its step's)
        promoted = unit if step_modes.get(unit) == autonomy.AUTO else sug.step_id
        _maybe_demote(uow, ex, wf, promoted, states, thresholds)


def count_review(uow: UnitOfWork, ex: Execution, step_id: str, kind: str, latency_ms: float) -> None:
    """A person's review of an unattended call that a policy forced (a tool-call approval of an AUTO run, or of
    a step promoted to AUTO alone): evidence for the spot-check test like a spot check (approve = accept,
    edit = correct, reject = reject), which may demote the workflow or the step."""
    session = uow.session
    wf = workflow_of(session, ex.workflow_id)
    mode = autonomy.effective_mode(ex.mode, wf.mode)
    step_modes = autonomy.step_modes(wf.settings)
    if mode != "auto" and step_modes.get(step_id) != autonomy.AUTO:
        return
    thresholds = metrics.workflow_thresholds(wf)
    scopes = ([("spot", ex.workflow_id)] if wf.mode == "auto" else []) + [("spot", f"{ex.workflow_id}/{step_id}")]
    scopes += [("workflow", ex.workflow_id), ("step", f"{ex.workflow_id}/{step_id}")]
    states: dict[tuple[str, str], tuple[MetricsState, str | None]] = {
        scope: (state, None)
        for scope, state in metrics.held_states(session, ex.workspace_id, scopes[-2:], thresholds).items()
    }
    states.update(metrics.record_decision(session, ex.workspace_id, scopes[:-2], kind, latency_ms, thresholds))
    _maybe_demote(uow, ex, wf, step_id, states, thresholds)


def _maybe_demote(uow: UnitOfWork, ex: Execution, wf: Workflow, step_id: str, states: dict, thresholds) -> None:
    if wf.mode == "auto" and should_demote(states[("spot", ex.workflow_id)][0], thresholds):
        _demote(uow, ex, wf, None, states, thresholds)
    elif autonomy.step_modes(wf.settings).get(step_id) == autonomy.AUTO and should_demote(
        states[("spot", f"{ex.workflow_id}/{step_id}")][0], thresholds
    ):
        _demote(uow, ex, wf, step_id, states, thresholds)


def _demote(uow: UnitOfWork, ex: Execution, wf: Workflow, step_id: str | None, states: dict, thresholds) -> None:
    """Spot checks are evidence that acceptance fell below the bar: the workflow (step_id None) or the step
    promoted on its own goes back to coaching, is no longer AUTO-ready until new evidence says so (its
    promotion tests start again; O(1), the rows are written with this decision's transaction), and its spot
    checks still waiting in the queue become ordinary reviews of a step that is coached again."""
    session = uow.session
    if step_id is None:
        spot_key, target = ("spot", wf.id), wf.id
        restart = [("workflow", wf.id), ("version", f"{wf.id}@{ex.workflow_version}"), spot_key]
        wf.mode = "coaching"
    else:
        spot_key, target = ("spot", f"{wf.id}/{step_id}"), f"{wf.id}/{step_id}"
        restart = [("step", target), spot_key]
        wf.settings = autonomy.with_step_mode(wf.settings, step_id, autonomy.COACHING)
    spot = states[spot_key][0]
    rate = spot.window.rate
    watched = states[("step", target) if step_id else ("workflow", wf.id)][0]
    level_before = watched.assess().level
    for scope in restart:
        if scope in states:
            states[scope][0].restart_evidence()
    where = [Suggestion.workflow_id == wf.id, Suggestion.status == "pending", Suggestion.purpose == "spot_check"]
    if step_id is not None:
        where.append(Suggestion.step_id == step_id)
    for waiting in session.scalars(select(Suggestion).where(*where)):
        waiting.purpose = "coaching"
        waiting.rationale = "Review: spot checks demoted this " + ("step" if step_id else "workflow") + " to coaching."
    after = watched.snapshot()
    reason = (
        f"spot checks show acceptance below {thresholds.auto_acceptance:.0%} "
        f"(spot-check acceptance {rate:.0%}, test at level {thresholds.auto_alpha:g})"
    )
    # the reason is kept in the audit event too: the dashboard's notices (services/metrics/notices.py) read it back
    recorded = audit.record(
        session,
        ex.workspace_id,
        "system",
        "step_demotion" if step_id else "demotion",
        target_type="step" if step_id else "workflow",
        target_id=target,
        before={"mode": "auto"},
        after={"mode": "coaching", "spot_check_rate": rate, "reason": reason},
    )
    uow.events.add(
        "workflow_level_changed",
        {
            "workflow_id": wf.id,
            **({"step_id": step_id} if step_id else {}),
            "level": after["level"],
            "previous_level": level_before,
            "auto_ready": after["auto_ready"],
            "mode": "coaching",
            "previous_mode": "auto",
            "workflow_mode": wf.mode,
            "reason": reason,
            "audit_seq": recorded.seq,
        },
        workspace=ex.workspace_id,
    )
    notification_outbox.demoted(session, ex.workspace_id, wf.id, step_id, reason, recorded.seq)
    if step_id is None:
        uow.events.add("metrics_update", {"workflow_id": wf.id, **after}, workspace=ex.workspace_id)
