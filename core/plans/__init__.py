"""Ad-hoc plans (inline steps, e.g. written by an LLM planner): the pure rules. A plan is an execution whose
steps were given inline; its lifecycle before it runs (draft -> approved -> pending) is in the execution state
table (core/execution/states.py). Storage lives in services/plans/service.py."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

PLAN_MODES = ("normal", "coaching")  # a plan has no history of its own: no AUTO
DEFAULT_NAME = "Ad-hoc plan"
DEFAULT_APPROVER = "lead"


def approver_role(verdicts: Iterable[str | None], default: str = DEFAULT_APPROVER) -> str:
    """The lowest role that may approve a plan, from the policy's verdict on each of its action steps' calls
    (None: a call whose params cannot be known before it runs). Every call allowed: an operator; else `default`."""
    return "operator" if all(v == "allow" for v in verdicts) else default


def definition(body: dict[str, Any]) -> dict[str, Any]:
    """A plan's body as a workflow definition (the same validator judges both)."""
    out = {k: v for k, v in body.items() if k != "mode"}
    if out.get("name") is None:
        out["name"] = DEFAULT_NAME
    return out


class StepState(Protocol):
    """What current_step reads of a step's state (the execution's StepRun)."""

    @property
    def step_id(self) -> str: ...

    @property
    def status(self) -> str: ...


def current_step(steps: Iterable[StepState], gate: dict[str, Any] | None) -> str | None:
    """The step the execution is at: the one a person is asked about, else the first running or waiting one."""
    if gate and gate.get("step_id"):
        asked: str = gate["step_id"]
        return asked
    for st in steps:
        if st.status in ("running", "waiting"):
            return st.step_id
    return None


def duration_s(started_at: datetime | None, finished_at: datetime | None, now: datetime) -> float | None:
    if started_at is None:
        return None
    return round(((finished_at or now) - started_at).total_seconds(), 3)
