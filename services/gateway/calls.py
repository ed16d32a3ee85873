"""One agent's `tools/call` through Coach: judged by the policy with the agent's identity, then allowed (forwarded to
the upstream MCP server, or run here: an exposed built-in, builtins.py), denied, or held for a review. Every function
here is blocking and runs in a request's (green) thread, never on the MCP loop (services/gateway/server.py hands it
over).

A held call is a row (GatewayCall) beside an approval of kind `gateway` (open_review), so it
survives a restart and shows in the queue. Its life: `held` until the approval is final; approved, the first asker
claims it (`held` -> `forwarding`, one conditional UPDATE, so a call runs at most once per approval), forwards it with
the approval's params (an edit's, schema-checked when it was made) and stores the capped result (`done`/`failed`);
rejected, `rejected` with the reviewer's feedback. Whoever gets the outcome first (the waiting request, or the same call
sent again) marks it delivered; the same call after that is a new call. services/gateway/held.py follows a held call
from its review to its answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import approvals as A
from core import gateway as G
from core import gateway_confirm as GC
from core import gateway_learning as L
from core.tools import ToolError, schema_errors
from services.approvals import service as approvals
from services.audit import service as audit
from services.db import retrying
from services.gateway import builtins, learning
from services.gateway.identities import Agent
from services.models.approvals import Approval
from services.models.gateway import GatewayCall
from services.notifications import outbox as notification_outbox
from services.notifier import jsonable
from services.orm import utcnow
from services.policies import service as policies
from services.unit_of_work import UnitOfWork

HELD, FORWARDING, DONE, FAILED, REJECTED, CANCELLED = "held", "forwarding", "done", "failed", "rejected", "cancelled"
# (GatewayCall.state; cancelled: its identity was revoked while it was held, held.end_for_revoked)
T = TypeVar("T")


@dataclass(frozen=True)
class Outcome:
    """What a call came to now: a result for the agent, or a held call (its id) still waiting for a decision."""

    result: dict[str, Any] | None = None
    held: str | None = None
    approval_id: str | None = None  # the held call's review: its decision wakes the waiting request (server.py)
    confirm: dict[str, Any] | None = None  # a confirm rule's question to open and ask (services/gateway/confirm.ask)
    input_required: Any = None  # 2026-07-28: the question as an InputRequiredResult (confirm.ask)


def listing(svc, agent: Agent) -> list[dict[str, Any]]:
    """The workspace's MCP servers' tools as `<server>.<tool>` and its exposed built-ins as `coach.<tool>`
    (services/gateway/builtins.py), with their titles, input and output schemas and annotations."""
    tools = builtins.gateway_tools(svc, agent.workspace_id)
    out = []
    for name in sorted(tools):
        tool = tools[name]
        spec: dict[str, Any] = {"name": name, "description": tool.description, "inputSchema": tool.params_schema}
        for key, value in (
            ("title", getattr(tool, "title", None)),
            ("outputSchema", getattr(tool, "output_schema", None)),
            ("annotations", tool.annotations),
        ):
            if value:
                spec[key] = value
        out.append(spec)
    return out


def open_review(
    uow: UnitOfWork,
    workspace_id: str,
    agent: str,
    tool: str,
    params: dict,
    policy: dict | None,
    spot_check: bool = False,
) -> Approval:
    """A review of an agent's call held by the gateway: an approval (kind `gateway`) of the workspace, not of an
    execution, decided like a tool call's (approve, edit, reject) by services/decisions/approvals.py; the held call
    reads the decision from the row. Who approves: one lead (the default spec); no deadline (the agent asks again).
    `spot_check`: the tool is in AUTO and this call was sampled for a review (its message says so)."""
    spec = A.ApprovalSpec()
    reason = ((policy or {}).get("rule") or {}).get("reason") if isinstance(policy, dict) else None
    message = (
        f"Spot check of {tool} in AUTO: agent {agent} calls it"
        if spot_check
        else f"Agent {agent} calls {tool}" + (f": {reason}" if reason else "")
    )
    learned = (policy or {}).get("learned") if isinstance(policy, dict) else None
    if learned:  # the tool's learned rules (its correction pack, enabled by a lead): the suggested edit
        message += f". Learned corrections suggest: {learned['text']}"
    approval = Approval(
        workspace_id=workspace_id,
        execution_id=None,
        step_id=tool[:64],
        kind="gateway",
        agent=agent,
        status=A.PENDING,
        message=message,
        tool=tool,
        params=params,
        policy=jsonable(policy),
        approvers=spec.approvers,
        quorum=spec.quorum,
        separate_duties=False,
        started_by=None,
        decisions=[],
        replies={},
        timeout_s=None,
        on_timeout=spec.on_timeout,
        deadline=None,
        due_at=None,
        created_at=utcnow(),
    )
    uow.session.add(approval)
    uow.events.add("approval_requested", approvals.view(approval), workspace=workspace_id)
    notification_outbox.approval_opened(uow.session, approval)
    return approval


def _max_bytes(svc) -> int:
    return max(1024, int(svc.settings.gateway_result_max_kb * 1024))


def audit_call(
    session,
    agent: Agent,
    tool: str,
    arguments: Any,
    decision: str,
    *,
    who: str,
    call_id: str | None = None,
    rule: dict | None = None,
    result_bytes: int | None = None,
    result: str = "ok",
    **more: Any,
) -> None:
    after = {
        "identity": agent.name,
        "agent_id": agent.id,
        "tool": tool,
        "arguments": arguments,
        "decision": decision,
        "who": who,
        "result_bytes": result_bytes,
        **more,
    }
    if rule is not None:
        after["rule"] = {k: rule.get(k) for k in ("id", "name", "reason")}
    audit.record(
        session,
        agent.workspace_id,
        f"agent:{agent.name}",
        "gateway_call",
        target_type="gateway_call",
        target_id=call_id or tool,
        after=after,
        result=result,
    )


def transaction(svc, what: str, fn: Callable[[Session], T]) -> T:
    """fn(session) in a transaction of its own, tried again on a transient error (a deadlock, SQLite busy): no
    request of Coach's shows one. Only database work goes in here: a forwarding is never tried again."""

    def attempt() -> T:
        with svc.db.transaction() as session:
            return fn(session)

    return retrying(attempt, tries=4, what=what)


