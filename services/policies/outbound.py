"""Each workspace's outbound lists in the database, and what the tools may learn about a workspace.

The rules themselves are core/outbound; the DNS and the connection are services/tools/http.py.
"""

from __future__ import annotations

from sqlalchemy import select

from core.errors import NotFound, ValidationFailed
from core.outbound import OutboundLists, validate_lists
from services.audit import service as audit
from services.db import Database
from services.models.policies import WorkspaceOutbound
from services.models.users import Workspace
from services.orm import utcnow


def get_lists(session, workspace_id: str) -> OutboundLists:
    row = session.get(WorkspaceOutbound, workspace_id)
    if row is None:
        return OutboundLists()
    return OutboundLists(allow=tuple(row.allow or ()), deny=tuple(row.deny or ()))


def set_lists(session, workspace_id: str, body, actor: str) -> OutboundLists:
    """Replace the workspace's lists (422 naming the field on nonsense), audited in the same transaction."""
    lists, errors = validate_lists(body)
    if errors or lists is None:  # (no lists: there are errors)
        raise ValidationFailed("the outbound lists are not valid", errors)
    if session.get(Workspace, workspace_id) is None:
        raise NotFound(f"workspace {workspace_id} not found")
    before = get_lists(session, workspace_id)
    row = session.get(WorkspaceOutbound, workspace_id)
    if row is None:
        row = WorkspaceOutbound(workspace_id=workspace_id)
        session.add(row)
    row.allow, row.deny = list(lists.allow), list(lists.deny)
    row.updated_by, row.updated_at = actor, utcnow()
    session.flush()
    audit.record(
        session,
        workspace_id,
        actor,
        "outbound_change",
        target_type="workspace",
        target_id=workspace_id,
        before=before.as_dict(),
        after=lists.as_dict(),
    )
    return lists


class WorkspaceDirectory:
    """services.tools.tenancy.Workspaces backed by the database: read fresh on every call (one small SELECT
    beside a network call), so a change made through the API applies to the next request in every process."""

    def __init__(self, db: Database):
        self.db = db

    def names(self, workspace_id: str) -> set[str]:
        with self.db.read() as session:
            slug = session.scalar(select(Workspace.slug).where(Workspace.id == workspace_id))
        return {workspace_id} | ({slug} if slug else set())

    def outbound(self, workspace_id: str) -> OutboundLists:
        with self.db.read() as session:
            return get_lists(session, workspace_id)
