"""Executions: start, read, list, change a step or the status, the session's counters. The runner advances them;
services.orchestration.control cancels them and answers their questions."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import flag_modified

from core.errors import Conflict, NotFound, ValidationFailed
from core.execution import recovery as recovery_rules
from core.execution import states as S
from core.execution.control import CORRECTABLE
from core.execution.engine import ExecutionState, StepState, progress, steps_progress
from core.tools import ToolRegistry
from core.workflow import WorkflowDef, validate_variables
from services import jsontext
from services.audit import service as audit
from services.db import row_locks
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.models.policies import PolicySettings
from services.models.workflows import Workflow
from services.notifications import outbox as notification_outbox
from services.notifier import jsonable
from services.orm import utcnow
from services.unit_of_work import UnitOfWork
from services.workflows import service as workflows
from services.workflows.service import DefinitionCache

MODES = ("normal", "coaching", "auto")
# timed_out: suggestions whose deadline fired (services.executions.gates), which no operator decided
COACHING_STATS = ("suggestions_made", "accepted", "rejected", "corrected", "manual_executions", "skipped", "timed_out")


def get(session: Session, workspace_id: str, execution_id: str, *, for_update: bool = False) -> Execution:
    ex = get_any(session, execution_id, for_update=for_update)
    if ex is None or ex.workspace_id != workspace_id:
        raise NotFound(f"execution {execution_id} not found")
    return ex


def get_any(session: Session, execution_id: str, *, for_update: bool = True) -> Execution | None:
    """Any workspace's execution with its steps (the runner works across workspaces), row-locked on PostgreSQL."""
    return session.get(Execution, execution_id, with_for_update=True if for_update and row_locks(session) else None)


def get_with_suggestion(
    session: Session, workspace_id: str, execution_id: str, suggestion_id: str
) -> tuple[Execution, Suggestion, Workflow] | None:
    """What a decision reads, in one SELECT: the execution (row-locked on PostgreSQL, as `get(for_update=True)`),
    one of its suggestions, its workflow, and the workspace's policy settings (which the decision and the next
    suggestion judge calls under; they stay in the session's identity map). Waiting for the lock, PostgreSQL gives
    the execution's row as the transaction that held it left it; a suggestion read from before that transaction
    committed is refused when written, by its version column (StaleDataError, tried again). None when any of them
    is missing: the caller then finds out which with `get` and `session.get`."""
    query = _WITH_SUGGESTION_LOCKED if row_locks(session) else _WITH_SUGGESTION
    row = session.execute(query, {"execution_id": execution_id, "suggestion_id": suggestion_id}).first()
    if row is None or row[0].workspace_id != workspace_id:
        return None
    return row[0], row[1], row[2]


# built once (every decision runs it): SQLAlchemy caches its compiled form
_WITH_SUGGESTION = (
    select(Execution, Suggestion, Workflow, PolicySettings)
    .join(Suggestion, (Suggestion.id == bindparam("suggestion_id")) & (Suggestion.execution_id == Execution.id))
    .join(Workflow, Workflow.id == Execution.workflow_id)
    .outerjoin(PolicySettings, PolicySettings.workspace_id == Execution.workspace_id)
    .where(Execution.id == bindparam("execution_id"))
)
_WITH_SUGGESTION_LOCKED = _WITH_SUGGESTION.with_for_update(of=Execution)


def start(
    session: Session,
    definitions: DefinitionCache,
    workspace_id: str,
    workflow_id: str,
    variables: Any,
    mode: str | None = None,
    started_by: str | None = None,
    actor: str = "system",
) -> Execution:
    """A new execution, audited (`execution_start`: who, mode, variables). `mode` None means the workflow's own
    mode (coaching or auto), so a start that does not choose never skips the review the workflow is under.
    `started_by` (a user id) is who an approval with separate_duties refuses; `actor` is who the audit names."""
    if mode is not None and mode not in MODES:
        raise ValidationFailed("unknown mode", details={"mode": [f"must be one of {list(MODES)}"]})
    wf = workflows.get(session, workspace_id, workflow_id)
    mode = mode or wf.mode
    if mode == "auto" and wf.mode != "auto":
        raise Conflict(
            "this workflow is not in AUTO: a lead promotes it once it is AUTO-ready", details={"workflow_mode": wf.mode}
        )
    defn = definitions.get(session, wf.id, wf.current_version)
    values = validate_variables(defn, variables)
    ex = Execution(
        workspace_id=workspace_id,
        workflow_id=wf.id,
        workflow_version=wf.current_version,
        mode=mode,
        status=S.PENDING,
        variables=values,
        started_by=started_by,
        steps={sid: StepState(sid) for sid in defn.step_ids},
        coaching_stats={k: 0 for k in COACHING_STATS} if mode in ("coaching", "auto") else None,
    )
    session.add(ex)
    audit.record(
        session,
        workspace_id,
        actor,
        "execution_start",
        target_type="execution",
        target_id=ex.id,
        execution_id=ex.id,
        after={"workflow_id": wf.id, "workflow_version": wf.current_version, "mode": mode, "variables": values},
    )
    return ex


