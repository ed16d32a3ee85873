"""An operator works the queue and the CoachingPanel in Chromium, against the real server (issue #5)."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import (
    VIEWPORT,
    collect_errors,
    create_workflow,
    decide_via_api,
    echo_steps,
    execution,
    expect_finished,
    expect_suggestion,
    open_panel,
    panel_at_hello,
    pending_suggestion,
    start_coaching,
    timeline_step,
)
from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("document.activeElement && document.activeElement.blur()")  # no focus ring in the docs
    page.screenshot(path=str(SCREENSHOTS / name), full_page=False)


def test_decide_a_whole_coaching_execution_with_the_keyboard(live_server, page):
    # other work in the queue, older than the execution under test: a paused session, and a rejected step
    refunds = create_workflow(live_server, "Refund approval", echo_steps("check the order", "pay back"))
    paused_id = start_coaching(live_server, refunds["id"])
    assert live_server.post(f"/api/executions/{paused_id}/coaching/pause").status_code == 200
    invoices = create_workflow(live_server, "Invoice intake", echo_steps("read", "total"))
    rejected_id = start_coaching(live_server, invoices["id"])
    sug = pending_suggestion(live_server, rejected_id)
    decide_via_api(live_server, rejected_id, sug["suggestion_id"], "reject", feedback="wrong file")
    wf = create_workflow(
        live_server,
        "Keyboard run",
        echo_steps("one", "two", "three", "four", "five"),
        description="Five echo steps, decided with the keyboard alone.",
    )
    execution_id = start_coaching(live_server, wf["id"])
    log_in(page, live_server)  # (its first session check answers 401: collect errors after it)
    errors = collect_errors(page)
    page.goto(live_server.url("/queue"))
    expect(page.get_by_role("heading", level=1, name="Queue")).to_be_visible()
    queue = page.get_by_role("listbox", name="Pending suggestions")
    options = queue.get_by_role("option")
    expect(options).to_have_count(3)
    # newest first, the first one selected; j and k move the selection
    expect(options.nth(0)).to_have_attribute("aria-selected", "true")
    expect(options.nth(0)).to_contain_text("Keyboard run")
    expect(options.nth(0)).to_contain_text("Say one")
    expect(options.nth(1)).to_contain_text("Invoice intake")
    expect(options.nth(1)).to_contain_text("Rejected: needs a correction")
    expect(options.nth(2)).to_contain_text("Refund approval")
    expect(options.nth(2)).to_contain_text("Paused")
    page.keyboard.press("j")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect(options.nth(0)).to_have_attribute("aria-selected", "false")
    screenshot(page, "queue.png")
    page.keyboard.press("k")
    expect(options.nth(0)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")

    expect(page).to_have_url(re.compile(rf"/executions/{execution_id}/coach$"))
    expect_suggestion(page, "Say one")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Keyboard run")
    expect(page.get_by_test_id("to-auto")).to_contain_text("more decisions to leave OBSERVATION")

    page.keyboard.press("a")  # accept
    expect_suggestion(page, "Say two")
    page.keyboard.press("s")  # skip
    expect_suggestion(page, "Say three")
    expect(page.get_by_test_id("execution-stats")).to_contain_text("Suggestions3Accepted1")
    expect(page.get_by_test_id("execution-stats")).to_contain_text("Skipped1")
    screenshot(page, "coaching-panel.png")

    page.keyboard.press("m")  # manual: the dialog asks for the output, focus is in its field
    dialog = page.get_by_role("dialog", name="Done by hand: Say three")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("Output of the step")).to_be_focused()
    page.keyboard.type('{"done": "by hand"}')
    page.keyboard.press("Control+Enter")
    expect(dialog).to_be_hidden()
    expect_suggestion(page, "Say four")

    page.keyboard.press("r")  # reject: asks for feedback first
    dialog = page.get_by_role("dialog", name="Reject step Say four")
    expect(dialog.get_by_label("Why is this suggestion wrong?")).to_be_focused()
    page.keyboard.type("the message should be louder")
    page.keyboard.press("Control+Enter")
    expect(dialog).to_be_hidden()
    # the step now waits for a correction: accept is off, correct opens the editor
    expect(page.get_by_text("You rejected this step.")).to_be_visible()
    expect(page.get_by_role("button", name="Accept")).to_be_disabled()
    page.keyboard.press("c")
    editor = page.get_by_role("dialog", name="Correct step Say four")
    message = editor.get_by_label("message")
    expect(message).to_be_focused()
    page.keyboard.press("Control+A")
    page.keyboard.type("FOUR")
    expect(editor.get_by_role("region", name="Changes from the suggestion")).to_contain_text('changed message: "four"')
    page.keyboard.press("Control+Enter")
    expect(editor).to_be_hidden()
    expect_suggestion(page, "Say five")

    page.keyboard.press("a")
    expect_finished(page)
    expect(page.get_by_role("link", name="Back to the queue")).to_be_visible()

    done = execution(live_server, execution_id)
    assert done["status"] == "completed", done
    steps = {s["step_id"]: s for s in done["steps"]}
    assert [steps[f"step{i}"]["decision"] for i in range(1, 6)] == ["accept", "skip", "manual", "correct", "accept"]
    assert steps["step1"]["output"] == {"message": "one", "index": 1}
    assert steps["step2"]["status"] == "skipped"
    assert steps["step3"]["output"] == {"done": "by hand"}
    assert steps["step4"]["output"] == {"message": "FOUR", "index": 4}
    stats = live_server.get(f"/api/executions/{execution_id}/coaching/stats").json()
    assert stats == {
        "suggestions_made": 6,
        "accepted": 2,
        "rejected": 1,
        "corrected": 1,
        "manual_executions": 1,
        "skipped": 1,
        "timed_out": 0,
    }, stats
    # the panel shows the same counts, and the timeline every decision
    stats_box = page.get_by_test_id("execution-stats")
    expect(stats_box).to_contain_text("Accepted2")
    expect(stats_box).to_contain_text("Rejected1")
    expect(timeline_step(page, "Say three")).to_contain_text("done by hand")
    expect(timeline_step(page, "Say four")).to_contain_text("corrected")

    # n opens the next item of the queue
    page.keyboard.press("n")
    expect(page).to_have_url(re.compile(rf"/executions/(?!{execution_id})[^/]+/coach$"))
    expect_suggestion(page, "Say read")
    assert errors == [], errors


def test_correct_a_step_through_the_editor_form(live_server, page):
    wf = create_workflow(
        live_server,
        "Editor run",
        [
            {
                "id": "notify",
                "name": "Notify the team",
                "type": "action",
                "tool": "echo",
                "params": {"channel": "#ops", "message": "deploy done", "retries": 2},
            },
        ],
    )
    execution_id = start_coaching(live_server, wf["id"])
    log_in(page, live_server)  # (its first session check answers 401: collect errors after it)
    errors = collect_errors(page)
    open_panel(page, live_server, execution_id)
    expect_suggestion(page, "Notify the team")
    page.get_by_role("button", name="Correct").click()
    editor = page.get_by_role("dialog", name="Correct step Notify the team")
    expect(editor.get_by_label("channel")).to_be_focused()

    editor.get_by_label("message").fill("deploy finished")
    editor.get_by_label("retries").fill("5")
    diff = editor.get_by_role("region", name="Changes from the suggestion")
    expect(diff.get_by_role("listitem")).to_have_count(2)
    expect(diff).to_contain_text(re.compile(r'changed message: "deploy done"\s*→?\s*becomes "deploy finished"'))
    expect(diff).to_contain_text(re.compile(r"changed retries: 2\s*→?\s*becomes 5"))

    # the raw JSON view shows the same params, and refuses what does not parse
    editor.get_by_role("tab", name="Raw JSON").click()
    raw = editor.get_by_label("Params as JSON")
    assert json.loads(raw.input_value()) == {"channel": "#ops", "message": "deploy finished", "retries": 5}
    raw.fill('{"channel": ')
    expect(editor.get_by_text("Not valid JSON")).to_be_visible()
    editor.get_by_role("button", name="Send correction").click()
    expect(editor.get_by_role("alert")).to_contain_text("Not sent: fix these first.")
    raw.fill('{"channel": "#ops", "message": "deploy finished", "retries": 5}')
    editor.get_by_role("tab", name="Form").click()
    expect(editor.get_by_label("message")).to_have_value("deploy finished")

    editor.get_by_role("button", name="Send correction").click()
    expect(editor).to_be_hidden()
    expect_finished(page)
    # focus is not lost to the page's body when the editor and the decided suggestion go
    expect(page.get_by_role("heading", level=2, name="Execution completed")).to_be_focused()

    done = execution(live_server, execution_id)
    step = done["steps"][0]
    assert (done["status"], step["decision"]) == ("completed", "correct"), done
    assert step["params"] == {"channel": "#ops", "message": "deploy finished", "retries": 5}
    assert step["output"] == step["params"]  # echo ran with the corrected params
    expect(page.locator("[data-step-id='notify'] pre")).to_contain_text('"message": "deploy finished"')
    assert errors == [], errors  # e.g. no Content-Security-Policy violation from the editor's validation


def test_a_decision_in_one_browser_shows_in_another_at_once(live_server, browser):
    wf = create_workflow(live_server, "Two operators", echo_steps("alpha", "beta", "gamma"))
    execution_id = start_coaching(live_server, wf["id"])

    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(2)]
    try:
        first, second = (context.new_page() for context in contexts)
        for page in (first, second):
            log_in(page, live_server)
            open_panel(page, live_server, execution_id)
            expect_suggestion(page, "Say alpha")

        first.keyboard.press("a")
        # the other browser moves on by the pushed suggestion: online, the panel does not poll (it does every 3 s
        # offline only), so nothing else could move it; the test waits as long as a loaded machine takes
        expect(second.get_by_text("Offline")).to_have_count(0)
        expect(second.get_by_role("heading", level=2, name="Suggestion: Say beta")).to_be_visible()
        expect(timeline_step(second, "Say alpha")).to_contain_text("accepted")
        expect(second.get_by_test_id("execution-stats")).to_contain_text("Accepted1")

        # a decision through the REST API reaches both browsers too
        sug = pending_suggestion(live_server, execution_id)
        decide_via_api(live_server, execution_id, sug["suggestion_id"], "skip")
        for page in (first, second):
            expect(page.get_by_role("heading", level=2, name="Suggestion: Say gamma")).to_be_visible()

        second.keyboard.press("a")
        for page in (first, second):
            expect_finished(page)
    finally:
        for context in contexts:
            context.close()


def test_a_stale_decision_shows_the_conflict_and_the_current_suggestion(live_server, page):
    wf = create_workflow(live_server, "Crossed decisions", echo_steps("first", "second"))
    execution_id = start_coaching(live_server, wf["id"])
    crossed: dict = {}

    def cross(ws):
        """Passes the socket through, but lets another operator decide just before this page's decision lands."""
        server = ws.connect_to_server()

        def to_server(message):
            if isinstance(message, str) and '"join_execution"' in message:
                # the panel joins its execution's room over this WebSocket (the app connects WebSocket-first): it
                # is online on it, and its decision goes over it too
                crossed["joined"] = True
            if isinstance(message, str) and '"coaching_decision"' in message and "answer" not in crossed:
                sug = pending_suggestion(live_server, execution_id)
                crossed["answer"] = decide_via_api(live_server, execution_id, sug["suggestion_id"], "accept")
            server.send(message)

        ws.on_message(to_server)
        server.on_message(lambda message: ws.send(message))

    page.route_web_socket(re.compile(r"/socket\.io/"), cross)
    log_in(page, live_server)
    open_panel(page, live_server, execution_id)
    expect_suggestion(page, "Say first")
    for _ in range(100):  # the decision must go over the WebSocket, where the crossing is staged
        if crossed.get("joined"):
            break
        page.wait_for_timeout(50)
    else:
        pytest.fail("the panel never joined its execution's room over a WebSocket")
    page.keyboard.press("s")

    alert = page.get_by_role("alert").filter(has_text="already decided")
    expect(alert).to_have_text("This suggestion was already decided by someone else — showing the current suggestion.")
    expect_suggestion(page, "Say second")
    assert "answer" in crossed, "the page's decision did not go over the socket"
    done = execution(live_server, execution_id)
    assert done["steps"][0]["decision"] == "accept", done  # the other operator's decision stands
    stats = live_server.get(f"/api/executions/{execution_id}/coaching/stats").json()
    assert (stats["accepted"], stats["skipped"]) == (1, 0), stats


