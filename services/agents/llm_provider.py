"""Each workspace's own LLM provider for agent steps: stored (the API key sealed), audited, tested, and picked for
a step (the workspace's when set, else the server's COACH_LLM_* settings; core/agent/provider_settings.py).

A workspace's base URL is held to its outbound rules like http.request's calls (core/outbound): checked when an
admin saves it, and again on every request the agent or the Test button makes (the connection goes to the address
checked, services/tools/http.py's VettedTransport). The server's own COACH_LLM_BASE_URL is the operator's choice and
is not. The API never returns the key, only whether one is set; the audit log records the change of provider and
whether a key is set, never the key.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy import select

from config import Settings
from core.agent.provider import ProviderError, Request
from core.agent.provider_settings import WHERE, check
from core.errors import Conflict, NotFound, ValidationFailed
from core.outbound import Address, parse_entries, parse_entry
from core.tools import ToolError
from services.agents.llm import OpenAIProvider
from services.audit import service as audit
from services.db import Database
from services.models.agents import WorkspaceLLM
from services.models.executions import Execution
from services.models.users import Workspace
from services.orm import utcnow
from services.policies import outbound
from services.tools.http import VettedTransport, Vetter
from services.toolservers.secrets import Secrets, SecretUnreadable
from services.unit_of_work import unit_of_work

MISSING_CODE = "llm_provider_missing"
TEST_PROMPT = "This is a connection test from Coach. Reply with one short sentence."
_lock = threading.Lock()


@functools.lru_cache(maxsize=4)
def _secrets(secret_key: str) -> Secrets:
    return Secrets(secret_key, purpose=b"coach llm api key")


def secrets(settings: Settings) -> Secrets:
    return _secrets(settings.secret_key)


def _public(row: WorkspaceLLM | None) -> dict[str, Any] | None:
    """What the audit log and the API show of a provider: never the key, only whether one is set."""
    if row is None:
        return None
    return {"base_url": row.base_url, "model": row.model, "api_key_set": bool(row.api_key)}


def view(session, settings: Settings, workspace_id: str) -> dict[str, Any]:
    row = session.get(WorkspaceLLM, workspace_id)
    server = {"configured": bool(settings.llm_base_url), "model": settings.llm_model or None}
    body: dict[str, Any] = {
        "base_url": None,
        "model": None,
        "api_key_set": False,
        "updated_by": None,
        "updated_at": None,
        "server_default": server,
        "in_use": "workspace" if row else ("server" if settings.llm_base_url else "none"),
    }
    if row is not None:
        body.update(_public(row) or {}, updated_by=row.updated_by, updated_at=row.updated_at)
    return body


# -- the outbound rules -----------------------------------------------------------------------------------------


class LiveVetter:
    """The workspace's outbound rules as they are at each request (a change applies to the next one)."""

    def __init__(self, db: Database, settings: Settings, workspace_id: str):
        self.db, self.workspace_id = db, workspace_id
        self.server_allow = parse_entries(settings.outbound_allow)

    def now(self) -> Vetter:
        with self.db.aside() as session:
            lists = outbound.get_lists(session, self.workspace_id)
        return Vetter(
            self.server_allow, tuple(parse_entry(e) for e in lists.allow), tuple(parse_entry(e) for e in lists.deny)
        )

    def address(self, url: httpx.URL) -> Address:
        return self.now().address(url)


def _refused(db: Database, settings: Settings, workspace_id: str, base_url: str) -> str | None:
    try:
        LiveVetter(db, settings, workspace_id).address(httpx.URL(base_url))
    except ToolError as exc:
        return (
            f"{exc} (the workspace's outbound rules apply to its LLM provider; see Settings or the API's "
            f"/api/workspace/outbound)"
        )
    return None


# -- saving -----------------------------------------------------------------------------------------------------


