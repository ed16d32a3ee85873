"""A failed run is not a dead end, and a run keeps its history (issue #31, items 3 and 5), as a person sees them in
Chromium: the failure banner names the failed step and the reason; "Retry with changes" runs it again with the
params corrected in the editor's form and the run completes; the history shows the retry with its new run and key.
And after a pause with a question and a resume with an answer, the history on the panel and on the execution page
shows both."""

from __future__ import annotations

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
    start_coaching,
)
from tests.browser.conftest import log_in
from tests.browser.test_dashboards import save_screenshot

INVOICE = {
    "name": "Invoice total",
    "description": "Reads an invoice file and reports what it says.",
    "variables": {"file": {"type": "string", "required": True}},
    "steps": [
        {
            "id": "read",
            "name": "Read the invoice",
            "type": "action",
            "tool": "file.read",
            "params": {"path": "{{ vars.file }}"},
        },
        {
            "id": "report",
            "name": "Report the total",
            "type": "action",
            "tool": "echo",
            "params": {"message": "invoice says {{ steps.read.output.content }}"},
        },
    ],
}


def open_history_on_the_panel(page) -> None:
    """On the coaching panel the history is shown on demand (the suggestion comes first)."""
    toggle = page.get_by_role("button", name="History")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")


def history_step(page, name: str):
    history = page.get_by_role("region", name="History")
    return history.get_by_role("listitem").filter(has=page.get_by_role("heading", name=name))


def test_a_failed_run_names_its_step_and_reason_and_a_retry_with_changed_params_completes_it(live_server, page):
    errors = collect_errors(page)
    created = live_server.post("/api/workflows", json=INVOICE)
    assert created.status_code == 201, created.text
    # the person starts it on a file name with a typo: it fails at its first step
    started = live_server.post(
        "/api/executions/",
        json={"workflow_id": created.json()["id"], "mode": "normal", "variables": {"file": "invoise.txt"}},
    )
    assert started.status_code == 201, started.text
    ex_id = started.json()["execution_id"]
    live_server.wait_for(lambda: execution(live_server, ex_id)["status"] == "failed")
    folder = live_server.data_dir / live_server.get("/api/auth/me").json()["workspace_id"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "invoice.txt").write_text("1,840.00 EUR")

    log_in(page, live_server)
    page.goto(live_server.url(f"/executions/{ex_id}"))
    banner = page.get_by_test_id("failure-banner")
    expect(banner.get_by_role("heading", name="Step Read the invoice (read) failed")).to_be_visible()
    expect(banner.get_by_role("alert")).to_contain_text("invoise.txt")
    for name in ("Retry", "Retry with changes…", "Resume from…", "Re-run…"):
        expect(banner.get_by_role("button", name=name, exact=True)).to_be_enabled()
    expect(history_step(page, "Read the invoice")).to_contain_text("Failed: tool 'file.read' failed")
    save_screenshot(page, "execution-failed.png")

    banner.get_by_role("button", name="Retry with changes…").click()
    dialog = page.get_by_role("dialog", name="Retry step Read the invoice (read) with changes")
    expect(dialog).to_contain_text("invoise.txt")
    # the form drawn from file.read's schema: a number field keeps its type, a bad value blocks sending
    dialog.get_by_role("tab", name="Raw JSON").click()
    dialog.get_by_label("Params as JSON").fill('{"path": "invoice.txt", "max_bytes": "lots"}')
    dialog.get_by_role("button", name="Retry with these params").click()
    expect(dialog.get_by_text("max_bytes", exact=False).first).to_be_visible()
    assert execution(live_server, ex_id)["status"] == "failed"  # nothing was sent, or the server refused it
    dialog.get_by_label("Params as JSON").fill('{"path": "invoice.txt"}')
    save_screenshot(page, "execution-retry-dialog.png")
    dialog.get_by_role("button", name="Retry with these params").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("dd [data-status='completed']")).to_be_visible()
    expect(page.get_by_test_id("failure-banner")).to_be_hidden()
    done = execution(live_server, ex_id)
    steps = {s["step_id"]: s for s in done["steps"]}
    assert steps["report"]["output"] == {"message": "invoice says 1,840.00 EUR"}
    assert steps["read"]["run"] == 2 and steps["read"]["idempotency_key"].endswith(":read:2")

    read = history_step(page, "Read the invoice")
    expect(read).to_contain_text("Run 1 of file.read started")
    expect(read).to_contain_text("after: tool 'file.read' failed")  # the retry says what it failed with
    expect(read).to_contain_text("Retried by admin@live.test as run 2 with changed params")
    expect(read).to_contain_text("invoise.txt")
    expect(read).to_contain_text(f"{ex_id}:read:2")
    expect(read.get_by_role("row").filter(has_text="path")).to_contain_text("{{ vars.file }}invoice.txt")
    expect(read.get_by_text("retried 1×")).to_be_visible()
    page.get_by_role("heading", name="History").scroll_into_view_if_needed()
    save_screenshot(page, "execution-history.png")
    # the history's keys, diffs and long reasons wrap: nothing runs out of the page at 800 px
    page.set_viewport_size({"width": 800, "height": 860})
    history = page.get_by_role("region", name="History")
    assert history.evaluate("el => el.scrollWidth - el.clientWidth") <= 0
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    audit = live_server.get(f"/api/audit?execution_id={ex_id}&action=retry").json()["items"]
    assert [(e["actor"], e["result"]) for e in audit] == [("admin@live.test", "edited")]
    assert page_errors(errors) == []