def command(svc, what: str, fn: Callable[[UnitOfWork], T]) -> T:
    """fn(uow) in a unit of work of its own (services/unit_of_work.py: the events it raises go out once it commits),
    tried again on a transient error with a new one, as `transaction`."""

    def attempt() -> T:
        with svc.command() as uow:
            return fn(uow)

    return retrying(attempt, tries=4, what=what)


@dataclass
class Judged:
    """A new call's verdict, the gate its tool's learned mode (and region) make, its learned corrections."""

    verdict: dict[str, Any]
    gate: learning.Gate | None
    fixed: dict[str, Any] | None


def begin(
    svc,
    agent: Agent,
    tool_name: str,
    arguments: dict[str, Any],
    meta: dict[str, Any] | None,
    *,
    elicit: str | None = None,
    confirmed: bool = False,
    fallback_why: str = "the agent's client declared no elicitation capability",
) -> Outcome:
    """Judge a new call (or find the same call held before) and answer what can be answered now. `elicit`: None when
    the agent's client cannot ask its user (a `confirm` rule's fallback applies then), else why it can (the era);
    `confirmed`: the person at the agent has just said yes to this call (confirm.py), so a confirm rule asks no more."""
    tool = builtins.gateway_tool(svc, agent.workspace_id, tool_name)
    if tool is None:
        return Outcome(G.error_result(f"Unknown tool {tool_name!r}: this workspace's tools are listed by tools/list."))
    if not isinstance(arguments, dict):
        arguments = {}
    problems = schema_errors(tool.params_schema, arguments)
    if problems:
        listed = "; ".join(f"{k}: {', '.join(v)}" for k, v in problems.items())
        return Outcome(G.error_result(f"The arguments do not fit {tool_name}'s input schema: {listed}"))
    key = G.call_key(tool_name, arguments, G.idempotency_key(meta))
    tools = {tool_name: tool}  # what the policy and the learned rules look the call's tool up in

    def judge() -> tuple[str, str | None] | Judged:
        with svc.db.read() as session:  # no write lock for the judging: most calls are allowed or denied
            open_call = _open_call(session, agent, key)
            if open_call is not None:
                return open_call
            call = policies.call_for(tools, tool_name, arguments, step_type="action", agent=agent.name)
            verdict = policies.evaluate(session, agent.workspace_id, call).to_dict()
            # the tool's learned mode matters only where the workspace default holds the call (core/gateway_learning)
            gate = (
                learning.gate_for(session, agent.workspace_id, tool_name, agent.name)
                if (verdict["effect"] == "require_review" and verdict.get("default")) or verdict["effect"] == "confirm"
                else None
            )
            if gate is not None:  # the tool's regions, where it has some, set the mode of this call
                gate = learning.with_region(
                    session, agent.workspace_id, tool_name, agent.name, arguments, call.context(), gate
                )
            fixed = (
                learning.learned(session, agent.workspace_id, tools, tool_name, arguments, agent.name)
                if verdict["effect"] == "require_review"
                else None
            )  # learned corrections: suggested, or applied
            return Judged(verdict, gate, fixed)

    judged = retrying(judge, tries=4, what="judging a gateway call")
    if not isinstance(judged, Judged):  # the same call again, held (call id, review id): its decision answers it
        return Outcome(held=judged[0], approval_id=judged[1])
    verdict, gate, fixed = judged.verdict, judged.gate, judged.fixed
    rule = verdict.get("rule")
    if verdict["effect"] == "confirm" and confirmed:  # the person at the agent said yes: it runs as allowed
        verdict = {**verdict, "effect": "allow"}
    action = L.gate(
        verdict["effect"],
        bool(verdict.get("default")),
        gate.mode if gate else L.COACHING,
        lambda: learning.spot_check(gate, svc.settings.spot_check_rate, svc.runner.rng),
    )
    # (forwarded unattended only in AUTO: a gate says so)
    if action == L.FORWARD and verdict["effect"] in ("require_review", "confirm") and gate is not None:
        return Outcome(
            _forward_auto(
                svc, agent, tool, tool_name, arguments, key, gate, rule, fixed if fixed and fixed["auto"] else None
            )
        )
    if verdict["effect"] == "confirm":
        if elicit is not None:  # ask the person at the agent (services/gateway/confirm.ask, in the client's era)
            return Outcome(
                confirm={
                    "tool": tool,
                    "tool_name": tool_name,
                    "arguments": arguments,
                    "key": key,
                    "verdict": verdict,
                    "gate": gate,
                    "action": action,
                    "era": elicit,
                    "meta": meta,
                }
            )
        # nobody at the agent can be asked: the rule's fallback (require_review or deny), said in the verdict
        verdict = GC.fallen_back(verdict, fallback_why)
        if verdict["effect"] == "require_review":
            action = L.HOLD if action != L.SPOT_CHECK else action
    fell = verdict.get("confirm_fallback")
    if verdict["effect"] == "deny":
        transaction(
            svc,
            "auditing a gateway call",
            lambda session: audit_call(
                session,
                agent,
                tool_name,
                arguments,
                "deny",
                who="policy",
                rule=rule,
                result="denied",
                **({"confirm_fallback": fell} if fell else {}),
            ),
        )
        text = G.denied_text(tool_name, verdict) + (f" ({fell})" if fell else "")
        return Outcome(G.error_result(text, decision="denied", rule=rule))
    if verdict["effect"] == "require_review":
        spot = action == L.SPOT_CHECK

        def hold(uow: UnitOfWork) -> tuple[str, str | None]:
            session = uow.session
            open_call = _open_call(session, agent, key)  # the same call, sent twice at once: one review
            if open_call is not None:
                return open_call
            held_verdict = {
                **verdict,
                **({"learned": fixed} if fixed else {}),
                **({"region": gate.region} if gate is not None and gate.region else {}),
            }
            approval = open_review(
                uow, agent.workspace_id, agent.name, tool_name, arguments, held_verdict, spot_check=spot
            )
            row = GatewayCall(
                workspace_id=agent.workspace_id,
                agent_id=agent.id,
                agent_name=agent.name,
                tool=tool_name,
                arguments=arguments,
                call_key=key,
                state=HELD,
                approval_id=approval.id,
                policy=verdict,
            )
            session.add(row)
            session.flush()
            noted: dict[str, Any] = {"purpose": "spot_check"} if spot else {}
            if fell:
                noted["confirm_fallback"] = fell
            audit_call(
                session,
                agent,
                tool_name,
                arguments,
                "require_review",
                who="policy",
                call_id=row.id,
                rule=rule,
                result="held",
                approval_id=approval.id,
                **noted,
            )
            uow.events.add(
                "tool_call_pending_review",
                {
                    "source": "gateway",
                    "kind": "gateway",
                    "approval_id": approval.id,
                    "call_id": row.id,
                    "agent": agent.name,
                    "tool": tool_name,
                    "params": arguments,
                    "policy": verdict,
                    "purpose": "spot_check" if spot else "review",
                    "suggested_params": fixed["params"] if fixed else None,
                },
                workspace=agent.workspace_id,
            )
            return row.id, approval.id

        held, approval_id = command(svc, "holding a gateway call", hold)
        return Outcome(held=held, approval_id=approval_id)
    result, full = forward(svc, tool, arguments, G.upstream_key(agent.id, key))
    transaction(
        svc,
        "auditing a gateway call",
        lambda session: audit_call(
            session,
            agent,
            tool_name,
            arguments,
            "allow",
            who="policy",
            rule=rule,
            result_bytes=full,
            result="error" if result.get("isError") else "ok",
        ),
    )
    return Outcome(result)


