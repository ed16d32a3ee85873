"""Agent steps: the loop of core/agent wired to storage, the policy, people and tools.

The runner hands an agent step to `run_step` outside any transaction, as it does a slow tool. The loop then writes
its conversation as it grows (services/agents/store.py): each LLM answer and each tool result is committed before
the next request to the LLM or the next tool that takes time, so a server killed anywhere goes on from the stored
conversation (`run_step` again, after Runner.recover). A call a person must decide becomes a suggestion of kind
`tool_call` and the loop returns: no thread waits on a person. The decision, the answer to CONFIRM_DATA or
the approval of REQUEST_APPROVAL writes the call's result or the person's message (services/agents/replies.py), and
the runner runs the step again.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.agent import conversation as C
from core.agent.loop import AgentLoop, Result, Ruling, opening
from core.agent.spec import resolve_tools
from core.coaching import autonomy
from core.coaching import checks as CK
from core.coaching.autonomy import tool_unit
from core.execution import states as S
from core.execution.engine import Outcome, run_tool, template_context
from core.regions import region
from core.templating import TemplateFailure, render_value
from core.tools import ToolRegistry, schema_errors
from services.agents import llm_provider, store
from services.agents.llm import SETUP, OpenAIProvider
from services.approvals import service as approvals
from services.audit import service as audit
from services.coaching import checks
from services.coaching import service as coaching
from services.executions import service as executions
from services.metrics import service as metrics
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.models.workflows import Workflow, workflow_of
from services.orm import new_id, utcnow
from services.policies import service as policies
from services.regions import service as regions
from services.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)


def judge_call(
    session: Session,
    tools: ToolRegistry,
    ex: Execution,
    step,
    tool: str | None,
    params: Any,
    *,
    known: dict | None = None,
) -> dict:
    """The policy's verdict (with its explanation) on a call an agent step makes: step_type `agent`, agent_step the
    step's id. `known`: an earlier verdict on this very call, reused while its policy revision is current."""
    if known is not None and known.get("revision") == policies.revision(session, ex.workspace_id):
        return known
    call = policies.call_for(
        tools,
        tool or "",
        params,
        step_type="agent",
        workflow_id=ex.workflow_id,
        user=policies.starter(session, ex.started_by),
        agent_step=step.id,
    )
    return policies.evaluate(session, ex.workspace_id, call).to_dict()


def provider_of(runner):
    if getattr(runner, "llm", None) is None:
        runner.llm = OpenAIProvider(runner.settings)
    return runner.llm


def run_step(runner, execution_id: str, step) -> Outcome | None:
    """Run (or go on with) an agent step. Returns its outcome, or None when it waits for a person or is no longer
    this task's to run (cancelled, paused)."""
    spec = step.agent
    chosen = llm_provider.choose(runner, execution_id, provider_of(runner))  # the workspace's, else the server's
    provider = chosen.provider
    model = spec.model or chosen.model
    if chosen.source == "none" or not model:
        missing = "no LLM provider is configured" if chosen.source == "none" else "no model is set"
        return Outcome(False, error=f"agent step {step.id!r} cannot start: {missing}: {SETUP}", attempts=0)
    host = Host(runner, execution_id, step)
    try:
        messages = host.begin()
        if messages is None:
            host.flush()
            return None
        allowed = resolve_tools(spec.tools, host.tools.names())  # the workspace's tools (its MCP servers' too)
        if not messages:
            try:
                goal = render_value(spec.goal, template_context(executions.to_state(host._live()[1])), "goal")
            except TemplateFailure as exc:
                host.flush()
                return Outcome(False, error=f"step {step.id!r}: {exc}", attempts=0)
            messages.extend(opening(spec, goal if isinstance(goal, str) else C.tool_content(goal)))
            host.save(messages)
        loop = AgentLoop(
            spec,
            provider,
            host,
            {name: host.tools.get(name) for name in allowed},
            model=model,
            key=f"{execution_id}/{step.id}",
        )
        stop = loop.run(messages)
    except SQLAlchemyError:  # the database's trouble: the step runs again (Runner.recover), nothing is lost
        host.abort()
        raise
    except Exception as exc:  # a bug, or an answer nobody foresaw: the step fails with the reason, never the runner
        host.abort()
        log.exception("the agent step %s of execution %s failed", step.id, execution_id)
        return Outcome(False, error=f"agent step {step.id!r} failed: {type(exc).__name__}: {exc}", attempts=0)
    except BaseException:
        host.abort()
        raise
    if stop.kind == "done":
        return Outcome(True, output=stop.output, attempts=0)
    if stop.kind == "failed":
        return Outcome(False, error=f"agent step {step.id!r}: {stop.error}", attempts=0)
    return None


