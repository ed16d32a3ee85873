"""Making a workspace: its own row (services/users) and the per-workspace rows that the rest reads from its first
request on (its policy settings: revision 0, no defaults, read by every judged call; services/policies)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.models.policies import PolicySettings
from services.models.users import Workspace
from services.users import service as users

DEFAULT_WORKSPACE = "default"


def create(session: Session, slug: str, name: str | None = None) -> Workspace:
    """A new workspace (a 422 for a bad slug, a 409 for one taken), ready for its first judged call."""
    ws = users.workspace_row(session, slug, name)
    session.add(PolicySettings(workspace_id=ws.id))
    return ws


def default_id(session: Session) -> str:
    """The id of the default workspace, made at its first use."""
    ws = session.scalar(select(Workspace).where(Workspace.slug == DEFAULT_WORKSPACE))
    if ws is None:
        ws = create(session, DEFAULT_WORKSPACE, "Default workspace")
    return ws.id