def _forward_auto(
    svc,
    agent: Agent,
    tool,
    tool_name: str,
    arguments: dict[str, Any],
    key: str,
    gate: learning.Gate,
    rule: dict | None,
    fixed: dict[str, Any] | None,
) -> dict[str, Any]:
    """A call the workspace default would hold, of a tool in AUTO (and not sampled): forwarded unattended, and the
    result says so (`_meta["io.coach/gateway"].decision == "auto"`); with the arguments corrected by the tool's
    learned rules (`fixed`), and the result says that too."""
    sent = fixed["params"] if fixed else arguments
    result, full = forward(svc, tool, sent, G.upstream_key(agent.id, key))
    result = L.with_status(
        L.stated(result, fixed, G.STATUS_META) if fixed else result,
        G.STATUS_META,
        {
            "decision": "auto",
            "mode": gate.mode,
            "mode_of": gate.unit,
            **({"region": gate.region["name"], "region_id": gate.region["id"]} if gate.region else {}),
        },
    )
    transaction(
        svc,
        "auditing a gateway call",
        lambda session: audit_call(
            session,
            agent,
            tool_name,
            sent,
            "auto",
            who="autonomy",
            rule=rule,
            result_bytes=full,
            result="error" if result.get("isError") else "ok",
            mode_of=gate.unit,
            **({"region_id": gate.region["id"]} if gate.region else {}),
            **({"original_arguments": arguments, "applied_corrections": fixed["rules"]} if fixed else {}),
        ),
    )
    return result


