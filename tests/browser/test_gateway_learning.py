"""Learning per MCP gateway tool in Chromium against the real server: an admin sees on the Tools page what a tool's
reviews showed (its level, the e-value against its threshold, each agent's numbers), forces it into AUTO with a
reason, and the agent's next call (the official MCP Python SDK client) is forwarded without a hold."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import FRONTEND_DIST, SCREENSHOTS, log_in
from tests.socket.test_gateway_learning_live import review
from tests.support.gateway_agents import call, in_background, make_agent, text
from tests.support.live_server import LiveServer
from tests.support.mcp_servers import stdio_command

SHOP = stdio_command("shop")


def off_the_page_loop(fn, *args):
    """fn(*args) in a thread of its own: Playwright's sync API keeps an event loop running in this one, and the MCP
    client runs one of its own (asyncio.run)."""
    thread, box = in_background(fn, *args)
    thread.join(60)
    if "error" in box:
        raise box["error"]
    return box["result"]


@pytest.fixture
def learning_server(tmp_path):
    with LiveServer(
        tmp_path / "server",
        demo="0",
        env={
            "COACH_FRONTEND_DIST": str(FRONTEND_DIST),
            "COACH_MCP_STDIO_ALLOW": " ".join(SHOP),
            "COACH_GATEWAY_HOLD_S": "0.3",
            "COACH_SPOT_CHECK_RATE": "0",
        },
    ) as server:
        # not trusted: the workspace default holds every call of its tools (destructive), which AUTO may lift
        made = server.http.post(
            server.url("/api/tool-servers"),
            json={"name": "shop", "transport": "stdio", "command": SHOP, "trusted": False},
            timeout=30,
        )
        assert made.status_code == 201, made.text
        listed = server.http.post(server.url(f"/api/tool-servers/{made.json()['id']}/refresh"), timeout=60).json()
        assert listed["last_error"] == "", listed
        yield server


def test_an_admin_reads_a_tools_evidence_forces_it_into_auto_and_the_agents_next_call_is_not_held(
    page, learning_server: LiveServer
):
    agent = make_agent(learning_server, "sum-bot")
    for i in range(3):
        off_the_page_loop(
            review, learning_server, agent["token"], "sum-bot", "shop.add", {"a": i, "b": 1}, {"decision": "approve"}
        )
    off_the_page_loop(
        review, learning_server, agent["token"], "sum-bot", "shop.add", {"a": 9, "b": 1}, {"decision": "reject"}
    )

    log_in(page, learning_server)
    page.get_by_role("link", name="Tools").click()
    table = page.get_by_role("table", name="Gateway tools")
    row = table.get_by_role("row").filter(has=page.get_by_role("rowheader", name="shop.add", exact=True))
    expect(row).to_contain_text("Observation")
    expect(row).to_contain_text("75%")  # 3 of 4 accepted
    expect(row).to_contain_text("of the 20.0 needed")
    expect(table.get_by_role("row").filter(has_text="for agent sum-bot")).to_contain_text("Follows the tool")
    identities = page.get_by_role("table", name="Agent identities: their decisions across tools")
    expect(identities.get_by_role("row").filter(has_text="sum-bot")).to_contain_text("4")
    expect(row.get_by_role("button", name="Promote shop.add to AUTO")).to_have_count(0)  # not AUTO-ready
    # the table reads whole at 1280 px: no sideways scrolling (issue #40 item 17)
    assert page.viewport_size["width"] == 1280
    wrap = page.get_by_role("region", name="Gateway tools", exact=True)
    assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth"), (
        "the gateway tools table scrolls sideways at 1280 px"
    )
    # the tool's regions, read when opened
    page.get_by_role("button", name="Show the regions of shop.add").click()
    regions = page.get_by_role("region", name="Regions of gateway tool shop.add", exact=True)
    expect(regions).to_contain_text("No region yet")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.get_by_role("region", name="Learning per gateway tool").screenshot(
        path=str(SCREENSHOTS / "gateway-learning.png")
    )

    row.get_by_role("button", name="Force into AUTO… shop.add").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("button", name="Force into AUTO").click()
    expect(dialog.get_by_text("A forced promotion needs a reason")).to_be_visible()
    dialog.get_by_label("Why overrule the evidence? (kept in the audit log)").fill("sums are read-only here")
    dialog.get_by_role("button", name="Force into AUTO").click()
    expect(page.get_by_role("status").filter(has_text="shop.add is in AUTO")).to_be_visible()
    expect(row).to_contain_text("AUTO (spot checks)")

    forwarded = off_the_page_loop(call, learning_server, agent["token"], "shop.add", {"a": 20, "b": 22})
    assert forwarded.is_error is False and text(forwarded) == "42"
    assert forwarded.meta["io.coach/gateway"]["decision"] == "auto"
    audit = learning_server.http.get(learning_server.url("/api/audit?action=gateway_promotion"), timeout=10).json()
    assert audit["items"][0]["after"]["forced"] is True
    assert audit["items"][0]["after"]["reason"] == "sums are read-only here"
