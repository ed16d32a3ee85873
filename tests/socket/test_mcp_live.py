"""MCP tools on the real server (`python wsgi.py`, gevent by default): a slow or hanging MCP call holds its own
step only, never the event loop: other requests are answered at once meanwhile."""

from __future__ import annotations

import time

import pytest

from tests.support.live_server import LiveServer
from tests.support.mcp_servers import stdio_command

SHOP = stdio_command("shop")


def _start_with_the_shop(server: LiveServer):
    """Start the server with the shop's stdio MCP server added, listed and allowed; its HTTP session."""
    server.start()
    http = server.http
    made = http.post(
        server.url("/api/tool-servers"), json={"name": "shop", "transport": "stdio", "command": SHOP}, timeout=30
    )
    assert made.status_code == 201, made.text
    listed = http.post(server.url(f"/api/tool-servers/{made.json()['id']}/refresh"), timeout=60).json()
    assert listed["last_error"] == "", listed
    assert (
        http.post(
            server.url("/api/policies"),
            json={"name": "allow shop", "effect": "allow", "match": {"tool": "shop.*"}},
            timeout=10,
        ).status_code
        == 201
    )
    return http


def _settled(server: LiveServer, execution_id: str, timeout: float) -> dict:
    """The execution once it is neither pending nor running, or as it is after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        body = server.http.get(server.url(f"/api/executions/{execution_id}"), timeout=5).json()
        if body["status"] not in ("pending", "running") or time.monotonic() > deadline:
            return body
        time.sleep(0.1)


@pytest.mark.parametrize("async_mode", ["gevent", "threading", "eventlet"])
def test_hanging_mcp_call_does_not_stall_other_requests(tmp_path, async_mode):
    server = LiveServer(
        tmp_path / "server",
        async_mode=async_mode,
        env={"COACH_MCP_STDIO_ALLOW": " ".join(SHOP), "COACH_MCP_CALL_TIMEOUT_S": "4"},
    )
    try:
        http = _start_with_the_shop(server)
        wf = http.post(
            server.url("/api/workflows"),
            json={"name": "hang", "steps": [{"id": "h", "tool": "shop.hang", "params": {"seconds": 60}}]},
            timeout=10,
        ).json()
        ex = http.post(
            server.url("/api/executions/"), json={"workflow_id": wf["id"], "mode": "normal"}, timeout=10
        ).json()
        started = time.monotonic()
        slowest, answered = 0.0, 0
        while time.monotonic() - started < 3.5:  # the call hangs meanwhile (its timeout is 4 s)
            t = time.monotonic()
            assert http.get(server.url("/api/tools"), timeout=5).status_code == 200
            slowest, answered = max(slowest, time.monotonic() - t), answered + 1
            time.sleep(0.05)
        print(f"{async_mode}: {answered} requests answered while an MCP call hung, slowest {slowest * 1000:.0f} ms")
        # a server stalled by the hanging call would answer nothing until the call's 4 s timeout: one request at
        # most in this window; a working one answers dozens (even a loaded machine answers several)
        assert answered >= 5, f"only {answered} requests answered in 3.5 s while an MCP call hung"
        body = _settled(server, ex["execution_id"], 20)
        assert body["status"] == "failed", body
        assert "did not answer hang within 4s" in body["steps"][0]["error"]
        # the server was stopped (it blocked its own loop) and is started again for the next call
        wf2 = http.post(
            server.url("/api/workflows"),
            json={"name": "add", "steps": [{"id": "a", "tool": "shop.add", "params": {"a": 20, "b": 22}}]},
            timeout=10,
        ).json()
        ex2 = http.post(
            server.url("/api/executions/"), json={"workflow_id": wf2["id"], "mode": "normal"}, timeout=10
        ).json()
        body = _settled(server, ex2["execution_id"], 30)
        assert body["status"] == "completed" and body["steps"][0]["output"]["text"] == "42", body
    finally:
        server.stop()
        server.http.close()


def test_a_crash_mid_call_names_the_exit_status_every_time_under_gevent(tmp_path):
    """The probe's finding: on the real server a stdio server that crashed mid-call failed the step with its exit
    status only sometimes ("the server process has exited"): once gevent's subprocess has been used (a shell.run
    step here), its SIGCHLD handler reaps any child of the process, the MCP server's included."""
    server = LiveServer(
        tmp_path / "server",
        async_mode="gevent",
        env={"COACH_MCP_STDIO_ALLOW": " ".join(SHOP), "COACH_MCP_CALL_TIMEOUT_S": "10", "COACH_SHELL_ALLOW": "true"},
    )
    try:
        http = _start_with_the_shop(server)
        assert (
            http.post(
                server.url("/api/policies"),
                json={"name": "allow true", "effect": "allow", "match": {"tool": "shell.run"}},
                timeout=10,
            ).status_code
            == 201
        )
        wf = http.post(
            server.url("/api/workflows"),
            json={
                "name": "crash",
                "steps": [
                    {"id": "sh", "tool": "shell.run", "params": {"command": ["true"]}},
                    {"id": "boom", "tool": "shop.crash"},
                ],
            },
            timeout=10,
        ).json()
        errors = []
        for _ in range(4):
            ex = http.post(
                server.url("/api/executions/"), json={"workflow_id": wf["id"], "mode": "normal"}, timeout=10
            ).json()
            body = _settled(server, ex["execution_id"], 30)
            assert body["status"] == "failed" and body["steps"][0]["status"] == "succeeded", body
            errors.append(body["steps"][1]["error"])
        assert all("exited with status 3" in e for e in errors), errors
    finally:
        server.stop()
        server.http.close()