class Host:
    """core.agent.loop.Host over the database: a transaction opened when first needed and committed at `flush`
    (so that nothing slow, an LLM request or a tool that takes time, ever runs inside one)."""

    def __init__(self, runner, execution_id: str, step):
        self.runner, self.execution_id, self.step = runner, execution_id, step
        self.db, self.tools, self.settings = runner.db, runner.tools, runner.settings
        self._stack: ExitStack | None = None
        self.session: Session | None = None
        self.uow: UnitOfWork | None = None  # the open transaction's unit of work: its events go out once it commits
        self.ex: Execution | None = None
        self.alive = False
        self._dirty: dict[int, C.Message] = {}
        self.messages: list[C.Message] = []  # the conversation, as the loop grows it

    # -- the transaction ----------------------------------------------------------------------------------------
    def _open(self) -> Session:
        if self.session is None:
            self._stack = ExitStack()
            self.uow = self._stack.enter_context(self.runner.command())
            self.session = self.uow.session
            self.ex = executions.get_any(self.session, self.execution_id)
            if self.ex is not None:
                self.tools = self.runner.tools.for_workspace(self.ex.workspace_id)
            row = self.ex.steps.get(self.step.id) if self.ex is not None else None
            self.alive = (
                self.ex is not None and self.ex.status == S.RUNNING and row is not None and row.status == S.STEP_RUNNING
            )
        return self.session

    def _unit(self) -> UnitOfWork:
        """The open transaction's unit of work (opened when first needed, as _open)."""
        self._open()
        assert self.uow is not None  # _open() made it
        return self.uow

    def _live(self) -> tuple[Session, Execution]:
        """The open transaction and the step's execution, for what the loop asks once the step ran (its execution
        was found when it began: gone since, the step fails with the reason)."""
        session = self._open()
        if self.ex is None:
            raise LookupError(f"execution {self.execution_id} is gone")
        return session, self.ex

    def begin(self) -> list[C.Message] | None:
        """The stored conversation, or None when the step is not this task's to run."""
        session = self._open()
        if not self.alive:
            return None
        self.messages = store.load(session, self.execution_id, self.step.id)
        return self.messages

    def save(self, messages: list[C.Message]) -> None:
        for m in messages:
            if m.id is None:
                m.id = new_id()
            self._dirty[m.seq] = m

    def flush(self) -> bool:
        uow = self._unit()
        session = uow.session
        alive, ex = self.alive, self.ex
        if self._dirty:
            if ex is None:
                raise LookupError(f"execution {self.execution_id} is gone")
            written = store.write(session, ex, self.step.id, list(self._dirty.values()))
            uow.events.add(
                "agent_messages",
                {
                    "execution_id": self.execution_id,
                    "step_id": self.step.id,
                    "messages": [store.view(m) for m in written],
                },
                execution=self.execution_id,
            )
            self._dirty.clear()
        if (
            not alive
            and ex is not None
            and ex.status == S.PAUSED
            and executions.step_state(ex, self.step.id).status == S.STEP_RUNNING
        ):
            executions.set_step(ex, self.step.id, status=S.STEP_PENDING)  # the resume runs it again
        stack = self._stack
        assert stack is not None  # _open() made it
        self._stack = self.session = self.uow = None
        stack.close()  # commits, then sends the events
        return alive

    def abort(self) -> None:
        if self._stack is not None:
            stack, self._stack, self.session, self.uow = self._stack, None, None, None
            stack.__exit__(RuntimeError, RuntimeError("agent loop failed"), None)  # rolls back

    # -- judging and reviewing calls --------------------------------------------------------------------------
    def judge(self, m: C.Message) -> Ruling:
        session, ex = self._live()
        wf = workflow_of(session, ex.workflow_id)
        key = tool_unit(self.step.id, m.tool)
        params, source = m.arguments, "llm"
        if ex.mode != "normal" and wf.kind != "plan":  # a learned change applies to the call, citing its pack
            params, pack_id, applied = coaching.learned(session, wf, key, params)
            if applied:
                source = f"correction_pack:{pack_id}"
        verdict = judge_call(session, self.tools, ex, self.step, m.tool, params)
        if verdict["effect"] == "deny":
            audit.record(
                session,
                ex.workspace_id,
                "system",
                "policy_deny",
                target_type="tool_call",
                target_id=f"{ex.id}/{self.step.id}/{m.tool_call_id}"[:200],
                execution_id=ex.id,
                after={"tool": m.tool, "params": params, "policy": verdict},
                result="deny",
            )
            return Ruling("deny", params, verdict, reason=policies.denied_message(verdict), source=source)
        if verdict["effect"] == "require_review":
            return Ruling("review", params, verdict, source=source)
        modes = autonomy.step_modes(wf.settings)
        step_mode = modes.get(key) or modes.get(self.step.id)
        match = self.region_of(session, m.tool, params) if ex.mode != "normal" and wf.kind != "plan" else None
        if match is not None:  # the call's region decides its mode (docs/autonomy.md#regions)
            step_mode = region.effective_step_mode(step_mode, match)
        gate = autonomy.review_for(
            ex.mode, wf.mode, step_mode, lambda: self.runner.rng.random() < self.settings.spot_check_rate
        )
        if gate is not None:
            return Ruling(
                "review", params, verdict, purpose=gate if gate == "spot_check" else "coaching", source=source
            )
        return Ruling("allow", params, verdict, source=source)

    def region_of(self, session: Session, tool: str | None, params: Any) -> region.Match | None:
        """Where an agent's call of `tool` falls among the regions of `<agent step>:<tool>` (None: it has none)."""
        _, ex = self._live()
        return region_of(session, ex, self.step.id, tool, params)

    def open_review(self, m: C.Message, ruling: Ruling) -> None:
        uow, ex, step = self._unit(), self.ex, self.step
        session = uow.session
        if not self.alive or ex is None:  # (alive: the execution was found)
            return
        wf = workflow_of(session, ex.workflow_id)
        params, policy, source, purpose, change = ruling.params, ruling.policy, ruling.source, ruling.purpose, None
        if purpose == "coaching" and wf.kind != "plan":  # shown as a check now and then (the workspace's check_rate)
            change = checks.draw(
                session, ex.workspace_id, ex.workflow_id, tool_unit(step.id, m.tool), params, self.runner.rng
            )
            if change is not None:
                shown = CK.shown_params(params, change)
                verdict = judge_call(session, self.tools, ex, step, m.tool, shown)
                if verdict["effect"] == "deny":  # a check whose value a policy denies would give itself away
                    change = None
                else:
                    if source != "llm" and (m.arguments or {}).get(change.param) != change.real:
                        source = "llm"  # the learned rule changed this very param: its line would contradict it
                    params, policy, purpose = shown, verdict, CK.PURPOSE
        open_tool_review(
            uow,
            ex,
            wf,
            step,
            m,
            params=params,
            policy=policy,
            source=source,
            purpose=purpose,
            reasoning=store.reasoning_of(self.conversation_reply(m)),
            tools=self.tools,
            check=change,
        )
        executions.changed(uow, ex, step.id)

    def conversation_reply(self, m: C.Message) -> C.Message | None:
        """The assistant message that asked for the call `m`."""
        return next((r for r in self.messages if r.role == C.ASSISTANT and r.turn == m.turn), None)

    # -- tools --------------------------------------------------------------------------------------------------
    def inline(self, tool: str | None) -> bool:
        """Whether the tool runs in the open transaction: an instantaneous one (echo, noop), while the step is known
        to be this loop's (else the loop flushes first, and stops if it is not)."""
        return self.session is not None and self.alive and bool(getattr(self.tools.get(tool or ""), "inline", False))

    def run_tool(self, m: C.Message) -> Result:
        tool = self.tools.get(m.tool or "")
        if tool is None:
            return Result(False, error=f"tool {m.tool!r} is not registered on this server")
        problems = schema_errors(tool.params_schema, m.params)
        if problems:
            listed = "; ".join(f"{k}: {', '.join(v)}" for k, v in problems.items())
            return Result(False, error=f"the arguments do not fit tool {m.tool!r}: {listed}")
        workspace = self.ex.workspace_id if self.ex is not None else ""
        outcome = run_tool(self.step, tool, m.params, execution_id=self.execution_id, workspace_id=workspace)
        return Result(outcome.ok, outcome.output, outcome.error)

    # -- people -------------------------------------------------------------------------------------------------
    def ask(self, m: C.Message, question: str) -> None:
        uow, ex = self._unit(), self.ex
        if not self.alive or ex is None:  # (alive: the execution was found)
            return
        executions.set_step(ex, self.step.id, status=S.STEP_WAITING)
        ex.gate = {
            "kind": "clarification",
            "step_id": self.step.id,
            "question": question,
            "paused_at": utcnow().isoformat(),
            "agent": True,
        }
        executions.set_status(ex, "await_clarification")
        uow.events.add(
            "clarification_requested",
            {"execution_id": ex.id, "step_id": self.step.id, "question": question, "agent": True},
            execution=ex.id,
            workspace=ex.workspace_id,
        )
        executions.changed(uow, ex, self.step.id)

    def request_approval(self, m: C.Message, text: str) -> None:
        uow, ex = self._unit(), self.ex
        if not self.alive or ex is None:  # (alive: the execution was found)
            return
        approvals.open_agent(uow, ex, self.step.id, text)
        executions.changed(uow, ex, self.step.id)