def test_a_suggestion_learned_from_corrections_links_to_its_correction_pack(live_server, page):
    wf = create_workflow(
        live_server,
        "Learning",
        [
            {
                "id": "post",
                "name": "Post the note",
                "type": "action",
                "tool": "echo",
                "params": {"channel": "#general", "message": "done"},
            },
        ],
    )
    for _ in range(3):  # three identical corrections make a learned rule
        ex_id = start_coaching(live_server, wf["id"])
        sug = pending_suggestion(live_server, ex_id)
        assert sug["source"] == "definition"
        decide_via_api(
            live_server, ex_id, sug["suggestion_id"], "correct", correction={"channel": "#ops", "message": "done"}
        )
    execution_id = start_coaching(live_server, wf["id"])
    sug = pending_suggestion(live_server, execution_id)
    assert sug["source"].startswith("correction_pack:"), sug
    pack_id = sug["source"].split(":", 1)[1]

    log_in(page, live_server)
    open_panel(page, live_server, execution_id)
    expect_suggestion(page, "Post the note")
    card = page.get_by_role("region", name="Suggestion: Post the note")
    learned = card.get_by_role("region", name="What the correction pack changed")
    expect(learned).to_contain_text(re.compile(r'changed channel: "#general"\s*→?\s*becomes "#ops"'))
    link = card.get_by_role("link", name=f"the correction pack of step {sug['step_id']}")
    link.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(live_server.url(f"/correction-packs?pack={pack_id}"))


def test_a_manual_output_too_large_for_the_server_is_refused_in_place_and_the_text_kept(live_server, page):
    """Issue #31, item 9: an 11 MB manual output showed "Sending…" for seconds, then a 413, and the text was lost."""
    ex_id = panel_at_hello(page, live_server)

    page.keyboard.press("m")
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Plain text").check()
    field = dialog.get_by_label("Output of the step")
    big = "x" * (11 * 1024 * 1024)
    field.fill(big)
    dialog.get_by_role("button", name="Record manual result").click()
    expect(dialog.get_by_role("alert")).to_contain_text("Too large to send: 11.0 MB")
    expect(dialog.get_by_role("button", name="Record manual result")).to_be_enabled()  # nothing on its way
    assert page.evaluate("() => document.getElementById('manual-output').value.length") == len(big)
    assert execution(live_server, ex_id)["status"] == "waiting_decision"

    field.fill("done by hand")  # shortened: it goes
    dialog.get_by_role("button", name="Record manual result").click()
    expect_suggestion(page, "Say bye")
