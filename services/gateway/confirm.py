"""A policy rule's `confirm` effect at the gateway: the call and its arguments go to *the person at the agent* (the
developer in Claude Code, the user of a chat app) as an MCP elicitation, and their answer decides the call
(docs/mcp-gateway.md#confirm-ask-the-person-at-the-agent; the form and what an answer means: core/gateway_confirm.py).

- On 2026-07-28 the question travels inside the result: an `InputRequiredResult` whose one input request is an
  `elicitation/create` form, with a sealed `requestState` (the SDK's RequestStateBoundary: AES-256-GCM under a key
  derived from COACH_SECRET_KEY, so every instance of a cluster opens it; bound to the tool, its arguments and the
  agent identity; it expires after COACH_GATEWAY_CONFIRM_S). The client asks its user and sends the same call again
  with `inputResponses` and the `requestState`: `resume`.
- On the earlier revisions it is a server-initiated `elicitation/create` request on the call's own SSE stream,
  answered while the call waits (`ask`). A stateless request cannot carry one (its answer would have nowhere to
  land), so a client that declares elicitation in its `initialize` gets a session of its own (`wants_session`).
- A client that declared no elicitation (form mode) gets the rule's `fallback` (require_review: held for a Coach
  reviewer as any held call; or deny). So does a question left unanswered for COACH_GATEWAY_CONFIRM_S, or one the
  client failed to ask.

A question is a row (GatewayCall, state `confirming`, its own call key `confirm:…`) made when it is asked; the answer
claims it with one conditional UPDATE, so one question is answered once (a replayed requestState is refused). The
answer is a decision: counted like a reviewer's (accept = approve, edit, decline = reject) per tool, per tool for the
identity (and in the call's region), with the same metrics and readiness test (services/gateway/learning.count,
`at_agent`), and audited: `gateway_confirm` (the answer), and the call's `gateway_call` (`confirm` when asked, then
`confirm_accept` | `confirm_edit` | `confirm_decline` | `confirm_cancel`). The rules of the moment still win: an
accepted (or edited) call is judged again, and a `deny` denies it, a `require_review` holds it for a reviewer.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from sqlalchemy import update

from core import gateway as G
from core import gateway_confirm as C
from core import gateway_learning as L
from core.tools import schema_errors
from services.audit import service as audit
from services.db import rowcount
from services.gateway import builtins, calls, held, learning
from services.gateway.identities import Agent
from services.models.gateway import AgentIdentity, GatewayCall
from services.orm import utcnow
from services.policies import service as policies
from services.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

CONFIRMING = "confirming"  # GatewayCall.state of a question not answered yet
MODERN, LEGACY = "input_required", "elicitation/create"  # how the question is asked (the client's era)
AUDIENCE = "coach-gateway"
WHO = "the person at the agent"
STATE_REFUSED = (
    "Coach refused this call's requestState: it is not one Coach sealed for this call of this tool with these "
    "arguments by this agent, or it expired (COACH_GATEWAY_CONFIRM_S). Send the call again without requestState "
    "and inputResponses to be asked anew."
)


@dataclass(frozen=True)
class Ask:
    """A question opened for the person at the agent (calls.begin), asked by `ask` in the client's era."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    form: C.Form
    era: str
    meta: dict[str, Any] | None = None


# -- the SDK's wiring (server.py) ---------------------------------------------------------------------------------


def install(server, settings) -> None:
    """Seal and open 2026-07-28 `requestState` with the SDK's boundary (outermost: Coach's clearer refusal)."""
    secret = hashlib.sha256(b"coach/gateway/request-state/v1:" + settings.secret_key.encode()).hexdigest()
    security = RequestStateSecurity(
        keys=[secret], ttl=max(1.0, settings.gateway_confirm_s), bind_principal=_principal, audience=AUDIENCE
    )
    server.middleware.append(_ClearRefusal())
    server.middleware.append(RequestStateBoundary(security, default_audience=AUDIENCE))


def _principal(ctx) -> str | None:
    """The agent identity a requestState is bound to: another identity's token cannot use it."""
    request = getattr(ctx, "request", None)
    agent = request.scope.get("coach.agent") if request is not None else None
    return f"agent:{agent.id}" if agent is not None else None


