"""Interactive control of a running execution or plan (pause for clarification, correct a step that has not run,
resume with feedback): the pure rules. Storage and pushes live in services/orchestration/control.py.

An execution's control record (`Execution.control`, JSON, NULL until someone uses it) holds:
- `overrides`: step id -> the step's corrected definition (a whole step, as written in a definition), applied over
  the version's definition for this execution only (definitions are immutable versions);
- `breakpoints`: step id -> question, for pauses asked for a step not reached yet;
- `clarified`: steps whose `requires_clarification` a resume already answered;
- `feedback`: step id -> the feedback given when resuming after that step's pause (`{{ feedback.<id> }}`);
- `last`: the latest pause that was resumed {step_id, question, paused_at, resumed_at, feedback}.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeGuard

from core.errors import Conflict, ValidationFailed
from core.execution import states as S
from core.workflow.model import WorkflowDef

# what a correction may change in a step; the rest (id, type, dependencies) would change the execution's shape
CORRECTABLE = ("name", "description", "params", "tool", "timeout_s", "retries")
UPDATED = "correction.updated_step"


def with_overrides(source: dict[str, Any], overrides: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    """A definition's source with the corrected steps put in place of the originals."""
    if not overrides:
        return source
    return {
        **source,
        "steps": [_overridden(raw, overrides) for raw in source["steps"]],
    }


def _overridden(raw: Any, overrides: dict[str, dict[str, Any]]) -> Any:
    step_id = raw.get("id") if isinstance(raw, dict) else None
    return overrides.get(step_id, raw) if isinstance(step_id, str) else raw


def corrected_step(defn: WorkflowDef, step_id: str, updated: Any) -> tuple[dict[str, Any], dict[str, Any], int]:
    """(the step as it is now, as it will be, its index) for a correction `{updated_step: {...}}`'s step part;
    raises ValidationFailed naming `correction.updated_step.<field>` for what a correction cannot change."""
    if not isinstance(updated, dict) or not updated:
        raise ValidationFailed(
            "a correction needs the fields to change",
            details={UPDATED: [f"is required: an object with some of {list(CORRECTABLE)}"]},
        )
    refused = sorted(k for k in updated if k not in CORRECTABLE)
    if refused:
        raise ValidationFailed(
            "a correction changes what a step does, not where it is in the execution",
            details={f"{UPDATED}.{k}": [f"cannot be corrected; one of {list(CORRECTABLE)}"] for k in refused},
        )
    steps = defn.source["steps"]
    index = next(i for i, raw in enumerate(steps) if isinstance(raw, dict) and raw.get("id") == step_id)
    before = steps[index]
    return before, {**copy.deepcopy(before), **copy.deepcopy(updated)}, index


def correction_paths(error: ValidationFailed, index: int) -> ValidationFailed:
    """The validator's error for the whole definition, its paths of the corrected step named as the request's
    (`steps[2].params.url` -> `correction.updated_step.params.url`)."""
    prefix = f"steps[{index}]"
    details: dict[str, list[Any]] = {}
    for path, messages in error.details.items():
        if path == prefix:
            path = UPDATED
        elif path.startswith(prefix + "."):
            path = UPDATED + path[len(prefix) :]
        details.setdefault(path, []).extend(messages)
    return ValidationFailed("the corrected step is invalid", details=details)


def check_correctable(status: str, step_status: str, step_id: str, gate: dict[str, Any] | None) -> None:
    """A correction changes a step that has not run yet: a step that ran (or runs) is a 409, and so is one that
    waits for a person for another reason (a decision, an answer, an approval): pause it first."""
    if status in S.TERMINAL:
        raise Conflict(f"execution is already {status}", details={"status": status, "action": "apply_correction"})
    if step_status == S.STEP_RUNNING or step_status in S.STEP_DONE:
        raise Conflict(
            f"step {step_id!r} already ran ({step_status}): only a step that has not run can be corrected",
            details={"step_id": step_id, "step_status": step_status},
        )
    if step_status == S.STEP_WAITING and not paused_at(gate, step_id):
        raise Conflict(
            f"step {step_id!r} is waiting for a person ({(gate or {}).get('kind')}); pause it first",
            details={"step_id": step_id, "status": status, "gate": (gate or {}).get("kind")},
        )


