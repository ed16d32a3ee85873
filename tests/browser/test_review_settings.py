"""Settings → Attentive reviews in Chromium against the real server (issue #41 item 6): a lead turns check
suggestions on and takes the readiness evidence from attentive reviewers only; a rate above the server's bound is
refused with the server's 422 beside the field; the page stays within 800 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOTS, log_in
from tests.browser.test_layout import WIDEST_JS, page_width
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.browser


def test_a_lead_sets_the_review_settings_and_reads_the_servers_422_beside_the_field(live_server: LiveServer, page):
    log_in(page, live_server)
    page.goto(live_server.url("/settings"))
    form = page.get_by_role("form", name="Attentive reviews")
    rate = form.get_by_label("Check suggestions: share of suggestions", exact=True)
    expect(rate).to_have_value("0")
    expect(form.get_by_role("radio", name="Every decision")).to_be_checked()

    # a rate above the server's bound: the server's words beside the field, which gets the focus
    rate.fill("0.5")
    form.get_by_role("button", name="Save").click()
    expect(rate).to_have_attribute("aria-invalid", "true")
    error = form.locator(".field-error")
    expect(error).to_have_text(
        "✕ Check suggestions: share of suggestions: Must be greater than or equal to 0 and less than or equal to 0.2."
    )
    expect(rate).to_be_focused()
    page.evaluate("document.activeElement && document.activeElement.blur()")
    form.screenshot(path=str(SCREENSHOTS / "review-settings.png"))
    assert live_server.get("/api/workspace/reviews").json()["check_rate"] == 0  # nothing changed

    # with the keyboard: the rate, the evidence from attentive reviewers, a bar back to its default
    rate.fill("0.05")
    form.get_by_role("radio", name="Only attentive reviewers' decisions").check()
    catch = form.get_by_label("Catch rate, at least", exact=True)
    catch.fill("0.9")
    catch.press("Enter")
    expect(form.get_by_role("status")).to_contain_text("Saved: check suggestions")
    expect(form.locator(".field-error")).to_have_count(0)
    saved = live_server.get("/api/workspace/reviews").json()
    assert (saved["check_rate"], saved["evidence_from"], saved["min_catch_rate"]) == (0.05, "attentive", 0.9)
    audit = live_server.get("/api/audit?action=review_settings").json()["items"]
    assert audit and audit[0]["after"]["check_rate"] == 0.05, audit

    page.reload()
    expect(page.get_by_role("form", name="Attentive reviews").get_by_label("Catch rate, at least")).to_have_value("0.9")
    page.set_viewport_size({"width": 800, "height": 860})
    scroll, window = page_width(page)
    assert scroll <= window, f"/settings is {scroll} px wide in a {window} px window: {page.evaluate(WIDEST_JS)}"