class _ClearRefusal:
    """The SDK refuses a tampered or expired requestState with "Invalid or expired requestState": say more."""

    async def __call__(self, ctx, call_next):
        try:
            return await call_next(ctx)
        except MCPError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            if data.get("reason") != "invalid_request_state":
                raise
            tool = (ctx.params or {}).get("name") if isinstance(ctx.params, dict) else None
            raise MCPError(
                code=exc.code,
                message=STATE_REFUSED,
                data={"reason": "invalid_request_state", "field": "params.requestState", "tool": tool},
            ) from None


def session_user(agent: Agent) -> AuthenticatedUser:
    """The ASGI scope's `user` of a request: a session is bound to the agent identity that opened it (the SDK answers
    another identity's request in that session 404, as if it did not exist)."""
    return AuthenticatedUser(AccessToken(token="", client_id=f"agent:{agent.id}", scopes=[]))


def wants_session(headers_session_id: str | None, body: bytes) -> bool:
    """Whether a request goes to the stateful session manager: one in a session (its Mcp-Session-Id), or an
    `initialize` that declares elicitation (a handshake-era client that can ask its user: its elicitation/create
    needs a session for the answer to land in). Everything else stays stateless."""
    if headers_session_id:
        return True
    try:
        message = json.loads(body)
    except ValueError:
        return False
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return False
    params = message.get("params")
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    return isinstance(capabilities, dict) and isinstance(capabilities.get("elicitation"), dict)


def can_elicit(ctx) -> str | None:
    """How this request's client can be asked (MODERN, LEGACY), or None: it declared no form elicitation, or (an
    earlier revision) this request has no back-channel for a server-initiated request."""
    caps = ctx.session.client_capabilities
    elicitation = caps.elicitation if caps is not None else None
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):  # URL mode only: no form
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return MODERN
    return LEGACY if ctx.session.can_send_request else None


def answers(params: types.CallToolRequestParams) -> bool:
    """A 2026-07-28 retry carrying an answer to Coach's question."""
    return params.input_responses is not None or params.request_state is not None


# -- asking (calls.begin finds that a question is due; `ask` opens and asks it) --------------------------------------


def open_ask(
    svc,
    agent: Agent,
    tool,
    tool_name: str,
    arguments: dict[str, Any],
    key: str,
    verdict: dict[str, Any],
    gate: learning.Gate | None,
    action: str,
    era: str,
    meta: dict[str, Any] | None = None,
) -> Ask:
    """The question's row and its audit entry (`gateway_call`, decision `confirm`), in a transaction of its own."""
    rule = verdict.get("rule")
    form = C.form(agent.name, tool_name, arguments, tool.params_schema, rule)
    region = gate.region if gate is not None else None

    def store(session) -> str:
        row = GatewayCall(
            workspace_id=agent.workspace_id,
            agent_id=agent.id,
            agent_name=agent.name,
            tool=tool_name,
            arguments=arguments,
            call_key=f"confirm:{key}"[:200],  # never the key of a held call: the same call sent again is asked anew
            state=CONFIRMING,
            approval_id=None,
            policy={
                **verdict,
                "confirm": {"era": era, "spot_check": action == L.SPOT_CHECK, "call_key": key},
                **({"region": region} if region else {}),
            },
        )
        session.add(row)
        session.flush()
        noted: dict[str, Any] = {"era": era}
        if action == L.SPOT_CHECK:
            noted["purpose"] = "spot_check"
        calls.audit_call(
            session,
            agent,
            tool_name,
            arguments,
            "confirm",
            who="policy",
            call_id=row.id,
            rule=rule,
            result="asked",
            **noted,
        )
        return row.id

    call_id = calls.transaction(svc, "asking the person at a gateway agent", store)
    return Ask(call_id, tool_name, arguments, form, era, meta)


