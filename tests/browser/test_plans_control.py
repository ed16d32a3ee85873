"""The Plans page (paste a plan, see the server's field errors, approve, execute, watch it) and interactive control
from the keyboard: a question answered in place, a pause with a question resumed with feedback, a pending step
edited with the correction editor's form."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.browser.coaching_support import (
    collect_errors,
    create_workflow,
    execution,
    expect_finished,
    expect_suggestion,
    open_panel,
    open_pause_dialog,
    page_errors,
    panel_at_hello,
    resume_with_feedback,
)
from tests.browser.conftest import log_in
from tests.browser.test_dashboards import save_screenshot

BAD_PLAN = {
    "name": "Nightly report",
    "description": "Greets, then reports.",
    "steps": [
        {"id": "greet", "type": "action", "tool": "no.such.tool", "params": {"message": "hi"}},
        {"id": "report", "type": "action", "tool": "echo", "params": {"message": "done"}},
    ],
}


def test_a_plan_with_an_error_is_fixed_created_approved_executed_and_watched_to_completion(live_server, page):
    errors = collect_errors(page)
    log_in(page, live_server)
    page.get_by_role("link", name="Plans").click()
    expect(page.get_by_role("heading", level=1, name="Plans")).to_be_visible()
    source = page.get_by_label("Plan (JSON or YAML)")
    source.fill(json.dumps(BAD_PLAN, indent=2))
    page.get_by_role("button", name="Create plan").click()
    problems = page.get_by_role("list", name="Problems by field")
    expect(problems).to_contain_text("steps[0].tool")
    expect(source).to_have_attribute("aria-invalid", "true")
    problems.get_by_role("link", name="steps[0].tool").click()
    expect(source).to_be_focused()

    source.fill(json.dumps({**BAD_PLAN, "steps": [{**BAD_PLAN["steps"][0], "tool": "echo"}, BAD_PLAN["steps"][1]]}))
    page.get_by_role("button", name="Create plan").click()
    expect(page.get_by_role("heading", level=1, name="Plan Nightly report")).to_be_visible()
    expect(page.locator("dd [data-status='draft']")).to_be_visible()

    page.get_by_role("button", name="Approve plan").click()
    expect(page.get_by_role("status").filter(has_text="Plan approved")).to_be_visible()
    expect(page.get_by_label("Mode", exact=True)).to_have_value("normal")
    page.get_by_role("button", name="Execute plan").click()
    expect(page.locator("dd [data-status='completed']")).to_be_visible()
    plan_id = page.url.rsplit("/", 1)[1]
    assert live_server.get(f"/api/plans/{plan_id}/status").json()["status"] == "completed"
    for step in ("greet", "report"):
        item = page.get_by_role("listitem").filter(has=page.get_by_role("heading", level=3, name=step, exact=True))
        expect(item.locator("[data-status='succeeded']")).to_be_visible()

    page.get_by_role("link", name="← All plans").click()
    expect(page.get_by_role("row").filter(has_text="Nightly report")).to_contain_text("Completed")
    source = page.get_by_label("Plan (JSON or YAML)")
    source.fill(
        "name: Broken\nsteps:\n  - id: fetch\n    type: action\n    tool: echo\n    params: {message: hi}\n"
        "    retries: many\n"
    )
    page.get_by_role("button", name="Create plan").click()
    expect(page.get_by_role("list", name="Problems by field")).to_contain_text("steps[0].retries")
    save_screenshot(page, "plans.png")
    assert page_errors(errors) == []


def test_a_question_is_answered_from_the_keyboard_on_the_execution_page_and_the_panel(live_server, page):
    errors = collect_errors(page)
    wf = create_workflow(
        live_server,
        "Ask first",
        [
            {"id": "ask", "name": "Which region?", "type": "human_input", "question": "Which region do we report on?"},
            {"id": "report", "type": "action", "tool": "echo", "params": {"message": "{{ steps.ask.output.answer }}"}},
        ],
    )
    started = live_server.post("/api/executions/", json={"workflow_id": wf["id"], "mode": "normal"})
    assert started.status_code == 201, started.text
    ex_id = started.json()["execution_id"]
    live_server.wait_for(lambda: execution(live_server, ex_id)["status"] == "waiting_clarification")
    log_in(page, live_server)
    page.goto(live_server.url(f"/executions/{ex_id}"))
    expect(page.get_by_text("Which region do we report on?")).to_be_visible()
    page.keyboard.press("?")
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(sheet.get_by_role("row").filter(has_text="Pause with a question")).to_be_visible()
    expect(sheet.get_by_role("row", name="i Answer")).to_be_visible()
    page.keyboard.press("Escape")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("i")
    expect(page.get_by_label("Your answer")).to_be_focused()
    page.keyboard.type("EMEA")
    page.keyboard.press("Enter")
    expect(page.locator("dd [data-status='completed']")).to_be_visible()
    assert execution(live_server, ex_id)["steps"][1]["output"] == {"message": "EMEA"}

    # in the coaching panel: a step that asks for clarification before it is suggested
    checked = create_workflow(
        live_server,
        "Check first",
        [
            {
                "id": "check",
                "name": "Check the total",
                "type": "action",
                "tool": "echo",
                "params": {"message": "x"},
                "requires_clarification": True,
                "clarification_question": "Is the total right?",
            },
            {"id": "after", "type": "action", "tool": "echo", "params": {"message": "{{ feedback.check }}"}},
        ],
    )
    answer = live_server.post("/api/executions/coaching", json={"workflow_id": checked["id"]})
    ex2 = answer.json()["execution_id"]
    live_server.wait_for(lambda: execution(live_server, ex2)["status"] == "waiting_clarification")
    open_panel(page, live_server, ex2)
    expect(page.get_by_text("Is the total right?")).to_be_visible()
    page.keyboard.press("a")
    expect(page.get_by_role("status").filter(has_text="waits for an answer first")).to_be_visible()
    resume_with_feedback(page, "yes, checked")
    expect_suggestion(page, "Check the total")
    page.keyboard.press("a")
    expect(page.get_by_role("heading", level=2, name="Suggestion: after")).to_be_visible()
    expect(page.get_by_test_id("suggested-params")).to_contain_text("yes, checked")
    page.keyboard.press("a")
    expect_finished(page)
    assert page_errors(errors) == []


def test_pause_with_a_question_edit_the_step_and_resume_with_feedback_from_the_keyboard(live_server, page):
    errors = collect_errors(page)
    ex_id = panel_at_hello(page, live_server)

    dialog = open_pause_dialog(page)
    expect(dialog.get_by_label("Stop before step")).to_have_value("step1")
    page.keyboard.type("  ")
    page.keyboard.press("Enter")  # no question: refused in place, nothing paused (issue #31)
    expect(dialog.get_by_role("alert")).to_contain_text("Write the question first")
    expect(dialog.get_by_label("Question")).to_be_focused()
    assert execution(live_server, ex_id)["status"] != "waiting_clarification"
    page.keyboard.type("Is hello the right greeting?")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Is hello the right greeting?")).to_be_visible()
    assert execution(live_server, ex_id)["status"] == "waiting_clarification"

    page.keyboard.press("e")
    editor = page.get_by_role("dialog", name="Edit step")
    expect(editor).to_be_visible()
    editor.get_by_role("tab", name="Raw JSON").click()
    editor.get_by_label("Params as JSON").fill(json.dumps({"message": "good morning", "index": 1}))
    editor.get_by_label("Retries").fill("-1")
    editor.get_by_role("button", name="Save the step").click()
    expect(editor.get_by_text("must be a whole number")).to_be_visible()
    editor.get_by_label("Retries").fill("2")
    editor.get_by_label("Params as JSON").press("Control+Enter")
    expect(editor).to_be_hidden()
    expect(page.get_by_role("status").filter(has_text="runs as edited")).to_be_visible()
    live_server.wait_for(lambda: execution(live_server, ex_id)["status"] == "waiting_correction")

    page.keyboard.press("i")
    page.keyboard.type("use the morning greeting")
    page.keyboard.press("Enter")
    expect_suggestion(page, "Say hello")
    expect(page.get_by_test_id("suggested-params")).to_contain_text("good morning")
    page.keyboard.press("a")
    expect_suggestion(page, "Say bye")
    page.keyboard.press("a")
    expect_finished(page)
    state = live_server.get(f"/api/executions/{ex_id}/execution-state").json()
    assert state["feedbacks"] == {"step1": "use the morning greeting"} and state["corrected_steps"] == ["step1"]
    assert page_errors(errors) == []
