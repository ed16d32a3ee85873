"""Risky keys are confirmed (issue #31 item 4): `a` on a destructive step, or on a call the policy flagged, decides
nothing until the confirming key (Enter); Escape cancels; a read step stays one key. In Chromium, on the real server."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import (
    collect_errors,
    confirm_with_enter,
    create_workflow,
    execution,
    expect_suggestion,
    open_panel,
    pending_suggestion,
    start_coaching,
)
from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def _suggestion_status(server, execution_id: str) -> str | None:
    current = server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]
    return current["status"] if current else None


def test_a_on_a_destructive_step_decides_nothing_until_enter(live_server, page):
    wf = create_workflow(
        live_server,
        "Clean up exports",
        [
            {"id": "look", "name": "List the exports", "type": "action", "tool": "echo", "params": {"message": "ls"}},
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
    log_in(page, live_server)
    errors = collect_errors(page)
    open_panel(page, live_server, execution_id)

    # a read step: one key
    expect_suggestion(page, "List the exports")
    expect(page.get_by_role("button", name="Accept a", exact=True)).to_be_visible()
    page.keyboard.press("a")
    expect_suggestion(page, "Delete the old exports")
    assert execution(live_server, execution_id)["steps"][0]["decision"] == "accept"

    # the destructive step: the button says it takes a confirming key
    accept = page.get_by_role("button", name="Accept a then Enter")
    expect(accept).to_be_visible()
    page.keyboard.press("a")
    prompt = page.get_by_test_id("confirm-prompt")
    expect(prompt).to_contain_text("Press Enter to accept Delete the old exports (shell.run; destructive).")
    expect(page.get_by_role("button", name="Confirm accept Enter")).to_be_visible()
    time.sleep(1)  # nothing was sent meanwhile
    assert _suggestion_status(live_server, execution_id) == "pending"

    # Escape cancels: a later Enter decides nothing
    page.keyboard.press("Escape")
    expect(prompt).to_have_count(0)
    page.keyboard.press("Enter")
    time.sleep(0.5)
    assert _suggestion_status(live_server, execution_id) == "pending"
    expect(page.get_by_role("heading", level=2, name="Suggestion: Delete the old exports")).to_be_visible()

    # s arms the skip; a then replaces it with the accept, which Enter confirms
    page.keyboard.press("s")
    expect(prompt).to_contain_text("Press Enter to skip Delete the old exports")
    page.keyboard.press("a")
    expect(page.get_by_role("button", name="Confirm accept Enter")).to_be_visible()
    page.keyboard.press("Enter")
    expect(prompt).to_have_count(0)
    live_server.wait_for(
        lambda: execution(live_server, execution_id)["steps"][1]["decision"] == "accept",
        message="the destructive step accepted",
    )
    assert errors == []


def test_a_on_a_payment_the_policy_flagged_asks_for_enter(live_server, page):
    rule = live_server.post(
        "/api/policies",
        json={
            "name": "Big payments",
            "effect": "require_review",
            "reason": "payments over 1,000 are checked",
            "match": {"tool": "echo", "params": "params.amount > 1000"},
        },
    )
    assert rule.status_code == 201, rule.text
    wf = create_workflow(
        live_server,
        "Supplier payment",
        [
            {
                "id": "pay",
                "name": "Pay the supplier",
                "type": "action",
                "tool": "echo",
                "params": {"to": "ACME Tools Ltd", "amount": 1840, "currency": "EUR"},
            },
        ],
    )
    execution_id = start_coaching(live_server, wf["id"])
    assert pending_suggestion(live_server, execution_id)["policy"]["effect"] == "require_review"
    log_in(page, live_server)
    open_panel(page, live_server, execution_id)
    expect_suggestion(page, "Pay the supplier")
    page.keyboard.press("a")
    expect(page.get_by_test_id("confirm-prompt")).to_contain_text(
        'Press Enter to accept Pay the supplier (echo, amount 1,840; flagged by the policy "Big payments").'
    )
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.evaluate("window.scrollBy(0, 120)")  # the panel scrolled the prompt into view; show a little below it
    page.screenshot(path=str(SCREENSHOTS / "confirm-key.png"), full_page=False)
    assert _suggestion_status(live_server, execution_id) == "pending"
    confirm_with_enter(page, "a", page.get_by_test_id("confirm-prompt"))
    live_server.wait_for(
        lambda: execution(live_server, execution_id)["steps"][0]["decision"] == "accept", message="the payment accepted"
    )