def region_of(session: Session, ex: Execution, step_id: str, tool: str | None, params: Any) -> region.Match | None:
    """Where an agent's call of `tool` falls among the regions of `<agent step>:<tool>` (None: it has none)."""
    # the workflow's step regions, read once per unit of work: the call is ruled, then its review opened, in one
    scope = regions.step_regions(session, ex.workspace_id, ex.workflow_id).get(tool_unit(step_id, tool), [])
    if not scope:
        return None
    return region.region_for(
        scope,
        params,
        tool=tool,
        context={"step_type": "agent", "workflow_id": ex.workflow_id, "agent_step": step_id},
    )


def open_tool_review(
    uow: UnitOfWork,
    ex: Execution,
    wf: Workflow,
    step,
    m: C.Message,
    *,
    params: Any,
    policy: dict | None,
    source: str,
    purpose: str,
    reasoning: str,
    tools: ToolRegistry,
    check: CK.CheckChange | None = None,
) -> Suggestion:
    """The suggestion of kind `tool_call` a person decides for the agent's call `m`; the execution waits for it. A
    check (`check`: its change; docs/autonomy.md#check-suggestions) counts nowhere but for whoever decides it."""
    session = uow.session
    scopes = (
        metrics.plan_scopes(m.tool)
        if wf.kind == "plan"
        else metrics.workflow_scopes(ex.workflow_id, ex.workflow_version, step.id)
        + [("step", f"{ex.workflow_id}/{tool_unit(step.id, m.tool)}")]
    )
    thresholds = metrics.workflow_thresholds(wf)
    if check is None:
        confidence = metrics.record_suggestion(session, ex.workspace_id, scopes, thresholds)[scopes[-1]].confidence()
    else:  # a check is no suggestion of the tool's
        confidence = metrics.load(session, ex.workspace_id, *scopes[-1], thresholds).confidence()
    sug = Suggestion(
        created_at=utcnow(),
        workspace_id=ex.workspace_id,
        execution_id=ex.id,
        workflow_id=ex.workflow_id,
        workflow_version=ex.workflow_version,
        step_id=step.id,
        tool=m.tool,
        params=params,
        definition_params=m.arguments,
        confidence=confidence,
        source=source,
        purpose=purpose,
        policy=policy,
        kind="tool_call",
        agent_message_id=m.id,
        tool_call_id=(m.tool_call_id or "")[:200] or None,
        rationale=reasoning or f"The agent calls {m.tool}.",
        check_change=check.to_dict() if check is not None else None,
    )
    match = region_of(session, ex, step.id, m.tool, params) if wf.kind != "plan" else None
    if match is not None:
        regions.stamp(sug, match)
    session.add(sug)
    m.suggestion_id = sug.id
    executions.set_step(ex, step.id, status=S.STEP_WAITING)
    ex.gate = {
        "kind": "decision",
        "step_id": step.id,
        "suggestion_id": sug.id,
        "tool_call_id": m.tool_call_id,
        "agent": True,
    }
    executions.set_status(ex, "await_decision")
    if check is None:
        executions.count_stat(ex, "suggestions_made")
    payload = coaching.view(sug, tools, step, regions.ref(session, sug))
    uow.events.add("tool_call_pending_review", payload, execution=ex.id, workspace=ex.workspace_id)
    uow.events.add("coaching_suggestion", payload, execution=ex.id, workspace=ex.workspace_id)
    uow.events.latest("coaching_stats", {"execution_id": ex.id, **executions.stats_of(ex)}, execution=ex.id)
    if policy and policy.get("effect") == "require_review":
        audit.record(
            session,
            ex.workspace_id,
            "system",
            "policy_review",
            target_type="suggestion",
            target_id=sug.id,
            execution_id=ex.id,
            after={"step_id": step.id, "tool": m.tool, "params": params, "policy": policy},
            result="require_review",
        )
    return sug


