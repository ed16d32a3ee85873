"""One agent's `tools/call` through Coach: judged by the policy with the agent's identity, then allowed (forwarded to
the upstream MCP server, or run here: an exposed built-in, builtins.py), denied, or held for a review. Every function
here is blocking and runs in a request's (green) thread, never on the MCP loop (services/gateway/server.py hands it
over).

A held call is a row (GatewayCall) beside an approval of kind `gateway` (open_review), so it
survives a restart and shows in the queue. Its life: `held` until the approval is final; approved, the first asker
claims it (`held` -> `forwarding`, one conditional UPDATE, so a call runs at most once per approval), forwards it with
the approval's params (an edit's, schema-checked when it was made) and stores the capped result (`done`/`failed`);
rejected, `rejected` with the reviewer's feedback. Whoever gets the outcome first (the waiting request, or the same call
sent again) marks it delivered; the same call after that is a new call.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core import approvals as A, gateway as G, gateway_learning as L
from core.tools import ToolError, schema_errors
from services.approvals import service as approvals
from services.approvals.models import Approval
from services.audit import service as audit
from services.db import retrying
from services.gateway import builtins, learning
from services.gateway.identities import Agent
from services.gateway.models import GatewayCall
from services.notifications import outbox as notification_outbox
from services.notifier import Events, jsonable
from services.orm import utcnow
from services.policies import service as policies

HELD, FORWARDING, DONE, FAILED, REJECTED = "held", "forwarding", "done", "failed", "rejected"
T = TypeVar("T")


@dataclass(frozen=True)
class Outcome:
    """What a call came to now: a result for the agent, or a held call (its id) still waiting for a decision."""

    result: dict[str, Any] | None = None
    held: str | None = None


def listing(svc, agent: Agent) -> list[dict[str, Any]]:
    """The workspace's MCP servers' tools as `<server>.<tool>` and its exposed built-ins as `coach.<tool>`
    (services/gateway/builtins.py), with their titles, input and output schemas and annotations."""
    tools = builtins.gateway_tools(svc, agent.workspace_id)
    out = []
    for name in sorted(tools):
        tool = tools[name]
        spec: dict[str, Any] = {"name": name, "description": tool.description, "inputSchema": tool.params_schema}
        for key, value in (("title", getattr(tool, "title", None)), ("outputSchema", getattr(tool, "output_schema", None)),
                           ("annotations", tool.annotations)):
            if value:
                spec[key] = value
        out.append(spec)
    return out


def open_review(session: Session, workspace_id: str, agent: str, tool: str, params: dict, policy: dict | None,
                 events: Events, spot_check: bool = False) -> Approval:
    """A review of an agent's call held by the gateway: an approval (kind `gateway`) of the workspace, not of an
    execution, decided like a tool call's (approve, edit, reject) by services/approvals/decisions.py; the held call reads
    the decision from the row. Who approves: one lead (the default spec); no deadline (the agent asks again).
    `spot_check`: the tool is in AUTO and this call was sampled for a review (its message says so)."""
    spec = A.ApprovalSpec()
    reason = ((policy or {}).get("rule") or {}).get("reason") if isinstance(policy, dict) else None
    message = (f"Spot check of {tool} in AUTO: agent {agent} calls it" if spot_check
               else f"Agent {agent} calls {tool}" + (f": {reason}" if reason else ""))
    learned = (policy or {}).get("learned") if isinstance(policy, dict) else None
    if learned:  # the tool's learned rules (its correction pack, enabled by a lead): the suggested edit
        message += f". Learned corrections suggest: {learned['text']}"
    approval = Approval(workspace_id=workspace_id, execution_id=None, step_id=tool[:64], kind="gateway", agent=agent,
                        status=A.PENDING, message=message, tool=tool, params=params, policy=jsonable(policy),
                        approvers=spec.approvers, quorum=spec.quorum, separate_duties=False, started_by=None,
                        decisions=[], replies={}, timeout_s=None, on_timeout=spec.on_timeout, deadline=None,
                        due_at=None, created_at=utcnow())
    session.add(approval)
    events.add("approval_requested", approvals.view(approval), workspace=workspace_id)
    notification_outbox.approval_opened(session, approval)
    return approval


def _max_bytes(svc) -> int:
    return max(1024, int(svc.settings.gateway_result_max_kb * 1024))


def _audit(session, agent: Agent, tool: str, arguments: Any, decision: str, *, who: str, call_id: str | None = None,
           rule: dict | None = None, result_bytes: int | None = None, result: str = "ok", **more: Any) -> None:
    after = {"identity": agent.name, "agent_id": agent.id, "tool": tool, "arguments": arguments,
             "decision": decision, "who": who, "result_bytes": result_bytes, **more}
    if rule is not None:
        after["rule"] = {k: rule.get(k) for k in ("id", "name", "reason")}
    audit.record(session, agent.workspace_id, f"agent:{agent.name}", "gateway_call", target_type="gateway_call",
                 target_id=call_id or tool, after=after, result=result)


def _tx(svc, what: str, fn: Callable[[Session], T]) -> T:
    """fn(session) in a transaction of its own, tried again on a transient error (a deadlock, SQLite busy): no
    request of Coach's shows one. Only database work goes in here: a forwarding is never tried again."""
    def attempt() -> T:
        with svc.db.transaction() as session:
            return fn(session)
    return retrying(attempt, tries=4, what=what)


