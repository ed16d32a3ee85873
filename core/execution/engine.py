"""What runs next in an execution, and running one step. Pure: storage and threads live in services/.

The runner (services/orchestration/runner.py) loops: `next_action` → apply it → commit, until the execution completes,
fails, or reaches a human gate. Nothing here waits on a human.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from referencing.exceptions import Unresolvable

from core import budget, schema
from core.budget import BudgetExceeded
from core.execution import states as S
from core.templating import TemplateFailure, evaluate_condition, evaluate_expression, render_value
from core.tools import Tool, ToolContext, ToolError, ToolRegistry, schema_errors
from core.workflow.model import StepDef, WorkflowDef

MAX_BACKOFF_S = 30.0


@dataclass
class StepState:
    step_id: str
    status: str = S.STEP_PENDING
    output: Any = None
    error: str | None = None
    attempts: int = 0
    params: Any = None
    decision: str | None = None
    policy: dict[str, Any] | None = None  # the policy's verdict on the call, with its explanation (core.policy)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    # the step's runs of its tool: `run` counts them, `idempotency_key` names the current one (call_key). A run that
    # is started again after a crash keeps its key; a new run (the key cleared) gets the next number and a new key
    run: int = 0
    idempotency_key: str | None = None


def call_key(execution_id: str, step_id: str, run: int) -> str:
    """The idempotency key of a step's tool call: the same for every try of one run of the step (the engine's own
    retries, a re-run after a crash), another for another run. Step ids are [A-Za-z0-9_-]: fit for a header."""
    return f"{execution_id}:{step_id}:{run}"


@dataclass
class ExecutionState:
    id: str
    status: str
    mode: str
    variables: dict[str, Any]
    steps: dict[str, StepState] = field(default_factory=dict)
    workspace_id: str = ""  # whose files, connections and hosts the tools use (ToolContext.workspace_id)
    # interactive control (services/orchestration/control.py): steps to stop before, with the question (a pause
    # asked for a step not reached yet); requires_clarification steps already answered; the feedback given at each
    # resume
    breakpoints: dict[str, str] = field(default_factory=dict)
    clarified: frozenset[str] = frozenset()
    feedback: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def new(cls, id: str, defn: WorkflowDef, variables: dict[str, Any], mode: str = "normal") -> ExecutionState:
        return cls(
            id=id,
            status=S.PENDING,
            mode=mode,
            variables=variables,
            steps={sid: StepState(sid) for sid in defn.step_ids},
        )


@dataclass(frozen=True)
class Next:
    kind: str  # run | skip | gate | complete | fail | wait
    step: StepDef | None = None
    reason: str = ""

    @property
    def subject(self) -> StepDef:
        """The step of a run, skip or gate (the kinds that have one)."""
        if self.step is None:
            raise ValueError(f"a {self.kind} without a step")
        return self.step


def template_context(state: ExecutionState) -> dict[str, Any]:
    return {
        "vars": state.variables,
        "steps": {sid: {"output": st.output, "status": st.status} for sid, st in state.steps.items()},
        "execution": {"id": state.id, "mode": state.mode},
        # `{{ feedback.<step_id> }}`: what a person said when resuming after that step's pause (None if nothing)
        "feedback": {sid: state.feedback.get(sid) for sid in state.steps},
    }


def clarification_for(step: StepDef, state: ExecutionState) -> str | None:
    """The question to ask before `step` runs, if it must stop for clarification: a pause asked for it, or its
    own `requires_clarification` (once: a resume answers it)."""
    if step.id in state.breakpoints:
        return state.breakpoints[step.id]
    if step.requires_clarification and step.id not in state.clarified:
        return step.clarification_question or f"Step {step.name!r} asks for clarification before it runs."
    return None


def progress(state: ExecutionState) -> dict[str, Any]:
    return steps_progress(state.steps)


def steps_progress(steps: Mapping[str, StepState]) -> dict[str, Any]:
    """How far the steps are: done (finished one way or another), total, percent."""
    total = len(steps)
    done = sum(1 for st in steps.values() if st.status in S.STEP_DONE)
    return {"done": done, "total": total, "percent": round(100.0 * done / total, 1) if total else 100.0}


def _branch_not_taken(step: StepDef, defn: WorkflowDef, state: ExecutionState) -> tuple[str, str] | None:
    for owner in defn.steps:
        if owner.type != "decision" or step.id not in owner.then + owner.otherwise:
            continue
        result = state.steps[owner.id]
        if result.status == S.STEP_SKIPPED:
            return "skip", f"decision {owner.id!r} was skipped"
        branch = result.output.get("branch") if isinstance(result.output, dict) else None
        if branch not in ("then", "else"):
            return "fail", f"decision {owner.id!r} has no branch result (output {result.output!r})"
        if branch == "then" and step.id not in owner.then or branch == "else" and step.id not in owner.otherwise:
            return "skip", f"branch not taken by decision {owner.id!r}"
    return None


def next_action(
    defn: WorkflowDef, state: ExecutionState, needs_human: Callable[[StepDef, ExecutionState], str | None] | None = None
) -> Next:
    """The one thing to do next. `needs_human` (coaching, policies) may turn a ready step into a gate."""
    waiting = False
    for sid in defn.order:
        st = state.steps[sid]
        if st.status in (S.STEP_RUNNING, S.STEP_WAITING):
            waiting = True
        if st.status != S.STEP_PENDING:
            continue
        step = defn.step(sid)
        deps = [state.steps[d] for d in step.requires]
        blocked = [d for d in deps if d.status in S.STEP_DONE - S.STEP_SATISFIES]
        if blocked:
            return Next("fail", step, f"step {blocked[0].step_id!r} {blocked[0].status}")
        if any(d.status not in S.STEP_DONE for d in deps):
            continue
        skipped_reads = [r for r in step.reads if state.steps[r].status == S.STEP_SKIPPED]
        if skipped_reads:
            return Next("skip", step, f"reads the output of skipped step {skipped_reads[0]!r}")
        not_taken = _branch_not_taken(step, defn, state)
        if not_taken:
            return Next(not_taken[0], step, not_taken[1])
        if step.when is not None:
            try:
                if not evaluate_condition(step.when, template_context(state), "when"):
                    return Next("skip", step, "when condition is false")
            except TemplateFailure as exc:
                return Next("fail", step, f"step {sid!r}: {exc}")
        if (state.breakpoints or step.requires_clarification) and clarification_for(step, state) is not None:
            return Next("gate", step, "clarification")
        if step.type in ("human_input", "approval"):
            return Next("gate", step, step.type)
        if needs_human is not None:
            gate = needs_human(step, state)
            if gate:
                return Next("gate", step, gate)
        return Next("run", step)
    if waiting:
        return Next("wait")
    if all(st.status in S.STEP_DONE for st in state.steps.values()):
        broken = [st for st in state.steps.values() if st.status in S.STEP_DONE - S.STEP_SATISFIES]
        if broken:
            return Next("fail", defn.step(broken[0].step_id), f"step {broken[0].step_id!r} {broken[0].status}")
        return Next("complete")
    return Next("wait")


@dataclass
class Outcome:
    ok: bool
    output: Any = None
    error: str | None = None
    attempts: int = 1
    params: Any = None


def resolve_params(step: StepDef, state: ExecutionState) -> Any:
    """Rendered params; raises TemplateFailure naming the field."""
    return render_value(step.params, template_context(state))


def _call_with_timeout(tool: Tool, params: dict[str, Any], ctx: ToolContext, timeout_s: float) -> Any:
    # Tools that bound their own time (HTTP, subprocess, echo) run inline; others get a watchdog thread
    # that is abandoned when the deadline passes, so the step fails on time even if the tool hangs.
    if getattr(tool, "honours_deadline", False):
        result = tool.run(params, ctx)
        if time.monotonic() > (ctx.deadline or float("inf")):
            raise TimeoutError
        return result
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = tool.run(params, ctx)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name=f"tool-{tool.name}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box.get("result")


def run_tool(
    step: StepDef,
    tool: Tool,
    params: dict[str, Any],
    *,
    execution_id: str = "",
    sleep: Callable[[float], None] = time.sleep,
    workspace_id: str = "",
    idempotency_key: str = "",
) -> Outcome:
    """Run an action step's tool with its timeout and retries (exponential backoff). Every try carries the same
    `idempotency_key` (ToolContext): a try after one that timed out may find its effect already done."""
    attempts = 0
    error = ""
    while attempts <= step.retries:
        if attempts:
            sleep(min(MAX_BACKOFF_S, step.retry_backoff_s * 2 ** (attempts - 1)))
        attempts += 1
        ctx = ToolContext(
            execution_id=execution_id,
            step_id=step.id,
            deadline=time.monotonic() + step.timeout_s,
            workspace_id=workspace_id,
            idempotency_key=idempotency_key,
            attempt=attempts,
        )
        try:
            output = _call_with_timeout(tool, params, ctx, step.timeout_s)
            return Outcome(True, output=output, attempts=attempts, params=params)
        except TimeoutError:
            error = f"timed out after {step.timeout_s:g}s"
        except ToolError as exc:
            error = str(exc)
        except Exception as exc:  # a tool's bug must fail the step, not the runner
            error = f"{type(exc).__name__}: {exc}"
    suffix = f" (after {attempts} attempts)" if attempts > 1 else ""
    return Outcome(False, error=f"tool {tool.name!r} failed: {error}{suffix}", attempts=attempts, params=params)


def evaluate_step(step: StepDef, state: ExecutionState) -> Outcome:
    """Decision and validation steps: no tool, just conditions on earlier outputs."""
    ctx = template_context(state)
    try:
        if step.type == "decision":
            result = evaluate_condition(step.condition or "false", ctx)
            return Outcome(True, output={"result": result, "branch": "then" if result else "else"})
        problems: list[str] = []
        if step.condition is not None and not evaluate_condition(step.condition, ctx):
            problems.append(f"condition is false: {step.condition}")
        if step.schema is not None:
            value = evaluate_expression(step.target or "none", ctx, "target")
            with budget.metered(f"checking step {step.id!r} against its schema"):
                for err in schema.errors(step.schema, value, limit=20):
                    where = "/".join(str(p) for p in err.absolute_path) or "(value)"
                    problems.append(f"{where}: {err.message}")
        if problems:
            return Outcome(False, error="validation failed: " + "; ".join(problems[:20]))
        return Outcome(True, output={"valid": True})
    except TemplateFailure as exc:
        return Outcome(False, error=str(exc))
    except (BudgetExceeded, RecursionError, MemoryError, Unresolvable, schema.PatternError) as exc:
        # a schema that refers to itself without end, or one saved before the checks it fails now
        reason = exc.message if isinstance(exc, BudgetExceeded) else f"{type(exc).__name__}: {exc}"
        return Outcome(False, error=f"validation could not be done: {reason}")


def _rendered_from(step: StepDef, path: str) -> str:
    """` (rendered from the template '…')` when the invalid param was written as a template: a template is judged
    once rendered, when the step is about to run, so the failure says which written value it came from."""
    written: Any = step.params
    for part in path.split("."):
        if isinstance(written, dict) and part in written:
            written = written[part]
        elif isinstance(written, list) and part.isdigit() and int(part) < len(written):
            written = written[int(part)]
        else:
            return ""
        if isinstance(written, str):
            break
    if isinstance(written, str) and ("{{" in written or "{%" in written):
        return f" (written as the template {written[:200]!r}, rendered when the step was about to run)"
    return ""


def execute(
    step: StepDef,
    state: ExecutionState,
    tools: ToolRegistry,
    params: Any = None,
    sleep: Callable[[float], None] = time.sleep,
    idempotency_key: str | None = None,
) -> Outcome:
    """Run one ready step. `params` overrides the definition's (a coaching correction). `idempotency_key`: the
    run's key (call_key), by default the one its state holds."""
    if step.type in ("decision", "validation"):
        try:
            return evaluate_step(step, state)
        except Exception as exc:  # whatever a user's condition or schema provokes fails the step, never the runner
            return Outcome(False, error=f"step {step.id!r} could not be evaluated: {type(exc).__name__}: {exc}")
    if step.type != "action":
        return Outcome(False, error=f"step type {step.type!r} cannot run here")
    tool = tools.get(step.tool or "")
    if tool is None:
        return Outcome(False, error=f"tool {step.tool!r} is not registered on this server")
    if params is None:
        try:
            params = resolve_params(step, state)
        except TemplateFailure as exc:
            return Outcome(False, error=str(exc), attempts=0)
    invalid = schema_errors(tool.params_schema, params)
    if invalid:
        listed = "; ".join(f"{k}{_rendered_from(step, k)}: {', '.join(v)}" for k, v in invalid.items())
        return Outcome(False, error=f"params for tool {tool.name!r} are invalid: {listed}", attempts=0, params=params)
    if idempotency_key is None:
        st = state.steps.get(step.id)
        idempotency_key = (st.idempotency_key if st is not None else None) or ""
    return run_tool(
        step,
        tool,
        params,
        execution_id=state.id,
        sleep=sleep,
        workspace_id=state.workspace_id,
        idempotency_key=idempotency_key,
    )