def save(db: Database, settings: Settings, workspace_id: str, body: dict[str, Any], actor: str) -> dict[str, Any]:
    """Set the workspace's provider (422 naming the field on a bad URL or model, or a URL its outbound rules
    refuse), audited as `llm_provider_change`."""
    values, key, errors = check(body)
    if errors or values is None:  # (no settings: there are errors)
        raise ValidationFailed("the LLM provider is not valid", errors)
    why = _refused(db, settings, workspace_id, values.base_url)  # DNS: before the transaction, not inside it
    if why:
        raise ValidationFailed("the LLM provider's base URL is refused", {"base_url": [why]})
    with unit_of_work(db) as uow:
        session = uow.session
        if session.get(Workspace, workspace_id) is None:
            raise NotFound(f"workspace {workspace_id} not found")
        row = session.get(WorkspaceLLM, workspace_id)
        before = _public(row)
        if row is None:
            row = WorkspaceLLM(workspace_id=workspace_id, api_key="")
            session.add(row)
        elif row.base_url != values.base_url and key is None and row.api_key:
            # a stored key goes only to the URL it was entered for: a new URL needs the key again (or none)
            raise ValidationFailed(
                "enter the API key again for a new base URL",
                {
                    "api_key": [
                        "the stored key is only sent to the URL it was entered for: "
                        "enter it again for the new URL, or clear it"
                    ]
                },
            )
        row.base_url, row.model = values.base_url, values.model
        if key is not None:
            row.api_key = secrets(settings).seal({"api_key": key}) if key else ""
        row.updated_by, row.updated_at = actor, utcnow()
        session.flush()
        audit.record(
            session,
            workspace_id,
            actor,
            "llm_provider_change",
            target_type="workspace",
            target_id=workspace_id,
            before=before,
            after=_public(row),
        )
        return view(session, settings, workspace_id)


def remove(db: Database, settings: Settings, workspace_id: str, actor: str) -> None:
    """Back to the server's COACH_LLM_* settings, audited."""
    with unit_of_work(db) as uow:
        session = uow.session
        row = session.get(WorkspaceLLM, workspace_id)
        if row is not None:
            before = _public(row)
            session.delete(row)
            session.flush()
            audit.record(
                session,
                workspace_id,
                actor,
                "llm_provider_change",
                target_type="workspace",
                target_id=workspace_id,
                before=before,
                after=None,
            )


# -- picking the provider of a step -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Chosen:
    provider: Any  # core.agent.provider.Provider
    model: str  # '' when none is set anywhere
    source: str  # workspace | server | none


def choose(runner, execution_id: str, server_provider) -> Chosen:
    """The provider an agent step of this execution's workspace uses now. One client per workspace provider
    (kept on the runner while its settings stay the same: it pools connections)."""
    with runner.db.read() as session:
        workspace_id = session.scalar(select(Execution.workspace_id).where(Execution.id == execution_id))
        row = session.get(WorkspaceLLM, workspace_id) if workspace_id else None
        stored = None if row is None else (row.base_url, row.model, row.api_key)
    if stored is None:
        source = "server" if server_provider.configured else "none"
        return Chosen(server_provider, runner.settings.llm_model, source)
    return Chosen(_workspace_provider(runner, workspace_id, *stored), stored[1], "workspace")


def _workspace_provider(runner, workspace_id: str, base_url: str, model: str, sealed: str):
    cache = getattr(runner, "llm_by_workspace", None)
    if cache is None:
        cache = runner.llm_by_workspace = {}
    key = (base_url, sealed)
    with _lock:
        found = cache.get(workspace_id)
        if found is not None and found[0] == key:
            return found[1]
    try:
        api_key = secrets(runner.settings).open(sealed).get("api_key", "") if sealed else ""
    except SecretUnreadable:
        return Unreadable()
    provider = OpenAIProvider(
        runner.settings,
        base_url=base_url,
        api_key=api_key,
        transport=VettedTransport(LiveVetter(runner.db, runner.settings, workspace_id)),
    )
    with _lock:
        cache[workspace_id] = (key, provider)
    return provider


