"""The Tools page in Chromium against the real server: an admin adds an MCP server (the project's own, over
stdio), sees its tools with risk and source, tests it, and removes it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import FRONTEND_DIST, log_in
from tests.browser.test_dashboards import save_screenshot
from tests.support.live_server import REPO_ROOT, LiveServer
from tests.support.mcp_servers import stdio_command

SHOP = stdio_command("shop")


@pytest.fixture
def mcp_server(tmp_path):
    with LiveServer(
        tmp_path / "server",
        demo="0",
        env={"COACH_FRONTEND_DIST": str(FRONTEND_DIST), "COACH_MCP_STDIO_ALLOW": " ".join(SHOP)},
    ) as server:
        yield server


def test_admin_adds_tests_and_removes_an_mcp_server(page, mcp_server):
    log_in(page, mcp_server)
    page.get_by_role("link", name="Tools").click()
    expect(page.get_by_role("heading", name="Tools", level=1)).to_be_visible()
    table = page.get_by_role("table", name="Every tool")
    expect(table.get_by_role("row").filter(has_text="http.request")).to_contain_text("built in")

    # a command the configuration does not allow: the 422 lands on the Command field
    page.get_by_role("button", name="Add MCP server").click()
    page.get_by_label("Name", exact=True).fill("evil")
    page.get_by_label("Transport").select_option("stdio")
    page.get_by_label("Command").fill("rm -rf /tmp/nothing")
    page.get_by_role("button", name="Add and list tools").click()
    expect(page.get_by_role("alert").filter(has_text="not allowed")).to_be_visible()

    page.get_by_label("Name", exact=True).fill("shop")
    page.get_by_label("Command").fill(" ".join(SHOP))
    page.get_by_role("button", name="Add and list tools").click()
    card = page.get_by_role("listitem").filter(has=page.get_by_role("heading", name="shop"))
    expect(card).to_contain_text("tools, listed")
    row = table.get_by_role("row").filter(has_text="shop.lookup")
    expect(row).to_contain_text("MCP server shop")
    expect(row).to_contain_text("destructive")  # untrusted: its readOnlyHint is a hint only
    expect(row).to_contain_text("order_id: string*")
    row.get_by_text("order_id: string*").click()
    expect(row.locator("pre")).to_contain_text('"order_id"')
    # the docs' picture shows the command relative to the checkout, not this machine's folders
    page.evaluate(
        """(root) => { for (const el of document.querySelectorAll('main *')) {
        if (el.children.length === 0 && el.textContent.includes(root)) el.textContent =
        el.textContent.split(root).join('./');
    } }""",
        str(REPO_ROOT) + "/",
    )
    save_screenshot(page, "tools.png")

    card.get_by_role("button", name="Test (list tools)").click()
    expect(card.get_by_role("button", name="Test (list tools)")).to_be_enabled()
    expect(card).not_to_contain_text("could not")

    card.get_by_role("button", name="Remove").click()
    page.get_by_role("dialog").get_by_role("button", name="Remove").click()
    expect(table.get_by_role("row").filter(has_text="shop.lookup")).to_have_count(0)
