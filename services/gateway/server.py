"""Coach's MCP endpoint: the official SDK's (2.x) low-level Server behind its StreamableHTTPSessionManager, serving both
eras of the protocol at the one endpoint: 2026-07-28 (no handshake: `server/discover`, each request carrying its
version in the MCP-Protocol-Version header) and the initialize-based revisions before it (2024-11-05 .. 2025-11-25),
stateless (every request stands alone, so any instance behind the cluster's proxy answers it and a revoked token stops
at once), served natively at /mcp by Coach's MCP process (asgi.py, api/mcp_process.py: uvicorn).

A request is authenticated before anything reaches the SDK: no, unknown or revoked bearer token -> 401. The agent it
names is put in the ASGI scope, where the handlers find it, with the channel that runs their blocking work (the
database, calls of upstream MCP servers through the client pool) in a worker thread (anyio.to_thread, as the SDK runs
a sync handler): Coach's services are synchronous SQLAlchemy, the loop never waits on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from services.gateway import calls, confirm, held, identities
from services.gateway.identities import Agent

log = logging.getLogger(__name__)

PATH = "/mcp"


class Threads:
    """The handlers' way to their blocking work: fn() in a worker thread, its result (or exception) here."""

    async def call(self, fn: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(fn)


THREADS = Threads()


class Gateway:
    """The ASGI app of /mcp (`await gateway(scope, receive, send)`), inside `async with gateway.run():`."""

    def __init__(self, svc):
        self.svc = svc
        # no input validation by the SDK (its lowlevel Server does none): Coach's own checks answer with the reason
        self.server: Server = Server(
            "coach",
            version="1",
            instructions=(
                "Coach's MCP gateway: this workspace's tools, each call judged by its policies; a call may be held "
                "for a person's review. A result that says the call awaits review: send the same call again later."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        # Two ways to answer, both the SDK's: a stream (SSE) for a call that asked for progress notifications (a
        # held call sends them while it waits), a plain JSON answer for everything else (a stream's framing and its
        # task cost a few milliseconds per request for nothing to stream)
        self.streaming = StreamableHTTPSessionManager(app=self.server, stateless=True, json_response=False)
        self.plain = StreamableHTTPSessionManager(app=self.server, stateless=True, json_response=True)
        # a confirm rule's question (services/gateway/confirm.py): sealed 2026-07-28 requestState, and sessions for
        # the handshake-era clients that declare elicitation (their elicitation/create needs one for the answer)
        confirm.install(self.server, svc.settings)
        self.sessions = StreamableHTTPSessionManager(
            app=self.server, stateless=False, json_response=False, session_idle_timeout=600.0
        )
        self.loop: asyncio.AbstractEventLoop | None = None
        # the held calls waiting in this process, by their review's approval id: a decision wakes them (one made
        # here: the notifier's listener; one made in the web process: its POST /internal/wake)
        self._waiting: dict[str, set[asyncio.Event]] = {}
        svc.notifier.listen(self._heard)

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[Gateway]:
        """The session managers' task groups, for as long as the MCP process serves (its lifespan)."""
        self.loop = asyncio.get_running_loop()
        async with self.streaming.run(), self.plain.run(), self.sessions.run():
            yield self
        self.loop = None

    # -- ASGI
    # -----------------------------------------------------------------------------------------------------------

    async def __call__(self, scope, receive, send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        header = headers.get("authorization") or ""
        token = header[7:].strip() if header[:7].lower() == "bearer " else ""
        agent = await anyio.to_thread.run_sync(self._authenticate, token) if token else None
        if agent is None:
            return await _error(
                send,
                401,
                "unauthorized",
                "send Authorization: Bearer <an agent token of this workspace>"
                if not token
                else "the agent token is unknown or revoked",
                [("WWW-Authenticate", 'Bearer realm="coach-mcp"')],
            )
        if scope.get("method", "").upper() == "GET":
            # stateless: no stream of the server's own to open (the spec's answer for that is 405), and the SDK would
            # otherwise hold the request open without an answer
            return await _error(
                send,
                405,
                "method_not_allowed",
                "this endpoint keeps no session: POST each JSON-RPC message",
                [("Allow", "POST")],
            )
        body = await read_body(receive, headers, self.svc.settings.max_body_bytes)
        if body is None:
            return await _error(send, 413, "too_large", "the request body is too large")
        bad = bad_call(body)
        if bad is not None:  # the SDK would answer -32602 "Invalid request parameters" with nothing said of why
            return await _rpc_error(send, *bad)
        inner = {**scope, "coach.agent": agent, "coach.channel": THREADS, "user": confirm.session_user(agent)}
        if confirm.wants_session(headers.get("mcp-session-id"), body):
            manager = self.sessions
        else:
            manager = self.streaming if asks_for_progress(body) else self.plain
        await manager.handle_request(inner, _replay(body, receive), send)

    def _authenticate(self, token: str) -> Agent | None:
        agent = identities.authenticate(self.svc.db, token)
        if agent is not None:
            identities.touch(self.svc.db, agent)
        return agent

    def wake(self, approval_ids: list[str]) -> None:
        """On the loop: the held calls waiting for these reviews look at them now (decided elsewhere)."""
        for approval_id in approval_ids:
            self._wake(approval_id)

    # -- the handlers (on the loop)
    # -------------------------------------------------------------------------------------

    @staticmethod
    def _context(ctx: ServerRequestContext) -> tuple[Agent, Threads]:
        request = ctx.request  # the HTTP request (Starlette's) the SDK hands the handler: its ASGI scope
        if request is None:  # (the gateway is served over HTTP only: every request has one)
            raise RuntimeError("a gateway request without its HTTP request")
        return request.scope["coach.agent"], request.scope["coach.channel"]

    async def _list_tools(
        self, ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        agent, channel = self._context(ctx)
        specs = await channel.call(lambda: calls.listing(self.svc, agent))
        return types.ListToolsResult(tools=[types.Tool.model_validate(spec) for spec in specs])

    async def _call_tool(
        self, ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        agent, channel = self._context(ctx)
        name, arguments = params.name, params.arguments
        meta = _wire_meta(ctx)
        if confirm.answers(params):  # 2026-07-28: the call again, with the person's answer to Coach's question
            outcome = await confirm.resume(self.svc, ctx, agent, channel, params)
        else:
            elicit = confirm.can_elicit(ctx)
            outcome = await channel.call(
                lambda: calls.begin(self.svc, agent, name, arguments or {}, meta, elicit=elicit)
            )
            if outcome.confirm is not None:  # a confirm rule: ask the person at the agent
                outcome = await confirm.ask(self.svc, ctx, agent, channel, outcome.confirm)
        if outcome.input_required is not None:
            return outcome.input_required
        if outcome.result is not None:
            return types.CallToolResult.model_validate(outcome.result)
        if outcome.held is None:  # (an outcome is a result, a question or a held call)
            raise RuntimeError(f"a call of {name} came to neither a result nor a held call")
        decided = asyncio.Event()
        key = outcome.approval_id or ""
        self._waiting.setdefault(key, set()).add(decided)
        try:
            return await self._hold(ctx, agent, channel, name, outcome.held, decided)
        finally:
            waiters = self._waiting.get(key)
            if waiters is not None:
                waiters.discard(decided)
                if not waiters:
                    self._waiting.pop(key, None)

    def _heard(self, event: str, payload) -> None:
        """An event this process sent (any thread): a decided review wakes the held calls waiting for it."""
        loop = self.loop
        if event != "approval_decided" or not isinstance(payload, dict) or loop is None:
            return
        approval_id = payload.get("approval_id")
        if approval_id and approval_id in self._waiting:
            loop.call_soon_threadsafe(self._wake, approval_id)

    def _wake(self, approval_id: str) -> None:
        for decided in self._waiting.get(approval_id, ()):
            decided.set()

    async def _hold(
        self, ctx, agent: Agent, channel: Threads, tool: str, call_id: str, decided: asyncio.Event
    ) -> types.CallToolResult:
        """Wait for the review up to COACH_GATEWAY_HOLD_S, with progress notifications when the agent asked for them;
        then answer that the call awaits review (the same call sent again gets the decision). It looks at the review
        every COACH_GATEWAY_POLL_S, and at once when it is decided in this process."""
        settings = self.svc.settings
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline, next_progress, next_look = start + max(0.0, settings.gateway_hold_s), start, start
        token = _wire_meta(ctx).get("progressToken")
        state = held.WAITING
        while True:
            now = loop.time()
            if decided.is_set() or now >= next_look or now >= deadline:  # a last look at the deadline too
                decided.clear()
                state, result = await channel.call(lambda: self._poll(agent, call_id))
                if result is not None:
                    return types.CallToolResult.model_validate(result)
                now = loop.time()
                next_look = now + max(0.05, settings.gateway_poll_s)
            if now >= deadline:
                if state == held.RUNNING:  # approved, and being forwarded (by another request): not "awaits review"
                    return types.CallToolResult.model_validate(
                        await channel.call(
                            lambda: held.running_result(self.svc, agent, tool, call_id, settings.gateway_hold_s)
                        )
                    )
                return types.CallToolResult.model_validate(held.held_result(tool, call_id, settings.gateway_hold_s))
            if token is not None and now >= next_progress:
                await ctx.session.send_progress_notification(
                    token,
                    progress=round(now - start, 1),
                    total=settings.gateway_hold_s,
                    message=(
                        f"{tool} was approved and is running in Coach (call {call_id})"
                        if state == held.RUNNING
                        else f"{tool} is held for a person's review in Coach (call {call_id})"
                    ),
                    related_request_id=ctx.request_id,
                )
                next_progress = now + max(0.5, settings.gateway_progress_s)
            wake = min(next_look, deadline, next_progress if token is not None else deadline)
            try:
                await asyncio.wait_for(decided.wait(), max(0.0, wake - loop.time()))
            except TimeoutError:
                pass

    def _poll(self, agent: Agent, call_id: str) -> tuple[str, dict[str, Any] | None]:
        """(where the held call stands, its answer when it has one now)."""
        state = held.look(self.svc, agent, call_id)
        if state == held.REVOKED:
            return state, held.revoked_result()
        if state in (held.WAITING, held.RUNNING):
            return state, None
        result = held.settle(self.svc, agent, call_id)
        # None: another request claimed it between the look and the settle: it is being forwarded now
        return (state if result is not None else held.RUNNING), result


def _wire_meta(ctx: ServerRequestContext) -> dict[str, Any]:
    """The request's `_meta` as the agent sent it (the SDK's `ctx.meta` renames keys to its own, progress_token)."""
    meta = (ctx.params or {}).get("_meta")
    return dict(meta) if isinstance(meta, dict) else {}


def asks_for_progress(body: bytes) -> bool:
    """True unless the body is one JSON-RPC request without a progress token (`params._meta.progressToken`): only
    such a request's answer may carry progress notifications before it, so only it is answered as a stream. Anything
    else the SDK judges (a batch, a body that does not parse) goes the streaming way, as before."""
    try:
        message = json.loads(body)
    except ValueError:
        return True
    if not isinstance(message, dict):
        return True
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get("progressToken") is not None


_JSON_TYPES = (
    (dict, "an object"),
    (list, "an array"),
    (str, "a string"),
    (bool, "a boolean"),
    (int, "a number"),
    (float, "a number"),
)


def _kind(value: Any) -> str:
    return "null" if value is None else next((name for t, name in _JSON_TYPES if isinstance(value, t)), "a value")


def bad_call(body: bytes) -> tuple[Any, str, dict[str, Any]] | None:
    """(request id, message, data) of a tools/call request whose params the SDK would refuse without saying why
    (a JSON-RPC -32602 "Invalid request parameters" with empty data): params that are not an object, a `name` that
    is not a string, `arguments` that are neither an object nor left out. None for anything else."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call" or "id" not in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return (
            message["id"],
            f"tools/call params must be an object, not {_kind(params)}",
            {"field": "params", "expected": "an object", "got": _kind(params)},
        )
    if not isinstance(params.get("name"), str):
        return (
            message["id"],
            f"tools/call name must be a string (the tool's name), not {_kind(params.get('name'))}",
            {"field": "params.name", "expected": "a string", "got": _kind(params.get("name"))},
        )
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        return (
            message["id"],
            (
                f"tools/call arguments must be an object (the tool's parameters by name, as its "
                f"inputSchema says), not {_kind(arguments)}"
            ),
            {"field": "params.arguments", "expected": "an object", "got": _kind(arguments), "tool": params["name"]},
        )
    return None


async def _rpc_error(send, request_id: Any, message: str, data: dict[str, Any]) -> None:
    """A JSON-RPC error answer of Coach's own, as the SDK's JSON answer is framed: -32602 (invalid params)."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": types.INVALID_PARAMS, "message": message, "data": data}}
    ).encode()
    await _answer(send, 200, body, [])


async def _error(send, status: int, code: str, message: str, headers: list | None = None) -> None:
    await _answer(send, status, json.dumps({"error": {"code": code, "message": message}}).encode(), headers or [])


async def _answer(send, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def read_body(receive, headers: dict[str, str], limit: int) -> bytes | None:
    """The request's body, or None when it is larger than `limit` (told by Content-Length, or found reading)."""
    length = headers.get("content-length")
    if length:
        try:
            if int(length) > limit:
                return None
        except ValueError:
            return None
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body") or b""
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive):
    """The ASGI receive the SDK gets: the body read already, then the client's own messages (its disconnect)."""
    sent = False

    async def again() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