async def ask(svc, ctx, agent: Agent, channel, pending: dict[str, Any]) -> calls.Outcome:
    """Open the question calls.begin found (`pending`: its Outcome.confirm) and ask it in the client's era:
    2026-07-28, answer with the question (the client sends the call again with the answer: `resume`); earlier
    revisions, an elicitation/create request on this call's stream, waited for up to COACH_GATEWAY_CONFIRM_S
    (unanswered, or the client could not ask: the rule's fallback)."""
    question = await channel.call(lambda: open_ask(svc, agent, **pending))
    if question.era == MODERN:
        return calls.Outcome(
            input_required=types.InputRequiredResult(
                input_requests={
                    C.INPUT_KEY: types.ElicitRequest(
                        params=types.ElicitRequestFormParams(
                            message=question.form.message, requested_schema=question.form.schema
                        )
                    )
                },
                request_state=json.dumps({"call": question.call_id}),
            )
        )
    timeout = max(1.0, svc.settings.gateway_confirm_s)
    try:
        answer = await _answer_of(svc, ctx, question, timeout)
    except TimeoutError:
        why = f"no answer within {timeout:g} s"
    except Exception as exc:  # noqa: BLE001 - an error of the client's (or its transport): the fallback applies
        why = f"the client could not ask: {exc}"[:300]
    else:
        return await channel.call(
            lambda: settle(svc, agent, question.call_id, answer.action, answer.content, question.meta)
        )
    return await channel.call(lambda: unasked(svc, agent, question, why))


async def _answer_of(svc, ctx, question: Ask, timeout: float):
    """The elicitation/create's answer, within `timeout`; meanwhile, when the call carried a progressToken, progress
    notifications every COACH_GATEWAY_PROGRESS_S (a client that resets its time-out on progress keeps waiting)."""
    asking = asyncio.ensure_future(
        ctx.session.elicit_form(question.form.message, question.form.schema, related_request_id=ctx.request_id)
    )
    meta = (ctx.params or {}).get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        while True:
            left = start + timeout - loop.time()
            if left <= 0:
                raise TimeoutError
            step = min(left, max(0.5, svc.settings.gateway_progress_s)) if token is not None else left
            done, _ = await asyncio.wait({asking}, timeout=step)
            if done:
                return asking.result()
            if token is not None:
                await ctx.session.send_progress_notification(
                    token,
                    progress=round(loop.time() - start, 1),
                    total=timeout,
                    message=f"Coach is asking the person at the agent about {question.tool} (call {question.call_id})",
                    related_request_id=ctx.request_id,
                )
    finally:
        if not asking.done():
            asking.cancel()


def unasked(svc, agent: Agent, question: Ask, why: str) -> calls.Outcome:
    """The question came to nothing (no answer in time, the client failed to ask): it ends, and the call is judged
    again with the rule's fallback applying."""
    ended = _end(svc, agent, question.call_id, calls.CANCELLED, why)
    if not ended:
        return calls.Outcome(G.error_result(_answered_text(question.tool), decision="confirm_answered"))
    return calls.begin(svc, agent, question.tool, question.arguments, question.meta, elicit=None, fallback_why=why)


def _end(svc, agent: Agent, call_id: str, state: str, why: str) -> bool:
    def run(session) -> bool:
        now = utcnow()
        claimed = session.execute(
            update(GatewayCall)
            .where(GatewayCall.id == call_id, GatewayCall.agent_id == agent.id, GatewayCall.state == CONFIRMING)
            .values(state=state, finished_at=now, delivered_at=now, row_version=GatewayCall.row_version + 1)
            .execution_options(synchronize_session=False)
        ).rowcount
        return claimed == 1

    return calls.transaction(svc, "ending a question to a gateway agent", run)


async def resume(svc, ctx, agent: Agent, channel, params: types.CallToolRequestParams) -> calls.Outcome:
    """A 2026-07-28 retry with the answer (the boundary has opened and checked the requestState: only Coach's own,
    for this tool, these arguments and this agent, unexpired)."""
    try:
        call_id = json.loads(params.request_state or "")["call"]
    except (ValueError, KeyError, TypeError):
        raise MCPError(
            code=types.INVALID_PARAMS,
            message="this call carries inputResponses without the requestState of Coach's question; send the call "
            "again without inputResponses to be asked",
            data={"field": "params.requestState", "tool": params.name},
        ) from None
    raw = (ctx.params or {}).get("inputResponses")
    response = raw.get(C.INPUT_KEY) if isinstance(raw, dict) else None
    if not isinstance(response, dict):
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"inputResponses must carry the answer to Coach's question {C.INPUT_KEY!r} (an elicitation "
            f"result: action accept, decline or cancel, and content)",
            data={"field": f"params.inputResponses.{C.INPUT_KEY}", "tool": params.name},
        )
    meta = (ctx.params or {}).get("_meta")
    meta = dict(meta) if isinstance(meta, dict) else None
    return await channel.call(
        lambda: settle(svc, agent, call_id, response.get("action"), response.get("content"), meta)
    )


