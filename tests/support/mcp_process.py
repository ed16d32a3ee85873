"""Coach's MCP process (api/mcp_process.py, what asgi.py serves) for the in-process API tests: the real app on uvicorn,
in a thread of the test process, on the test's database and settings; the app under test gets its address and token.

    mcp = McpProcess(settings).start()
    app = create_app(mcp.settings)      # its workflow steps, /mcp and refreshes reach the MCP process over HTTP
    ...
    mcp.stop()

The live tests run the real pair of processes instead (tests/support/live_server.py: `python wsgi.py` starts both).
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time

import httpx
import uvicorn

from config import Settings
from tests.support.live_server import free_port


class McpProcess:
    def __init__(self, settings: Settings):
        port = free_port()
        self.settings = settings.with_overrides(
            mcp_port=port,
            mcp_url=f"http://127.0.0.1:{port}",
            mcp_token=secrets.token_urlsafe(16),
            # the app under test has no HTTP server of its own (Flask's test client): the events the gateway sends
            # it are refused at once, which the MCP process logs and lets go (a lost push, as documented)
            web_url=f"http://127.0.0.1:{free_port()}",
        )
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> McpProcess:
        from api.mcp_process import create_app

        config = uvicorn.Config(
            create_app(self.settings),
            host="127.0.0.1",
            port=self.settings.mcp_port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), name="mcp-process", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the MCP process (in a thread) did not start")
            time.sleep(0.01)
        return self

    @property
    def url(self) -> str:
        return self.settings.resolved_mcp_url

    def post(self, path: str, json, token: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        return httpx.post(self.url + path, json=json, headers=headers, timeout=30, trust_env=False)

    def stop(self) -> None:
        if self.server is not None and self.thread is not None:
            self.server.should_exit = True
            self.thread.join(15)
