"""Fixtures for browser tests: Debian's Chromium through Playwright, against the real server process."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.live_server import REPO_ROOT, LiveServer

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# COACH_TEST_FRONTEND_DIST lets a developer test another build of the web app (e.g. one built beside a running suite)
FRONTEND_DIST = Path(os.environ.get("COACH_TEST_FRONTEND_DIST") or REPO_ROOT / "frontend" / "dist")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
# The screenshots the docs show are taken by the tests that reach those screens: into docs/screenshots when
# COACH_UPDATE_SCREENSHOTS=1 (then commit them), else beside the failure screenshots, so a test run leaves the
# checkout as it found it.
SCREENSHOTS = (
    REPO_ROOT / "docs" / "screenshots"
    if os.environ.get("COACH_UPDATE_SCREENSHOTS") == "1"
    else ARTIFACTS / "screenshots"
)
SCREENSHOTS.mkdir(parents=True, exist_ok=True)
# How long a browser test waits for a text, an element or a page (Playwright's expect, actions and navigation):
# generous, since a test never depends on how fast the machine is. Under load (CI shares its cores) Chromium and the
# server took longer than Playwright's 5 s for a text; a test that passes waits only as long as it takes.
WAIT_MS = 60_000
expect.set_options(timeout=WAIT_MS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the item, so `page` can tell at teardown whether the test failed."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.is_file():
        pytest.skip(
            f"{CHROMIUM} is missing: install Debian's chromium (`make chromium`); "
            "Playwright may not download browsers here"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser, request):
    """A page in a fresh browser context; on failure its screenshot goes to tests/browser/artifacts/<test>.png."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    try:
        yield page
    finally:
        failed = any(
            getattr(request.node, f"rep_{when}", None) is not None and getattr(request.node, f"rep_{when}").failed
            for when in ("setup", "call")
        )
        if failed:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
            try:
                page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
            except Exception as exc:  # a crashed page must not hide the test's own failure
                print(f"could not save a screenshot: {exc}")
        context.close()


@pytest.fixture
def live_server(tmp_path):
    """A started `python wsgi.py` on a fresh SQLite file, demo off, serving the built frontend/dist."""
    if not (FRONTEND_DIST / "index.html").is_file():
        pytest.fail(
            f"{FRONTEND_DIST}/index.html is missing: build the web app first "
            "(`make frontend` or `cd frontend && npm run build`)"
        )
    with LiveServer(tmp_path / "server", demo="0", env={"COACH_FRONTEND_DIST": str(FRONTEND_DIST)}) as server:
        yield server


def log_in(page, server) -> None:
    """Log in through the login page as a person does: type, press Enter, land in the app."""
    page.goto(server.url("/"))
    page.get_by_label("Email").fill(server.admin_email)
    page.get_by_label("Password").fill(server.admin_password)
    page.get_by_label("Password").press("Enter")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
