"""Recovery of a failed execution, the pure rules (storage and pushes: services/orchestration/recovery.py).

Three ways on from a failure (anchors: Airflow's "clear task", Prefect's retry, LangGraph's resume from a checkpoint):
- retry: the failed step runs again, with its params as they were or edited (for this execution only). It is a new
  run of its tool: the step's key is cleared, so the runner gives it the next run number and a NEW idempotency key
  (engine.call_key). A step re-run after a crash keeps its key; a retry a person asks for is another attempt.
- resume from a step that has not run: the failed steps, and the steps the chosen one waits for that have not run,
  are skipped (a skipped step satisfies its dependants), and the execution goes on from the chosen step.
- re-run: a new execution of the same workflow with the same (or edited) variables, linked to the old one.

The control record (Execution.control, core/execution/control.py) keeps `retries` (what each retry and resume did),
`rerun_of` (on a re-run: the execution it re-runs) and `reruns` (on the old one: its re-runs' ids).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core import schema
from core.errors import Conflict, ValidationFailed
from core.execution import states as S
from core.execution.engine import StepState
from core.workflow.model import WorkflowDef

# a step that may be retried: it failed, or a person rejected it and the rejection failed the execution
RETRYABLE = frozenset({S.STEP_FAILED, S.STEP_REJECTED})
# a step one may resume from: it has not run
NOT_RUN = frozenset({S.STEP_PENDING})
VERBS = {"retry": "retried", "resume_from": "resumed", "rerun": "re-run"}


def check_failed(status: str, action: str) -> None:
    """Retry and resume apply to a failed execution only (409 otherwise, saying what applies instead)."""
    if status == S.FAILED:
        return
    hint = (
        "re-run it (a new execution): POST /api/executions/<id>/rerun"
        if status in S.TERMINAL
        else "it has not failed: it can be paused, corrected or cancelled"
    )
    raise Conflict(
        f"only a failed execution can be {VERBS[action]}; this one is {status} ({hint})",
        details={"status": status, "action": action},
    )


def check_rerun(status: str) -> None:
    """A re-run starts a new execution from one that ended (failed, cancelled or completed)."""
    if status not in S.TERMINAL:
        raise Conflict(
            f"this execution is still {status}: only an execution that ended can be re-run (cancel it first)",
            details={"status": status, "action": "rerun"},
        )


def _known(steps: Mapping[str, StepState], step_id: str) -> StepState:
    if step_id not in steps:
        raise ValidationFailed(
            f"there is no step {step_id!r}", details={"step_id": [f"unknown step; one of {sorted(steps)}"]}
        )
    return steps[step_id]


def check_retry(status: str, steps: Mapping[str, StepState], step_id: str) -> StepState:
    """The step to retry: the execution failed and so did this step (409 for a step that did not fail)."""
    check_failed(status, "retry")
    st = _known(steps, step_id)
    if st.status not in RETRYABLE:
        failed = [s.step_id for s in steps.values() if s.status in RETRYABLE]
        raise Conflict(
            f"step {step_id!r} did not fail ({st.status}): only a failed step can be retried"
            + (f"; the failed step is {failed[0]!r}" if failed else ""),
            details={"step_id": step_id, "step_status": st.status, "failed_steps": failed},
        )
    return st


def _ancestors(defn: WorkflowDef, step_id: str) -> set[str]:
    """Every step `step_id` waits for, directly or not (its `requires`, which include what its templates read)."""
    seen: set[str] = set()
    todo = list(defn.step(step_id).requires)
    while todo:
        sid = todo.pop()
        if sid not in seen:
            seen.add(sid)
            todo.extend(defn.step(sid).requires)
    return seen


def resume_skips(defn: WorkflowDef, status: str, steps: Mapping[str, StepState], step_id: str) -> list[str]:
    """The steps a resume from `step_id` skips, in the definition's order: every failed step, and the steps
    `step_id` waits for that have not run. 409 when `step_id` ran (or is the failed step: retry it instead), or
    when it reads the output of a step that would be skipped (it would be skipped too: retry that step instead)."""
    check_failed(status, "resume_from")
    st = _known(steps, step_id)
    if st.status in RETRYABLE:
        raise Conflict(
            f"step {step_id!r} is the step that failed: retry it instead of resuming from it",
            details={"step_id": step_id, "step_status": st.status},
        )
    if st.status not in NOT_RUN:
        raise Conflict(
            f"step {step_id!r} already ran ({st.status}): resume from a step that has not run",
            details={
                "step_id": step_id,
                "step_status": st.status,
                "not_run": [s.step_id for s in steps.values() if s.status in NOT_RUN],
            },
        )
    waits_for = _ancestors(defn, step_id)
    skips = [
        sid
        for sid in defn.order
        if steps[sid].status in RETRYABLE or (sid in waits_for and steps[sid].status in NOT_RUN)
    ]
    read = [sid for sid in defn.step(step_id).reads if sid in skips]
    if read:
        raise Conflict(
            f"step {step_id!r} reads the output of step {read[0]!r}, which has no output to give: "
            f"retry {read[0]!r} instead",
            details={"step_id": step_id, "reads": read},
        )
    return skips


def resume_options(defn: WorkflowDef, status: str, steps: Mapping[str, StepState]) -> list[dict[str, Any]]:
    """What "resume from" may choose on a failed execution, one entry per step that has not run, in the
    definition's order: {step_id, allowed, reason (why not, the 409 resume-from would answer; null when allowed),
    skips (what a resume from it skips)}. Empty unless the execution failed: the rules are resume_skips' own."""
    if status != S.FAILED:
        return []
    options: list[dict[str, Any]] = []
    for sid in defn.order:
        if sid not in steps or steps[sid].status not in NOT_RUN:
            continue
        try:
            options.append(
                {"step_id": sid, "allowed": True, "reason": None, "skips": resume_skips(defn, status, steps, sid)}
            )
        except Conflict as exc:
            options.append({"step_id": sid, "allowed": False, "reason": exc.message, "skips": []})
    return options


