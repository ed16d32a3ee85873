"""Agent conversations in the database (table agent_messages, migration 0018): one row per message, written in the
caller's transaction after every LLM answer and tool result, read back in order."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.orm import Session

from core.agent import conversation as C
from core.agent.loop import markers
from services.models.agents import AgentMessage
from services.models.executions import Execution
from services.orm import new_id, table_of, utcnow

_TABLE = table_of(AgentMessage)
_FIELDS = tuple(
    f
    for f in dataclasses.fields(C.Message)
    if f.name not in ("seq", "role", "content", "tool_calls", "id", "dirty", "stored")
)


def _data(m: C.Message) -> dict[str, Any]:
    data = {f.name: getattr(m, f.name) for f in _FIELDS if getattr(m, f.name) != f.default}
    if m.tool_calls:
        data["tool_calls"] = [c.to_dict() for c in m.tool_calls]
    return data


def _message(id: str, seq: int, role: str, content: str | None, data: dict[str, Any] | None) -> C.Message:
    data = dict(data or {})
    calls = [C.ToolCall(**c) for c in data.pop("tool_calls", ())]
    known = {f.name for f in _FIELDS}
    return C.Message(
        seq=seq,
        role=role,
        content=content,
        id=id,
        tool_calls=calls,
        stored=True,
        dirty=False,
        **{k: v for k, v in data.items() if k in known},
    )


_COLUMNS = (_TABLE.c.id, _TABLE.c.seq, _TABLE.c.role, _TABLE.c.content, _TABLE.c.data)


def load(session: Session, execution_id: str, step_id: str) -> list[C.Message]:
    rows = session.execute(
        select(*_COLUMNS)
        .where(_TABLE.c.execution_id == execution_id, _TABLE.c.step_id == step_id)
        .order_by(_TABLE.c.seq)
    )
    return [_message(*row) for row in rows]


def get(session: Session, message_id: str) -> C.Message:
    return _message(*session.execute(select(*_COLUMNS).where(_TABLE.c.id == message_id)).one())


def write(session: Session, ex: Execution, step_id: str, messages: list[C.Message]) -> list[C.Message]:
    """Insert the new messages and update the stored ones, in the caller's transaction. Returns them."""
    now = utcnow()
    for m in messages:
        if m.id is None:
            m.id = new_id()
    new = [m for m in messages if not m.stored]
    changed = [m for m in messages if m.stored]
    if new:
        session.execute(
            insert(_TABLE),
            [
                {
                    "id": m.id,
                    "workspace_id": ex.workspace_id,
                    "execution_id": ex.id,
                    "step_id": step_id,
                    "seq": m.seq,
                    "role": m.role,
                    "content": m.content,
                    "data": _data(m),
                    "created_at": now,
                    "updated_at": now,
                }
                for m in new
            ],
        )
    if changed:
        session.execute(
            update(_TABLE)
            .where(_TABLE.c.id == bindparam("_id"))
            .values(content=bindparam("content"), data=bindparam("data"), updated_at=now),
            [{"_id": m.id, "content": m.content, "data": _data(m)} for m in changed],
        )
    for m in messages:
        m.stored, m.dirty = True, False
    return messages


def reasoning_of(reply: C.Message | None) -> str:
    """What the LLM said with a call (its text, else the reasoning the server sent): the suggestion's rationale."""
    if reply is None:
        return ""
    _, text = markers(reply.content)
    return text or (reply.reasoning or "").strip()


def view(m: C.Message) -> dict[str, Any]:
    """A message as clients see it (the transcript, the agent_messages event)."""
    out: dict[str, Any] = {"seq": m.seq, "role": m.role, "content": m.content, "turn": m.turn, "message_id": m.id}
    if m.role == C.USER:
        out["kind"] = m.kind
    if m.role == C.ASSISTANT:
        out.update(tool_calls=[c.to_dict() for c in m.tool_calls], reasoning=m.reasoning, asked=m.asked)
        kind, _ = markers(m.content)
        out["marker"] = kind
    if m.role == C.TOOL:
        out.update(
            tool_call_id=m.tool_call_id,
            name=m.name,
            tool=m.tool,
            arguments=m.arguments,
            raw_arguments=m.raw,
            params=m.params,
            status=m.status,
            policy=m.policy,
            decision=m.decision,
            suggestion_id=m.suggestion_id,
            source=m.source,
            error=m.error,
        )
    out["trimmed"] = m.trimmed
    return out


def transcript(session: Session, execution_id: str, step_id: str) -> list[dict[str, Any]]:
    return [view(m) for m in load(session, execution_id, step_id)]