def open_after_check(uow: UnitOfWork, ex: Execution, step, check: Suggestion, tools) -> None:
    """A check of an agent's call was decided (services/coaching/checks.py): the real review of the same call, at
    once and never a check itself, with the params the check changed set back. A policy that denies the real call
    now gives the agent its denial instead, as when the call was first judged."""
    session = uow.session
    change = CK.CheckChange.from_dict(check.check_change or {"param": "?"})
    params = (
        {**(check.params or {}), change.param: change.real} if change.param in (check.params or {}) else check.params
    )
    wf = workflow_of(session, ex.workflow_id)
    if check.agent_message_id is None:
        raise ValueError(f"check {check.id} is no agent's tool call")
    m = store.get(session, check.agent_message_id)
    verdict = judge_call(session, tools, ex, step, check.tool, params)
    if verdict["effect"] == "deny":
        # the agent's result says why, as the loop's own denial does (error is the flag, content what the LLM reads)
        denied = f"error: {policies.denied_message(verdict)}. The call was not run; do not repeat it."
        m.status, m.content, m.error = C.DONE, denied, True
        executions.set_step(ex, step.id, status=S.STEP_PENDING)  # the runner gives the agent its result
        ex.gate = None
    else:
        source = check.source
        open_tool_review(
            uow,
            ex,
            wf,
            step,
            m,
            params=params,
            policy=verdict,
            source=source,
            purpose="coaching",
            reasoning=check.rationale or "",
            tools=tools,
        )
    store.write(session, ex, step.id, [m])
    uow.events.add(
        "agent_messages", {"execution_id": ex.id, "step_id": step.id, "messages": [store.view(m)]}, execution=ex.id
    )


# -- what people's actions do to the conversation (each in the caller's transaction) ------------------------------

__all__ = ["Host", "judge_call", "run_step"]
