"""The queue's keys as `?` lists them (issue #40, item 16), in Chromium: `a` on a selected suggestion accepts it as
its coaching panel would (a risky call takes the confirming Enter first, as there), and Esc in the search field
leaves it, so that j / k move the selection again."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import collect_errors, confirm_with_enter, page_errors, pending_suggestion
from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def coached(server, name: str, step: dict) -> str:
    made = server.post("/api/workflows", json={"name": name, "steps": [step]})
    assert made.status_code == 201, made.text
    started = server.post("/api/executions/coaching", json={"workflow_id": made.json()["id"]})
    assert started.status_code == 201, started.text
    execution_id = started.json()["execution_id"]
    pending_suggestion(server, execution_id)
    return execution_id


def status_of(server, execution_id: str) -> str:
    return server.get(f"/api/executions/{execution_id}").json()["status"]


def test_a_accepts_the_selected_suggestion_confirming_a_risky_one_and_esc_leaves_the_search(live_server, page):
    errors = collect_errors(page)
    greet = coached(
        live_server, "Greeting", {"id": "hello", "name": "Say hello", "tool": "echo", "params": {"message": "hello"}}
    )
    ping = coached(
        live_server,
        "Health",
        {
            "id": "ping",
            "name": "Ping the service",
            "tool": "http.request",
            "params": {"url": f"{live_server.base_url}/healthz"},
        },
    )
    log_in(page, live_server)
    page.goto(live_server.url("/queue"))
    rows = page.get_by_role("listbox", name="Pending suggestions").get_by_role("option")
    expect(rows).to_have_count(2)

    # Esc leaves the search field: j / k move the selection again
    search = page.get_by_label("Search")
    for _ in range(20):  # the queue's keys are bound once its page has settled: a key before that does nothing
        page.keyboard.press("/")
        if search.evaluate("el => el === document.activeElement"):
            break
        page.wait_for_timeout(250)
    expect(search).to_be_focused()
    page.keyboard.type("He")
    page.keyboard.press("Escape")
    expect(search).not_to_be_focused()
    expect(search).to_have_value("He")  # what was typed stays
    expect(rows.nth(0)).to_have_attribute("aria-selected", "true")  # newest first: Health
    page.keyboard.press("j")
    expect(rows.nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("k")
    expect(rows.nth(0)).to_have_attribute("aria-selected", "true")
    expect(rows.nth(0)).to_contain_text("Ping the service")

    # a risky call (http.request is external): a arms it, Enter sends it, as on the panel
    page.keyboard.press("a")
    prompt = page.get_by_text("Press Enter to accept Ping the service")
    expect(prompt).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "queue-accept-confirm.png"), full_page=False)
    assert status_of(live_server, ping) == "waiting_decision"  # nothing sent yet
    confirm_with_enter(page, "a", prompt)
    expect(page.get_by_role("status").filter(has_text="Accepted Ping the service (Health).")).to_be_visible()
    live_server.wait_for(lambda: status_of(live_server, ping) == "completed", message="the ping ran")
    expect(rows).to_have_count(1)

    # a read call: a accepts it at once
    expect(rows.nth(0)).to_contain_text("Say hello")
    page.keyboard.press("a")
    expect(page.get_by_role("status").filter(has_text="Accepted Say hello (Greeting).")).to_be_visible()
    live_server.wait_for(lambda: status_of(live_server, greet) == "completed", message="the greeting ran")
    expect(rows).to_have_count(0)
    for execution_id in (greet, ping):
        steps = live_server.get(f"/api/executions/{execution_id}").json()["steps"]
        assert [s["decision"] for s in steps] == ["accept"]
    assert page_errors(errors) == []
