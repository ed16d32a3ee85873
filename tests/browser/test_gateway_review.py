"""The MCP gateway in Chromium against the real server: an admin creates an agent identity on the Tools page (its
token shown once), an agent (the official MCP Python SDK client) calls a tool a policy holds for review, a reviewer
edits and approves it in the queue, and the agent's waiting call receives the upstream server's result."""

from __future__ import annotations

import asyncio
import threading

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import FRONTEND_DIST, log_in
from tests.browser.test_dashboards import save_screenshot
from tests.support.gateway_agents import mcp
from tests.support.live_server import LiveServer
from tests.support.mcp_servers import stdio_command

SHOP = stdio_command("shop")


@pytest.fixture
def gateway_server(tmp_path):
    with LiveServer(
        tmp_path / "server",
        demo="0",
        env={
            "COACH_FRONTEND_DIST": str(FRONTEND_DIST),
            "COACH_MCP_STDIO_ALLOW": " ".join(SHOP),
            "COACH_GATEWAY_HOLD_S": "60",
        },
    ) as server:
        made = server.http.post(
            server.url("/api/tool-servers"),
            json={"name": "shop", "transport": "stdio", "command": SHOP, "trusted": True},
            timeout=30,
        )
        assert made.status_code == 201, made.text
        listed = server.http.post(server.url(f"/api/tool-servers/{made.json()['id']}/refresh"), timeout=60).json()
        assert listed["last_error"] == "", listed
        rule = {
            "name": "Agents' sums are checked",
            "effect": "require_review",
            "reason": "a person checks the amounts",
            "match": {"tool": "shop.add", "agent": "*"},
        }
        assert server.http.post(server.url("/api/policies"), json=rule, timeout=10).status_code == 201
        yield server


def _call_in_background(server: LiveServer, token: str, box: dict) -> threading.Thread:
    async def go():
        async with mcp(server, token, read_s=120) as client:
            return await client.call_tool("shop.add", {"a": 2, "b": 2})

    def run():
        try:
            box["result"] = asyncio.run(go())
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_reviewer_edits_and_approves_an_agents_held_call_in_the_queue_and_the_agent_gets_the_result(
    page, gateway_server
):
    log_in(page, gateway_server)
    page.get_by_role("link", name="Tools").click()
    page.get_by_label("Agent name").fill("claude-code")
    page.get_by_label("Description").fill("Ada's laptop")
    page.get_by_role("button", name="Create agent").click()
    token_field = page.get_by_label("The new agent's token")
    expect(token_field).to_be_visible()
    token = token_field.input_value()
    assert token.startswith("coach_agent_")
    expect(page.get_by_text("claude mcp add --transport http coach")).to_contain_text(f"Bearer {token}")
    expect(
        page.get_by_role("table", name="Agent identities").get_by_role("row").filter(has_text="claude-code")
    ).to_contain_text("active")
    save_screenshot(page, "tools-agents.png")
    page.get_by_role("button", name="Done, hide it").click()
    expect(token_field).to_have_count(0)  # shown once

    box: dict = {}
    thread = _call_in_background(gateway_server, token, box)
    page.get_by_role("link", name="Queue").click()
    approvals = page.get_by_role("listbox", name="Pending approvals")
    expect(approvals.get_by_role("option")).to_have_count(1)
    expect(approvals.get_by_role("option")).to_contain_text("agent claude-code")
    card = page.get_by_role("region", name="Agent call (MCP gateway): shop.add")
    expect(card.get_by_test_id("approval-agent")).to_have_text("claude-code")
    expect(card.get_by_test_id("approval-params")).to_contain_text('"a": 2')
    expect(card).to_contain_text("a person checks the amounts")
    save_screenshot(page, "queue-gateway-call.png")
    assert "result" not in box  # the agent's call is still waiting

    page.keyboard.press("e")
    dialog = page.get_by_role("dialog")
    field = dialog.get_by_label("Params (JSON)")
    field.fill('{"a": 20, "b": 22}')
    dialog.get_by_role("button", name="Approve with these params").click()
    expect(approvals).to_have_count(0)
    thread.join(30)
    assert "error" not in box, box.get("error")
    result = box["result"]
    assert result.is_error is False and result.content[-1].text == "42"
    assert result.content[0].text.startswith("A reviewer (") and "a: 2 → 20; b: 2 → 22" in result.content[0].text