def to_state(ex: Execution) -> ExecutionState:
    """The engine's view of the execution. Its steps are the execution's own StepState objects (no copy):
    read them freely, change them only through set_step."""
    state = ExecutionState(
        id=ex.id,
        status=ex.status,
        mode=ex.mode,
        variables=ex.variables or {},
        steps=ex.steps,
        workspace_id=ex.workspace_id,
    )
    control = ex.control
    if control:  # steered by a person (core/execution/control.py); NULL for every other execution
        state.breakpoints = control.get("breakpoints") or {}
        state.clarified = frozenset(control.get("clarified") or ())
        state.feedback = control.get("feedback") or {}
    return state


def step_state(ex: Execution, step_id: str) -> StepState:
    try:
        return ex.steps[step_id]
    except KeyError:
        raise NotFound(f"execution {ex.id} has no step {step_id!r}") from None


def set_step(ex: Execution, step_id: str, **changes: Any) -> StepState:
    """The one way to change a step: the steps are one JSON column changed in place, so the session is told."""
    st = step_state(ex, step_id)
    for name, value in changes.items():
        setattr(st, name, value)
    flag_modified(ex, "steps")
    unpushed = getattr(ex, UNPUSHED, None)
    if unpushed is None:
        setattr(ex, UNPUSHED, unpushed := {})
    unpushed[step_id] = None
    return st


def set_status(ex: Execution, trigger: str) -> None:
    ex.status = S.transition(ex.status, trigger)
    if ex.status in S.TERMINAL:
        ex.finished_at = utcnow()
    notification_outbox.status_changed(ex)  # a suggestion waiting, a question, a failure: notified at commit


def count_stat(ex: Execution, key: str) -> None:
    """One more of `key` (suggestions_made, accepted, …, timed_out) in the execution's coaching stats."""
    stats = dict(ex.coaching_stats or {})
    stats[key] = stats.get(key, 0) + 1
    ex.coaching_stats = stats


def stats_of(ex: Execution) -> dict[str, int]:
    """The session's counters (all zero for an execution that never had a suggestion)."""
    values = ex.coaching_stats or {}
    return {k: int(values.get(k, 0)) for k in COACHING_STATS}


def settle_answer(ex: Execution, step_id: str, answer_value: Any, decision: str | None = None) -> None:
    """What an answer does (a person's, or a deadline's timeout_answer: `decision` timeout_answer): the step's output
    is {"answer": ...}, and the execution goes on."""
    set_step(
        ex, step_id, status=S.STEP_SUCCEEDED, output={"answer": answer_value}, finished_at=utcnow(), decision=decision
    )
    ex.gate = None
    set_status(ex, "answer")


def list_page(
    session: Session,
    workspace_id: str,
    *,
    workflow_id: str | None = None,
    mode: str | None = None,
    status: str | None = None,
    page: int = 1,
    per_page: int = 20,
) -> tuple[list[Execution], int]:
    where = [Execution.workspace_id == workspace_id]
    if workflow_id:
        where.append(Execution.workflow_id == workflow_id)
    if mode:
        where.append(Execution.mode == mode)
    if status:
        where.append(Execution.status == status)
    total = session.scalar(select(func.count()).select_from(Execution).where(*where)) or 0
    rows = session.scalars(
        select(Execution)
        .where(*where)
        .order_by(Execution.created_at.desc(), Execution.id)
        .offset((page - 1) * per_page)
        .limit(per_page)
    ).all()
    return list(rows), total


