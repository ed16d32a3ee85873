"""Coaching: suggestions, the five decisions (docs/design.md#decisions), and the durable session around them.

Every function runs inside the caller's transaction and returns the events to push once it commits.
"""

from __future__ import annotations

import random
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import gates as G
from core.coaching import autonomy
from core.coaching import checks as C
from core.coaching import decisions as D
from core.coaching.rules import LearnedRule, apply_rules
from core.errors import Conflict
from core.execution import states as S
from core.execution.engine import resolve_params
from core.regions import region as R
from core.templating import TemplateFailure
from core.tools import ToolRegistry
from core.workflow import StepDef, WorkflowDef
from services.audit import service as audit
from services.coaching import checks, corrections
from services.executions import gates
from services.executions import service as executions
from services.metrics import service as metrics
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.models.workflows import Workflow, workflow_of
from services.orm import utcnow
from services.policies import service as policies
from services.regions import service as regions
from services.unit_of_work import UnitOfWork

STAT_OF = D.STAT_OF
REVIEW_GATES = ("decision", "spot_check")


def review_gate(session: Session, ex: Execution, spot_check_rate: float, rng: random.Random):
    """The `needs_human` callback of the engine for this execution (core.coaching.autonomy.review_for): its
    mode, its workflow's mode now and each step's own mode. `rng` draws the AUTO spot checks: one generator
    per runner, seeded from COACH_RANDOM_SEED when set, so a test run is repeatable."""
    if ex.mode not in ("coaching", "auto"):
        return None
    wf = workflow_of(session, ex.workflow_id)
    modes = autonomy.step_modes(wf.settings)
    scoped = regions.step_regions(session, ex.workspace_id, ex.workflow_id) if wf.kind != "plan" else {}

    def spot_check() -> bool:
        return rng.random() < spot_check_rate

    def gate(step: StepDef, state) -> str | None:
        if step.type != "action" or state.steps[step.id].decision is not None:
            return None
        step_mode = modes.get(step.id)
        if step.id in scoped:  # the call's region decides its mode (docs/autonomy.md#regions)
            try:
                suggested = learned(session, wf, step.id, resolve_params(step, state))[0]
            except TemplateFailure:
                return autonomy.DECISION  # asked: the suggestion says why the params cannot be rendered
            step_mode = R.effective_step_mode(step_mode, region_of(scoped[step.id], ex, step, suggested))
        return autonomy.review_for(ex.mode, wf.mode, step_mode, spot_check)

    return gate


def region_of(scope: list, ex: Execution, step: StepDef, params: Any) -> R.Match:
    """Where a tool step's call falls among its step's regions (the names a policy predicate sees)."""
    return R.region_for(scope, params, tool=step.tool, context={"step_type": step.type, "workflow_id": ex.workflow_id})


def pending(session: Session, execution_id: str) -> list[Suggestion]:
    return list(
        session.scalars(
            select(Suggestion)
            .where(Suggestion.execution_id == execution_id, Suggestion.status == "pending")
            .order_by(Suggestion.created_at)
        )
    )


