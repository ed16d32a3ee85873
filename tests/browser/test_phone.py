"""The queue on a phone (issue 40, item 18): a 390x844 touch screen sees the work first (filters folded, no keyboard
hint), tool names whole, and a risky decision asks to tap Confirm."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import create_workflow, pending_suggestion, start_coaching
from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def test_a_phone_sees_the_queue_first_and_taps_confirm_on_a_risky_call(live_server, browser):
    wf = create_workflow(
        live_server,
        "Service check",
        [
            {
                "id": "ping",
                "name": "Ping the service",
                "tool": "http.request",
                "params": {"url": "https://status.example.com/healthz", "method": "GET"},
            }
        ],
    )
    execution_id = start_coaching(live_server, wf["id"])
    pending_suggestion(live_server, execution_id)
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        log_in(page, live_server)
        page.goto(live_server.url("/queue"))
        expect(page.get_by_role("heading", name="Queue", level=1)).to_be_visible()
        filters = page.locator("details.queue__filters-fold")
        expect(filters).to_be_visible()
        expect(filters).not_to_have_attribute("open", "")
        expect(page.locator("#queue-hint")).to_have_count(0)
        row = page.get_by_role("option").filter(has_text="Ping the service").first
        expect(row).to_be_in_viewport()  # the work is on the first screen
        page.screenshot(path=str(SCREENSHOTS / "queue-phone.png"))

        page.goto(live_server.url(f"/executions/{execution_id}/coach"))
        page.get_by_role("button", name="Accept", exact=False).first.tap()
        prompt = page.get_by_test_id("confirm-prompt")
        expect(prompt).to_contain_text("Tap Confirm to accept")
        expect(prompt).not_to_contain_text("Press Enter")
        page.screenshot(path=str(SCREENSHOTS / "coaching-phone-confirm.png"))
        prompt.get_by_role("button", name="Confirm").tap()
        expect(prompt).to_have_count(0)
    finally:
        context.close()
