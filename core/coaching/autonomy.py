"""Per-workflow and per-step autonomy (docs/design.md#metrics-and-learning-levels): which tool steps a human sees, and
the rules for changing a step's mode.

A workflow's `mode` (`coaching` or `auto`) is what a lead chose for it as a whole; each step may have its
own mode on top: `auto` (promoted alone: it runs unattended with spot checks while the workflow's other
steps are still suggested) or `always_review` (pinned: every run of it is decided by a human, whatever the
workflow's mode; no promotion overrides it). A step without a mode of its own follows its workflow.
"""

from __future__ import annotations

from collections.abc import Callable

from core.errors import Conflict, ValidationFailed

COACHING, AUTO, ALWAYS_REVIEW = "coaching", "auto", "always_review"
STEP_MODES = (COACHING, AUTO, ALWAYS_REVIEW)
WORKFLOW_MODES = (COACHING, AUTO)  # what a lead chose for a workflow; its level is what the evidence says

DECISION, SPOT_CHECK = "decision", "spot_check"


def tool_unit(step_id: str, tool: str | None) -> str:
    """What an agent step's calls of one tool count under (metrics, correction pack, step mode): `<step>:<tool>`."""
    return f"{step_id}:{tool or '(none)'}"


def effective_mode(execution_mode: str, workflow_mode: str) -> str:
    """The mode an execution's steps are gated by now: an `auto` execution of a workflow that was demoted
    while it ran goes on as coaching (a demotion means a human must look again, from the next step)."""
    if execution_mode == AUTO and workflow_mode != AUTO:
        return COACHING
    return execution_mode


def review_for(
    execution_mode: str, workflow_mode: str, step_mode: str | None, spot_check: Callable[[], bool]
) -> str | None:
    """What a tool step needs before it runs: `decision` (a suggestion an operator decides), `spot_check`
    (an AUTO run sampled for review; `spot_check()` draws the sample) or None (it runs unattended).
    Executions in `normal` mode are gated by policy only, never here."""
    mode = effective_mode(execution_mode, workflow_mode)
    if mode not in WORKFLOW_MODES:
        return None
    if step_mode == ALWAYS_REVIEW:
        return DECISION
    if mode == COACHING and step_mode != AUTO:
        return DECISION
    return SPOT_CHECK if spot_check() else None


def check_step_mode(current: str, target: str, *, auto_ready: bool, force: bool) -> None:
    """Whether a lead may set a step from `current` to `target`: ValidationFailed for an unknown mode,
    Conflict when promoting a step that is not AUTO-ready (unless forced: the caller checks the admin role)
    or a pinned one (it must be unpinned, set to `coaching`, first: a pin is not overridden by promotion)."""
    if target not in STEP_MODES:
        raise ValidationFailed("unknown step mode", details={"mode": [f"must be one of {', '.join(STEP_MODES)}"]})
    if target != AUTO or current == AUTO:
        return
    if current == ALWAYS_REVIEW:
        raise Conflict(
            "this step is pinned to always_review: set it to coaching first to unpin it", details={"mode": current}
        )
    if not auto_ready and not force:
        raise Conflict("this step is not AUTO-ready yet", details={"auto_ready": False})


def check_force(force: bool, reason: str | None) -> str | None:
    """A forced promotion (an admin's, of a workflow or step that is not AUTO-ready) says why: the reason is kept in
    the audit log. ValidationFailed naming `reason` when it is missing; the reason, trimmed, otherwise."""
    if not force:
        return None
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed(
            "a forced promotion needs a reason",
            details={"reason": ["is required when force is true: say why the evidence is overruled"]},
        )
    return reason


def step_modes(settings: dict | None) -> dict[str, str]:
    """The steps' own modes kept in a workflow's settings (steps that follow the workflow are left out)."""
    found = (settings or {}).get("step_modes")
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if v in (AUTO, ALWAYS_REVIEW)}


def with_step_mode(settings: dict | None, step_id: str, mode: str) -> dict:
    """New settings with `step_id` set to `mode` (`coaching` removes its own mode: it follows the workflow)."""
    modes = step_modes(settings)
    if mode == COACHING:
        modes.pop(step_id, None)
    else:
        modes[step_id] = mode
    return {**(settings or {}), "step_modes": modes}


def decisions_needed(snapshot: dict) -> int | None:
    """How many more decisions, all accepted, would make a scope AUTO-ready (0: it is; None: no number of accepts
    would while the change detector holds it back, or ever). Every accept counts for all three bars at once: the
    decisions before COACHING, the window's minimum and the sequential test, so the answer is the largest of them."""
    if snapshot.get("auto_ready"):
        return 0
    evidence = snapshot.get("evidence") or {}
    to_auto = snapshot.get("to_auto") or {}
    test = evidence.get("decisions_needed_if_all_accepted")
    if test is None and evidence:
        return None
    return max(
        int(test or 0),
        int(to_auto.get("decisions_to_coaching") or 0),
        int(to_auto.get("window_decisions_needed") or 0),
        1,
    )


def steps_not_ready(steps: dict[str, dict], step_ids: list[str], modes: dict[str, str]) -> list[dict]:
    """The tool steps a workflow's promotion would leave without evidence of their own: each one that is not
    AUTO-ready (or has no decision yet), with its level and the decisions it still needs. A step pinned to
    always_review is left out: every run of it is decided by a person whatever the workflow's mode."""
    found = []
    for step_id in step_ids:
        if modes.get(step_id) == ALWAYS_REVIEW:
            continue
        snap = steps.get(step_id)
        if snap is None:
            found.append({"step_id": step_id, "level": "OBSERVATION", "decisions": 0, "decisions_needed": None})
        elif not snap.get("auto_ready"):
            found.append(
                {
                    "step_id": step_id,
                    "level": snap.get("level"),
                    "decisions": snap.get("decisions", 0),
                    "decisions_needed": decisions_needed(snap),
                }
            )
    return found
