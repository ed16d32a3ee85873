"""The Triggers section of a workflow's page in Chromium against the real server (`python wsgi.py`, nothing else
started): a lead creates a schedule (its preview and next fire times), which the server's own scan fires once due;
creates a webhook (the secret shown once, with a signed curl example), a delivery signed with that secret starts
the workflow, and the execution page says what started it; then revokes the hook."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid

import requests
from playwright.sync_api import expect

from core import triggers as T
from tests.browser.conftest import log_in

WORKFLOW = {
    "name": "Order intake",
    "description": "Files an order",
    "variables": {"order_id": {"type": "string", "required": True}},
    "steps": [{"id": "note", "tool": "echo", "params": {"message": "order {{ vars.order_id }}"}}],
}


def test_a_lead_schedules_a_workflow_and_gives_it_a_webhook(page, live_server):
    answer = live_server.post("/api/workflows", json=WORKFLOW)
    assert answer.status_code == 201, answer.text
    workflow_id = answer.json()["id"]
    log_in(page, live_server)
    page.goto(live_server.url(f"/workflows/{workflow_id}"))
    section = page.get_by_role("region", name="Triggers")
    expect(section.get_by_role("heading", name="Triggers")).to_be_visible()

    # a schedule: a cron expression that does not parse says why, a good one shows its next fires
    form = section.get_by_role("form", name="Create a schedule")
    form.get_by_label("Schedule name").fill("Every five minutes")
    form.get_by_label("Cron expression").fill("61 * * * *")
    expect(form).to_contain_text("Bad minute")
    form.get_by_label("Cron expression").fill("*/5 * * * *")
    form.get_by_label("Time zone").fill("Europe/Berlin")
    expect(form).to_contain_text("next:")
    form.get_by_label("Variables (JSON)").fill('{"order_id": "S-1"}')
    form.get_by_role("button", name="Create schedule").click()
    row = section.locator("tr[data-schedule='Every five minutes']")
    expect(row).to_contain_text("*/5 * * * *")
    expect(row).to_contain_text("Europe/Berlin")
    expect(row).to_contain_text("enabled")
    expect(row.locator("li")).to_have_count(3)  # the next three fire times
    row.get_by_role("button", name="Disable schedule Every five minutes").click()
    expect(row).to_contain_text("disabled")
    expect(row).to_contain_text("—")  # no next fire while disabled
    row.get_by_role("button", name="Enable schedule Every five minutes").click()
    expect(row).to_contain_text("enabled")

    # due now (as if its time had come): the server's own scan fires it once, nothing else started
    [schedule] = live_server.get(f"/api/workflows/{workflow_id}/schedules").json()["items"]
    with sqlite3.connect(live_server.own_sqlite) as db:
        db.execute(
            "UPDATE trigger_schedules SET next_fire_at = '2020-01-06 08:00:00.000000' WHERE id = ?", (schedule["id"],)
        )
    fired = live_server.wait_for(
        lambda: live_server.get(f"/api/workflows/{workflow_id}/schedules").json()["items"][0]["last_execution_id"]
    )
    page.reload()
    row = section.locator("tr[data-schedule='Every five minutes']")
    row.get_by_role("link", name="execution").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(fired)
    expect(page.locator("dd[data-trigger='schedule']")).to_contain_text("Every five minutes")

    # a webhook: the secret once, and a delivery signed with it starts the workflow
    page.goto(live_server.url(f"/workflows/{workflow_id}"))
    form = section.get_by_role("form", name="Create a webhook")
    form.get_by_label("Webhook name").fill("shop")
    form.get_by_role("button", name="Create webhook").click()
    shown = section.get_by_role("status").filter(has_text="Copy its secret now")
    secret = shown.get_by_label("The new webhook's secret").input_value()
    assert secret.startswith("whsec_")
    example = shown.get_by_label("Example request")
    expect(example).to_contain_text("X-Coach-Signature: sha256=$SIG")
    expect(example).to_contain_text('"order_id":""')
    hook_row = section.locator("tr[data-hook='shop']")
    expect(hook_row).to_contain_text("active")
    url = hook_row.locator("code").inner_text()

    body = json.dumps({"order_id": "W-7"}).encode()
    stamp = str(int(time.time()))
    with requests.Session() as sender:  # no cookie, no token: the signature is the auth
        sender.trust_env = False
        delivered = sender.post(
            url,
            data=body,
            timeout=10,
            headers={
                "Content-Type": "application/json",
                T.TIMESTAMP_HEADER: stamp,
                T.SIGNATURE_HEADER: T.sign(secret, stamp, body),
                T.DELIVERY_HEADER: str(uuid.uuid4()),
            },
        )
    assert delivered.status_code == 201, delivered.text
    shown.get_by_role("button", name="Done, hide it").click()
    expect(section.get_by_label("The new webhook's secret")).to_have_count(0)
    page.goto(live_server.url(f"/executions/{delivered.json()['execution_id']}"))
    expect(page.locator("dd[data-trigger='webhook']")).to_contain_text("shop")

    page.goto(live_server.url(f"/workflows/{workflow_id}"))
    hook_row.get_by_role("button", name="Revoke webhook shop").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke webhook").click()
    expect(hook_row).to_contain_text("revoked")