def view(
    s: Suggestion, tools: ToolRegistry | None = None, step: StepDef | None = None, region: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A suggestion as clients see it; `region`: its region's reference (services.regions.service.ref), when in one."""
    tool = tools.get(s.tool) if tools and s.tool else None
    return {
        "suggestion_id": s.id,
        "execution_id": s.execution_id,
        "workflow_id": s.workflow_id,
        "workflow_version": s.workflow_version,
        "step_id": s.step_id,
        "step_name": step.name if step else s.step_id,
        "tool": s.tool,
        "params": s.params,
        "definition_params": s.definition_params,
        "rationale": s.rationale,
        "confidence": s.confidence,
        "source": s.source,
        "status": s.status,
        "version": s.version,
        "purpose": s.purpose,
        "created_at": s.created_at,
        "params_schema": tool.params_schema if tool else None,
        "risk": tool.risk if tool else None,
        "policy": s.policy,
        # when nobody deciding sets off the step's on_human_timeout (services.executions.gates); None: no deadline, or
        # paused
        "deadline": s.deadline,
        "on_timeout": gates.on_timeout(s.purpose, step.human_timeout) if step else None,
        # step | tool_call (a call an agent step's LLM asked for: params are its arguments, rationale its reasoning)
        "kind": s.kind or "step",
        "tool_call_id": s.tool_call_id,
        "agent_message_id": s.agent_message_id,
        "region": region,
    }


def described(session: Session, definitions: Any, tools: ToolRegistry, s: Suggestion) -> dict[str, Any]:
    """A stored suggestion as clients see it: with its step's name and its tool's schema."""
    return view(
        s, tools, definitions.get(session, s.workflow_id, s.workflow_version).step(s.step_id), regions.ref(session, s)
    )


def learned(session: Session, wf: Workflow, step_id: str, rendered: Any) -> tuple[Any, str | None, list[LearnedRule]]:
    """The step's params with its correction pack's learned rules applied: what a suggestion proposes, and what
    an unattended run of a coaching-trained step (AUTO, or a step promoted alone) really runs with, since the
    workflow earned its autonomy with those suggestions. Returns (params, pack id, rules applied)."""
    pack_id, rules = corrections.active_rules(session, wf, step_id)
    if not rules:
        return rendered, None, []
    params, applied = apply_rules(rendered, rules)
    return params, pack_id, applied


def open_suggestion(
    uow: UnitOfWork,
    ex: Execution,
    defn: WorkflowDef,
    step: StepDef,
    purpose: str,
    tools: ToolRegistry,
    *,
    params: Any = None,
    rationale: str = "",
    rng: random.Random | None = None,
) -> Suggestion:
    """Stop before `step` and ask a human. Raises TemplateFailure when the params cannot be rendered. `rng`: the
    runner's generator, which draws whether a coaching suggestion is shown as a check instead (the workspace's
    check_rate, docs/autonomy.md#check-suggestions); without it, never."""
    session = uow.session
    state = executions.to_state(ex)
    rendered = resolve_params(step, state) if params is None else params
    source = "definition"
    suggested = rendered
    wf = workflow_of(session, ex.workflow_id)
    applied: list[LearnedRule] = []
    if params is None:
        suggested, pack_id, applied = learned(session, wf, step.id, rendered)
        if applied:
            source = f"correction_pack:{pack_id}"
            changed = ", ".join(f"{r.field} → {r.after!r}" for r in applied)
            rationale = f"Learned from {applied[0].count} earlier corrections: {changed}."
    change, verdict = None, None
    if rng is not None and purpose == "coaching" and params is None and wf.kind != "plan" and step.type == "action":
        change = checks.draw(session, ex.workspace_id, ex.workflow_id, step.id, suggested, rng)
        if change is not None:
            shown = C.shown_params(suggested, change)
            verdict = policies.judge(session, tools, ex, step, shown)
            if verdict["effect"] == "deny":
                change = verdict = None  # a check whose value a policy denies would give itself away
            else:
                suggested, purpose = shown, C.PURPOSE
                if any(r.field == change.param for r in applied):  # the learned rule's line would contradict it
                    source, rationale = "definition", ""
    scopes = (
        metrics.plan_scopes(step.tool)
        if wf.kind == "plan"
        else metrics.workflow_scopes(ex.workflow_id, ex.workflow_version, step.id)
    )
    if change is None:
        counted = metrics.record_suggestion(session, ex.workspace_id, scopes, metrics.workflow_thresholds(wf))
        confidence = counted[scopes[-1]].confidence()  # the step's (a plan's: its tool's)
    else:  # a check is no suggestion of the step's: it counts nowhere but for whoever decides it
        confidence = metrics.load(session, ex.workspace_id, *scopes[-1], metrics.workflow_thresholds(wf)).confidence()
    now = utcnow()
    deadline = G.deadline(now, step.human_timeout)
    sug = Suggestion(
        created_at=now,
        deadline=deadline,
        workspace_id=ex.workspace_id,
        execution_id=ex.id,
        workflow_id=ex.workflow_id,
        workflow_version=ex.workflow_version,
        step_id=step.id,
        tool=step.tool,
        params=suggested,
        definition_params=rendered,
        confidence=confidence,
        source=source,
        purpose=purpose,
        rationale=rationale
        or (
            f"Spot check of an AUTO run: {step.name}"
            if purpose == "spot_check"
            else f"Step {step.name!r} runs {step.tool} with these params."
        ),
        check_change=change.to_dict() if change is not None else None,
    )
    sug.policy = verdict or (policies.judge(session, tools, ex, step, suggested) if step.type == "action" else None)
    if wf.kind != "plan" and step.type == "action":
        scope = regions.step_regions(session, ex.workspace_id, ex.workflow_id).get(step.id, [])
        if scope:
            regions.stamp(sug, region_of(scope, ex, step, suggested))
    session.add(sug)
    executions.set_step(ex, step.id, status=S.STEP_WAITING)
    kind = G.CORRECTION if purpose == "correction" else G.SUGGESTION
    ex.gate = {"kind": kind, "step_id": step.id, "suggestion_id": sug.id, **gates.armed(kind, step.human_timeout, now)}
    if purpose != "correction":
        executions.set_status(ex, "await_decision")
    if change is None:
        executions.count_stat(ex, "suggestions_made")
    payload = view(sug, tools, step, regions.ref(session, sug))
    uow.events.add("coaching_suggestion", payload, execution=ex.id, workspace=ex.workspace_id)
    uow.events.latest("coaching_stats", {"execution_id": ex.id, **executions.stats_of(ex)}, execution=ex.id, plain=True)
    return sug


def pause(uow: UnitOfWork, workspace_id: str, execution_id: str, actor: str = "system") -> Execution:
    session = uow.session
    ex = executions.get(session, workspace_id, execution_id, for_update=True)
    _require_coaching(ex)
    if (ex.gate or {}).get("kind") == "held":  # services.coaching.held: its window runs on; undo, or let it act
        raise Conflict(
            "a decision is held for its undo window: take it back (undo) or let it act, then pause",
            details={"status": ex.status, "held_until": (ex.gate or {}).get("deadline")},
        )
    executions.set_status(ex, "pause")
    gates.hold(ex, pending(session, ex.id))  # a paused session's deadline does not run down
    audit.record(session, workspace_id, actor, "pause", target_type="execution", target_id=ex.id, execution_id=ex.id)
    executions.changed(uow, ex)
    return ex


def resume(
    uow: UnitOfWork,
    workspace_id: str,
    execution_id: str,
    actor: str,
    *,
    tools: ToolRegistry,
    definitions: Any,
) -> tuple[Execution, bool]:
    """Resume a paused session; returns (execution, whether the runner must go on)."""
    session = uow.session
    ex = executions.get(session, workspace_id, execution_id, for_update=True)
    _require_coaching(ex)
    if ex.status != S.PAUSED:
        raise Conflict(f"the coaching session is not paused (execution is {ex.status})", details={"status": ex.status})
    executions.set_status(ex, "resume")
    audit.record(session, workspace_id, actor, "resume", target_type="execution", target_id=ex.id, execution_id=ex.id)
    waiting = pending(session, ex.id)
    gates.rearm(ex, waiting, utcnow())  # its gate gets its whole time again
    if waiting:
        executions.set_status(ex, "await_correction" if waiting[0].purpose == "correction" else "await_decision")
        for sug in waiting:  # re-push, so that every panel shows it again
            uow.events.add(
                "coaching_suggestion",
                described(session, definitions, tools, sug),
                execution=ex.id,
                workspace=ex.workspace_id,
            )
    executions.changed(uow, ex)
    return ex, not waiting


def _require_coaching(ex: Execution) -> None:
    if ex.mode not in ("coaching", "auto"):
        raise Conflict("this execution has no coaching session (mode normal)", details={"mode": ex.mode})