def params_problems(params_schema: dict[str, Any] | None, params: Any) -> dict[str, list[str]]:
    """Edited params checked against the tool's JSON Schema: {"params.<field>": [messages]} (a missing required
    field named as its own path), empty when they fit."""
    if not isinstance(params, dict):
        return {"params": ["must be an object"]}
    problems: dict[str, list[str]] = {}
    for err in schema.errors(params_schema or {"type": "object"}, params, limit=50):
        path = [str(p) for p in err.absolute_path]
        required = err.validator_value  # (the list of `required`: the schema passed check_schema)
        if err.validator == "required" and isinstance(err.instance, dict) and isinstance(required, list):
            missing = [name for name in required if name not in err.instance]
            for name in missing:
                problems.setdefault(".".join(["params", *path, name]), []).append("is required")
            continue
        problems.setdefault(".".join(["params", *path]), []).append(err.message)
    return problems


def retry_entry(
    kind: str,
    step_id: str,
    actor: str,
    at: str,
    *,
    error: str | None = None,
    run: int = 0,
    params_before: Any = None,
    params_after: Any = None,
    skipped: list[str] | None = None,
) -> dict[str, Any]:
    """One entry of the control record's `retries`: what a retry (or a resume from a step) did, and by whom."""
    entry: dict[str, Any] = {"kind": kind, "step_id": step_id, "by": actor, "at": at, "error": error}
    if kind == "retry":
        entry.update(failed_run=run, edited=params_after is not None)
        if params_after is not None:
            entry.update(params_before=params_before, params_after=params_after)
    else:
        entry["skipped"] = list(skipped or ())
    return entry


def with_entry(control: dict[str, Any] | None, entry: dict[str, Any]) -> dict[str, Any]:
    control = dict(control or {})
    control["retries"] = [*(control.get("retries") or []), entry]
    return control


def changes(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """What changed from `before` to `after`, field by field: [{path, before, after}] (a field added: before None;
    removed: after None). Objects are compared key by key; anything else as a whole."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[dict[str, Any]] = []
        for key in list(before) + [k for k in after if k not in before]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in after:
                found.append({"path": sub, "before": before[key], "after": None, "change": "removed"})
            elif key not in before:
                found.append({"path": sub, "before": None, "after": after[key], "change": "added"})
            else:
                found.extend(changes(before[key], after[key], sub))
        return found
    if before == after and type(before) is type(after):
        return []
    return [{"path": path or "(value)", "before": before, "after": after, "change": "changed"}]