def test_the_history_keeps_a_pause_with_its_question_and_the_answer_given_at_the_resume(live_server, page):
    errors = collect_errors(page)
    ex_id = panel_at_hello(page, live_server)

    open_pause_dialog(page)
    page.keyboard.type("Is hello the right greeting?")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Is hello the right greeting?")).to_be_visible()
    resume_with_feedback(page, "yes, keep it friendly")
    expect_suggestion(page, "Say hello")
    page.keyboard.press("a")
    expect_suggestion(page, "Say bye")
    page.keyboard.press("a")
    expect_finished(page)

    # on the panel, under the steps
    open_history_on_the_panel(page)
    hello = history_step(page, "Say hello")
    expect(hello).to_contain_text("Paused by admin@live.test before this step: “Is hello the right greeting?”")
    expect(hello).to_contain_text("Resumed by admin@live.test with the answer: “yes, keep it friendly”")
    expect(hello).to_contain_text("Accepted by admin@live.test")
    save_screenshot(page, "coaching-history.png")

    # and on the execution page, for anyone who opens the run later
    page.goto(live_server.url(f"/executions/{ex_id}"))
    hello = history_step(page, "Say hello")
    expect(hello).to_contain_text("“Is hello the right greeting?”")
    expect(hello).to_contain_text("“yes, keep it friendly”")
    expect(history_step(page, "Say bye")).to_contain_text("Accepted by admin@live.test")
    assert page_errors(errors) == []


def test_the_coaching_panel_names_the_failure_and_resumes_from_a_later_step(live_server, page):
    errors = collect_errors(page)
    wf = create_workflow(
        live_server,
        "Report and greet",
        [
            {
                "id": "read",
                "name": "Read the report",
                "type": "action",
                "tool": "file.read",
                "params": {"path": "report.txt"},
            },
            {
                "id": "greet",
                "name": "Say done",
                "type": "action",
                "tool": "echo",
                "params": {"message": "done"},
                "depends_on": [],
            },
        ],
    )
    ex_id = start_coaching(live_server, wf["id"])
    log_in(page, live_server)
    open_panel(page, live_server, ex_id)
    expect_suggestion(page, "Read the report")
    page.keyboard.press("a")

    expect(page.get_by_role("heading", level=2, name="Execution failed")).to_be_visible()
    open_history_on_the_panel(page)
    expect(history_step(page, "Read the report")).to_contain_text("Failed: tool 'file.read' failed")
    expect(page.get_by_text("Nothing is left to decide")).to_have_count(0)
    banner = page.get_by_test_id("failure-banner")
    expect(banner.get_by_role("heading", name="Step Read the report (read) failed")).to_be_visible()
    expect(banner.get_by_role("alert")).to_contain_text("report.txt")
    save_screenshot(page, "coaching-failed.png")

    banner.get_by_role("button", name="Resume from…").click()
    dialog = page.get_by_role("dialog", name="Resume from a step")
    expect(dialog.get_by_label("Go on from step")).to_have_value("greet")
    expect(dialog).to_contain_text("Read the report (read) is skipped")
    dialog.get_by_role("button", name="Resume").click()
    expect(dialog).to_be_hidden()
    expect_suggestion(page, "Say done")
    page.keyboard.press("a")
    expect_finished(page)
    history = page.get_by_role("region", name="History")
    expect(history).to_contain_text("Resumed from step 'greet' by admin@live.test, skipping read")
    expect(history_step(page, "Read the report")).to_contain_text(
        "Skipped: admin@live.test resumed the execution from step 'greet'"
    )
    expect(history).to_contain_text("(read had failed: tool 'file.read' failed")
    steps = {s["step_id"]: s["status"] for s in execution(live_server, ex_id)["steps"]}
    assert steps == {"read": "skipped", "greet": "succeeded"}
    assert page_errors(errors) == []
