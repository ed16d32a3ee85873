"""The MCP servers' client pool as the web process and the Celery workers reach it: over HTTP, in Coach's MCP process.

The pool's sessions (stdio processes, streamable HTTP connections) live in the MCP process (asgi.py) on its asyncio
loop; a workflow or agent step here calls the internal routes it serves, with a plain blocking HTTP client (httpx:
under gevent its sockets are gevent's):

    POST /internal/toolservers/list    {"server_id"}                                        -> {"tools": [...]}
    POST /internal/toolservers/call    {"server_id", "tool", "arguments", "timeout", "meta"} -> {"result": {...}}
    POST /internal/toolservers/forget  {"server_id"}                                         -> {}

authenticated with COACH_MCP_TOKEN as a bearer token. The MCP process reads the server's row itself (its command,
its URL and sealed headers, the workspace's outbound rules): nothing said here can make it start a command or reach a
host that the database and its own settings do not allow. A server that cannot be reached, fails or does not answer
in time is answered 502 with the same message as before (connection.Unavailable), and raised as that here; the MCP
process not answering at all is Unavailable too, saying so.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from config import Settings
from services.toolservers.connection import Unavailable

log = logging.getLogger(__name__)

MARGIN_S = 10.0  # beyond the MCP process's own bounds (the call's timeout, the connect timeout), for the HTTP answer


class Remote:
    def __init__(self, settings: Settings):
        self.url = settings.resolved_mcp_url
        self.call_timeout = settings.mcp_call_timeout_s
        self.connect_timeout = settings.mcp_connect_timeout_s
        self.http = httpx.Client(
            headers={"Authorization": f"Bearer {settings.mcp_token}"},
            trust_env=False,  # loopback (or the cluster's own network): never through a proxy from the environment
            follow_redirects=False,
        )

    def _post(self, path: str, body: dict[str, Any], timeout: float, name: str) -> dict[str, Any]:
        try:
            answer = self.http.post(self.url + path, json=body, timeout=httpx.Timeout(timeout, connect=5.0))
        except httpx.TimeoutException:
            raise Unavailable(f"MCP server {name!r}: Coach's MCP process did not answer within {timeout:g}s") from None
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"MCP server {name!r}: Coach's MCP process cannot be reached at {self.url} ({type(exc).__name__})"
            ) from None
        try:
            data = answer.json()
        except ValueError:
            data = None
        if answer.status_code == 200 and isinstance(data, dict):
            return data
        message = data.get("error", {}).get("message") if isinstance(data, dict) else None
        if answer.status_code == 401:  # a token that differs from the MCP process's: a configuration error
            log.error("Coach's MCP process at %s refused this process's COACH_MCP_TOKEN", self.url)
        raise Unavailable(message or f"MCP server {name!r}: Coach's MCP process answered HTTP {answer.status_code}")

    def list_tools(self, server_id: str, name: str) -> list[dict[str, Any]]:
        limit = self.connect_timeout + self.call_timeout * 20 + MARGIN_S
        return list(self._post("/internal/toolservers/list", {"server_id": server_id}, limit, name)["tools"])

    def call(
        self,
        server_id: str,
        name: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float,
        meta: dict[str, Any],
    ) -> dict[str, Any]:
        seconds = min(timeout or self.call_timeout, self.call_timeout)
        body = {"server_id": server_id, "tool": tool, "arguments": arguments, "timeout": seconds, "meta": meta}
        return dict(
            self._post("/internal/toolservers/call", body, self.connect_timeout + seconds + MARGIN_S, name)["result"]
        )

    def forget(self, server_id: str) -> None:
        """Tell the MCP process to close the server's session (deleted, or changed: the next call makes a new one
        anyway, keyed by revision). Best effort, briefly: the caller may hold a transaction."""
        try:
            self.http.post(self.url + "/internal/toolservers/forget", json={"server_id": server_id}, timeout=2.0)
        except httpx.HTTPError:
            log.warning("could not tell Coach's MCP process to close the session of server %s", server_id)

    def close(self) -> None:
        self.http.close()
