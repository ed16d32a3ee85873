"""Policy rules in the database, each workspace's default, and the fast evaluation the runner calls.

For the runner (the one entry point it needs):

    from services import policies
    verdict = policies.evaluate(session, workspace_id, policies.call_for(tools, tool, params,
                                step_type="action", workflow_id=wf_id, user=started_by, agent_step=None))
    verdict.effect        # "allow" | "require_review" | "deny" | "confirm" (gateway calls: services/gateway/confirm)
    verdict.to_dict()     # the explanation (docs/api.md), to keep beside a suggestion or an approval

`evaluate` never raises because of a rule: a rule that fails is a fail-closed `require_review` match (core.policy).
Its cost is one primary-key read of the workspace's `policy_settings.revision` and then the compiled rule set of
that revision, kept per process (PolicyCache); every change bumps the revision in its own transaction, so every
server process sharing the database sees it at its next evaluation.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Mapping
from typing import Any

from cachetools import LRUCache
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.errors import ValidationFailed
from core.policy import Call, CompiledRule, RuleSet, Verdict, check_defaults, compile_rule
from core.policy.rules import DEFAULTS
from core.tools import ToolRegistry
from services.audit import service as audit
from services.models.policies import Policy, PolicySettings
from services.models.users import User
from services.models.workflows import Workflow
from services.orm import in_workspace, table_of, utcnow

log = logging.getLogger(__name__)


def call_for(
    tools: ToolRegistry | Mapping[str, Any],
    tool: str,
    params: dict[str, Any] | None = None,
    *,
    step_type: str = "action",
    workflow_id: str | None = None,
    user: str | None = None,
    agent_step: str | None = None,
    agent: str | None = None,
) -> Call:
    """The call as the policy sees it, with the registered tool's risk (None for a tool the registry lacks). `tools`:
    a registry, or the tools of one call by name (a gateway call's: an MCP server's tool or an exposed built-in)."""
    found = tools.get(tool)
    return Call(
        tool=tool,
        params=params if isinstance(params, dict) else {},
        step_type=step_type,
        risk=getattr(found, "risk", None),
        workflow_id=workflow_id,
        user=user,
        agent_step=agent_step,
        agent=agent,
    )


def for_step(session: Session, tools: ToolRegistry, ex, step, params: Any, *, agent_step: str | None = None) -> Verdict:
    """The verdict on the call an execution's action step is about to make (or is suggested to make) with
    `params`: the workflow, the user who started the execution (their email) and the tool's risk."""
    return evaluate(
        session,
        ex.workspace_id,
        call_for(
            tools,
            step.tool or "",
            params,
            step_type=step.type,
            workflow_id=ex.workflow_id,
            user=starter(session, ex.started_by),
            agent_step=agent_step,
        ),
    )


def judge(session: Session, tools: ToolRegistry, ex, step, params: Any, *, known: dict | None = None) -> dict:
    """The explanation (`Verdict.to_dict()`) of the verdict on the call a step makes with `params`. One call is
    judged at most once per policy revision: `known` is an earlier explanation of this very call (a suggestion's,
    for an accept), reused while the revision it names is current. A change of any rule or of the default bumps the
    revision."""
    if known is not None and known.get("revision") == revision(session, ex.workspace_id):
        return known
    return for_step(session, tools, ex, step, params).to_dict()


def denied_message(verdict: dict) -> str:
    """`denied by policy "<name>": <reason>`, the step's error and the 409 of a decision on a denied call."""
    rule = verdict.get("rule") or {}
    if verdict.get("default") or not rule.get("id"):
        return "denied by the workspace's default policy"
    return f"denied by policy {rule.get('name')!r}" + (f": {rule['reason']}" if rule.get("reason") else "")


_emails: LRUCache[str, str] = LRUCache(maxsize=10_000)
_emails_lock = threading.Lock()


def starter(session: Session, user_id: str | None) -> str | None:
    """A user id's email (policies name users by email), remembered per process: an account's email does not
    change."""
    if not user_id:
        return None
    with _emails_lock:
        found = _emails.get(user_id)
    if found is None:
        user = session.get(User, user_id)
        if user is None:
            return None
        found = user.email
        with _emails_lock:
            _emails[user_id] = found
    return found


# -- the per-process cache ------------------------------------------------------------------------------------


