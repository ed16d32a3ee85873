"""Regions in the web app (issue #41 item 7) in Chromium against the real server: a lead whose refund step's small
refunds were accepted and big ones rejected writes a region `params.amount <= 200` on the workflow's page, reads its
replay first (what it would have let run unattended and how reviewers decided those), adds it, sees it listed with
its evidence, and the next small refund's suggestion names its region in the coaching panel and the queue."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOTS, log_in
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.browser

REFUND = {
    "id": "refund",
    "name": "Refund",
    "type": "action",
    "tool": "echo",
    "params": {"amount": "{{ vars.amount }}", "currency": "GBP"},
}
SMALL = [20, 45, 60, 95, 140, 200]  # accepted
BIG = [450, 900, 2500, 4000]  # rejected
SETTLED = ("waiting_decision", "completed", "failed", "cancelled", "waiting_correction")


def _shot(page, locator, name: str) -> None:
    """A screenshot of one part of the page (the docs show the section, not the whole workflow page)."""
    page.evaluate("document.activeElement && document.activeElement.blur()")  # no focus ring in the docs
    locator.screenshot(path=str(SCREENSHOTS / name))


def _cells(outcome: str, *figures: int) -> re.Pattern:
    return re.compile(r"^\s*" + re.escape(outcome) + "".join(rf"\s*{n}" for n in figures) + r"\s*$")


def _settle(server: LiveServer, execution_id: str) -> dict:
    def settled():
        body = server.get(f"/api/executions/{execution_id}").json()
        return body if body["status"] in SETTLED else None

    return server.wait_for(settled, message=f"execution {execution_id} to settle")


def _refund(server: LiveServer, workflow_id: str, amount: int) -> tuple[str, dict]:
    """A coaching run of one refund, waiting for its suggestion: (execution id, suggestion)."""
    started = server.post(
        "/api/executions/coaching", json={"workflow_id": workflow_id, "variables": {"amount": amount}}
    )
    assert started.status_code == 201, started.text
    execution_id = started.json()["execution_id"]
    assert _settle(server, execution_id)["status"] == "waiting_decision"
    suggestion = server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]
    assert suggestion is not None
    return execution_id, suggestion


def _decide(server: LiveServer, workflow_id: str, amount: int, decision: str) -> None:
    execution_id, suggestion = _refund(server, workflow_id, amount)
    answer = server.post(
        f"/api/executions/{execution_id}/coaching/decision",
        json={"suggestion_id": suggestion["suggestion_id"], "decision": decision},
    )
    assert answer.status_code == 200, answer.text
    if decision == "reject":  # a rejected step waits for a correction: that run is given up
        assert _settle(server, execution_id)["status"] == "waiting_correction"
        assert server.post(f"/api/executions/{execution_id}/cancel").status_code == 200


def test_a_lead_replays_a_region_adds_it_and_the_next_suggestion_names_it(live_server, page):
    made = live_server.post(
        "/api/workflows",
        json={
            "name": "Refunds",
            "description": "Pays a refund.",
            "steps": [REFUND],
            "variables": {"amount": {"type": "integer"}},
        },
    )
    assert made.status_code == 201, made.text
    wf_id = made.json()["id"]
    for small, big in zip(SMALL, BIG + [None] * len(SMALL), strict=False):
        _decide(live_server, wf_id, small, "accept")
        if big is not None:
            _decide(live_server, wf_id, big, "reject")

    log_in(page, live_server)
    page.goto(live_server.url(f"/workflows/{wf_id}"))
    section = page.get_by_role("region", name="Regions of step refund", exact=True)
    expect(section).to_contain_text("No region yet")
    form = section.get_by_role("form", name="Add a region")
    form.get_by_label("Name", exact=True).fill("small refunds")
    condition = form.get_by_label("Condition", exact=True)
    # a condition that does not compile: the server's message beside the field, from the replay as it is typed
    condition.fill("params.amount <=")
    expect(condition).to_have_attribute("aria-invalid", "true")
    expect(form.locator(".field-error")).to_contain_text("Condition:")
    condition.fill("params.amount <= 200")
    form.get_by_role("button", name="Replay").click()

    replay = form.get_by_role(
        "table", name="Replay of the condition params.amount <= 200: what reviewers decided on each outcome"
    )
    rows = replay.get_by_role("row")
    # columns: calls, accepted, corrected, rejected, done by hand, skipped
    expect(rows.filter(has_text="Would have run unattended")).to_have_text(
        _cells("Would have run unattended", 6, 6, 0, 0, 0, 0)
    )
    expect(rows.filter(has_text="Still asked")).to_have_text(_cells("Still asked", 4, 0, 0, 4, 0, 0))
    expect(rows.filter(has_text="Denied by the policy")).to_have_text(_cells("Denied by the policy", 0, 0, 0, 0, 0, 0))
    expect(form.locator("[data-in-region]")).to_have_text("6")
    expect(form).to_contain_text("Replayed the latest 10 decided calls")
    expect(form).to_contain_text("Every call that would have run unattended was accepted as it was.")
    _shot(page, form, "regions-replay.png")

    form.get_by_role("button", name="Add the region").click()
    expect(form.get_by_role("status")).to_contain_text("Added region “small refunds”")
    table = section.get_by_role("table", name="Regions of step refund, in their order")
    row = table.get_by_role("row").filter(has=page.get_by_role("rowheader", name="small refunds"))
    expect(row).to_contain_text("params.amount <= 200")
    expect(row).to_contain_text("Coaching")
    expect(row).to_contain_text("0 decisions")
    expect(row).to_contain_text("of the 32.9 needed")  # the first condition version's share of 0.05: 1 / 0.0304
    promote = row.get_by_role("button", name="Promote region small refunds to AUTO")
    expect(promote).to_have_attribute("aria-disabled", "true")
    listed = live_server.get(f"/api/workflows/{wf_id}/steps/refund/regions").json()["items"]
    assert [(r["name"], r["when"], r["decisions"]) for r in listed] == [("small refunds", "params.amount <= 200", 0)]
    _shot(page, section, "regions.png")

    execution_id, suggestion = _refund(live_server, wf_id, 75)
    assert suggestion["region"]["name"] == "small refunds"
    page.goto(live_server.url(f"/executions/{execution_id}/coach"))
    card = page.get_by_role("region", name="Suggestion: Refund")
    expect(card.locator("[data-region-id]")).to_have_text("small refunds (coaching)")
    page.goto(live_server.url("/queue"))
    expect(
        page.get_by_role("listbox", name="Pending suggestions").get_by_role("option").filter(has_text="Refunds")
    ).to_contain_text("Region: small refunds (coaching)")
