"""What each of the five decisions does (docs/design.md#decisions), to a step or to an agent's tool call: one table,
plain functions. services/decisions/coaching.py loads the suggestion, asks here, and persists what it is told.

| decision | a step                                              | a tool call of an agent step                   |
|----------|-----------------------------------------------------|------------------------------------------------|
| accept   | runs with the suggested params                      | runs with the suggested arguments              |
| correct  | runs with the corrected params (pack counts it)     | runs with the corrected arguments (pack too)   |
| manual   | does not run; manual_output is its output           | does not run; manual_output is the result      |
| skip     | does not run; skipped                               | the result says "skipped by the operator"      |
| reject   | on_reject ask: waits for a correction; stop: fails  | the feedback is the result, "do not repeat it" |
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.execution import states as S

ACCEPT, REJECT, CORRECT, MANUAL, SKIP = "accept", "reject", "correct", "manual", "skip"
DECISIONS = (ACCEPT, REJECT, CORRECT, MANUAL, SKIP)
# the coaching session's counter each decision bumps
STAT_OF = {ACCEPT: "accepted", REJECT: "rejected", CORRECT: "corrected", MANUAL: "manual_executions", SKIP: "skipped"}
# after a rejection the step is waiting for a correction: these are the ways out (besides cancel)
AFTER_REJECT = (CORRECT, MANUAL, SKIP)
SKIPPED = "skipped by the operator"


@dataclass(frozen=True)
class StepEffect:
    """What a decision does to the step it answers, and to its execution."""

    status: str | None  # the step's new status (None: unchanged)
    trigger: str  # the execution's transition (core.execution.states)
    params: Any = None  # the params it runs with (accept, correct) or was suggested (manual)
    output: Any = None
    error: str | None = None
    finished: bool = False  # the step ends now (its finished_at)
    record_correction: bool = False  # counted into the step's correction pack
    ask_correction: bool = False  # a correction suggestion is opened (reject with on_reject ask)
    failure: str | None = None  # the execution's error (reject with on_reject stop)


def for_step(
    kind: str,
    *,
    suggested: Any,
    correction: Any = None,
    manual_output: Any = None,
    feedback: str | None = None,
    operator: str = "",
    on_reject: str = "ask",
    correcting: bool = False,
) -> StepEffect:
    """A decision on a step's suggestion. `correcting`: the suggestion asks for a correction after a reject."""
    go_on = "correct" if correcting else "decide"
    if kind == ACCEPT:
        return StepEffect(S.STEP_PENDING, go_on, params=suggested)
    if kind == CORRECT:
        return StepEffect(S.STEP_PENDING, go_on, params=correction, record_correction=True)
    if kind == MANUAL:
        return StepEffect(S.STEP_SUCCEEDED, go_on, params=suggested, output=manual_output, finished=True)
    if kind == SKIP:
        return StepEffect(S.STEP_SKIPPED, go_on, error=SKIPPED, finished=True)
    if kind == REJECT:
        feedback = feedback or "rejected"
        if on_reject == "stop":
            return StepEffect(
                S.STEP_REJECTED, "fail", error=feedback, finished=True, failure=f"rejected by {operator}: {feedback}"
            )
        # marked rejected with the feedback while it waits to be settled by a correction, a manual run or a skip
        return StepEffect(None, "await_correction", error=f"rejected by {operator}: {feedback}", ask_correction=True)
    raise ValueError(f"unknown decision {kind!r}")


@dataclass(frozen=True)
class ToolCallEffect:
    """What a decision does to an agent's tool call: it runs (`run_with`), or `result` is its answer to the LLM."""

    run_with: Any = None
    result: str | None = None
    error: bool = False  # the result is an error the LLM should read as one
    record_correction: bool = False


def for_tool_call(
    kind: str,
    *,
    suggested: Any,
    correction: Any = None,
    manual_output: Any = None,
    feedback: str | None = None,
    operator: str = "",
) -> ToolCallEffect:
    """A decision on a tool call an agent asked for. Whatever it is, the call gets exactly one answer."""
    if kind == ACCEPT:
        return ToolCallEffect(run_with=suggested)
    if kind == CORRECT:
        return ToolCallEffect(run_with=correction, record_correction=True)
    if kind == MANUAL:
        done = (
            manual_output
            if isinstance(manual_output, str)
            else json.dumps(manual_output, ensure_ascii=False, default=str)
        )
        return ToolCallEffect(result=f"done by hand by the operator; the result: {done}")
    if kind == SKIP:
        return ToolCallEffect(result=SKIPPED + ": the call was not run")
    if kind == REJECT:
        said = f": {feedback}" if feedback else ""
        return ToolCallEffect(
            result=f"rejected by the operator{said}. The call was not run. Do not repeat this call.", error=True
        )
    raise ValueError(f"unknown decision {kind!r}")
