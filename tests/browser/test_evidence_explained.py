"""A lead reads why a workflow is (not) AUTO-ready (issue 40, item 19): the dashboard's Mode column is whole at
1280 px, and the workflow's page shows the e-value against its threshold and what the last decisions did to it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOTS, log_in
from tests.browser.dashboard_support import create_workflow, decide_many, decide_once

pytestmark = pytest.mark.browser


def test_the_dashboard_shows_the_mode_column_whole_and_the_workflow_page_explains_the_evidence(live_server, page):
    wf = create_workflow(live_server, "Refund review", "Checks a refund and pays it.")
    decide_many(live_server, wf["id"], ["accept"] * 30)
    decide_once(live_server, wf["id"], "correct", {"to": "billing@example.com", "cc": "none"})

    log_in(page, live_server)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(live_server.url("/dashboard"))
    workflows = page.get_by_role("region", name="Workflows by learning level")
    row = workflows.get_by_role("row").filter(has=page.get_by_role("link", name="Refund review", exact=True))
    mode = row.locator("[data-mode]")
    expect(mode).to_be_visible()
    # the Mode cell and its button lie inside the page and inside the table's scroll box: nothing is cut
    box = row.locator(".mode-cell").bounding_box()
    wrap = workflows  # the region is the table's scroll box (DataTable)
    wrap_box = wrap.bounding_box()
    assert box is not None and wrap_box is not None
    assert box["x"] + box["width"] <= min(1280, wrap_box["x"] + wrap_box["width"]) + 0.5, (box, wrap_box)
    assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth"), "the workflows table scrolls sideways at 1280 px"
    page.screenshot(path=str(SCREENSHOTS / "dashboard-1280.png"), full_page=True)

    row.get_by_role("link", name="Refund review", exact=True).click()
    trail = page.get_by_role("region", name="What the last decisions did", exact=True)
    expect(trail).to_contain_text("AUTO-ready needs 20.0")
    newest = trail.get_by_role("row").nth(1)
    expect(newest).to_contain_text("Corrected")
    expect(newest.locator("[data-effect]")).to_have_attribute("data-effect", "down")
    expect(newest).to_contain_text("more accepts in a row")
    trail.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "workflow-evidence-trail.png"), full_page=False)
