"""What a request acts as: the app's services and the caller's workspace."""
from __future__ import annotations

from flask import current_app, g

from services.container import Services


def services() -> Services:
    return current_app.extensions["coach"]


def workspace_id() -> str:
    # Until users and workspaces arrive (issue 4), every request acts in the default workspace.
    if "workspace_id" not in g:
        g.workspace_id = current_app.extensions["coach_default_workspace"]
    return g.workspace_id


def operator() -> str:
    # Until users arrive (issue 4), decisions are attributed to the X-Coach-Operator header or "anonymous".
    from flask import request

    return (request.headers.get("X-Coach-Operator") or "anonymous").strip()[:200] or "anonymous"