def revision(session: Session, workspace_id: str) -> int:
    """The workspace's policy revision, read once per transaction (the row stays in the session's identity map;
    a change in this transaction updates it there)."""
    return _stamp(session, workspace_id)[0]


def _stamp(session: Session, workspace_id: str) -> tuple[int, Any]:
    """(revision, updated_at) of the workspace's policies: what a compiled rule set is cached under. The time tells
    apart two transactions that made the same revision number, one of which rolled back."""
    settings = session.get(PolicySettings, workspace_id)
    return (settings.revision, settings.updated_at) if settings is not None else (0, None)


class PolicyCache:
    """Each workspace's compiled RuleSet, per process, under the revision read in the caller's transaction."""

    def __init__(self, size: int = 1024):
        self.size = size
        self._items: LRUCache[str, tuple[tuple, RuleSet]] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def rule_set(self, session: Session, workspace_id: str) -> RuleSet:
        stamp = _stamp(session, workspace_id)
        with self._lock:
            hit = self._items.get(workspace_id)  # cachetools' LRU: a read counts as a use
            if hit is not None and hit[0] == stamp:
                return hit[1]
        built = load_rule_set(session, workspace_id, stamp[0])
        with self._lock:
            self._items[workspace_id] = (stamp, built)
        return built


_cache = PolicyCache()


def load_rule_set(session: Session, workspace_id: str, at: int | None = None) -> RuleSet:
    settings = session.get(PolicySettings, workspace_id)
    rows = session.scalars(select(Policy).where(Policy.workspace_id == workspace_id, Policy.enabled.is_(True)))
    rules = [_compiled(row) for row in rows]
    return RuleSet(
        rules,
        (settings.defaults if settings else None) or {},
        at if at is not None else (settings.revision if settings else 0),
    )


def _compiled(row: Policy) -> CompiledRule:
    try:
        return compile_rule(_written(row), rule_id=row.id, revision=row.revision)
    except ValidationFailed as exc:
        # stored, then no longer valid (a changed language or helper): it matches every call, fail closed
        log.warning("policy %s no longer compiles: %s", row.id, exc.details)
        broken = f"the stored rule no longer compiles: {exc.details}"

        def fails(_params: dict) -> bool:
            raise ValueError(broken)

        base = compile_rule(
            {"name": row.name or "broken rule", "effect": "require_review"}, rule_id=row.id, revision=row.revision
        )
        return dataclasses.replace(base, checks=(("compile", fails),), order=row.order or 0)


def evaluate(session: Session, workspace_id: str, call: Call) -> Verdict:
    """The verdict on one tool call with its explanation; never raises because of a rule."""
    return _cache.rule_set(session, workspace_id).evaluate(call)


# -- rules ----------------------------------------------------------------------------------------------------


def _written(row: Policy) -> dict[str, Any]:
    return {
        "name": row.name,
        "order": row.order,
        "effect": row.effect,
        **({"fallback": row.fallback or "require_review"} if row.effect == "confirm" else {}),
        "reason": row.reason,
        "scope": {"workflow_id": row.scope_workflow_id, "user": row.scope_user},
        "match": row.match or {},
    }