# -- the answer ---------------------------------------------------------------------------------------------------


def _answered_text(tool: str) -> str:
    return (
        f"Coach's question about this call of {tool} was already answered (or has ended); it is not asked or run "
        f"again from this answer. Send the call again to be asked anew."
    )


def settle(svc, agent: Agent, call_id: str, action: Any, content: Any, meta: dict[str, Any] | None) -> calls.Outcome:
    """The person's answer: claimed once, counted, audited; then the call declined, or judged again by the rules of
    now and forwarded (or denied, or held for a reviewer, as those rules say)."""

    def claim(uow: UnitOfWork):
        session = uow.session
        row = session.get(GatewayCall, call_id)
        if row is None or row.agent_id != agent.id or row.state != CONFIRMING:
            return None
        identity = session.get(AgentIdentity, agent.id)
        if identity is None or identity.revoked_at is not None:  # revoked while the person was being asked
            row.state, row.finished_at, row.delivered_at = calls.CANCELLED, utcnow(), utcnow()
            return ("done", held.revoked_result())
        tool = builtins.gateway_tool(svc, agent.workspace_id, row.tool)
        schema = tool.params_schema if tool is not None else None
        form = C.form(agent.name, row.tool, row.arguments, schema, (row.policy or {}).get("rule"))
        bad: str | None = None
        try:
            answer: C.Answer | None = C.read_answer(action, content, row.arguments, form.editable)
        except C.BadAnswer as exc:
            answer, bad = None, str(exc)
        else:
            if answer is not None and answer.kind == C.EDIT and tool is not None:
                problems = schema_errors(tool.params_schema, answer.arguments)
                if problems:
                    bad = "the edited arguments do not fit the tool's input schema: " + "; ".join(
                        f"{k}: {', '.join(v)}" for k, v in problems.items()
                    )
        now = utcnow()
        state = (
            calls.CANCELLED
            if bad or tool is None or answer is None or answer.kind == C.CANCEL
            else calls.REJECTED
            if answer.kind == C.DECLINE
            else calls.FORWARDING
        )
        claimed = rowcount(
            session.execute(
                update(GatewayCall)
                .where(GatewayCall.id == call_id, GatewayCall.state == CONFIRMING)
                .values(state=state, forwarded_at=now, row_version=GatewayCall.row_version + 1)
                .execution_options(synchronize_session=False)
            )
        )
        if claimed != 1:
            return None
        row = held.call_row(session, call_id, populate_existing=True)
        kind = "invalid" if bad or answer is None else answer.kind
        reason = bad or (answer.reason if answer else "")
        latency_ms = max(0.0, (now - row.created_at).total_seconds() * 1000.0)
        policy = row.policy or {}
        confirm_info = policy.get("confirm") or {}
        audit.record(
            session,
            agent.workspace_id,
            f"agent:{agent.name}",
            "gateway_confirm",
            target_type="gateway_call",
            target_id=row.id,
            before={"arguments": row.arguments},
            after={
                "identity": agent.name,
                "agent_id": agent.id,
                "tool": row.tool,
                "answer": kind,
                "reason": reason,
                "era": confirm_info.get("era"),
                "latency_ms": round(latency_ms),
                **({"arguments": answer.arguments, "changes": answer.changes} if answer and answer.changes else {}),
                **({"region_id": policy["region"].get("id")} if policy.get("region") else {}),
            },
            result=kind,
        )
        if bad or tool is None or answer is None or answer.kind == C.CANCEL:  # no decision: counts nowhere
            text = (
                C.cancelled_text(row.tool)
                if answer is not None and answer.kind == C.CANCEL and not bad
                else f"Coach could not use the answer about this call of {row.tool}: "
                f"{bad or 'the tool is no longer one of this workspace'}; it did not run."
            )
            row.result = G.error_result(text, decision="confirm_cancelled" if not bad else "confirm_invalid")
            row.finished_at = row.delivered_at = now
            noted: dict[str, Any] = {"reason": bad} if bad else {}
            calls.audit_call(
                session,
                agent,
                row.tool,
                row.arguments,
                "confirm_cancel",
                who=WHO,
                call_id=row.id,
                result="cancelled",
                **noted,
            )
            return ("done", row.result)
        learning.count(
            uow,
            agent.workspace_id,
            row.tool,
            agent.name,
            C.AS_REVIEW[answer.kind],
            latency_ms,
            before=row.arguments,
            after=answer.arguments,
            region=(row.policy or {}).get("region"),
            at_agent=True,
        )
        if answer.kind == C.DECLINE:
            row.result = G.error_result(
                C.declined_text(row.tool, agent.name, answer.reason),
                decision="declined_at_agent",
                reason=answer.reason,
            )
            row.finished_at = row.delivered_at = now
            calls.audit_call(
                session,
                agent,
                row.tool,
                row.arguments,
                "confirm_decline",
                who=WHO,
                call_id=row.id,
                result="rejected",
                feedback=answer.reason,
            )
            return ("done", row.result)
        return ("forward", row.tool, row.arguments, answer, tool, confirm_info.get("call_key") or "")

    step = calls.command(svc, "answering a gateway agent's question", claim)
    if step is None:
        return calls.Outcome(G.error_result(_answered_text("this tool"), decision="confirm_answered"))
    if step[0] == "done":
        return calls.Outcome(step[1])
    _, tool_name, original, answer, tool, key = step
    # the rules of now judge what will run: a deny denies it, a require_review holds it for a reviewer
    with svc.db.read() as session:
        now_verdict = policies.evaluate(
            session,
            agent.workspace_id,
            policies.call_for({tool_name: tool}, tool_name, answer.arguments, step_type="action", agent=agent.name),
        ).to_dict()
    if now_verdict["effect"] not in ("allow", "confirm"):
        _finish(svc, agent, call_id, None, 0, answer, original, handed_on=now_verdict["effect"])
        return calls.begin(svc, agent, tool_name, answer.arguments, meta, elicit=None, confirmed=True)
    result, full = calls.forward(svc, tool, answer.arguments, f"gateway:{call_id}")
    if answer.kind == C.EDIT:
        result = L.with_status(
            result,
            G.STATUS_META,
            {
                "decision": "edited_at_agent",
                "edited_arguments": answer.arguments,
                "original_arguments": original,
                "changes": answer.changes,
                **({"comment": answer.reason} if answer.reason else {}),
            },
        )
        result = {
            **result,
            "content": [
                {"type": "text", "text": C.edited_note(agent.name, answer.changes, answer.reason)},
                *(result.get("content") or []),
            ],
        }
    else:
        result = L.with_status(result, G.STATUS_META, {"decision": "confirmed_at_agent"})
    _finish(svc, agent, call_id, result, full, answer, original)
    return calls.Outcome(result)