def _open_call(session: Session, agent: Agent, key: str) -> tuple[str, str | None] | None:
    """(id, approval id) of the same call held before and not yet answered, if any."""
    row = session.execute(
        select(GatewayCall.id, GatewayCall.approval_id)
        .where(GatewayCall.agent_id == agent.id, GatewayCall.call_key == key, GatewayCall.delivered_at.is_(None))
        .order_by(GatewayCall.created_at.desc())
        .limit(1)
    ).first()
    return (row.id, row.approval_id) if row is not None else None


def forward(svc, tool, arguments: dict[str, Any], idempotency: str) -> tuple[dict[str, Any], int]:
    """The upstream server's result (capped) and its full size; a server that fails answers the agent with an error
    result saying so. An exposed built-in runs here, in the workspace's context (builtins.run)."""
    if isinstance(tool, builtins.ExposedTool):
        return G.cap(builtins.run(svc, tool, arguments, idempotency), _max_bytes(svc))
    try:
        result = svc.mcp.call(
            tool.server,
            tool.tool,
            arguments,
            timeout=svc.settings.mcp_call_timeout_s,
            meta={"idempotencyKey": idempotency},
        )
    except ToolError as exc:
        result = G.error_result(f"Coach could not complete the call of {tool.name}: {exc}", decision="upstream_error")
    return G.cap(result, _max_bytes(svc))
