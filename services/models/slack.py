"""A workspace's Slack app (bot token and signing secret sealed) and each member's Slack user id (migration 0028)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, UtcDateTime, utcnow


class WorkspaceSlack(Base):
    """The workspace's Slack app. `bot_token` and `signing_secret` are sealed (services/toolservers/secrets.py),
    '' when not set; the API says only whether they are set."""

    __tablename__ = "workspace_slack"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    bot_token: Mapped[str] = mapped_column(Text, default="")
    signing_secret: Mapped[str] = mapped_column(Text, default="")
    default_channel: Mapped[str] = mapped_column(String(64), default="")
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class SlackUser(Base):
    """Who a member is in the workspace's Slack: a click by `slack_user_id` acts as `user_id`, in this workspace
    only."""

    __tablename__ = "slack_users"
    __table_args__ = (
        UniqueConstraint("workspace_id", "user_id", name="uq_slack_users_member"),
        UniqueConstraint("workspace_id", "slack_user_id", name="uq_slack_users_slack_id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    slack_user_id: Mapped[str] = mapped_column(String(32))
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
