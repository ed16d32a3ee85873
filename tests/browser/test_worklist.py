"""The queue as a work list (filters, search, order, key variables, the count in the title, questions answered from
the keyboard), the executions list (names, times, filters, cancel), and the keyboard and colour preferences."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import SCREENSHOTS, log_in
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.browser


def make(server: LiveServer, definition: dict) -> dict:
    answer = server.post("/api/workflows", json=definition)
    assert answer.status_code == 201, answer.text
    return answer.json()


def start(server: LiveServer, workflow_id: str, variables: dict, mode: str = "coaching", status="waiting_decision"):
    answer = server.post("/api/executions/", json={"workflow_id": workflow_id, "variables": variables, "mode": mode})
    assert answer.status_code == 201, answer.text
    execution_id = answer.json()["execution_id"]
    server.wait_for(
        lambda: server.get(f"/api/executions/{execution_id}").json()["status"] == status,
        message=f"{execution_id} {status}",
    )
    return execution_id


def refunds_and_questions(server: LiveServer) -> dict:
    refund = make(
        server,
        {
            "name": "Refund",
            "variables": {"customer": {"type": "string"}, "amount": {"type": "number"}},
            "steps": [
                {
                    "id": "pay",
                    "name": "Pay back",
                    "tool": "echo",
                    "params": {"to": "{{ vars.customer }}", "amount": "{{ vars.amount }}"},
                }
            ],
        },
    )
    intake = make(
        server,
        {
            "name": "Intake",
            "variables": {"ticket": {"type": "string"}},
            "steps": [
                {
                    "id": "ask",
                    "name": "Which account",
                    "type": "human_input",
                    "question": "Which account should be charged?",
                },
                {"id": "note", "tool": "echo", "params": {"account": "{{ steps.ask.output }}"}},
            ],
        },
    )
    return {
        "refund": refund,
        "intake": intake,
        "acme": start(server, refund["id"], {"customer": "ACME", "amount": 120}),
        "globex": start(server, refund["id"], {"customer": "Globex", "amount": 75}),
        "question": start(server, intake["id"], {"ticket": "T-42"}, mode="normal", status="waiting_clarification"),
    }


def rows(page: Page, name: str):
    return page.get_by_role("listbox", name=name).get_by_role("option")


def test_the_queue_filters_searches_orders_and_answers_a_question_from_the_keyboard(live_server, page):
    made = refunds_and_questions(live_server)
    log_in(page, live_server)
    page.goto(live_server.url("/queue"))

    suggestions = rows(page, "Pending suggestions")
    expect(suggestions).to_have_count(2)
    # two runs of one workflow are told apart by their variables; newest first
    expect(suggestions.nth(0)).to_contain_text("amount=75 · customer=Globex")
    expect(suggestions.nth(1)).to_contain_text("amount=120 · customer=ACME")
    expect(page).to_have_title(re.compile(r"^\(3\) Queue"))
    questions = rows(page, "Questions waiting for an answer")
    expect(questions).to_have_count(1)
    expect(questions.first).to_contain_text("Which account should be charged?")
    expect(questions.first).to_contain_text("ticket=T-42")

    page.get_by_label("Order", exact=True).select_option("oldest")
    expect(suggestions.nth(0)).to_contain_text("ACME")
    expect(page).to_have_url(re.compile(r"order=oldest"))
    page.get_by_label("Search").fill("globex")
    expect(suggestions).to_have_count(1)
    expect(suggestions.first).to_contain_text("Globex")
    expect(questions).to_have_count(0)
    page.get_by_role("button", name="Clear filters").click()
    expect(suggestions).to_have_count(2)

    page.get_by_label("Workflow", exact=True).select_option(label="Refund")
    page.get_by_label("Step", exact=True).select_option(label="Pay back (pay)")
    expect(suggestions).to_have_count(2)
    expect(questions).to_have_count(0)
    page.get_by_label("Workflow", exact=True).select_option("")
    page.get_by_label("Kind", exact=True).select_option("human_input")
    expect(page.get_by_role("listbox", name="Pending suggestions")).to_have_count(0)
    expect(questions).to_have_count(1)
    page.get_by_label("Kind", exact=True).select_option("")
    page.get_by_label("Age", exact=True).select_option("older:3600")
    expect(page.get_by_text("No suggestion matches these filters.")).to_be_visible()
    page.get_by_label("Age", exact=True).select_option("")
    expect(suggestions).to_have_count(2)
    page.screenshot(path=str(SCREENSHOTS / "queue-worklist.png"), full_page=True)

    # from the keyboard: the question is the first row; Enter opens its answer, Enter sends it
    page.locator("#main").focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog")
    answer = dialog.get_by_label("Your answer")
    expect(answer).to_be_focused()
    page.keyboard.type("ACC-7")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status").filter(has_text="Answered Which account.")).to_be_visible()
    live_server.wait_for(
        lambda: live_server.get(f"/api/executions/{made['question']}").json()["status"] == "completed",
        message="the answered run",
    )
    note = live_server.get(f"/api/executions/{made['question']}").json()["steps"][1]
    assert note["output"] == {"account": {"answer": "ACC-7"}}, note
    expect(questions).to_have_count(0)
    expect(page).to_have_title(re.compile(r"^\(2\) Queue"))


def test_the_executions_list_names_workflows_filters_and_cancels(live_server, page):
    made = refunds_and_questions(live_server)
    log_in(page, live_server)
    page.goto(live_server.url("/executions"))
    table = page.get_by_role("table")
    expect(table.get_by_role("row")).to_have_count(4)  # the header and three runs
    expect(table).to_contain_text("Refund")
    expect(table).to_contain_text("Intake")
    page.get_by_label("Workflow", exact=True).select_option(label="Intake")
    expect(table.get_by_role("row")).to_have_count(2)
    expect(page).to_have_url(re.compile(r"workflow_id="))
    page.get_by_label("Workflow", exact=True).select_option("")
    page.get_by_label("Status", exact=True).select_option("waiting_decision")
    expect(table.get_by_role("row")).to_have_count(3)

    page.get_by_role("button", name=f"Cancel execution {made['acme']}").click()
    dialog = page.get_by_role("dialog", name="Cancel this execution?")
    # two buttons that each say what they do (issue #31: "Cancel" beside "Cancel execution" was ambiguous)
    expect(dialog.get_by_role("button", name="Cancel", exact=True)).to_have_count(0)
    expect(dialog.get_by_role("button", name="Keep running")).to_be_focused()
    dialog.get_by_role("button", name="Keep running").click()
    expect(dialog).to_have_count(0)
    expect(table.get_by_role("row")).to_have_count(3)
    assert live_server.get(f"/api/executions/{made['acme']}").json()["status"] != "cancelled"
    page.get_by_role("button", name=f"Cancel execution {made['acme']}").click()
    dialog.get_by_role("button", name="Cancel execution").click()
    expect(table.get_by_role("row")).to_have_count(2)
    assert live_server.get(f"/api/executions/{made['acme']}").json()["status"] == "cancelled"
    page.get_by_label("Status", exact=True).select_option("cancelled")
    row = table.get_by_role("row").nth(1)
    expect(row).to_contain_text("Refund")
    expect(row).to_contain_text("amount=120 · customer=ACME")  # the run's variables tell it apart
    expect(row.get_by_role("cell").nth(4)).not_to_have_text("—")  # finished: a time
    page.screenshot(path=str(SCREENSHOTS / "executions-list.png"), full_page=True)


def test_single_key_shortcuts_can_be_moved_behind_alt_or_turned_off(live_server, page):
    refunds_and_questions(live_server)
    log_in(page, live_server)
    page.goto(live_server.url("/queue"))
    options = page.locator("[role=option][aria-selected=true]")
    expect(rows(page, "Pending suggestions")).to_have_count(2)  # both lists are in before a key moves through them
    expect(options).to_contain_text("Intake")
    page.locator("#main").focus()
    page.keyboard.press("j")
    expect(options).to_contain_text("Globex")

    page.goto(live_server.url("/settings"))
    page.get_by_label("With Alt").check()
    expect(page.get_by_role("status").filter(has_text="Shortcuts: With Alt.")).to_be_visible()
    page.goto(live_server.url("/queue"))
    expect(rows(page, "Pending suggestions")).to_have_count(2)
    expect(options).to_contain_text("Intake")
    page.locator("#main").focus()
    page.keyboard.press("j")  # alone: nothing
    expect(options).to_contain_text("Intake")
    page.keyboard.press("Alt+j")
    expect(options).to_contain_text("Globex")

    page.goto(live_server.url("/settings"))
    page.get_by_label("Off").check()
    page.reload()
    expect(page.get_by_label("Off")).to_be_checked()  # kept in this browser
    page.goto(live_server.url("/queue"))
    expect(rows(page, "Pending suggestions")).to_have_count(2)
    page.locator("#main").focus()
    page.keyboard.press("j")
    page.keyboard.press("Alt+j")
    expect(options).to_contain_text("Intake")
    page.keyboard.press("?")
    expect(page.get_by_role("dialog")).to_have_count(0)


def test_the_dark_theme_follows_the_systems_setting(live_server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860}, color_scheme="dark")
    try:
        page = context.new_page()
        refunds_and_questions(live_server)
        log_in(page, live_server)
        page.goto(live_server.url("/queue"))
        expect(rows(page, "Pending suggestions")).to_have_count(2)
        background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        text = page.evaluate("getComputedStyle(document.documentElement).color")
        assert background == "rgb(15, 20, 25)" and text == "rgb(230, 237, 243)", (background, text)
        page.screenshot(path=str(SCREENSHOTS / "queue-dark.png"), full_page=True)
        page.goto(live_server.url("/workflows/new"))
        editor = page.locator(".cm-editor")
        expect(editor).to_be_visible()
        assert editor.evaluate("el => getComputedStyle(el).backgroundColor") == "rgb(40, 44, 52)"  # One Dark
    finally:
        context.close()