def view(row: Policy) -> dict[str, Any]:
    return {
        "id": row.id,
        **_written(row),
        "enabled": row.enabled,
        "revision": row.revision,
        "created_by": row.created_by,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def list_rules(session: Session, workspace_id: str) -> list[Policy]:
    rows = session.scalars(select(Policy).where(Policy.workspace_id == workspace_id))
    order = {"workspace": 0, "workflow": 1, "user": 2, "user+workflow": 3}
    return sorted(rows, key=lambda r: (-order[_scope(r)], r.order, r.id))


def _scope(row: Policy) -> str:
    if row.scope_user and row.scope_workflow_id:
        return "user+workflow"
    return "user" if row.scope_user else "workflow" if row.scope_workflow_id else "workspace"


def get(session: Session, workspace_id: str, policy_id: str) -> Policy:
    return in_workspace(session, Policy, workspace_id, policy_id, "policy")


def _checked(session: Session, workspace_id: str, data: dict[str, Any]) -> CompiledRule:
    rule = compile_rule(data)
    if rule.scope_workflow_id is not None:
        wf = session.get(Workflow, rule.scope_workflow_id)
        if wf is None or wf.workspace_id != workspace_id or wf.deleted_at is not None:
            raise ValidationFailed(
                "the scope names no workflow of this workspace",
                {"scope.workflow_id": [f"no workflow {rule.scope_workflow_id!r} here"]},
            )
    return rule


def _assign(row: Policy, rule: CompiledRule, data: dict[str, Any]) -> None:
    row.name, row.order, row.effect, row.reason = rule.name, rule.order, rule.effect, rule.reason
    row.fallback = rule.fallback
    row.scope_workflow_id, row.scope_user = rule.scope_workflow_id, rule.scope_user
    row.match = {k: v for k, v in (data.get("match") or {}).items() if v is not None}
    row.enabled = bool(data.get("enabled", True))


def create(session: Session, workspace_id: str, data: dict[str, Any], actor: str) -> Policy:
    rule = _checked(session, workspace_id, data)
    row = Policy(workspace_id=workspace_id, created_by=actor)
    _assign(row, rule, data)
    row.revision = _bump(session, workspace_id, actor)
    session.add(row)
    session.flush()
    audit.record(
        session, workspace_id, actor, "policy_create", target_type="policy", target_id=row.id, after=_audited(row)
    )
    return row


def replace(session: Session, workspace_id: str, policy_id: str, data: dict[str, Any], actor: str) -> Policy:
    row = get(session, workspace_id, policy_id)
    rule = _checked(session, workspace_id, data)
    before = _audited(row)
    _assign(row, rule, data)
    row.revision, row.updated_at = _bump(session, workspace_id, actor), utcnow()
    session.flush()
    audit.record(
        session,
        workspace_id,
        actor,
        "policy_update",
        target_type="policy",
        target_id=row.id,
        before=before,
        after=_audited(row),
    )
    return row


def delete(session: Session, workspace_id: str, policy_id: str, actor: str) -> None:
    row = get(session, workspace_id, policy_id)
    before = _audited(row)
    session.delete(row)
    session.flush()
    _bump(session, workspace_id, actor)
    audit.record(
        session, workspace_id, actor, "policy_delete", target_type="policy", target_id=policy_id, before=before
    )


def _audited(row: Policy) -> dict[str, Any]:
    return {**_written(row), "enabled": row.enabled}


# -- the workspace default and the revision -------------------------------------------------------------------


def get_defaults(session: Session, workspace_id: str) -> dict[str, str]:
    row = session.get(PolicySettings, workspace_id)
    return {**DEFAULTS, **((row.defaults if row else None) or {})}


def set_defaults(session: Session, workspace_id: str, data: Any, actor: str) -> dict[str, str]:
    defaults = check_defaults(data)
    before = get_defaults(session, workspace_id)
    _bump(session, workspace_id, actor)
    row = _settings_row(session, workspace_id)
    row.defaults = defaults
    session.flush()
    audit.record(
        session,
        workspace_id,
        actor,
        "policy_default_change",
        target_type="workspace",
        target_id=workspace_id,
        before=before,
        after=defaults,
    )
    return defaults


def _bump(session: Session, workspace_id: str, actor: str) -> int:
    """One more revision of the workspace's policies, in the caller's transaction. The row is made the first time
    with INSERT … ON CONFLICT DO NOTHING, so two first changes at once (PostgreSQL) do not collide; the UPDATE then
    locks it until commit, so concurrent changes are numbered one after the other."""
    table = table_of(PolicySettings)
    insert_for = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(
        insert_for(table)
        .values(workspace_id=workspace_id, revision=0, defaults={}, updated_by=actor, updated_at=utcnow())
        .on_conflict_do_nothing(index_elements=["workspace_id"])
    )
    session.execute(
        update(table)
        .where(table.c.workspace_id == workspace_id)
        .values(revision=table.c.revision + 1, updated_by=actor, updated_at=utcnow())
    )
    # the row as it now is, in the session's identity map: what revision() and the rule set read from here on
    return _settings_row(session, workspace_id, populate_existing=True).revision


def _settings_row(session: Session, workspace_id: str, *, populate_existing: bool = False) -> PolicySettings:
    """The workspace's policy settings row, once _bump made it."""
    row = session.get(PolicySettings, workspace_id, populate_existing=populate_existing)
    if row is None:
        raise LookupError(f"the policy settings of workspace {workspace_id} were not made")
    return row
