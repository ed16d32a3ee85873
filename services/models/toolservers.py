"""A workspace's MCP tool servers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, new_id, utcnow


class ToolServer(FilledAtInit, Base):
    """An MCP server whose tools a workspace's steps may call as `<name>.<tool>` (services/toolservers,
    migration 0021). `secret` holds the headers (a bearer token among them) encrypted with the server's key;
    `tools` is the last tool list the server gave, so that every process validates and runs with the same."""

    __tablename__ = "tool_servers"
    __table_args__ = (UniqueConstraint("workspace_id", "name", name="uq_tool_servers_workspace_name"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    name: Mapped[str] = mapped_column(String(40))
    description: Mapped[str] = mapped_column(Text, default="")
    transport: Mapped[str] = mapped_column(String(16))  # http | stdio
    url: Mapped[str] = mapped_column(Text, default="")
    command: Mapped[list[str]] = mapped_column(JsonType, default=list)
    secret: Mapped[str] = mapped_column(Text, default="")  # Fernet token of {"headers": {...}}
    trusted: Mapped[bool] = mapped_column(default=False)
    enabled: Mapped[bool] = mapped_column(default=True)
    risk_overrides: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    tools: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, default=list)
    listed_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_error: Mapped[str] = mapped_column(Text, default="")
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[str] = mapped_column(String(254), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
