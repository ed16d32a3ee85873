"""Settings in the light theme (issue 40, item 17): the "Notify this browser" switch's label is the page's text colour,
not the header's near-white."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def _luminance(css: str) -> float:
    r, g, b = (int(float(v)) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_the_notify_this_browser_label_reads_on_the_light_page(live_server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860}, color_scheme="light")
    page = context.new_page()
    try:
        log_in(page, live_server)
        page.goto(live_server.url("/settings"))
        switch = page.get_by_role("switch", name="Notify this browser")
        expect(switch).to_be_visible()
        color = switch.evaluate("el => getComputedStyle(el).color")
        background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        assert _luminance(background) > 200, background  # the light theme
        assert _luminance(color) < 100, f"the label is {color} on {background}"
        switch.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "settings-light-push-switch.png"))
    finally:
        context.close()
