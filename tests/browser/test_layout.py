"""Faults seen on screen (issue #17, item 5): long ids stay in their box, the connection banner does not flash on
load. (An operator not shown the lead's buttons: the component tests, DashboardPage / WorkflowDetailPage /
CorrectionPacksPage.)"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in
from tests.browser.dashboard_support import create_workflow, decide_once
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.browser

CORRECTED = {"to": "billing@example.com", "cc": "none"}
# records, from the very first script of each page, whether the connection banner was ever in the page
BANNER_WATCH = """
window.__bannerSeen = false;
new MutationObserver(() => {
  if (document.querySelector('.connection-banner')) window.__bannerSeen = true;
}).observe(document, {subtree: true, childList: true});
"""


def box(locator) -> dict:
    found = locator.bounding_box()
    assert found is not None, locator
    return found


def inside(inner: dict, outer: dict) -> bool:
    return inner["x"] >= outer["x"] - 0.5 and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5


@pytest.mark.parametrize("width", [1280, 1024, 800])
def test_the_execution_summary_keeps_the_workflow_id_apart_from_the_mode(live_server, page, width):
    wf = create_workflow(live_server, "Mail intake")
    started = live_server.post("/api/executions/coaching", json={"workflow_id": wf["id"]}).json()
    log_in(page, live_server)
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(live_server.url(f"/executions/{started['execution_id']}"))
    summary = page.locator("dl.summary")
    expect(summary).to_contain_text(wf["id"])
    cells = summary.locator(":scope > div")
    workflow = cells.filter(has=page.locator("dt", has_text="Workflow"))
    mode = cells.filter(has=page.locator("dt", has_text="Mode"))
    # the value's text stays inside its own box (a box does not grow with text that overflows it)
    overflow = workflow.locator("dd").evaluate("el => el.scrollWidth - el.clientWidth")
    assert overflow <= 0, f"the workflow id runs {overflow}px out of its box at width {width}"
    assert inside(box(workflow.locator("dd")), box(workflow))
    expect(mode.locator("dd")).to_be_visible()
    # the workflow by its name (issue #31: its id alone said nothing), linked to its page
    expect(workflow.locator("dd").get_by_role("link", name="Mail intake")).to_have_attribute(
        "href", f"/workflows/{wf['id']}"
    )


def test_the_connection_banner_does_not_flash_on_load_and_has_a_style(live_server, page):
    page.add_init_script(BANNER_WATCH)
    log_in(page, live_server)
    for path in ("/queue", "/workflows", "/dashboard"):
        page.goto(live_server.url(path))
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        page.wait_for_timeout(800)
        assert page.evaluate("window.__bannerSeen") is False, f"the banner flashed on {path}"
    # it still says so when the connection is lost, styled as a banner
    page.context.set_offline(True)
    page.evaluate("() => window.dispatchEvent(new Event('offline'))")
    banner = page.locator(".connection-banner")
    try:
        expect(banner).to_be_visible()
        assert banner.evaluate("el => getComputedStyle(el).paddingTop") != "0px"
    finally:
        page.context.set_offline(False)


def test_a_learned_rules_pack_link_stays_inside_the_suggestion_card(live_server: LiveServer, page):
    wf = create_workflow(live_server, "Invoice intake")
    for _ in range(3):
        decide_once(live_server, wf["id"], "correct", CORRECTED)
    started = live_server.post("/api/executions/coaching", json={"workflow_id": wf["id"]}).json()
    live_server.wait_for(
        lambda: live_server.get(f"/api/executions/{started['execution_id']}/coaching/suggestion").json()["suggestion"],
        message="the suggestion",
    )
    log_in(page, live_server)
    page.set_viewport_size({"width": 900, "height": 800})
    page.goto(live_server.url(f"/executions/{started['execution_id']}/coach"))
    link = page.locator("dl.facts a[href^='/correction-packs?pack=']")
    expect(link).to_be_visible()
    facts = link.locator("xpath=ancestor::dl[1]")
    for line in link.evaluate("el => [...el.getClientRects()].map(r => ({x: r.x, width: r.width}))"):
        assert inside(line, box(facts)), (line, box(facts))


# what runs past the window's right edge, leaving out what scrolls inside a box of its own (a table's .table-wrap)
WIDEST_JS = """() => {
  const scrolls = (e) => { for (let p = e.parentElement; p; p = p.parentElement) {
    if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true; } return false; };
  return [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
    .filter((e) => !scrolls(e)).slice(0, 8)
    .map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right) + ' ' +
    (e.textContent || '').slice(0, 40));
}"""


def page_width(page) -> tuple[int, int]:
    return page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")


def test_executions_and_settings_hold_at_800_px_even_with_a_200_character_token_name(live_server, page):
    """Issue #31, item 9: nothing scrolls sideways at 800 px: the executions table (long ids, variables) and a token
    with the longest name the API takes (200 characters, unbroken) on Settings."""
    wf = create_workflow(live_server, "Mail intake")
    for _ in range(2):
        live_server.post("/api/executions/coaching", json={"workflow_id": wf["id"]})
    name = "t" * 200  # the longest the API takes
    assert live_server.post("/api/auth/tokens", json={"name": name}).status_code == 201
    log_in(page, live_server)
    page.set_viewport_size({"width": 800, "height": 800})

    page.goto(live_server.url("/executions"))
    expect(page.get_by_role("table").get_by_role("row")).to_have_count(3)
    scroll, window = page_width(page)
    assert scroll <= window, f"/executions is {scroll} px wide in a {window} px window: {page.evaluate(WIDEST_JS)}"

    page.goto(live_server.url("/settings"))
    expect(page.get_by_text(name[:50])).to_be_visible()
    scroll, window = page_width(page)
    assert scroll <= window, f"/settings is {scroll} px wide in a {window} px window: {page.evaluate(WIDEST_JS)}"
