"""Evidence from attentive reviews in the browser (issue #41, item 6): decisions made through the REST API, one of them
on a suggestion shown two minutes before (the server measures the time to decide from then), the rest at once; a
lead sets the floor from the keyboard on the workflow's page and reads, at 800 px, who accepted faster than it."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOTS, log_in
from tests.browser.dashboard_support import _settle, create_workflow, decide_once

pytestmark = pytest.mark.browser


def decide_after_a_while(server, workflow_id: str, shown_s_ago: float) -> None:
    """An accept on a suggestion as if shown `shown_s_ago` seconds before (its created_at moved back in the
    server's database): the server measures the decision's latency from then."""
    execution_id = server.post("/api/executions/coaching", json={"workflow_id": workflow_id}).json()["execution_id"]
    assert _settle(server, execution_id)["status"] == "waiting_decision"
    suggestion = server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]
    shown = (datetime.now(UTC) - timedelta(seconds=shown_s_ago)).strftime("%Y-%m-%d %H:%M:%S.%f")
    with sqlite3.connect(server.own_sqlite) as db:
        db.execute("UPDATE suggestions SET created_at = ? WHERE id = ?", (shown, suggestion["suggestion_id"]))
    answer = server.post(
        f"/api/executions/{execution_id}/coaching/decision",
        json={"suggestion_id": suggestion["suggestion_id"], "decision": "accept"},
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["decision"]["latency_ms"] >= shown_s_ago * 1000
    assert _settle(server, execution_id)["status"] == "completed"


def test_a_lead_sets_the_floor_and_reads_each_reviewers_fast_accepts_at_800_px(live_server, page):
    wf = create_workflow(live_server, "Refund review", "Checks a refund and pays it.")
    decide_once(live_server, wf["id"], "accept")  # at once: fast
    decide_once(live_server, wf["id"], "accept")  # at once: fast
    decide_after_a_while(live_server, wf["id"], 120)  # two minutes after it was shown: considered
    decide_once(live_server, wf["id"], "reject")  # a reject is never a fast accept

    log_in(page, live_server)
    page.set_viewport_size({"width": 800, "height": 900})
    page.goto(live_server.url(f"/workflows/{wf['id']}"))
    section = page.get_by_role("region", name="Reviewers", exact=True)
    expect(section.get_by_role("heading", name="Reviewers")).to_be_visible()
    # the floor form's own status line (the table's "Loading the reviewers…" is a status too, while it loads)
    saved = section.get_by_role("form", name="Floor for fast accepts").get_by_role("status")

    # the floor at one minute: the decisions made at once are under it, the one two minutes after is not
    floor = section.get_by_label("Floor for fast accepts (milliseconds)")
    floor.focus()
    floor.press("Control+a")
    page.keyboard.type("60000")
    page.keyboard.press("Enter")
    expect(saved).to_have_text("Floor saved: an accept faster than 1 min counts as fast.")
    assert live_server.get("/api/workspace/reviews").json()["attentive_floor_ms"] == 60000

    table = section.get_by_role("region", name="Reviewers of Refund review: time to decide and fast accepts")
    row = table.get_by_role("row").filter(has=page.get_by_role("rowheader", name=live_server.admin_email))
    expect(row).to_contain_text("Flagged 2 of 3 accepts (67%) faster than 1 min")
    cells = row.get_by_role("cell")
    expect(cells.nth(0)).to_have_text("4")  # decisions
    expect(cells.nth(1)).to_have_text("3")  # accepts
    expect(cells.nth(3)).to_contain_text("2 min")  # the 90th percentile: the considered accept
    expect(section).to_contain_text("4 decisions in the last 30 days; floor 1 min.")

    # the table's region takes the keyboard focus (it scrolls sideways inside itself, never the page)
    table.focus()
    assert table.evaluate("el => el === document.activeElement")
    scroll, window = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert scroll <= window, f"the workflow's page is {scroll} px wide in a {window} px window"
    assert table.evaluate("el => el.scrollWidth <= el.clientWidth"), "the reviewers' table scrolls sideways at 800 px"
    section.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "workflow-reviewers.png"), full_page=False)

    # one step's decisions, chosen from the keyboard: the same here (the workflow has one step)
    scope = section.get_by_label("Decisions of")
    scope.focus()
    scope.select_option(label="step mail")
    expect(section).to_contain_text("4 decisions in the last 30 days of step mail; floor 1 min.")
    expect(
        section.get_by_role("region", name="Reviewers of Refund review, step mail: time to decide and fast accepts")
    ).to_contain_text("2 of 3 accepts (67%)")

    # back to the workspace's default, from the keyboard: the button after Save
    floor.focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(section.get_by_role("button", name="Use the default (1.5 s)")).to_be_focused()
    page.keyboard.press("Enter")
    expect(saved).to_have_text("Floor saved: an accept faster than 1.5 s counts as fast.")
    assert live_server.get("/api/workspace/reviews").json()["workspace"] is False