class Unreadable:
    configured = True

    def complete(self, request: Request):
        raise ProviderError(
            "the workspace's LLM API key cannot be decrypted (was COACH_SECRET_KEY changed?): "
            "enter it again in Settings → LLM provider"
        )


def missing(session, settings: Settings, workspace_id: str, definition) -> str | None:
    """Why an agent step of `definition` could not start in this workspace now (no provider, or no model), or
    None. Starting such a workflow is refused with this (api/executions.py), rather than a run that fails."""
    agents = [s for s in definition.steps if s.agent is not None]
    if not agents:
        return None
    row = session.get(WorkspaceLLM, workspace_id)
    if row is None and not settings.llm_base_url:
        return f"this workflow has an agent step ({agents[0].id}) and no LLM provider is configured: {WHERE}"
    default_model = row.model if row is not None else settings.llm_model
    nameless = next((s for s in agents if not (s.agent.model or default_model)), None)
    if nameless is not None:
        return f"the agent step {nameless.id!r} names no model and the LLM provider has none: {WHERE} with a model"
    return None


def require(session, settings: Settings, workspace_id: str, definition) -> None:
    """Conflict (409, code llm_provider_missing) when an agent step of `definition` has no provider to use."""
    why = missing(session, settings, workspace_id, definition)
    if why:
        raise Conflict(why, details={"setting": "llm_provider", "where": "Settings → LLM provider"}, code=MISSING_CODE)


# -- the Test button --------------------------------------------------------------------------------------------


def test(services, workspace_id: str) -> dict[str, Any]:
    """One small real request to the provider agent steps of this workspace would use now: its answer, or what
    went wrong in words (no retry, a short timeout)."""
    settings = services.settings
    with services.db.read() as session:
        row = session.get(WorkspaceLLM, workspace_id)
        stored = None if row is None else (row.base_url, row.model, row.api_key)
    if stored is None:
        if not settings.llm_base_url:
            return {
                "ok": False,
                "source": "none",
                "base_url": None,
                "model": None,
                "failure": f"no LLM provider is configured: {WHERE}",
            }
        base_url, model, source = settings.llm_base_url, settings.llm_model, "server"
        provider = OpenAIProvider(settings, max_retries=0, timeout_s=min(settings.llm_timeout_s, 30.0))
    else:
        base_url, model, sealed = stored
        source = "workspace"
        try:
            api_key = secrets(settings).open(sealed).get("api_key", "") if sealed else ""
        except SecretUnreadable:
            return {
                "ok": False,
                "source": source,
                "base_url": base_url,
                "model": model,
                "failure": "the stored API key cannot be decrypted (was COACH_SECRET_KEY changed?): enter it again",
            }
        provider = OpenAIProvider(
            settings,
            base_url=base_url,
            api_key=api_key,
            max_retries=0,
            timeout_s=min(settings.llm_timeout_s, 30.0),
            transport=VettedTransport(LiveVetter(services.db, settings, workspace_id)),
        )
    out: dict[str, Any] = {
        "source": source,
        "base_url": base_url if source == "workspace" else None,
        "model": model or None,
    }
    if not model:
        return {**out, "ok": False, "failure": "no model is set"}
    started = time.monotonic()
    try:
        reply = provider.complete(
            Request(
                model=model,
                messages=[{"role": "user", "content": TEST_PROMPT}],
                tools=[],
                key=f"coach-test-{workspace_id}-{time.time_ns()}",
            )
        )
    except ProviderError as exc:
        return {**out, "ok": False, "failure": str(exc)}
    finally:
        provider.close()
    answer = (reply.content or "").strip() or "(an empty answer)"
    return {**out, "ok": True, "answer": answer[:2000], "elapsed_ms": round((time.monotonic() - started) * 1000)}
