"""/api/docs can write: "Try it out" with the session cookie sends the CSRF header, and "Authorize" takes a bearer
token (issue #17, item 4)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

BODY = {"name": "Made in the API docs", "steps": [{"id": "greet", "tool": "echo", "params": {"message": "hi"}}]}


def try_create_workflow(page, name: str) -> None:
    """In Swagger UI: open POST /api/workflows, Try it out with BODY named `name`, Execute, expect a 201."""
    operation = page.locator(".opblock-post").filter(
        has=page.locator('.opblock-summary-path[data-path="/api/workflows"]')
    )
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.locator("textarea.body-param__text").fill(json.dumps({**BODY, "name": name}))
    operation.get_by_role("button", name="Execute").click()
    status = operation.locator(".live-responses-table .response .response-col_status")
    expect(status).to_have_text("201")


def workflow_names(server) -> list[str]:
    return [w["name"] for w in server.get("/api/workflows").json()["items"]]


def test_try_it_out_writes_with_the_session_cookie(live_server, page):
    log_in(page, live_server)
    page.goto(live_server.url("/api/docs"))
    try_create_workflow(page, "with the cookie")
    assert "with the cookie" in workflow_names(live_server)


def test_authorize_with_a_bearer_token_then_try_it_out(live_server, browser):
    live_server.get("/api/auth/me")  # (makes the live server's bearer token)
    context = browser.new_context()  # no session cookie at all
    try:
        page = context.new_page()
        page.goto(live_server.url("/api/docs"))
        page.locator("button.authorize").first.click()
        dialog = page.locator(".modal-ux")
        section = dialog.locator(".auth-container").filter(has_text="bearerAuth")
        section.locator("input").fill(live_server.token)
        section.get_by_role("button", name="Authorize").click()
        dialog.get_by_role("button", name="Close").first.click()
        try_create_workflow(page, "with a bearer token")
    finally:
        context.close()
    assert "with a bearer token" in workflow_names(live_server)
