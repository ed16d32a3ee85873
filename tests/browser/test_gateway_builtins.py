"""Built-in tools for agents in Chromium against the real server: an admin ticks `echo` in "Built-in tools for
agents" on the Tools page and saves, and an agent (the official MCP Python SDK client) then lists `coach.echo` and
calls it through the gateway."""

from __future__ import annotations

import asyncio

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import FRONTEND_DIST, log_in
from tests.browser.test_dashboards import save_screenshot
from tests.support.gateway_agents import in_background, make_agent, mcp
from tests.support.live_server import LiveServer


@pytest.fixture
def gateway_server(tmp_path):
    with LiveServer(tmp_path / "server", demo="0", env={"COACH_FRONTEND_DIST": str(FRONTEND_DIST)}) as server:
        rule = {"name": "Agents may echo", "effect": "allow", "match": {"tool": "coach.echo", "agent": "*"}}
        assert server.http.post(server.url("/api/policies"), json=rule, timeout=10).status_code == 201
        yield server


def _agent_lists_and_echoes(server: LiveServer, token: str):
    async def go():
        async with mcp(server, token) as session:
            return await session.list_tools(), await session.call_tool("coach.echo", {"hello": "agent"})

    # in a thread of its own: Playwright's sync API keeps an event loop running in this one
    thread, box = in_background(asyncio.run, go())
    thread.join(60)
    if "error" in box:
        raise box["error"]
    return box["result"]


def test_an_admin_exposes_echo_and_an_agent_lists_and_calls_coach_echo(page, gateway_server):
    token = make_agent(gateway_server, "echo-agent")["token"]
    before, _ = _agent_lists_and_echoes(gateway_server, token)
    assert "coach.echo" not in {t.name for t in before.tools}  # none exposed by default

    log_in(page, gateway_server)
    page.get_by_role("link", name="Tools").click()
    form = page.get_by_role("form", name="Built-in tools for agents")
    echo = form.get_by_role("checkbox", name="coach.echo")
    expect(echo).not_to_be_checked()
    expect(form.get_by_role("checkbox", name="coach.shell.run")).to_be_visible()
    echo.check()
    form.get_by_role("button", name="Save").click()
    expect(form.get_by_role("status")).to_have_text("Saved.")
    expect(form.get_by_role("checkbox", name="coach.echo")).to_be_checked()
    save_screenshot(page, "tools-builtins.png")

    after, result = _agent_lists_and_echoes(gateway_server, token)
    tools = {t.name: t for t in after.tools}
    assert "coach.echo" in tools and tools["coach.echo"].annotations.read_only_hint is True
    assert "coach.shell.run" not in tools
    assert result.is_error is False and result.structured_content == {"hello": "agent"}
    page.reload()
    expect(
        page.get_by_role("form", name="Built-in tools for agents").get_by_role("checkbox", name="coach.echo")
    ).to_be_checked()  # kept