def paused_at(gate: dict[str, Any] | None, step_id: str | None = None) -> TypeGuard[dict[str, Any]]:
    """Whether the execution is stopped by a clarification pause (before `step_id`, when given)."""
    if not gate:
        return False
    return gate.get("kind") == "clarification" and (step_id is None or gate.get("step_id") == step_id)


def check_pausable(status: str, step_status: str, step_id: str) -> None:
    if status in S.TERMINAL:
        raise Conflict(f"execution is already {status}", details={"status": status, "action": "pause"})
    if step_status == S.STEP_RUNNING or step_status in S.STEP_DONE:
        raise Conflict(
            f"step {step_id!r} already ran ({step_status}): a pause stops before a step",
            details={"step_id": step_id, "step_status": step_status},
        )


def resume_refusal(status: str, gate: dict[str, Any] | None) -> Conflict | None:
    """Why a resume (after a clarification pause) does not apply, or None when it does. The table says first."""
    S.transition(status, "resume")
    kind = (gate or {}).get("kind")
    if kind == "clarification":
        return None
    hint = {
        "human_input": "answer it: POST /api/executions/<id>/steps/<step_id>/answer",
        "correction": "decide its correction suggestion (correct, manual or skip)",
    }.get(str(kind), "resume the coaching session: POST /api/executions/<id>/coaching/resume")
    return Conflict(
        f"this execution is not paused for clarification ({status}); {hint}", details={"status": status, "gate": kind}
    )


def after_resume(control: dict[str, Any] | None, gate: dict[str, Any], feedback: Any, now: str) -> dict[str, Any]:
    """The control record once the pause at `gate` is resumed with `feedback`."""
    control = dict(control or {})
    step_id = gate["step_id"]
    control["breakpoints"] = {k: v for k, v in (control.get("breakpoints") or {}).items() if k != step_id}
    control["clarified"] = sorted(set(control.get("clarified") or ()) | {step_id})
    if feedback is not None:
        control["feedback"] = {**(control.get("feedback") or {}), step_id: feedback}
    control["last"] = {
        "step_id": step_id,
        "question": gate.get("question"),
        "paused_at": gate.get("paused_at"),
        "resumed_at": now,
        "feedback": feedback,
    }
    return control


def state_view(status: str, gate: dict[str, Any] | None, control: dict[str, Any] | None) -> dict[str, Any]:
    """GET .../execution-state (docs/api.md): {state, step_id, question, paused_at, feedback}, plus the
    breakpoints, corrected steps and every feedback given."""
    gate, control = gate or {}, control or {}
    feedbacks = control.get("feedback") or {}
    if gate.get("kind") in ("clarification", "human_input"):
        step_id, question, paused = gate.get("step_id"), gate.get("question"), gate.get("paused_at")
        feedback = feedbacks.get(step_id)
    elif gate:
        step_id, question, paused, feedback = gate.get("step_id"), None, None, None
    else:
        last = control.get("last") or {}
        step_id, question, paused, feedback = (
            last.get("step_id"),
            last.get("question"),
            last.get("paused_at"),
            last.get("feedback"),
        )
    return {
        "state": status,
        "step_id": step_id,
        "question": question,
        "paused_at": paused,
        "feedback": feedback,
        "breakpoints": control.get("breakpoints") or {},
        "corrected_steps": sorted(control.get("overrides") or {}),
        "feedbacks": feedbacks,
        "last_resume": control.get("last"),
    }


def parse_with(parse: Callable[[dict[str, Any]], WorkflowDef], source: dict[str, Any], index: int) -> WorkflowDef:
    try:
        return parse(source)
    except ValidationFailed as exc:
        raise correction_paths(exc, index) from None
