"""A person drives the built web app in Chromium against the real server process."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOTS, log_in
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.browser

MESSAGE = "hello from the smoke test"


def create_workflow(server: LiveServer, name: str) -> dict:
    response = server.post(
        "/api/workflows",
        json={
            "name": name,
            "description": "Says hello, then checks it did.",
            "steps": [
                {"id": "greet", "type": "action", "tool": "echo", "params": {"message": MESSAGE}},
                {
                    "id": "check",
                    "type": "validation",
                    "depends_on": ["greet"],
                    "condition": f"steps.greet.output.message == '{MESSAGE}'",
                },
            ],
        },
    )
    assert response.status_code == 201, response.text
    return response.json()


def expect_completed_detail(page, execution_id: str) -> None:
    expect(page.get_by_role("heading", level=1)).to_contain_text(execution_id)
    expect(page.locator("dl.summary [data-status]")).to_have_attribute("data-status", "completed")
    expect(page.locator("dl.summary")).to_contain_text("Completed")
    greet = page.locator("li.step").filter(has=page.get_by_role("heading", name="greet", exact=True))
    expect(greet.locator("[data-status]")).to_have_attribute("data-status", "succeeded")
    expect(greet.locator("pre.code")).to_contain_text(f'"message": "{MESSAGE}"')


def test_run_a_workflow_from_the_workflows_page_with_the_keyboard(live_server, page):
    wf = create_workflow(live_server, "Smoke greeting")

    log_in(page, live_server)
    page.goto(live_server.url("/workflows"))
    expect(page.get_by_role("heading", name="Workflows", level=1)).to_be_visible()
    row = page.get_by_role("row").filter(has_text="Smoke greeting")
    expect(row).to_contain_text("Says hello, then checks it did.")
    run = page.get_by_role("button", name="Run Smoke greeting")
    expect(run).to_be_enabled()

    # Tab from the top of the page until the Run button has focus: it must be reachable by keyboard.
    for _ in range(25):
        page.keyboard.press("Tab")
        if run.evaluate("el => el === document.activeElement"):
            break
    else:
        pytest.fail("the Run button never got focus by pressing Tab")
    page.keyboard.press("Enter")

    # the start dialog: focus on the mode, the workflow's own (coaching) by default; an admin may run it normal
    dialog = page.get_by_role("dialog", name="Run “Smoke greeting”")
    mode = dialog.get_by_label("Mode")
    expect(mode).to_be_focused()
    expect(mode).to_have_value("coaching")
    mode.select_option("normal")
    dialog.get_by_role("button", name="Start run").press("Enter")

    expect(page).to_have_url(re.compile(r"/executions/[^/]+$"))
    execution_id = page.url.rstrip("/").rsplit("/", 1)[1]
    listed = live_server.get(f"/api/executions/?workflow_id={wf['id']}").json()
    assert [e["execution_id"] for e in listed["items"]] == [execution_id], listed

    expect_completed_detail(page, execution_id)
    assert live_server.get(f"/api/executions/{execution_id}").json()["status"] == "completed"

    page.evaluate("document.activeElement && document.activeElement.blur()")  # no focus ring in the docs
    page.screenshot(path=str(SCREENSHOTS / "execution-detail.png"), full_page=True)


def test_run_on_the_workflows_page_starts_in_the_workflows_mode_with_its_variables_and_is_audited(live_server, page):
    response = live_server.post(
        "/api/workflows",
        json={
            "name": "Refund",
            "variables": {"order": {"type": "string", "required": True}, "amount": {"type": "number", "default": 10}},
            "steps": [
                {"id": "refund", "tool": "echo", "params": {"order": "{{ vars.order }}", "amount": "{{ vars.amount }}"}}
            ],
        },
    )
    assert response.status_code == 201, response.text
    wf = response.json()
    assert wf["mode"] == "coaching"

    log_in(page, live_server)
    page.goto(live_server.url("/workflows"))
    page.get_by_role("button", name="Run Refund").click()
    dialog = page.get_by_role("dialog", name="Run “Refund”")
    expect(dialog.get_by_label("Mode")).to_have_value("coaching")
    expect(dialog.get_by_label("amount")).to_have_value("10")
    dialog.get_by_label("order").fill("A-7")
    dialog.get_by_label("amount").fill("19.5")
    dialog.get_by_role("button", name="Start run").click()

    expect(page).to_have_url(re.compile(r"/executions/[^/]+$"))
    execution_id = page.url.rstrip("/").rsplit("/", 1)[1]
    started = live_server.get(f"/api/executions/{execution_id}").json()
    assert started["mode"] == "coaching" and started["variables"] == {"order": "A-7", "amount": 19.5}, started
    # nothing ran unreviewed: the refund waits in the queue as a suggestion
    live_server.wait_for(
        lambda: live_server.get(f"/api/executions/{execution_id}").json()["status"] == "waiting_decision",
        message="the suggestion",
    )
    pending = live_server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()
    assert pending["suggestion"]["params"] == {"order": "A-7", "amount": 19.5}, pending
    audit = live_server.get(f"/api/audit?execution_id={execution_id}").json()["items"]
    starts = [e for e in audit if e["action"] == "execution_start"]
    assert len(starts) == 1 and starts[0]["actor"] == live_server.admin_email, audit
    assert starts[0]["after"]["mode"] == "coaching" and starts[0]["after"]["variables"]["order"] == "A-7"


def test_a_deep_link_to_an_execution_survives_a_reload(live_server, page):
    wf = create_workflow(live_server, "Deep link")
    started = live_server.post("/api/executions/", json={"workflow_id": wf["id"], "mode": "normal"})
    assert started.status_code == 201, started.text
    execution_id = started.json()["execution_id"]
    live_server.wait_for(
        lambda: live_server.get(f"/api/executions/{execution_id}").json()["status"] == "completed",
        message="the execution to complete",
    )

    log_in(page, live_server)
    response = page.goto(live_server.url(f"/executions/{execution_id}"))
    assert response is not None and response.status == 200
    expect_completed_detail(page, execution_id)

    response = page.reload()
    assert response is not None and response.status == 200, "the server must answer a deep link with the app"
    assert "text/html" in response.headers.get("content-type", "")
    expect(page).to_have_url(live_server.url(f"/executions/{execution_id}"))
    expect_completed_detail(page, execution_id)
    expect(page).to_have_title(re.compile(re.escape(execution_id)))
