"""Agent steps' stored conversations and each workspace's LLM provider."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, new_id, utcnow


class WorkspaceLLM(Base):
    """A workspace's own LLM provider for agent steps (services/agents/llm_provider.py; migration 0027). No row: the
    server's COACH_LLM_* settings. `api_key` is sealed (services/toolservers/secrets.py), '' when none is set."""

    __tablename__ = "workspace_llm"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    base_url: Mapped[str] = mapped_column(String(2000))
    model: Mapped[str] = mapped_column(String(200))
    api_key: Mapped[str] = mapped_column(Text, default="")
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class AgentMessage(FilledAtInit, Base):
    """One message of an agent step's conversation (core/agent; migration 0018): written as the conversation grows,
    each LLM answer and each tool result committed before the next request, so a restarted server goes on from the
    stored conversation. `data` holds the role's own fields (core.agent.conversation.Message)."""

    __tablename__ = "agent_messages"
    __table_args__ = (UniqueConstraint("execution_id", "step_id", "seq", name="uq_agent_messages_seq"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    execution_id: Mapped[str] = mapped_column(ForeignKey("executions.id"))
    step_id: Mapped[str] = mapped_column(String(64))
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str | None] = mapped_column(Text, nullable=True)
    data: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
