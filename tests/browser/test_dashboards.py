"""A team lead reads the dashboards in Chromium: a workflow turns AUTO-ready live and is promoted with the keyboard;
a learned correction pack is opened from its link and toggled; the workflow's definition and the audit chain."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import SCREENSHOTS, log_in
from tests.browser.dashboard_support import (
    auto_ready_after,
    create_workflow,
    decide_many,
    decide_once,
    workflow_metrics,
)

pytestmark = pytest.mark.browser

CORRECTED = {"to": "billing@example.com", "cc": "none"}


def tab_to(page: Page, target: Locator, presses: int = 60) -> None:
    """Press Tab until `target` has focus: it must be reachable with the keyboard alone."""
    for _ in range(presses):
        if target.evaluate("el => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    pytest.fail(f"{target} never got focus after {presses} presses of Tab")


def save_screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("document.activeElement && document.activeElement.blur()")  # no focus ring in the docs
    page.evaluate("document.querySelectorAll('.table-wrap').forEach(el => { el.scrollLeft = 0; })")
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def test_a_workflow_turns_auto_ready_live_and_a_lead_promotes_it_with_the_keyboard(live_server, page):
    invoice = create_workflow(live_server, "Invoice intake", "Reads an invoice and mails it to billing.")
    refund = create_workflow(live_server, "Refund request", "Checks a refund and pays it.")
    decide_many(live_server, refund["id"], ["accept"] * 8 + ["reject", "skip"])
    decide_once(live_server, refund["id"], "correct", CORRECTED)
    needed = auto_ready_after(live_server, invoice["id"])
    assert needed == 28, (
        "docs/design.md#metrics-and-learning-levels defaults: "
        f"28 accepts in a row are evidence at level 0.05, got {needed}"
    )
    decide_many(live_server, invoice["id"], ["accept"] * (needed - 1))
    assert workflow_metrics(live_server, invoice["id"])["auto_ready"] is False

    log_in(page, live_server)
    # the level change is pushed once, to the workspace room: the decision below must come after the page joined it
    # (the join's ack, `{ok, workspace_id, role}`, is a frame of the page's socket)
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: frames.append(str(frame))))
    page.goto(live_server.url("/dashboard"))
    expect(page.get_by_role("heading", name="Dashboard", level=1)).to_be_visible()
    deadline = time.monotonic() + 60
    while not any('"workspace_id"' in f and '"role"' in f for f in frames):
        assert time.monotonic() < deadline, f"the dashboard never joined its workspace's room: {frames[-5:]}"
        page.wait_for_timeout(50)
    # the workflow's row in the workflows table (once its step is AUTO-ready too, the steps table has a row naming it)
    workflows = page.get_by_role("region", name="Workflows by learning level")
    row = workflows.get_by_role("row").filter(has=page.get_by_role("link", name="Invoice intake", exact=True))
    expect(row).to_contain_text("Not ready")
    expect(row).to_contain_text("about 1 more accept in a row")
    expect(row.locator("[data-level]")).to_have_attribute("data-level", "COACHING")
    expect(page.get_by_label("Workspace totals")).to_contain_text("AUTO-ready workflows0")

    # The last accepted decision arrives through REST: the open dashboard follows over the socket, no reload.
    decide_once(live_server, invoice["id"], "accept")
    expect(row.locator("[data-auto-ready]")).to_have_attribute("data-auto-ready", "true")
    expect(row).to_contain_text("AUTO-ready")
    expect(row.locator("[data-level]")).to_have_attribute("data-level", "AUTO")
    expect(row).to_contain_text("100%")
    expect(
        page.get_by_role("status").filter(
            has_text="“Invoice intake” moved from Coaching to AUTO-ready; its mode is Coaching"
        )
    ).to_be_visible()
    expect(page.get_by_label("Workspace totals")).to_contain_text("AUTO-ready workflows1")

    promote = row.get_by_role("button", name="Promote Invoice intake to AUTO")
    tab_to(page, promote)
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Promote “Invoice intake” to AUTO?")
    expect(dialog).to_contain_text("Its evidence says AUTO-ready.")
    # focus starts on Cancel (a stray Enter never promotes): Tab to the confirm button, deliberately
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="Promote to AUTO")).to_be_focused()
    page.keyboard.press("Enter")

    expect(dialog).to_be_hidden()
    expect(page.get_by_role("status").filter(has_text="“Invoice intake” is now in AUTO mode")).to_be_visible()
    expect(row.locator("[data-mode]")).to_have_attribute("data-mode", "auto")
    expect(row.get_by_role("button", name="Demote Invoice intake to coaching")).to_be_focused()
    assert workflow_metrics(live_server, invoice["id"])["mode"] == "auto"

    # A workflow that is not ready: no promotion the server would refuse (issue 31); an admin may force it, with
    # a reason (tests/browser/test_sound_corrections.py)
    refund_row = page.get_by_role("row").filter(has=page.get_by_role("link", name="Refund request", exact=True))
    expect(refund_row.get_by_role("button", name="Promote Refund request to AUTO")).to_have_count(0)
    expect(refund_row.get_by_role("button", name="Force Refund request into AUTO…")).to_be_visible()
    assert workflow_metrics(live_server, refund["id"])["mode"] == "coaching"

    expect(page.get_by_role("rowheader", name="admin@live.test")).to_be_visible()
    expect(page.get_by_role("figure", name="Acceptance over time — all workflows")).to_be_visible()
    expect(page.locator(".recharts-surface").first).to_be_visible()
    save_screenshot(page, "dashboard.png")


def test_a_lead_opens_a_learned_pack_from_its_link_toggles_it_and_reads_the_workflow(live_server, page):
    wf = create_workflow(live_server, "Invoice intake", "Reads an invoice and mails it to billing.")
    for _ in range(3):
        decide_once(live_server, wf["id"], "correct", CORRECTED)
    packs = live_server.get(f"/api/correction-packs?workflow_id={wf['id']}").json()["items"]
    assert len(packs) == 1 and packs[0]["rules"], packs
    pack_id = packs[0]["id"]
    # The next suggestion applies the learned rule and cites the pack: the CoachingPanel links it here.
    suggestion = decide_once(live_server, wf["id"], "accept")
    assert suggestion["source"] == f"correction_pack:{pack_id}", suggestion

    log_in(page, live_server)
    page.goto(live_server.url(f"/correction-packs?pack={pack_id}"))
    expect(page.get_by_role("heading", name="Correction packs", level=1)).to_be_visible()
    pack = page.locator(f"#pack-{pack_id}")
    expect(pack).to_be_focused()
    expect(pack).to_contain_text("linked from a suggestion")
    expect(pack).to_contain_text("3 corrections · 1 learned rule")
    learned = pack.get_by_role("row").filter(has=page.get_by_role("rowheader", name="to", exact=True))
    expect(learned).to_contain_text('"a@example.com"')
    expect(learned).to_contain_text('"billing@example.com"')
    expect(learned).to_contain_text("100%")
    expect(learned).to_contain_text("Learned rule")
    expect(pack.locator("[data-enabled]")).to_have_text("✓Enabled")

    disable = pack.get_by_role("button", name="Disable the pack of step mail of Invoice intake")
    tab_to(page, disable, presses=5)
    page.keyboard.press("Enter")
    expect(pack.locator("[data-enabled]")).to_have_attribute("data-enabled", "false")
    expect(pack.get_by_role("status")).to_contain_text("disabled: suggestions ignore it")
    assert live_server.get(f"/api/correction-packs/{pack_id}").json()["enabled"] is False
    enable = pack.get_by_role("button", name="Enable the pack of step mail of Invoice intake")
    expect(enable).to_be_focused()
    page.keyboard.press("Enter")
    expect(pack.locator("[data-enabled]")).to_have_attribute("data-enabled", "true")
    assert live_server.get(f"/api/correction-packs/{pack_id}").json()["enabled"] is True

    # The import refuses a pack for a step the workflow lacks, naming the field.
    exported = live_server.get(f"/api/correction-packs/{pack_id}/export").json()
    page.get_by_label("Pack JSON").fill(json.dumps({**exported, "step_id": "nope"}))
    page.get_by_role("button", name="Import pack").click()
    refusal = page.get_by_role("alert")
    expect(refusal).to_contain_text("The server refused the pack")
    expect(refusal).to_contain_text("step_id: must be one of ['mail']")

    page.goto(live_server.url("/correction-packs"))
    expect(page.locator(f"#pack-{pack_id}")).to_contain_text("Learned rule")
    save_screenshot(page, "correction-packs.png")

    page.get_by_role("link", name="Definition of Invoice intake").click()
    expect(page.get_by_role("heading", name="Invoice intake", level=1)).to_be_visible()
    steps = page.get_by_role("list", name="Steps of version 1")
    expect(steps).to_contain_text("echo")
    expect(steps).to_contain_text('"to": "a@example.com"')
    expect(page.get_by_label("Metrics of Invoice intake")).to_contain_text("3 corrected")
    expect(page.get_by_role("link", name="Correction packs of Invoice intake")).to_be_visible()
    save_screenshot(page, "workflow-detail.png")

    page.goto(live_server.url("/audit"))
    expect(page.get_by_role("heading", name="Audit log", level=1)).to_be_visible()
    expect(page.get_by_role("row").filter(has_text="Pack change").first).to_be_visible()
    # a workflow target by its name, not its id (issue #31)
    expect(page.locator(f"a[href='/workflows/{wf['id']}']").first).to_have_text("workflow Invoice intake")
    page.get_by_role("button", name="Verify chain").click()
    expect(page.get_by_role("status").filter(has_text="Chain intact")).to_be_visible()


def test_a_lead_promotes_a_ready_step_alone_and_pins_it_from_the_keyboard(live_server, page):
    wf = create_workflow(live_server, "Mail intake")
    decide_many(live_server, wf["id"], ["accept"] * auto_ready_after(live_server, wf["id"]))
    step = workflow_metrics(live_server, wf["id"])["steps"]["mail"]
    assert step["auto_ready"] is True and step["mode"] == "coaching", step

    log_in(page, live_server)
    page.goto(live_server.url("/dashboard"))
    steps = page.get_by_role(
        "table", name="Steps with a mode of their own, or AUTO-ready while their workflow is coached"
    )
    row = steps.get_by_role("row").filter(has=page.get_by_role("rowheader", name="mail"))
    expect(row).to_contain_text("AUTO-ready")
    expect(row).to_contain_text("Follows the workflow")

    page.goto(live_server.url(f"/workflows/{wf['id']}"))
    table = page.get_by_role("table", name="Autonomy of each step of Mail intake")
    promote = table.get_by_role("button", name="Promote mail of Mail intake to AUTO")
    tab_to(page, promote)
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Promote step “mail” of “Mail intake” to AUTO?")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="Promote the step")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status").filter(has_text="is now in AUTO")).to_be_visible()
    row = table.get_by_role("row").filter(has=page.get_by_role("rowheader", name="mail"))
    expect(row).to_contain_text("AUTO (this step alone)")
    assert live_server.get(f"/api/workflows/{wf['id']}").json()["step_modes"] == {"mail": "auto"}

    pin = table.get_by_role("button", name="Pin mail of Mail intake to always review")
    tab_to(page, pin)
    page.keyboard.press("Enter")
    expect(row).to_contain_text("Always reviewed (pinned)")
    expect(table.get_by_role("button", name="Unpin mail of Mail intake")).to_be_visible()
    assert live_server.get(f"/api/workflows/{wf['id']}").json()["step_modes"] == {"mail": "always_review"}
    audit = [e["action"] for e in live_server.get("/api/audit?per_page=50").json()["items"]]
    assert "step_promotion" in audit and "step_pin" in audit
