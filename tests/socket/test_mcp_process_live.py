"""Coach's two processes on the real server (`python wsgi.py`, gevent): the web process runs no asyncio loop, the MCP
process (asgi.py) serves the gateway and the MCP servers' sessions; their internal routes want the token made for
this start; a crash of the MCP process is survived (it is started again, nothing lost), SIGTERM stops both, and an
MCP process whose web process was killed ends itself. The project's own `shop` server over stdio is the upstream."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
import requests

from tests.support.gateway_agents import audit_calls, call, decide, make_agent, pending_gateway, text
from tests.support.live_server import LiveServer
from tests.support.mcp_servers import server_with_shop

HOLD_S = 3.0
ASYNCIO_LOOP = ("asyncio/base_events.py", "asyncio/runners.py", "asyncio/events.py")


@pytest.fixture(scope="module", params=["sqlite"])
def server(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("processes")
    with server_with_shop(
        request,
        folder / "server",
        trusted=True,
        policies=[
            {
                "name": "review tallies",
                "effect": "require_review",
                "reason": "tests",
                "match": {"tool": "shop.tally", "agent": "*"},
            },
            {"name": "lookups are fine", "effect": "allow", "reason": "tests", "match": {"tool": "shop.lookup"}},
        ],
        env={"COACH_GATEWAY_HOLD_S": str(HOLD_S), "COACH_TEST_THREADS_FILE": str(folder / "threads.json")},
    ) as live:
        live.threads_file = folder / "threads.json"
        yield live


def _stacks(server: LiveServer) -> dict[str, list[str]]:
    path = server.threads_file
    path.unlink(missing_ok=True)
    os.kill(server.process.pid, signal.SIGUSR1)
    server.wait_for(path.exists, timeout=10, message="the thread report")
    return json.loads(path.read_text())


def test_the_web_process_runs_no_asyncio_loop_while_mcp_tools_and_the_gateway_are_used(server):
    # a workflow step calls the MCP server (through the MCP process), an agent calls the gateway through :PORT/mcp
    wf = server.post(
        "/api/workflows",
        json={"name": "uses shop", "steps": [{"id": "find", "tool": "shop.lookup", "params": {"order_id": "A-1002"}}]},
    )
    assert wf.status_code == 201, wf.text
    started = server.post("/api/executions/", json={"workflow_id": wf.json()["id"], "mode": "normal"})
    assert started.status_code in (200, 201, 202), started.text
    done = server.wait_for(
        lambda: (
            (body := server.get(f"/api/executions/{started.json()['execution_id']}").json())["status"]
            not in ("pending", "running")
            and body
        ),
        message="the workflow's end",
    )
    assert done["status"] == "completed", done
    agent = make_agent(server, "thread-bot")
    listed = call(server, agent["token"], "shop.lookup", {"order_id": "A-1002"})
    assert listed.is_error is False, text(listed)
    stacks = _stacks(server)
    assert stacks, "no thread reported"
    looping = {ident: files for ident, files in stacks.items() if any(f.endswith(ASYNCIO_LOOP) for f in files)}
    assert looping == {}, looping
    # the pool's sessions are the MCP process's: its stdio server is its child, not the web process's
    web_children = open(f"/proc/{server.process.pid}/task/{server.process.pid}/children").read().split()
    assert web_children == [str(server.mcp_pid())]


def test_the_internal_routes_refuse_a_missing_or_wrong_token(server):
    http = requests.Session()
    http.trust_env = False
    body = {"server_id": "x", "tool": "lookup", "arguments": {}, "timeout": 5, "meta": {}}
    for path, payload in (
        ("/internal/toolservers/call", body),
        ("/internal/toolservers/list", {"server_id": "x"}),
        ("/internal/toolservers/forget", {"server_id": "x"}),
        ("/internal/wake", {"approval_ids": []}),
    ):
        for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": f"Bearer {server.token}"}):
            answer = http.post(server.mcp_url + path, json=payload, headers=headers, timeout=10)
            assert answer.status_code == 401, (path, headers, answer.text)
    for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": f"Bearer {server.token}"}):
        answer = http.post(server.url("/internal/events"), json={"events": []}, headers=headers, timeout=10)
        assert answer.status_code == 401, (headers, answer.text)
    # the token is nowhere in what the processes wrote
    logs = server.stdout_tail(10_000) + server.stderr_tail(10_000)
    assert "COACH_MCP_TOKEN=" not in logs and "Bearer " not in logs


def test_a_held_call_survives_a_sigkill_of_the_mcp_process_which_is_started_again(server):
    agent = make_agent(server, "survivor-bot")
    first = call(server, agent["token"], "shop.tally", {"label": "k1"})
    assert first.meta["io.coach/gateway"]["decision"] == "pending_review", text(first)
    approval = pending_gateway(server, "shop.tally", "survivor-bot")
    server.kill_mcp()  # the web process sees it die and starts it again
    assert "MCP process exited" in server.stderr_tail(200)
    assert pending_gateway(server, "shop.tally", "survivor-bot")["approval_id"] == approval["approval_id"]
    assert decide(server, approval["approval_id"], {"decision": "approve"}).status_code == 200
    again = call(server, agent["token"], "shop.tally", {"label": "k1"})
    assert again.is_error is False and text(again) == "1", text(again)
    assert [e["decision"] for e in audit_calls(server, "survivor-bot")] == ["approve", "require_review"]
    # and a workflow step reaches the new MCP process too (its pool starts the stdio server again)
    wf = server.post(
        "/api/workflows",
        json={"name": "after", "steps": [{"id": "f", "tool": "shop.lookup", "params": {"order_id": "A-1002"}}]},
    )
    started = server.post("/api/executions/", json={"workflow_id": wf.json()["id"], "mode": "normal"})
    done = server.wait_for(
        lambda: (
            (body := server.get(f"/api/executions/{started.json()['execution_id']}").json())["status"]
            not in ("pending", "running")
            and body
        ),
        message="the workflow's end",
    )
    assert done["status"] == "completed", done


def test_sigterm_stops_both_processes_and_a_killed_web_process_leaves_no_mcp_process(server):
    """Last in this module: it stops the server."""
    mcp = server.mcp_pid()
    assert server.stop() is not None
    deadline = time.monotonic() + 10
    while _alive(mcp) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(mcp), "the MCP process outlived SIGTERM of the web process"
    server.start()
    mcp = server.mcp_pid()
    server.kill()  # SIGKILL: the web process cannot stop its child; the child sees it gone and ends itself
    deadline = time.monotonic() + 10
    while _alive(mcp) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(mcp), "the MCP process outlived its killed web process"
    server.start()  # the ports are free again
    assert server.get("/healthz").status_code == 200


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False
