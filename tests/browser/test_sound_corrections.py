"""Issue 31, items 1 and 7, as a person does them in Chromium against the real server: a correction that would
break the run is shown and not sent (a number stays a number); a lead removes one wrong change from a pack; the
workflow page shows each step's evidence and the decisions behind it, and only an admin, with a reason, forces a
promotion the evidence does not allow."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import (
    VIEWPORT,
    collect_errors,
    create_workflow,
    decide_via_api,
    expect_suggestion,
    open_panel,
    pending_suggestion,
    start_coaching,
)
from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser

TOTALS = [
    {
        "id": "total",
        "name": "Add up the amounts",
        "type": "action",
        "tool": "echo",
        "params": {"rows": 2, "total": 12.5},
    },
    {
        "id": "summary",
        "name": "Write the summary",
        "type": "action",
        "tool": "echo",
        "params": {"line": "{{ steps.total.output.rows }} rows, {{ steps.total.output.total }}"},
    },
]


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=False)


def test_a_number_typed_as_abc_is_shown_and_not_sent_and_a_lead_removes_a_wrong_change(live_server, page):
    page.set_viewport_size(VIEWPORT)
    wf = create_workflow(live_server, "Invoice totals", TOTALS)
    execution_id = start_coaching(live_server, wf["id"])
    first = pending_suggestion(live_server, execution_id)
    log_in(page, live_server)
    errors = collect_errors(page)
    open_panel(page, live_server, execution_id)
    expect_suggestion(page, "Add up the amounts")

    page.keyboard.press("c")
    editor = page.get_by_role("dialog", name="Correct step Add up the amounts")
    total = editor.get_by_label("total")
    expect(total).to_have_value("12.5")
    total.select_text()
    page.keyboard.type("abc")
    expect(total).to_have_value("abc")  # shown as typed, never blanked
    expect(editor.get_by_text("must be a number, not 'abc'").first).to_be_visible()
    page.keyboard.press("Control+Enter")
    expect(editor.get_by_role("alert")).to_contain_text("total: must be a number, not 'abc'")
    expect(editor).to_be_visible()
    screenshot(page, "correction-invalid-number.png")
    assert pending_suggestion(live_server, execution_id)["suggestion_id"] == first["suggestion_id"]  # not sent

    total.fill("")
    expect(editor.get_by_text("is required").first).to_be_visible()  # an emptied field is named, not dropped
    total.fill("13.5")
    page.keyboard.press("Control+Enter")
    expect(editor).to_be_hidden()
    expect_suggestion(page, "Write the summary")
    step = live_server.get(f"/api/executions/{execution_id}").json()["steps"]
    total_step = next(s for s in step if s["step_id"] == "total")
    assert total_step["params"] == {"rows": 2, "total": 13.5}  # a number, as the tool got it

    # the lead removes that change from the step's pack, from the packs page
    page.goto(live_server.url(f"/correction-packs?workflow={wf['id']}"))
    pack = page.get_by_role("article", name="Step total")
    expect(pack).to_contain_text("1 correction")
    pack.get_by_role("button", name="Remove the change total: 12.5 → 13.5").click()
    dialog = page.get_by_role("dialog", name="Remove this change from the pack?")
    expect(dialog).to_contain_text("will no longer count towards a learned rule")
    screenshot(page, "correction-pack-remove.png")
    dialog.get_by_role("button", name="Remove the change").click()
    expect(pack.get_by_role("status")).to_contain_text("Removed total: 12.5 → 13.5")
    expect(pack).to_contain_text("These corrections changed no parameter.")

    packs = live_server.get(f"/api/correction-packs?workflow_id={wf['id']}").json()["items"]
    assert packs[0]["changes"] == []
    audit = live_server.get("/api/audit?action=pack_change_remove").json()["items"]
    assert audit[0]["before"]["change"]["field"] == "total" and audit[0]["actor"] == live_server.admin_email
    assert errors == [], errors


def test_the_workflow_page_shows_the_evidence_and_an_admin_forces_a_promotion_with_a_reason(live_server, page):
    page.set_viewport_size({"width": 1280, "height": 1400})
    steps = [
        {"id": "check", "name": "Check the order", "type": "action", "tool": "echo", "params": {"v": 1}},
        {"id": "pay", "name": "Pay back", "type": "action", "tool": "echo", "params": {"v": 2}},
    ]
    wf = create_workflow(live_server, "Refund approval", steps)
    lenient = {"coaching_after": 2, "auto_min_window": 3, "window": 5, "auto_acceptance": 0.5, "auto_alpha": 0.2}
    assert live_server.request("PUT", f"/api/workflows/{wf['id']}/thresholds", json=lenient).status_code == 200
    for _ in range(5):  # `check` is always accepted, `pay` always rejected
        execution_id = start_coaching(live_server, wf["id"])
        decide_via_api(
            live_server, execution_id, pending_suggestion(live_server, execution_id)["suggestion_id"], "accept"
        )
        sug = live_server.wait_for(
            lambda execution_id=execution_id: (
                (s := pending_suggestion(live_server, execution_id)) and s["step_id"] == "pay" and s
            ),
            message="the pay suggestion",
        )
        decide_via_api(live_server, execution_id, sug["suggestion_id"], "reject", feedback="wrong amount")

    log_in(page, live_server)
    errors = collect_errors(page)
    page.goto(live_server.url(f"/workflows/{wf['id']}"))
    pay = page.get_by_role("article", name="Evidence of step pay of Refund approval")
    check = page.get_by_role("article", name="Evidence of step check of Refund approval")
    expect(check).to_contain_text("AUTO-ready")
    expect(pay).to_contain_text("Not ready")
    expect(pay).to_contain_text("of the 5.00 needed")
    expect(pay).to_contain_text("0% against the 50% bar")
    pay.get_by_role("button", name="Show the decisions behind step pay").click()
    decisions = pay.get_by_role("table", name="Latest decisions of step pay, newest first")
    expect(decisions.get_by_role("row")).to_have_count(6)
    expect(decisions).to_contain_text("Rejected")
    pay.scroll_into_view_if_needed()
    screenshot(page, "workflow-evidence.png")

    # not AUTO-ready: no plain promotion; the admin's forced one asks why, and lists the steps left not ready
    page.evaluate("window.scrollTo(0, 0)")
    expect(page.get_by_role("button", name="Promote Refund approval to AUTO")).to_have_count(0)
    page.get_by_role("button", name="Force Refund approval into AUTO…").click()
    dialog = page.get_by_role("dialog", name="Force “Refund approval” into AUTO?")
    expect(dialog.get_by_test_id("steps-not-ready")).to_contain_text("pay")
    expect(dialog.get_by_test_id("steps-not-ready")).not_to_contain_text("check:")
    dialog.get_by_role("button", name="Force into AUTO").click()
    expect(dialog.get_by_text("A forced promotion needs a reason.")).to_be_visible()
    dialog.get_by_label("Why overrule the evidence?").fill("Month-end batch; payments reviewed by hand")
    screenshot(page, "promotion-force.png")
    dialog.get_by_role("button", name="Force into AUTO").click()
    expect(page.get_by_role("status").filter(has_text="is now in AUTO mode (forced)")).to_contain_text("pay")

    event = live_server.get("/api/audit?action=promotion").json()["items"][0]
    assert event["after"]["forced"] is True
    assert event["after"]["reason"] == "Month-end batch; payments reviewed by hand"
    assert [s["step_id"] for s in event["after"]["steps_not_ready"]] == ["pay"]
    assert errors == [], errors


def test_editing_a_pending_http_step_on_the_execution_page_keeps_its_template(live_server, page):
    page.set_viewport_size({"width": 1280, "height": 1500})
    wf = create_workflow(
        live_server,
        "Health check",
        [
            {"id": "first", "name": "Say hello", "type": "action", "tool": "echo", "params": {"v": 1}},
            {
                "id": "ping",
                "name": "Ping the service",
                "type": "action",
                "tool": "http.request",
                "params": {"url": "{{ vars.base_url }}/healthz", "json": {"probe": "coach", "depth": 2}},
            },
        ],
    )
    execution_id = start_coaching(live_server, wf["id"])
    log_in(page, live_server)
    errors = collect_errors(page)
    page.goto(live_server.url(f"/executions/{execution_id}"))
    page.get_by_role("button", name="Edit a pending step").click()
    dialog = page.get_by_role("dialog", name="Edit step Ping the service")
    url = dialog.get_by_label("url")
    expect(url).to_have_value("{{ vars.base_url }}/healthz")
    expect(dialog.get_by_label("probe")).to_have_value("coach")  # an object's fields, editable
    expect(dialog.get_by_label("depth")).to_have_value("2")
    # styled as in the coaching panel: the editor's fields take the dialog's width
    assert url.bounding_box()["width"] > 400
    # an object of extra fields (headers) gets a field with words, not an empty box
    dialog.get_by_role("button", name="+ Add a field").first.click()
    expect(dialog.get_by_label("newKey Key")).to_be_visible()  # the new field's name, then its value
    screenshot(page, "step-edit-template.png")
    dialog.get_by_role("button", name="Remove").first.click()
    expect(dialog.get_by_label("newKey Key")).to_have_count(0)
    dialog.get_by_label("Retries").fill("3")
    dialog.get_by_role("button", name="Save the step").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_text("Step ping changed: it runs as edited.")).to_be_visible()

    events = live_server.get("/api/audit?action=step_correction").json()["items"]
    assert events[0]["after"]["retries"] == 3
    assert events[0]["after"]["params"]["url"] == "{{ vars.base_url }}/healthz"
    assert errors == [], errors
