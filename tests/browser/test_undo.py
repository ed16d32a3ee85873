"""Taking a decision back (issue #31 item 4), as a person does in Chromium on the real server: accepting a
destructive step (Enter confirms) holds it for the workspace's undo window, with a countdown; `z` takes it back and
the suggestion is on the panel again, pending, and the step never ran."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import (
    collect_errors,
    create_workflow,
    execution,
    expect_suggestion,
    open_panel,
    pending_suggestion,
    start_coaching,
)
from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def test_z_takes_back_an_accepted_destructive_step(live_server, page):
    assert live_server.request("PUT", "/api/workspace/undo", json={"window_s": 60}).status_code == 200
    wf = create_workflow(
        live_server,
        "Clean up exports",
        [
            {
                "id": "delete",
                "name": "Delete the old exports",
                "type": "action",
                "tool": "shell.run",
                "params": {"command": ["rm", "-r", "exports/2025"]},
            },
        ],
    )
    execution_id = start_coaching(live_server, wf["id"])
    suggestion = pending_suggestion(live_server, execution_id)
    log_in(page, live_server)
    errors = collect_errors(page)
    open_panel(page, live_server, execution_id)

    expect_suggestion(page, "Delete the old exports")
    page.keyboard.press("a")
    expect(page.get_by_role("button", name="Confirm accept Enter")).to_be_visible()
    page.keyboard.press("Enter")

    bar = page.get_by_test_id("undo-bar")
    expect(bar).to_contain_text("Accepted Delete the old exports")
    expect(bar).to_contain_text("It acts in")
    expect(page.get_by_role("button", name="Undo z Ctrl+Z")).to_be_enabled()
    page.screenshot(path=str(SCREENSHOTS / "undo-bar.png"))
    assert execution(live_server, execution_id)["gate"]["kind"] == "held"

    page.keyboard.press("z")
    expect(bar).to_have_count(0)
    expect_suggestion(page, "Delete the old exports")
    again = pending_suggestion(live_server, execution_id)
    assert again["suggestion_id"] == suggestion["suggestion_id"] and again["status"] == "pending"
    ex = execution(live_server, execution_id)
    assert ex["status"] == "waiting_decision" and ex["steps"][0]["status"] == "waiting"  # it never ran
    stats = live_server.get(f"/api/executions/{execution_id}/coaching/stats").json()
    assert stats["accepted"] == 0  # a decision taken back is not counted
    assert errors == []