def _finish(
    svc,
    agent: Agent,
    call_id: str,
    result: dict[str, Any] | None,
    full: int,
    answer: C.Answer,
    original: dict[str, Any],
    handed_on: str | None = None,
) -> None:
    def store(session) -> None:
        row = held.call_row(session, call_id, populate_existing=True)
        now = utcnow()
        if result is None:  # the rules of now deny or hold it: calls.begin answers (and audits) that
            row.state, row.finished_at, row.delivered_at = calls.CANCELLED, now, now
        else:
            row.state = calls.FAILED if result.get("isError") else calls.DONE
            row.result, row.result_bytes, row.finished_at, row.delivered_at = result, full, now, now
        noted: dict[str, Any] = (
            {"original_arguments": original, "changes": answer.changes} if answer.kind == C.EDIT else {}
        )
        if answer.reason:
            noted["comment"] = answer.reason
        if handed_on:
            noted["then"] = f"the rules of now: {handed_on}"
        calls.audit_call(
            session,
            agent,
            row.tool,
            answer.arguments,
            "confirm_edit" if answer.kind == C.EDIT else "confirm_accept",
            who=WHO,
            call_id=row.id,
            result_bytes=full if result is not None else None,
            result=(handed_on or "ok") if result is None else ("error" if result.get("isError") else "ok"),
            **noted,
        )

    calls.transaction(svc, "storing a confirmed gateway call's result", store)
