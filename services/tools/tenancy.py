"""What tools may ask about the workspace they run for, beyond its id (ToolContext.workspace_id).

The server gives the tools a directory backed by its database (services.policies.outbound.WorkspaceDirectory); a
registry built without one (unit tests, scripts) knows a workspace only by its id and has no outbound lists.
"""

from __future__ import annotations

from typing import Protocol

from core.outbound import OutboundLists


class Workspaces(Protocol):
    def names(self, workspace_id: str) -> set[str]:
        """The names a setting may grant something to this workspace by: its id, and its slug if it exists."""

    def outbound(self, workspace_id: str) -> OutboundLists:
        """The workspace's own allow and deny lists for outbound requests."""


class IdsOnly:
    def names(self, workspace_id: str) -> set[str]:
        return {workspace_id}

    def outbound(self, workspace_id: str) -> OutboundLists:
        return OutboundLists()
