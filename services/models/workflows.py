"""Workflow definitions and their versions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, Session, mapped_column, relationship

from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, new_id, utcnow


class Workflow(FilledAtInit, Base):
    __tablename__ = "workflows"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    current_version: Mapped[int] = mapped_column(Integer, default=1)
    mode: Mapped[str] = mapped_column(String(16), default="coaching")
    # workflow | plan: a plan's inline steps are a hidden workflow of one version (services/plans/service.py), left out
    # of the workflow list, the metrics list and the dashboard (migration 0015)
    kind: Mapped[str] = mapped_column(String(16), default="workflow", server_default="workflow")
    settings: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    # bumped with every change to one of its correction packs: the key of each process's cache of its rules
    packs_revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)
    deleted_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    versions: Mapped[list[WorkflowVersion]] = relationship(
        back_populates="workflow", order_by="WorkflowVersion.version"
    )


class WorkflowVersion(Base):
    __tablename__ = "workflow_versions"
    __table_args__ = (UniqueConstraint("workflow_id", "version"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workflow_id: Mapped[str] = mapped_column(ForeignKey("workflows.id"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    definition: Mapped[dict[str, Any]] = mapped_column(JsonType)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    workflow: Mapped[Workflow] = relationship(back_populates="versions")


def workflow_of(session: Session, workflow_id: str) -> Workflow:
    """The workflow of an execution, a suggestion or a pack: its foreign key makes it exist (a plan's hidden one and
    a deleted one too: rows are kept)."""
    wf = session.get(Workflow, workflow_id)
    if wf is None:
        raise LookupError(f"workflow {workflow_id} does not exist")
    return wf
