"""Deadlines on human gates: a pending suggestion, a correction request after a reject, a clarification (a
`human_input` step). Pure rules, no storage (services/executions/gates.py arms, scans and fires them):

- what a definition may say (checked by core.workflow.format's schemas, resolved by core.workflow.steps):
  `human_timeout_s` (seconds > 0) and `on_human_timeout` per step, with a workflow-wide default of both;
  `timeout_answer` is the answer `on_human_timeout: answer` gives;
- what a deadline does to each kind of gate (`action_for`): a suggestion takes `skip`, `fail` or `accept`; a
  correction request `skip` or `fail`; a clarification `skip`, `fail` or `answer`. An action that does not fit the
  gate (a workflow default `accept` reaching a clarification or a correction request) fails it: a timeout never
  does something nobody chose for that kind of gate;
- when a gate is due (`is_due`): its execution still waits at it (not paused, not decided) and its deadline passed.

The names differ from the issue's `on_timeout` on purpose: an action step's `timeout_s` is its tool's run time and an
approval step's `timeout_s` / `on_timeout` its approval's deadline; a person's deadline is another thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.execution import states as S

SUGGESTION, CORRECTION, CLARIFICATION = "decision", "correction", "human_input"  # the kinds of ex.gate
KINDS = (SUGGESTION, CORRECTION, CLARIFICATION)
SKIP, FAIL, ACCEPT, ANSWER = "skip", "fail", "accept", "answer"
ACTIONS = (SKIP, FAIL, ACCEPT, ANSWER)
DEFAULT_ACTION = FAIL  # nothing happens that nobody chose: the run stops where a person was missing
FITS: dict[str, tuple[str, ...]] = {
    SUGGESTION: (SKIP, FAIL, ACCEPT),
    CORRECTION: (SKIP, FAIL),
    CLARIFICATION: (SKIP, FAIL, ANSWER),
}
# the execution status in which each kind of gate waits (a paused session's gate does not run down)
WAITS_IN = {SUGGESTION: S.WAITING_DECISION, CORRECTION: S.WAITING_CORRECTION, CLARIFICATION: S.WAITING_CLARIFICATION}
# steps that open a gate with a person: action steps (suggestions, corrections), human_input (clarifications)
STEP_TYPES = ("action", "human_input")
STEP_ACTIONS = {"action": (SKIP, FAIL, ACCEPT), "human_input": (SKIP, FAIL, ANSWER)}
WORKFLOW_ACTIONS = (SKIP, FAIL, ACCEPT)  # `answer` needs a step's own timeout_answer
KEYS = ("human_timeout_s", "on_human_timeout", "timeout_answer")
SYSTEM = "system"
# a timed-out gate's step records `decision: timeout_<action>`; this one runs with the suggested params, unreviewed
TIMEOUT_ACCEPT = "timeout_accept"


@dataclass(frozen=True)
class HumanTimeout:
    """How long a person has at a step's gate, and what happens when nobody acts in time."""

    timeout_s: float
    on_timeout: str = DEFAULT_ACTION
    answer: Any = None  # the answer of `on_timeout: answer`


def action_for(kind: str, configured: str) -> str:
    """What a deadline does to a gate of `kind` whose step says `configured`."""
    return configured if configured in FITS.get(kind, ()) else FAIL


def deadline(opened: datetime, timeout: HumanTimeout | None) -> datetime | None:
    return opened + timedelta(seconds=timeout.timeout_s) if timeout is not None else None


def is_due(status: str, kind: str | None, deadline: datetime | None, now: datetime) -> bool:
    """Whether the gate an execution waits at (of `kind`, with `deadline`) has run out of time: the execution still
    waits at it (a decided, answered, paused or ended one does not) and its deadline passed."""
    return kind in WAITS_IN and status == WAITS_IN[kind] and deadline is not None and deadline <= now


def message(kind: str, action: str, timeout_s: float) -> str:
    """Why the step ended as it did: shown as its error, and the execution's when it fails."""
    what = {SUGGESTION: "no decision", CORRECTION: "no correction", CLARIFICATION: "no answer"}[kind]
    done = {
        SKIP: "skipped",
        FAIL: "the execution fails",
        ACCEPT: "the suggestion is accepted",
        ANSWER: "answered with the step's timeout_answer",
    }[action]
    return f"{what} within {timeout_s:g}s: {done}"
