"""What a person's action tells an agent step: a decision on its tool call, the answer to its CONFIRM_DATA, the
approval of its REQUEST_APPROVAL. Each writes the call's result or the person's message into the stored conversation
(services/agents/store.py) and makes the step ready to run again; the runner takes it from there
(services/agents/service.py). Each runs in the caller's transaction."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from core.agent import conversation as C
from core.agent.loop import answered
from core.coaching.autonomy import tool_unit
from core.coaching.decisions import ToolCallEffect
from core.execution import states as S
from services.agents import store
from services.audit import service as audit
from services.coaching import corrections
from services.executions import service as executions
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.unit_of_work import UnitOfWork


def settle_call(
    uow: UnitOfWork, ex: Execution, sug: Suggestion, effect: ToolCallEffect, kind: str, operator: str
) -> None:
    """A decision on a tool-call suggestion: the call runs (accept, correct) when the runner takes the step again,
    or gets its result now (manual, skip, reject). Either way the step is ready to run again."""
    session = uow.session
    if sug.agent_message_id is None:
        raise ValueError(f"suggestion {sug.id} is no agent's tool call")
    m = store.get(session, sug.agent_message_id)
    m.decision = kind
    if effect.run_with is not None:
        m.status, m.params = C.READY, effect.run_with
    else:
        m.status, m.content, m.error = C.DONE, effect.result, effect.error
    store.write(session, ex, sug.step_id, [m])
    if effect.record_correction:
        corrections.record(
            uow,
            ex.workspace_id,
            ex.workflow_id,
            tool_unit(sug.step_id, sug.tool),
            sug.params,
            effect.run_with,
            actor=operator,
        )
    executions.set_step(ex, sug.step_id, status=S.STEP_PENDING)
    uow.events.add(
        "agent_messages", {"execution_id": ex.id, "step_id": sug.step_id, "messages": [store.view(m)]}, execution=ex.id
    )


def answer(uow: UnitOfWork, ex: Execution, step_id: str, text: Any, actor: str) -> None:
    """A person's answer to the agent's CONFIRM_DATA becomes its next user message; the step runs again. The
    caller moves the execution on (answer or resume)."""
    session = uow.session
    messages = store.load(session, ex.id, step_id)
    said = text if isinstance(text, str) else C.tool_content(text)
    note = answered(messages, said or "(no answer)", C.ANSWER)
    store.write(session, ex, step_id, [note])
    executions.set_step(ex, step_id, status=S.STEP_PENDING)
    ex.gate = None
    audit.record(
        session,
        ex.workspace_id,
        actor,
        "agent_answer",
        target_type="step",
        target_id=f"{ex.id}/{step_id}",
        execution_id=ex.id,
        after={"answer": said},
    )
    uow.events.add(
        "agent_messages", {"execution_id": ex.id, "step_id": step_id, "messages": [store.view(note)]}, execution=ex.id
    )


def approved(session: Session, ex: Execution, step_id: str, who: str, comment: str | None) -> None:
    """REQUEST_APPROVAL approved: the agent is told, and its step runs again (services.decisions.approvals settles
    it)."""
    messages = store.load(session, ex.id, step_id)
    text = f"Approved by {who}" + (f": {comment}" if comment else ".") + " Go on."
    store.write(session, ex, step_id, [answered(messages, text, C.APPROVED)])
    executions.set_step(ex, step_id, status=S.STEP_PENDING, decision=None)
