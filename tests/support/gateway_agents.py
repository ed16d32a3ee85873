"""What the gateway's live tests do as an admin and as an agent: make agent identities (in this workspace or in a
second one), add stdio MCP servers, call /mcp with the official MCP Python SDK's (2.x) `Client` over streamable HTTP
(mode='auto': it speaks 2026-07-28, the newest revision; a 1.x-era client is tests/support/mcp1_agent.py), find a held
call's review in the queue and decide it through the REST API, read the gateway's audit entries."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from typing import Any

import httpx2
import requests
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from services import workspaces
from services.db import Database
from tests.support.live_server import LiveServer


def make_agent(server: LiveServer, name: str, token: str | None = None) -> dict:
    """An agent identity (its `token` included), made by the first admin or by the admin whose API token is given."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    made = server.http.post(server.url("/api/agents"), json={"name": name}, headers=headers, timeout=10)
    assert made.status_code == 201, made.text
    return made.json()


def other_workspace_admin(server: LiveServer, slug: str = "other") -> str:
    """A second workspace with an admin of its own: that admin's API token."""
    from services.users import service as users
    from services.users import tokens

    db = Database(server.database_url)
    try:
        with db.transaction() as session:
            ws = workspaces.create(session, slug, slug.title())
            admin = users.create_user(session, f"{slug}-admin@live.test", f"{slug}-password-1", f"{slug} admin")
            users.set_role(session, admin, ws, "admin")
            return tokens.create_token(session, admin, "tests")[1]
    finally:
        db.dispose()


def add_stdio_server(
    server: LiveServer, name: str, command: list[str], *, trusted: bool = True, token: str | None = None
) -> dict:
    """A workspace MCP server started over stdio (its command must be in COACH_MCP_STDIO_ALLOW), its tools listed;
    added by the first admin or by the admin whose API token is given."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    made = server.http.post(
        server.url("/api/tool-servers"),
        json={"name": name, "transport": "stdio", "command": command, "trusted": trusted},
        headers=headers,
        timeout=30,
    )
    assert made.status_code == 201, made.text
    listed = server.http.post(
        server.url(f"/api/tool-servers/{made.json()['id']}/refresh"), headers=headers, timeout=60
    ).json()
    assert listed["last_error"] == "", listed
    return listed


@contextlib.asynccontextmanager
async def mcp(server: LiveServer, token: str, mode: str = "auto", read_s: float = 60, elicitation_callback=None):
    """A connected MCP Client on the server's /mcp with this agent token (mode='legacy': the initialize handshake of
    the revisions before 2026-07-28). No response cache: each test's listing is the gateway's of now.
    `elicitation_callback`: the client's user answering a server's question (it declares elicitation then)."""
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, trust_env=False, timeout=httpx2.Timeout(30, read=read_s)
    )
    extra = {"elicitation_callback": elicitation_callback} if elicitation_callback is not None else {}
    async with (
        http,
        Client(streamable_http_client(server.url("/mcp"), http_client=http), mode=mode, cache=None, **extra) as client,
    ):
        yield client


def call(
    server: LiveServer,
    token: str,
    tool: str,
    arguments: dict,
    meta: dict | None = None,
    progress: list | None = None,
    mode: str = "auto",
) -> Any:
    """One tools/call in a connection of its own (progress notifications appended to `progress` when given)."""

    async def go():
        async with mcp(server, token, mode) as session:

            async def on_progress(done, total, message):
                if progress is not None:
                    progress.append((done, total, message))

            return await session.call_tool(
                tool, arguments, meta=meta, progress_callback=on_progress if progress is not None else None
            )

    return asyncio.run(go())


def text(result) -> str:
    return "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")


def pending_gateway(server: LiveServer, tool: str, agent: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        page = server.http.get(server.url("/api/approvals?status=pending&per_page=100"), timeout=10).json()
        found = [a for a in page["items"] if a["kind"] == "gateway" and a["tool"] == tool and a["agent"] == agent]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no pending gateway approval of {tool} by {agent}")


def decide(server: LiveServer, approval_id: str, body: dict) -> requests.Response:
    return server.http.post(server.url(f"/api/approvals/{approval_id}"), json=body, timeout=10)


def in_background(fn, *args, **kwargs) -> tuple[threading.Thread, dict]:
    box: dict = {}

    def run():
        try:
            box["result"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def audit_calls(server: LiveServer, agent: str) -> list[dict]:
    """The gateway's audit entries of this agent's calls, newest first."""
    page = server.http.get(server.url("/api/audit?action=gateway_call&per_page=200"), timeout=10).json()
    return [e["after"] for e in page["items"] if (e.get("after") or {}).get("identity") == agent]
