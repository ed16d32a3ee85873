"""Both eras of the protocol at the gateway's one endpoint (/mcp): a 1.x-era agent (the MCP Python SDK 1.x's client,
the initialize handshake of a revision before 2026-07-28, run from .venv-mcp1 as a subprocess:
tests/support/mcp1_agent.py) and the 2.x SDK's Client (server/discover, 2026-07-28; and its mode='legacy'), against
the real server with the project's own MCP server over stdio as the upstream. Reviews are decided through the REST
API as a lead would in the queue."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from tests.support.gateway_agents import call, decide, in_background, make_agent, mcp, pending_gateway, text
from tests.support.live_server import REPO_ROOT
from tests.support.mcp1 import MCP1_PYTHON, mcp1_has
from tests.support.mcp_servers import server_with_shop

AGENT = REPO_ROOT / "tests" / "support" / "mcp1_agent.py"
HOLD_S = 6.0
HANDSHAKE_ERA = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

pytestmark = pytest.mark.skipif(not mcp1_has("mcp"), reason="no .venv-mcp1 with mcp 1.x (run `make setup-dev`)")


@pytest.fixture(scope="module", params=["sqlite"])
def server(request, tmp_path_factory):
    rules = [
        ("slow is fine", "allow", "shop.slow"),
        ("review sums", "require_review", "shop.add"),
        ("no refunds by bots", "deny", "shop.refund"),
    ]
    policies = [
        {"name": name, "effect": effect, "reason": f"{name} (tests)", "match": {"tool": tool, "agent": "*"}}
        for name, effect, tool in rules
    ]
    with server_with_shop(
        request,
        tmp_path_factory.mktemp("gateway-eras") / "server",
        trusted=True,
        policies=policies,
        env={"COACH_GATEWAY_HOLD_S": str(HOLD_S), "COACH_GATEWAY_PROGRESS_S": "0.5"},
    ) as live:
        yield live


def mcp1_agent(server, token: str, steps: list) -> dict:
    done = subprocess.run(
        [str(MCP1_PYTHON), str(AGENT), server.url("/mcp"), token],
        input=json.dumps(steps),
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, f"the 1.x agent failed ({done.returncode}): {done.stderr[-3000:]}"
    return json.loads(done.stdout)


def texts(result: dict) -> str:
    return "\n".join(b["text"] for b in result["content"] if b.get("type") == "text")


def test_a_1x_agent_gets_a_handshake_era_session_and_the_workspace_tools(server):
    agent = make_agent(server, "mcp1-lister")
    answers = mcp1_agent(
        server,
        agent["token"],
        [
            ["list"],
            ["call", "shop.slow", {"seconds": 0.1}, False],
            ["call", "shop.refund", {"order_id": "A-1001", "amount": 5}, False],
        ],
    )
    assert answers["protocol_version"] in HANDSHAKE_ERA and answers["server"]["name"] == "coach"
    listed, slow, refund = answers["steps"]
    tools = {t["name"]: t for t in listed["tools"]}
    assert tools["shop.lookup"]["inputSchema"]["properties"]["order_id"]["type"] == "string"
    assert tools["shop.lookup"]["annotations"]["readOnlyHint"] is True
    assert slow.get("isError") is False and texts(slow) == "slept 0.1"
    assert refund["isError"] is True and "no refunds by bots" in texts(refund)


def test_a_1x_agents_held_call_gets_progress_and_then_the_approved_result(server):
    agent = make_agent(server, "mcp1-reviewed")
    thread, box = in_background(mcp1_agent, server, agent["token"], [["call", "shop.add", {"a": 2, "b": 3}, True]])
    approval = pending_gateway(server, "shop.add", "mcp1-reviewed")
    assert approval["params"] == {"a": 2, "b": 3}
    assert decide(server, approval["approval_id"], {"decision": "approve", "comment": "fine"}).status_code == 200
    thread.join(60)
    assert "error" not in box, box.get("error")
    [result] = box["result"]["steps"]
    assert result.get("isError") is False and texts(result) == "5"
    assert result["progress"] and "held for a person's review" in result["progress"][0][2]


def test_the_2x_client_speaks_2026_07_28_and_the_handshake_when_asked(server):
    agent = make_agent(server, "eras-bot")

    async def go(mode: str):
        async with mcp(server, agent["token"], mode) as client:
            tools = await client.list_tools()
            result = await client.call_tool("shop.slow", {"seconds": 0})
            return client.protocol_version, client.server_info, tools, result

    for mode in ("auto", "legacy"):
        version, info, tools, result = asyncio.run(go(mode))
        assert version == ("2026-07-28" if mode == "auto" else "2025-11-25"), mode
        assert info is not None and info.name == "coach"
        assert "shop.add" in {t.name for t in tools.tools}
        assert result.is_error is False and text(result) == "slept 0.0"
    # a held call's progress reaches a legacy-mode agent too
    progress: list = []
    thread, box = in_background(
        call, server, agent["token"], "shop.add", {"a": 1, "b": 1}, progress=progress, mode="legacy"
    )
    approval = pending_gateway(server, "shop.add", "eras-bot")
    assert decide(server, approval["approval_id"], {"decision": "approve"}).status_code == 200
    thread.join(60)
    assert "error" not in box, box.get("error")
    assert box["result"].is_error is False and text(box["result"]) == "2"
    assert progress and "held for a person's review" in progress[0][2]
