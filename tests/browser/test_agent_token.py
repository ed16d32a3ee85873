"""The agent token panel (issue #40, item 14), in Chromium: Copy token and Copy command put on the clipboard what
each says and say "Copied"; after Revoke, the token and the Claude Code command are no longer on the page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import collect_errors, page_errors
from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def test_copy_says_copied_and_copies_the_command_and_a_revoked_agents_token_leaves_the_page(live_server, page):
    errors = collect_errors(page)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.base_url)
    log_in(page, live_server)
    page.get_by_role("link", name="Tools").click()
    page.get_by_label("Agent name").fill("claude-code-ada")
    page.get_by_role("button", name="Create agent").click()
    box = page.get_by_role("status").filter(has_text="Copy its token now")
    token = box.get_by_label("The new agent's token").input_value()
    command = box.get_by_text("claude mcp add --transport http coach").inner_text()
    assert f"Bearer {token}" in command

    box.get_by_role("button", name="Copy command").click()
    expect(box.get_by_role("button", name="✓ Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == command
    page.screenshot(path=str(SCREENSHOTS / "agent-token-copied.png"), full_page=False)
    box.get_by_role("button", name="Copy token").click()
    expect(box.get_by_text("Copy token: copied to the clipboard.")).to_be_attached()
    assert page.evaluate("navigator.clipboard.readText()") == token

    page.get_by_role("button", name="Revoke agent claude-code-ada").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke agent").click()
    expect(page.get_by_text("Agent “claude-code-ada” was revoked: its token is refused")).to_be_visible()
    expect(page.get_by_label("The new agent's token")).to_have_count(0)
    expect(page.get_by_text("claude mcp add")).to_have_count(0)
    assert token not in page.content()
    expect(
        page.get_by_role("table", name="Agent identities").get_by_role("row").filter(has_text="claude-code-ada")
    ).to_contain_text("revoked")
    assert page_errors(errors) == []
