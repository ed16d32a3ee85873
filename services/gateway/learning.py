"""Learning per gateway tool (core/gateway_learning.py has the rules): the mode a call is gated by, a reviewer's
decision on a held call counted into the metrics (services/metrics/service.py, the steps' own states and sequential
tests), the demotion that spot checks bring, a lead's promotion, and the views of the Tools page and GET
/api/metrics/tools.

Every function runs in the caller's transaction; events are pushed after it commits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import gateway_learning as L
from core.coaching.levels import LevelThresholds
from core.coaching.metrics import MetricsState, should_demote
from core.errors import NotFound
from core.regions import region as R
from core.tools import schema_errors
from services.audit import service as audit
from services.audit.service import lock_workspace
from services.gateway import packs
from services.metrics import service as metrics
from services.models.gateway import AgentIdentity, GatewayToolMode
from services.models.metrics import MetricScope
from services.orm import utcnow
from services.policies import service as policies
from services.regions import service as regions
from services.unit_of_work import UnitOfWork

REGION_UNIT = "region"  # Gate.unit of a call whose mode its tool's region set
EVENT = "gateway_tool_changed"  # a gateway tool's mode changed (a lead's promotion, or a demotion by spot checks)


@dataclass(frozen=True)
class Gate:
    """The mode a call of a tool by an identity is gated by, whose it is, and its spot-check rate (None: the
    server's COACH_SPOT_CHECK_RATE)."""

    mode: str
    unit: str | None
    spot_check_rate: float | None
    region: dict[str, Any] | None = None  # the tool's region the call fell in (services.regions.service.held_ref)


def _rows(
    session: Session, workspace_id: str, tool: str, agent: str
) -> tuple[GatewayToolMode | None, GatewayToolMode | None]:
    rows = session.scalars(
        select(GatewayToolMode).where(
            GatewayToolMode.workspace_id == workspace_id,
            GatewayToolMode.tool == tool,
            GatewayToolMode.agent.in_(("", agent)),
        )
    )
    found = {row.agent: row for row in rows}
    return found.get(""), found.get(agent) if agent else None


def gate_for(session: Session, workspace_id: str, tool: str, agent: str) -> Gate:
    """Read when the policy's default would hold a call (one indexed read; allowed and denied calls never ask)."""
    tool_row, agent_row = _rows(session, workspace_id, tool, agent)
    mode, unit = L.mode_for(tool_row.mode if tool_row else None, agent_row.mode if agent_row else None)
    own = agent_row if unit == L.UNIT_AGENT else tool_row
    rate = (
        own.spot_check_rate
        if own is not None and own.spot_check_rate is not None
        else (tool_row.spot_check_rate if tool_row is not None else None)
    )
    return Gate(mode, unit, rate)


def with_region(
    session: Session,
    workspace_id: str,
    tool: str,
    agent: str,
    arguments: dict[str, Any],
    context: dict[str, Any],
    gate: Gate,
) -> Gate:
    """The gate of a call as its tool's regions make it (docs/autonomy.md#regions): in a region, the region's mode
    (a tool pinned to always_review stays pinned; a condition that fails asks); in none, the tool's."""
    match = regions.gateway_match(session, workspace_id, tool, agent, arguments, context)
    if match is None or (match.region is None and match.failed is None):
        return gate
    mode = R.effective_step_mode(gate.mode, match) or gate.mode  # (a gate always has a mode)
    return Gate(
        mode, REGION_UNIT if match.region is not None else gate.unit, gate.spot_check_rate, regions.held_ref(match)
    )


def learned(
    session: Session, workspace_id: str, tools, tool: str, arguments: dict[str, Any], agent: str
) -> dict[str, Any] | None:
    """What the tool's enabled learned rules make of these arguments (services/gateway/packs.py): offered to the
    reviewer as the suggested edit of a held call, and applied to an AUTO call (`auto`) only when the corrected
    arguments still fit the tool's schema and the policy judges the corrected call as it judged the original one
    (held by the workspace default, nothing else)."""
    found = packs.suggest(session, workspace_id, tool, arguments)
    if found is None:
        return None
    spec = tools.get(tool)
    fits = spec is not None and not schema_errors(spec.params_schema, found["params"])
    verdict = (
        policies.evaluate(
            session, workspace_id, policies.call_for(tools, tool, found["params"], step_type="action", agent=agent)
        ).to_dict()
        if fits
        else {}
    )
    return {
        **found,
        "text": L.changes_text(found["rules"]),
        "auto": bool(fits and verdict.get("effect") == "require_review" and verdict.get("default")),
    }


def spot_check(gate: Gate | None, default_rate: float, rng) -> bool:
    """Whether this AUTO call is sampled for a review: at the tool's own rate, else COACH_SPOT_CHECK_RATE."""
    rate = gate.spot_check_rate if gate is not None and gate.spot_check_rate is not None else default_rate
    return rng.random() < rate


# -- counting a decision --------------------------------------------------------------------------------------------


def count(
    uow: UnitOfWork,
    workspace_id: str,
    tool: str,
    agent: str,
    decision: str,
    latency_ms: float,
    *,
    before: Any = None,
    after: Any = None,
    region: dict[str, Any] | None = None,
    at_agent: bool = False,
) -> None:
    """A reviewer's final decision on a held call (approve, edit, reject) counted per tool, per tool for the identity
    and per identity, and, while the tool (or the tool for this identity) is in AUTO, as spot-check evidence, which
    may demote it. An edit (the agent's arguments `before`, the forwarded ones `after`) goes into the tool's
    correction pack. `at_agent`: the answer of the person at the agent to a confirm rule's question
    (services/gateway/confirm.py), counted the same way and also in the agent's confirm scope."""
    session = uow.session
    kind = L.DECISION_KIND[decision]
    lock_workspace(session, workspace_id)  # the mode rows are changed under the workspace's lock, as metric rows are
    if decision == "edit":
        packs.record(session, workspace_id, tool, before, after)
    tool_row, agent_row = _rows(session, workspace_id, tool, agent)
    mode, unit = L.mode_for(tool_row.mode if tool_row else None, agent_row.mode if agent_row else None)
    scopes = L.decision_scopes(tool, agent, unit if mode == L.AUTO else None, at_agent)
    states = metrics.record_decision(session, workspace_id, scopes, kind, latency_ms, levels=scopes[:2])
    for scope in scopes[:2]:
        state, before = states[scope]
        after = state.assess()
        if after.level != before:
            uow.events.add(
                EVENT,
                {
                    "tool": tool,
                    "agent": agent if scope[0] == L.AGENT_TOOL else None,
                    "level": after.level,
                    "previous_level": before,
                    "auto_ready": after.auto_ready,
                },
                workspace=workspace_id,
            )
    if region:  # the call fell in one of the tool's regions: its decision is that region's evidence too
        counted = regions.count(
            session,
            region.get("id"),
            region.get("version"),
            kind,
            latency_ms,
            LevelThresholds(),
            spot_check=region.get("mode") == L.AUTO,
        )
        if counted is not None:
            regions.counted_event(uow, *counted)
            if region.get("mode") == L.AUTO:
                return  # a spot check of an AUTO region: the region's spot-check test, not the tool's
    moded = agent_row if unit == L.UNIT_AGENT else tool_row  # the row that made it AUTO (so there is one)
    if mode == L.AUTO and moded is not None and should_demote(states[scopes[-1]][0]):
        _demote(uow, workspace_id, tool, agent if unit == L.UNIT_AGENT else None, moded)


def _demote(uow: UnitOfWork, workspace_id: str, tool: str, agent: str | None, row: GatewayToolMode) -> None:
    """Spot checks say acceptance fell below the bar: the tool (or the tool for this identity) goes back to coaching,
    its evidence and its spot-check test restart (AUTO-ready again only on new evidence), audited and pushed."""
    evidence_scope, spot_scope = L.unit_scopes(tool, agent)
    held = metrics.held_states(uow.session, workspace_id, [evidence_scope, spot_scope])
    spot = held[spot_scope]
    reason = L.demotion_reason(spot.window.rate, spot.thresholds.auto_acceptance, spot.thresholds.auto_alpha)
    for state in held.values():
        state.restart_evidence()
    row.mode, row.updated_by, row.updated_at = L.COACHING, "system", utcnow()
    after = held[evidence_scope].assess()
    recorded = audit.record(
        uow.session,
        workspace_id,
        "system",
        "gateway_demotion",
        target_type="gateway_tool",
        target_id=_target(tool, agent),
        before={"mode": L.AUTO},
        after={"mode": L.COACHING, "tool": tool, "agent": agent, "reason": reason, "spot_check_rate": spot.window.rate},
    )
    uow.events.add(
        EVENT,
        {
            "tool": tool,
            "agent": agent,
            "mode": L.COACHING,
            "previous_mode": L.AUTO,
            "level": after.level,
            "auto_ready": after.auto_ready,
            "reason": reason,
            "audit_seq": recorded.seq,
        },
        workspace=workspace_id,
    )


def _target(tool: str, agent: str | None) -> str:
    return tool if agent is None else L.agent_tool_key(tool, agent)


# -- a lead's choice ------------------------------------------------------------------------------------------------


def set_mode(
    uow: UnitOfWork,
    workspace_id: str,
    tool: str,
    mode: str,
    *,
    agent: str | None = None,
    force: bool = False,
    reason: str | None = None,
    spot_check_rate: float | None = None,
    keep_rate: bool = True,
    actor: str = "system",
) -> dict[str, Any]:
    """Promote a tool (or a tool for one identity) to AUTO when its evidence says AUTO-ready (409 otherwise, unless
    an admin forces it with a reason), set it back to coaching, or pin it to always_review; audited and pushed.
    Promotion starts the spot-check test afresh. `keep_rate`: a rate not given keeps the one set before."""
    session = uow.session
    rate = L.check_rate(spot_check_rate)
    lock_workspace(session, workspace_id)
    row = session.scalar(
        select(GatewayToolMode).where(
            GatewayToolMode.workspace_id == workspace_id,
            GatewayToolMode.tool == tool,
            GatewayToolMode.agent == (agent or ""),
        )
    )
    before = row.mode if row is not None else L.COACHING
    reason = L.check_force(force and mode == L.AUTO and before != L.AUTO, reason)
    evidence_scope, spot_scope = L.unit_scopes(tool, agent)
    level = metrics.load(session, workspace_id, *evidence_scope).assess()
    L.check_mode(before, mode, auto_ready=level.auto_ready, force=force)
    if row is None:
        row = GatewayToolMode(workspace_id=workspace_id, tool=tool, agent=agent or "", mode=L.COACHING)
        session.add(row)
    if rate is not None or not keep_rate:
        row.spot_check_rate = rate
    row.updated_by, row.updated_at = actor, utcnow()
    if before != mode:
        row.mode = mode
        if mode == L.AUTO:  # the demotion test watches the spot checks from this promotion on
            metrics.held_states(session, workspace_id, [spot_scope])[spot_scope].restart_evidence()
        action = {L.AUTO: "gateway_promotion", L.ALWAYS_REVIEW: "gateway_pin"}.get(mode, "gateway_demotion")
        recorded = audit.record(
            session,
            workspace_id,
            actor,
            action,
            target_type="gateway_tool",
            target_id=_target(tool, agent),
            before={"mode": before},
            after={
                "mode": mode,
                "tool": tool,
                "agent": agent,
                "forced": force,
                "level": level.level,
                "auto_ready": level.auto_ready,
                "spot_check_rate": row.spot_check_rate,
                **({"reason": reason} if reason else {}),
            },
        )
        uow.events.add(
            EVENT,
            {
                "tool": tool,
                "agent": agent,
                "mode": mode,
                "previous_mode": before,
                "level": level.level,
                "auto_ready": level.auto_ready,
                "reason": f"set to {mode} by {actor}" + (" (forced)" if force else ""),
                "audit_seq": recorded.seq,
            },
            workspace=workspace_id,
        )
    return {
        "tool": tool,
        "agent": agent,
        "mode": row.mode,
        "previous_mode": before,
        "level": level.level,
        "auto_ready": level.auto_ready,
        "spot_check_rate": row.spot_check_rate,
    }


def check_agent(session: Session, workspace_id: str, agent: str) -> None:
    found = session.scalar(
        select(AgentIdentity.id).where(AgentIdentity.workspace_id == workspace_id, AgentIdentity.name == agent).limit(1)
    )
    if found is None:
        raise NotFound(f"this workspace has no agent identity named {agent!r}", details={"agent": [agent]})


def known(session: Session, workspace_id: str, tool: str) -> bool:
    """Whether a tool has decisions or a mode here (a tool that is not listed now may still be promoted back)."""
    return (
        session.scalar(
            select(MetricScope.id)
            .where(MetricScope.workspace_id == workspace_id, MetricScope.scope == L.TOOL, MetricScope.key == tool)
            .limit(1)
        )
        is not None
        or session.scalar(
            select(GatewayToolMode.id)
            .where(GatewayToolMode.workspace_id == workspace_id, GatewayToolMode.tool == tool)
            .limit(1)
        )
        is not None
    )


# -- views ----------------------------------------------------------------------------------------------------------


def views(session: Session, workspace_id: str, listed: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Each gateway tool (listed by the workspace's servers now, or with decisions or a mode) with its evidence, its
    mode, its spot checks and the same per identity; a few queries, one row per scope (no scan of decisions)."""
    scopes = {
        scope: metrics.load_many(session, workspace_id, scope)
        for scope in (L.TOOL, L.AGENT_TOOL, L.TOOL_SPOT, L.AGENT_TOOL_SPOT, L.AGENT_CONFIRM)
    }
    modes: dict[tuple[str, str], GatewayToolMode] = {
        (r.tool, r.agent): r
        for r in session.scalars(select(GatewayToolMode).where(GatewayToolMode.workspace_id == workspace_id))
    }
    per_agent: dict[str, dict[str, MetricsState]] = {}
    for key, state in scopes[L.AGENT_TOOL].items():
        agent, tool = L.split_agent_tool_key(key)
        per_agent.setdefault(tool, {})[agent] = state
    for tool, agent in modes:
        if agent:
            per_agent.setdefault(tool, {}).setdefault(agent, MetricsState.from_dict(None))
    pack_views = packs.views(session, workspace_id)
    names = sorted(set(listed) | set(scopes[L.TOOL]) | {t for t, _ in modes} | set(per_agent))
    out = []
    for tool in names:
        row = modes.get((tool, ""))
        tool_mode = row.mode if row is not None else L.COACHING
        item = {
            "tool": tool,
            "source": "gateway",
            "listed": tool in set(listed),
            **(scopes[L.TOOL].get(tool) or MetricsState.from_dict(None)).snapshot(),
            "mode": tool_mode,
            "spot_check_rate": row.spot_check_rate if row is not None else None,
            "spot_checks": _snap(scopes[L.TOOL_SPOT].get(tool)),
            "pack": pack_views.get(tool),
            "agents": {},
        }
        for agent, state in sorted(per_agent.get(tool, {}).items()):
            own = modes.get((tool, agent))
            own_mode = own.mode if own is not None else L.COACHING
            effective, unit = L.mode_for(tool_mode, own_mode)
            item["agents"][agent] = {
                **state.snapshot(),
                "mode": own_mode,
                "effective_mode": effective,
                "mode_of": unit,
                "spot_check_rate": own.spot_check_rate if own else None,
                "spot_checks": _snap(scopes[L.AGENT_TOOL_SPOT].get(L.agent_tool_key(tool, agent))),
                # of its decisions, those the person at the agent made (a confirm rule's question)
                "at_agent": _snap(scopes[L.AGENT_CONFIRM].get(L.agent_tool_key(tool, agent))),
            }
        out.append(item)
    return out


def identities(session: Session, workspace_id: str) -> dict[str, dict[str, Any]]:
    """Each agent identity's decisions across its tools."""
    return {
        name: state.snapshot() for name, state in sorted(metrics.load_many(session, workspace_id, L.IDENTITY).items())
    }


def _snap(state: MetricsState | None) -> dict[str, Any] | None:
    return state.snapshot() if state is not None else None
