"""Agent identities: who calls the workspace's tools through the MCP gateway. Admins create and revoke them
(api/agents.py); the token is shown once, only its SHA-256 is stored (as personal API tokens are,
services/users/service.py)."""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from core.errors import Conflict, ValidationFailed
from services.audit import service as audit
from services.db import Database
from services.models.gateway import AgentIdentity
from services.orm import in_workspace, utcnow
from services.unit_of_work import unit_of_work
from services.users.service import token_hash

TOKEN_PREFIX = "coach_agent_"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")


@dataclass(frozen=True)
class Agent:
    """An authenticated agent: what the gateway needs of it on every call."""

    id: str
    name: str
    workspace_id: str


def list_agents(session: Session, workspace_id: str) -> list[AgentIdentity]:
    return list(
        session.scalars(
            select(AgentIdentity)
            .where(AgentIdentity.workspace_id == workspace_id)
            .order_by(AgentIdentity.created_at, AgentIdentity.id)
        )
    )


def get(session: Session, workspace_id: str, agent_id: str) -> AgentIdentity:
    return in_workspace(session, AgentIdentity, workspace_id, agent_id, "agent")


def create(session: Session, workspace_id: str, name: Any, description: Any, actor: str) -> tuple[AgentIdentity, str]:
    """A new identity and its token (returned once, never stored). Names are unique among a workspace's active
    identities: a policy rule names an agent by its name."""
    if not isinstance(name, str) or not NAME.match(name):
        raise ValidationFailed(
            "the agent's name is not valid",
            details={"name": ["1 to 100 characters: letters, digits, '_', '.', '-', starting with a letter or digit"]},
        )
    if description is not None and (not isinstance(description, str) or len(description) > 2000):
        raise ValidationFailed("the description is too long", details={"description": ["at most 2000 characters"]})
    taken = session.scalar(
        select(AgentIdentity.id).where(
            AgentIdentity.workspace_id == workspace_id, AgentIdentity.name == name, AgentIdentity.revoked_at.is_(None)
        )
    )
    if taken is not None:
        raise Conflict(f"this workspace already has an active agent named {name!r}", details={"name": [name]})
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = AgentIdentity(
        workspace_id=workspace_id,
        name=name,
        description=description or "",
        token_hash=token_hash(secret),
        created_by=actor,
    )
    session.add(row)
    session.flush()
    audit.record(
        session,
        workspace_id,
        actor,
        "agent_create",
        target_type="agent",
        target_id=row.id,
        after={"name": name, "description": row.description},
    )
    return row, secret


def revoke(session: Session, workspace_id: str, agent_id: str, actor: str) -> tuple[AgentIdentity, bool]:
    """The token stops working at once: every MCP request authenticates again (the gateway keeps no session).
    Returns the row and whether this call revoked it (False: it was revoked before). Its held calls are ended by
    services/gateway/held.py revoke, the command that calls this."""
    row = get(session, workspace_id, agent_id)
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        audit.record(
            session,
            workspace_id,
            actor,
            "agent_revoke",
            target_type="agent",
            target_id=row.id,
            before={"name": row.name},
            after={"revoked_at": row.revoked_at},
        )
        return row, True
    return row, False


_ACTIVE = (
    select(AgentIdentity.id, AgentIdentity.name, AgentIdentity.workspace_id)
    .where(AgentIdentity.token_hash == bindparam("hashed"), AgentIdentity.revoked_at.is_(None))
    .limit(1)
)


def authenticate(db: Database, token: str) -> Agent | None:
    """The active identity a bearer token names, or None: one statement on the read engine."""
    if not token or not token.startswith(TOKEN_PREFIX):
        return None
    with db.read_engine.connect() as conn:
        row = conn.execute(_ACTIVE, {"hashed": token_hash(token)}).first()
    return Agent(row.id, row.name, row.workspace_id) if row is not None else None


_touched: dict[str, float] = {}
TOUCH_EVERY_S = 60.0


def touch(db: Database, agent: Agent) -> None:
    """Note that the agent was seen (`last_used_at`), at most once a minute per agent and process: a write per
    request would cost more than it tells."""
    now = time.monotonic()
    if now - _touched.get(agent.id, -TOUCH_EVERY_S) < TOUCH_EVERY_S:
        return
    _touched[agent.id] = now
    with unit_of_work(db) as uow:
        uow.session.execute(update(AgentIdentity).where(AgentIdentity.id == agent.id).values(last_used_at=utcnow()))


def view(row: AgentIdentity, token: str | None = None) -> dict[str, Any]:
    out = {
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "created_by": row.created_by,
        "created_at": row.created_at,
        "last_used_at": row.last_used_at,
        "revoked_at": row.revoked_at,
        "active": row.revoked_at is None,
    }
    if token is not None:
        out["token"] = token
    return out
