"""A scope's regions and the counter of its condition versions (migration 0037)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, UtcDateTime, new_id, utcnow


class Region(FilledAtInit, Base):
    """A named condition over a tool scope's calls with its own mode (core.regions.region). `scope`: `step` (a
    workflow's tool step, or an agent step's calls of one tool, `<agent step>:<tool>`; `workflow_id`, `step_id`)
    or `gateway` (a gateway tool, `tool`, optionally for one agent `identity`). `condition_version`: the scope's
    counter when `when` was last fixed; its evidence is the metric scope `region` keyed `<id>/v<version>`."""

    __tablename__ = "regions"
    __table_args__ = (Index("ix_regions_scope", "workspace_id", "scope", "scope_key"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    scope: Mapped[str] = mapped_column(String(16))  # step | gateway
    scope_key: Mapped[str] = mapped_column(String(300))  # <workflow_id>/<step_id> | <tool>
    workflow_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    step_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    tool: Mapped[str | None] = mapped_column(String(200), nullable=True)
    identity: Mapped[str | None] = mapped_column(String(200), nullable=True)
    name: Mapped[str] = mapped_column(String(120))
    when: Mapped[str] = mapped_column(Text)
    order: Mapped[int] = mapped_column(Integer, default=0)
    mode: Mapped[str] = mapped_column(String(16), default="coaching")
    condition_version: Mapped[int] = mapped_column(Integer, default=1)
    created_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)


class RegionScope(Base):
    """A scope's counter of condition versions (j = 1, 2, 3 …, never reused: a removed region's included), so that
    each version gets its share alpha_j of the scope's level (core.regions.evidence)."""

    __tablename__ = "region_scopes"
    __table_args__ = (UniqueConstraint("workspace_id", "scope", "scope_key", name="uq_region_scopes_scope"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    scope: Mapped[str] = mapped_column(String(16))
    scope_key: Mapped[str] = mapped_column(String(300))
    versions: Mapped[int] = mapped_column(Integer, default=0)