def begin(svc, agent: Agent, tool_name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> Outcome:
    """Judge a new call (or find the same call held before) and answer what can be answered now."""
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

    def judge() -> tuple[str | None, dict[str, Any] | None, learning.Gate | None, dict[str, Any] | None]:
        with svc.db.read() as session:  # no write lock for the judging: most calls are allowed or denied
            open_call = _open_call(session, agent, key)
            if open_call is not None:
                return open_call, None, None, None
            call = policies.call_for(tools, tool_name, arguments, step_type="action", agent=agent.name)
            verdict = policies.evaluate(session, agent.workspace_id, call).to_dict()
            # the tool's learned mode matters only where the workspace default holds the call (core/gateway_learning)
            gate = learning.gate_for(session, agent.workspace_id, tool_name, agent.name) \
                if verdict["effect"] == "require_review" and verdict.get("default") else None
            fixed = learning.learned(session, agent.workspace_id, tools, tool_name, arguments, agent.name) \
                if verdict["effect"] == "require_review" else None  # learned corrections: suggested, or applied
            return None, verdict, gate, fixed
    open_call, verdict, gate, fixed = retrying(judge, tries=4, what="judging a gateway call")
    if open_call is not None:
        return Outcome(held=open_call)  # the same call again: its decision (settle) answers it
    rule = verdict.get("rule")
    action = L.gate(verdict["effect"], bool(verdict.get("default")), gate.mode if gate else L.COACHING,
                    lambda: learning.spot_check(gate, svc.settings.spot_check_rate, svc.runner.rng))
    if action == L.FORWARD and verdict["effect"] == "require_review":
        return Outcome(_forward_auto(svc, agent, tool, tool_name, arguments, key, gate, rule,
                                     fixed if fixed and fixed["auto"] else None))
    if verdict["effect"] == "deny":
        _tx(svc, "auditing a gateway call", lambda session: _audit(
            session, agent, tool_name, arguments, "deny", who="policy", rule=rule, result="denied"))
        return Outcome(G.error_result(G.denied_text(tool_name, verdict), decision="denied", rule=rule))
    if verdict["effect"] == "require_review":
        spot = action == L.SPOT_CHECK

        def hold(session: Session) -> tuple[str, Events | None]:
            open_call = _open_call(session, agent, key)  # the same call, sent twice at once: one review
            if open_call is not None:
                return open_call, None
            events = Events()
            approval = open_review(session, agent.workspace_id, agent.name, tool_name, arguments,
                                   {**verdict, "learned": fixed} if fixed else verdict, events, spot_check=spot)
            row = GatewayCall(workspace_id=agent.workspace_id, agent_id=agent.id, agent_name=agent.name,
                              tool=tool_name, arguments=arguments, call_key=key, state=HELD, approval_id=approval.id,
                              policy=verdict)
            session.add(row)
            session.flush()
            _audit(session, agent, tool_name, arguments, "require_review", who="policy", call_id=row.id, rule=rule,
                   result="held", approval_id=approval.id, **({"purpose": "spot_check"} if spot else {}))
            events.add("tool_call_pending_review", {
                "source": "gateway", "kind": "gateway", "approval_id": approval.id, "call_id": row.id,
                "agent": agent.name, "tool": tool_name, "params": arguments, "policy": verdict,
                "purpose": "spot_check" if spot else "review", "suggested_params": fixed["params"] if fixed else None},
                workspace=agent.workspace_id)
            return row.id, events
        held, events = _tx(svc, "holding a gateway call", hold)
        if events is not None:
            svc.notifier.send(events)
        return Outcome(held=held)
    result, full = _forward(svc, tool, arguments, f"gateway:{key}")
    _tx(svc, "auditing a gateway call", lambda session: _audit(
        session, agent, tool_name, arguments, "allow", who="policy", rule=rule, result_bytes=full,
        result="error" if result.get("isError") else "ok"))
    return Outcome(result)


def _forward_auto(svc, agent: Agent, tool, tool_name: str, arguments: dict[str, Any], key: str, gate: learning.Gate,
                  rule: dict | None, fixed: dict[str, Any] | None) -> dict[str, Any]:
    """A call the workspace default would hold, of a tool in AUTO (and not sampled): forwarded unattended, and the
    result says so (`_meta["io.coach/gateway"].decision == "auto"`); with the arguments corrected by the tool's
    learned rules (`fixed`), and the result says that too."""
    sent = fixed["params"] if fixed else arguments
    result, full = _forward(svc, tool, sent, f"gateway:{key}")
    result = L.with_status(L.stated(result, fixed, G.STATUS_META) if fixed else result, G.STATUS_META,
                           {"decision": "auto", "mode": gate.mode, "mode_of": gate.unit})
    _tx(svc, "auditing a gateway call", lambda session: _audit(
        session, agent, tool_name, sent, "auto", who="autonomy", rule=rule, result_bytes=full,
        result="error" if result.get("isError") else "ok", mode_of=gate.unit,
        **({"original_arguments": arguments, "applied_corrections": fixed["rules"]} if fixed else {})))
    return result


def _open_call(session: Session, agent: Agent, key: str) -> str | None:
    return session.scalar(select(GatewayCall.id).where(
        GatewayCall.agent_id == agent.id, GatewayCall.call_key == key, GatewayCall.delivered_at.is_(None))
        .order_by(GatewayCall.created_at.desc()).limit(1))


def _forward(svc, tool, arguments: dict[str, Any], idempotency: str) -> tuple[dict[str, Any], int]:
    """The upstream server's result (capped) and its full size; a server that fails answers the agent with an error
    result saying so. An exposed built-in runs here, in the workspace's context (builtins.run)."""
    if isinstance(tool, builtins.ExposedTool):
        return G.cap(builtins.run(svc, tool, arguments, idempotency), _max_bytes(svc))
    try:
        result = svc.mcp.call(tool.server, tool.tool, arguments, timeout=svc.settings.mcp_call_timeout_s,
                              meta={"idempotencyKey": idempotency})
    except ToolError as exc:
        result = G.error_result(f"Coach could not complete the call of {tool.name}: {exc}", decision="upstream_error")
    return G.cap(result, _max_bytes(svc))


def settle(svc, agent: Agent, call_id: str) -> dict[str, Any] | None:
    """The held call's answer once its approval is final (forwarding it first when approved and nobody has), or
    None while it waits (or while another request forwards it). A forwarding that outlived every time-out (its server
    process was killed) answers that it was interrupted: it is never sent again."""
    def waiting() -> bool:
        with svc.db.read() as session:  # polled every half second while the agent waits: no write lock for "not yet"
            row = session.get(GatewayCall, call_id)
            if row is not None and row.state == HELD:
                return session.scalar(select(Approval.status).where(Approval.id == row.approval_id)) == A.PENDING
            return row is not None and row.state == FORWARDING and not _interrupted(svc, row)
    if retrying(waiting, tries=4, what="reading a held gateway call"):
        return None
    step = _tx(svc, "settling a gateway call", lambda session: _settle(svc, session, agent, call_id))
    if step.result is not None or step.forward is None:
        return step.result
    tool_name, params, edited, who, approval_id = step.forward
    tool = builtins.gateway_tool(svc, agent.workspace_id, tool_name)
    if tool is None:
        result, full = G.error_result(f"{tool_name} is no longer one of this workspace's tools; the approved call "
                                      f"did not run."), 0
    else:
        result, full = _forward(svc, tool, params, f"gateway:{call_id}")

    def store(session: Session) -> None:
        row = session.get(GatewayCall, call_id, populate_existing=True)
        row.state = FAILED if result.get("isError") else DONE
        row.result, row.result_bytes, row.finished_at, row.delivered_at = result, full, utcnow(), utcnow()
        _audit(session, agent, tool_name, params, "edit" if edited else "approve", who=who, call_id=call_id,
               result_bytes=full, result="error" if result.get("isError") else "ok", approval_id=approval_id,
               **({"original_arguments": row.arguments} if edited else {}))
    _tx(svc, "storing a gateway call's result", store)
    return result


@dataclass(frozen=True)
class _Step:
    result: dict[str, Any] | None = None  # the answer now (None and no forward: still waiting)
    forward: tuple | None = None  # claimed: (tool, params, edited, who, approval id) to forward


def _settle(svc, session: Session, agent: Agent, call_id: str) -> _Step:
    row = session.get(GatewayCall, call_id)
    if row is None:
        return _Step(G.error_result("Coach no longer knows this held call."))
    if row.state in (DONE, FAILED, REJECTED):
        if row.delivered_at is None:
            row.delivered_at = utcnow()
        return _Step(row.result)
    if row.state == FORWARDING:
        if not _interrupted(svc, row):
            return _Step()
        row.state, row.finished_at, row.delivered_at = FAILED, utcnow(), utcnow()
        row.result = G.error_result(f"The approved call of {row.tool} was being sent when Coach stopped; Coach "
                                    f"cannot tell whether it ran, and does not send it again.", decision="interrupted")
        _audit(session, agent, row.tool, row.arguments, "interrupted", who="system", call_id=row.id,
               result="interrupted")
        return _Step(row.result)
    approval = session.get(Approval, row.approval_id) if row.approval_id else None
    if approval is None or approval.status == A.PENDING:
        return _Step()
    last = (approval.decisions or [{}])[-1]
    who, feedback = last.get("user") or A.SYSTEM, last.get("comment") or ""
    if approval.status != A.APPROVED:
        row.state, row.finished_at, row.delivered_at = REJECTED, utcnow(), utcnow()
        row.result = G.error_result(G.rejected_text(row.tool, who, feedback), decision="rejected", reviewer=who,
                                    feedback=feedback)
        _audit(session, agent, row.tool, row.arguments, "reject", who=who, call_id=row.id, result="rejected",
               feedback=feedback, approval_id=approval.id)
        return _Step(row.result)
    # approved: this request forwards it, unless another claimed it first
    claimed = session.execute(update(GatewayCall).where(GatewayCall.id == call_id, GatewayCall.state == HELD)
                              .values(state=FORWARDING, forwarded_at=utcnow(), row_version=GatewayCall.row_version + 1)
                              .execution_options(synchronize_session=False)).rowcount
    if claimed != 1:
        return _Step()
    params = approval.params if isinstance(approval.params, dict) else row.arguments
    edited = any(d.get("decision") == "edit" for d in approval.decisions or [])
    return _Step(forward=(row.tool, params, edited, who, approval.id))


def _interrupted(svc, row: GatewayCall) -> bool:
    """Whether a forwarding began longer ago than any forwarding can last (its process died meanwhile)."""
    settings = svc.settings
    limit = settings.mcp_call_timeout_s + settings.mcp_connect_timeout_s + 30.0
    return row.forwarded_at is not None and (utcnow() - row.forwarded_at).total_seconds() > limit


def held_result(tool: str, call_id: str, waited_s: float) -> dict[str, Any]:
    return G.error_result(G.held_text(tool, call_id, waited_s), decision="pending_review", call_id=call_id)