def view(
    ex: Execution,
    defn: WorkflowDef | None = None,
    approvals: dict[str, dict] | None = None,
    tools: ToolRegistry | None = None,
) -> dict[str, Any]:
    """`approvals`: step id -> {approval_id, status, kind} (services.approvals.service.by_step), shown on those steps.
    Each step carries `definition`: what a correction may change, as written (corrections applied), and with
    `tools`, `params_schema`: its tool's, so a client can draw the same form as the correction editor's."""
    state = to_state(ex)
    approvals = approvals or {}
    written = {raw.get("id"): raw for raw in (defn.source.get("steps") or []) if isinstance(raw, dict)} if defn else {}
    steps = []
    for row in ex.steps.values():
        step = defn.step(row.step_id) if defn else None
        raw = written.get(row.step_id) or {}
        tool = tools.get(step.tool) if tools is not None and step is not None and step.tool else None
        steps.append(
            {
                "step_id": row.step_id,
                "name": step.name if step else row.step_id,
                "type": step.type if step else None,
                "tool": step.tool if step else None,
                **_step_state(row),
                "approval": approvals.get(row.step_id),
                "definition": {k: raw[k] for k in CORRECTABLE if k in raw},
                "params_schema": tool.params_schema if tool is not None else None,
                # an agent step's conversation (services/agents/store.py)
                "transcript": f"/api/executions/{ex.id}/steps/{row.step_id}/transcript"
                if step is not None and step.type == "agent"
                else None,
            }
        )
    return {
        "execution_id": ex.id,
        "workflow_id": ex.workflow_id,
        "workflow_version": ex.workflow_version,
        "mode": ex.mode,
        "status": ex.status,
        "progress": progress(state),
        "steps": steps,
        "is_coaching": ex.mode == "coaching",
        "variables": ex.variables,
        "error": ex.error,
        "gate": ex.gate,
        "created_at": ex.created_at,
        "updated_at": ex.updated_at,
        "started_at": ex.started_at,
        "finished_at": ex.finished_at,
        "started_by": ex.started_by,
        # a failed execution: the steps "resume from" may choose, and why the others not (core.execution.recovery)
        "resume_from": recovery_rules.resume_options(defn, ex.status, ex.steps) if defn else [],
        "lease": {
            "owner": ex.lease_owner,
            "expires_at": ex.lease_expires_at.isoformat() if ex.lease_expires_at else None,
        }
        if ex.lease_owner
        else None,
    }


# An execution's steps changed (set_step) since its last `execution_update` was made: step id -> None, in the order
# changed. A plain attribute of the loaded object, not a column.
UNPUSHED = "unpushed_steps"


def update_event(ex: Execution, step_id: str | None = None, *, steps: bool = True) -> dict[str, Any]:
    """The `execution_update` payload (docs/api.md#real-time-socketio). With `steps` (a push), it carries the
    execution's gate and the state of every step changed since the last push (each as the execution's REST detail shows
    them), so that a
    client keeps its copy of the execution in step with the pushes alone; those steps then count as pushed. Without
    (an answer, a join's ack), it leaves them for the next push."""
    update: dict[str, Any] = {
        "execution_id": ex.id,
        "status": ex.status,
        "progress": steps_progress(ex.steps),
        "step_id": step_id,
    }
    if steps:
        unpushed = getattr(ex, UNPUSHED, None) or {}
        setattr(ex, UNPUSHED, {})
        changed = _pushed_views([ex.steps[sid] for sid in unpushed if sid in ex.steps])
        # steps with large outputs are left out: the push goes to the workspace room too (every queue and dashboard
        # of the workspace), and a client without them reads the execution when it needs its steps
        if changed is not None:
            update["steps"] = changed
        update["gate"] = jsonable(ex.gate)
    return update


def changed(uow: UnitOfWork, ex: Execution, step_id: str | None = None) -> None:
    """The execution changed in this transaction: its `execution_update` goes with the transaction's events, made
    once, just before the commit, from the execution as it then is (every step changed meanwhile in it), wherever
    the transaction goes on to take it (a decision runs on to its next suggestion). `step_id`: where it stands."""
    uow.events.at_commit(
        uow.session,
        "execution_update",
        ex.id,
        lambda: update_event(ex, step_id),
        execution=ex.id,
        workspace=ex.workspace_id,
    )


PUSHED_STEPS_MAX = 64 * 1024  # bytes of JSON (UTF-8): the steps an execution_update carries at most
_VIEWS_JSON = orjson.OPT_NAIVE_UTC | orjson.OPT_NON_STR_KEYS


def _pushed_views(states: list[StepState]) -> list[dict[str, Any]] | None:
    """The steps' states as the REST detail shows them (view() adds what the definition says), in plain JSON values
    (datetimes as ISO 8601 in UTC): an event's payload is sent as made, and must not share the steps' values (they
    may change before it is sent). None when their JSON is over PUSHED_STEPS_MAX. Made through their JSON text
    (orjson, there and back), which measures them on the way, at half the cost of a copy value by value."""
    views = [_step_state(st) for st in states]
    try:
        text = orjson.dumps(views, option=_VIEWS_JSON)
    except TypeError:  # what orjson declines (an integer beyond 64 bits, a lone surrogate): copied value by value
        copied = jsonable(views)
        return copied if len(jsontext.dumps(copied).encode("utf-8", "surrogatepass")) <= PUSHED_STEPS_MAX else None
    return orjson.loads(text) if len(text) <= PUSHED_STEPS_MAX else None


def _step_state(st: StepState) -> dict[str, Any]:
    return {
        "step_id": st.step_id,
        "status": st.status,
        "output": st.output,
        "error": st.error,
        "attempts": st.attempts,
        "params": st.params,
        "decision": st.decision,
        "policy": st.policy,
        "run": st.run,
        "idempotency_key": st.idempotency_key,
        "started_at": st.started_at,
        "finished_at": st.finished_at,
    }
