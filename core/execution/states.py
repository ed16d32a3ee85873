"""Execution and step states, and the one table of legal execution transitions (docs/api.md).

Code asks `transition(status, trigger)` instead of comparing statuses; an illegal transition is a Conflict (409).
"""

from __future__ import annotations

from core.errors import Conflict

DRAFT, APPROVED = "draft", "approved"  # an ad-hoc plan before it runs (services/plans/service.py)
PENDING, RUNNING, PAUSED = "pending", "running", "paused"
WAITING_DECISION, WAITING_CLARIFICATION = "waiting_decision", "waiting_clarification"
WAITING_CORRECTION, WAITING_APPROVAL = "waiting_correction", "waiting_approval"
RESUMED, COMPLETED, FAILED, CANCELLED = "resumed", "completed", "failed", "cancelled"

STATES = (
    DRAFT,
    APPROVED,
    PENDING,
    RUNNING,
    PAUSED,
    WAITING_DECISION,
    WAITING_CLARIFICATION,
    WAITING_CORRECTION,
    WAITING_APPROVAL,
    RESUMED,
    COMPLETED,
    FAILED,
    CANCELLED,
)
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
WAITING = frozenset({WAITING_DECISION, WAITING_CLARIFICATION, WAITING_CORRECTION, WAITING_APPROVAL})
ACTIVE = frozenset(STATES) - TERMINAL
# states in which the runner may advance the execution
RUNNABLE = frozenset({PENDING, RUNNING, RESUMED})

# trigger -> (states it may fire from, the state it leads to)
TRANSITIONS: dict[str, tuple[frozenset[str], str]] = {
    # a plan: approved by a person with the role its steps need, executed (then it is an execution like any
    # other), and sent back to draft when one of its steps is corrected before it runs
    "approve_plan": (frozenset({DRAFT}), APPROVED),
    "revise": (frozenset({APPROVED}), DRAFT),
    "execute": (frozenset({APPROVED}), PENDING),
    "start": (frozenset({PENDING}), RUNNING),
    "continue": (frozenset({RUNNING, RESUMED}), RUNNING),
    "await_decision": (frozenset({RUNNING, RESUMED}), WAITING_DECISION),
    "await_clarification": (frozenset({RUNNING, RESUMED, PENDING, WAITING_DECISION, PAUSED}), WAITING_CLARIFICATION),
    # from waiting_clarification: a step paused for clarification was corrected (apply-correction) and waits
    # for its resume
    "await_correction": (frozenset({RUNNING, RESUMED, WAITING_DECISION, WAITING_CLARIFICATION}), WAITING_CORRECTION),
    "await_approval": (frozenset({RUNNING, RESUMED}), WAITING_APPROVAL),
    "decide": (frozenset({WAITING_DECISION}), RUNNING),
    "answer": (frozenset({WAITING_CLARIFICATION}), RESUMED),
    "correct": (frozenset({WAITING_CORRECTION}), RESUMED),
    "approve": (frozenset({WAITING_APPROVAL}), RESUMED),
    "pause": (frozenset({PENDING, RUNNING, RESUMED, WAITING_DECISION, WAITING_CORRECTION}), PAUSED),
    "resume": (frozenset({PAUSED, WAITING_CLARIFICATION, WAITING_CORRECTION}), RESUMED),
    "complete": (frozenset({RUNNING, RESUMED}), COMPLETED),
    "fail": (frozenset(ACTIVE), FAILED),
    # a person takes a failed execution on: a step retried, or resumed from a step that has not run
    # (core/execution/recovery.py); the runner continues from resumed
    "recover": (frozenset({FAILED}), RESUMED),
    "cancel": (frozenset(ACTIVE), CANCELLED),
}


def can(status: str, trigger: str) -> bool:
    sources, _ = TRANSITIONS[trigger]
    return status in sources


def transition(status: str, trigger: str) -> str:
    """The state `trigger` leads to from `status`, or Conflict when the table does not allow it."""
    if trigger not in TRANSITIONS:
        raise ValueError(f"unknown trigger {trigger!r}")
    sources, target = TRANSITIONS[trigger]
    if status not in sources:
        if status in TERMINAL:
            raise Conflict(f"execution is already {status}", details={"status": status, "action": trigger})
        raise Conflict(
            f"cannot {trigger.replace('_', ' ')} an execution that is {status}",
            details={"status": status, "action": trigger},
        )
    return target


# Step states
STEP_PENDING, STEP_RUNNING, STEP_WAITING = "pending", "running", "waiting"
STEP_SUCCEEDED, STEP_FAILED, STEP_SKIPPED = "succeeded", "failed", "skipped"
STEP_REJECTED, STEP_CANCELLED = "rejected", "cancelled"
STEP_STATES = (
    STEP_PENDING,
    STEP_RUNNING,
    STEP_WAITING,
    STEP_SUCCEEDED,
    STEP_FAILED,
    STEP_SKIPPED,
    STEP_REJECTED,
    STEP_CANCELLED,
)
STEP_DONE = frozenset({STEP_SUCCEEDED, STEP_FAILED, STEP_SKIPPED, STEP_REJECTED, STEP_CANCELLED})
# a step whose dependency ended in one of these may still run
STEP_SATISFIES = frozenset({STEP_SUCCEEDED, STEP_SKIPPED})
