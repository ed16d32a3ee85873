"""Coach's MCP process (asgi.py): an ASGI app on uvicorn, one asyncio loop, sharing the web process's database.

    /mcp                          the gateway (services/gateway/server.py): the SDK's StreamableHTTP managers
    /internal/toolservers/list    the client pool of MCP servers (services/toolservers/pool.py), for the workflow
    /internal/toolservers/call    and agent steps of the web process and the Celery workers
    /internal/toolservers/forget  (services/toolservers/remote.py)
    /internal/wake                a review decided in the web process: the held calls waiting for it look now
    /healthz                      liveness

The internal routes want COACH_MCP_TOKEN as a bearer token (compared in constant time; never logged): 401 without it
or with another. Blocking work (SQLAlchemy) runs in worker threads (anyio.to_thread), the MCP sessions on the loop.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from config import Settings
from services.container import Services
from services.gateway.relay import Relay
from services.gateway.server import Gateway
from services.toolservers.connection import Unavailable
from services.toolservers.pool import Clients

log = logging.getLogger(__name__)


def _refused(message: str, status: int = 400, code: str = "bad_request") -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def create_app(settings: Settings | None = None) -> Starlette:
    settings = settings or Settings.from_env()
    relay = Relay(settings)
    pool = Clients(call_timeout=settings.mcp_call_timeout_s, connect_timeout=settings.mcp_connect_timeout_s)
    svc = Services.build(settings, notifier=relay, dispatch=False, mcp_pool=pool)
    gateway = Gateway(svc)
    expected = f"Bearer {settings.mcp_token}".encode()

    def authorized(request: Request) -> bool:
        sent = request.headers.get("authorization", "").encode("latin-1", "replace")
        return bool(settings.mcp_token) and hmac.compare_digest(sent, expected)

    async def body_of(request: Request) -> dict[str, Any] | None:
        try:
            data = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return None
        return data if isinstance(data, dict) else None

    def internal(handler):
        async def endpoint(request: Request) -> Response:
            if not authorized(request):
                return _refused(
                    "send Authorization: Bearer <COACH_MCP_TOKEN> (the internal routes are Coach's own)",
                    401,
                    "unauthorized",
                )
            data = await body_of(request)
            if data is None:
                return _refused("the body must be a JSON object")
            return await handler(data)

        return endpoint

    async def server_of(data: dict[str, Any]):
        server_id = data.get("server_id")
        if not isinstance(server_id, str) or not server_id:
            return None, _refused("server_id: the tool server's id (a string) is required")
        server = await anyio.to_thread.run_sync(svc.mcp.server, server_id)
        if server is None:
            return None, _refused(f"no tool server {server_id}", 404, "not_found")
        return server, None

    async def list_tools(data: dict[str, Any]) -> Response:
        server, refused = await server_of(data)
        if refused is not None:
            return refused
        try:
            return JSONResponse({"tools": await svc.mcp.alist_tools(server)})
        except Unavailable as exc:
            return _refused(str(exc), 502, "unavailable")

    async def call(data: dict[str, Any]) -> Response:
        tool, arguments, meta, timeout = data.get("tool"), data.get("arguments"), data.get("meta"), data.get("timeout")
        if not isinstance(tool, str) or not tool:
            return _refused("tool: the tool's name (a string) is required")
        if not isinstance(arguments, dict):
            return _refused("arguments: an object is required")
        if meta is not None and not isinstance(meta, dict):
            return _refused("meta: an object, or left out")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            return _refused("timeout: seconds (a number above 0) are required")
        server, refused = await server_of(data)
        if refused is not None:
            return refused
        try:
            result = await svc.mcp.acall(server, tool, arguments, timeout=float(timeout), meta=meta or {})
        except Unavailable as exc:
            return _refused(str(exc), 502, "unavailable")
        return JSONResponse({"result": result})

    async def forget(data: dict[str, Any]) -> Response:
        server_id = data.get("server_id")
        if not isinstance(server_id, str):
            return _refused("server_id: a string is required")
        await pool.aforget(server_id)
        svc.mcp.invalidate()
        return JSONResponse({})

    async def wake(data: dict[str, Any]) -> Response:
        ids = data.get("approval_ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return _refused("approval_ids: a list of strings is required")
        gateway.wake(ids)
        return JSONResponse({})

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        pool.start()
        try:
            async with relay.run(), gateway.run():
                yield
        finally:
            with contextlib.suppress(Exception):
                await pool.aclose()  # stops the stdio servers this process started
            await anyio.to_thread.run_sync(svc.close)

    app = Starlette(
        routes=[
            Route("/mcp", gateway, methods=["GET", "POST", "DELETE"]),
            Route("/mcp/", gateway, methods=["GET", "POST", "DELETE"]),
            Route("/internal/toolservers/list", internal(list_tools), methods=["POST"]),
            Route("/internal/toolservers/call", internal(call), methods=["POST"]),
            Route("/internal/toolservers/forget", internal(forget), methods=["POST"]),
            Route("/internal/wake", internal(wake), methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.services = svc
    app.state.gateway = gateway
    return app
