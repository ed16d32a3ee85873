"""Notifications in Chromium: a user turns browser notifications on from the header (the permission granted to
the page), a workflow is demoted by rejected spot checks while they are on another page, a notification is shown and
the dashboard shows the demotion as a notice that, once dismissed, stays dismissed after a reload; and new work in an
empty queue is notified."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import FRONTEND_DIST, log_in
from tests.browser.dashboard_support import SETTLED, create_workflow
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.browser

# Records every notification the page makes (before the real constructor runs, which may refuse in a headless
# browser); permission and requestPermission are the browser's own, inherited from the real class.
RECORD_NOTIFICATIONS = """
(() => {
  const Real = window.Notification;
  if (typeof Real !== "function") return;
  const made = [];
  window.__notifications = made;
  window.Notification = class extends Real {
    constructor(title, options) {
      made.push({ title, body: options && options.body, tag: options && options.tag });
      super(title, options);
    }
  };
})();
"""
# at level 0.2 a few rejected spot checks in a row are evidence of a drop (tests/api/test_coaching_metrics.py)
QUICK = {"auto_alpha": 0.2, "coaching_after": 2, "auto_min_window": 3, "window": 5}


@pytest.fixture
def server(tmp_path):
    """A live server whose AUTO runs are all spot-checked (COACH_SPOT_CHECK_RATE=1)."""
    if not (FRONTEND_DIST / "index.html").is_file():
        pytest.fail(f"{FRONTEND_DIST}/index.html is missing: build the web app first (`cd frontend && npm run build`)")
    with LiveServer(
        tmp_path / "server", demo="0", env={"COACH_FRONTEND_DIST": str(FRONTEND_DIST), "COACH_SPOT_CHECK_RATE": "1"}
    ) as live:
        yield live


def _settle(server: LiveServer, execution_id: str) -> dict:
    return server.wait_for(
        lambda: (body := server.get(f"/api/executions/{execution_id}").json())["status"] in SETTLED and body,
        message=f"execution {execution_id} to settle",
    )


def reject_spot_check(server: LiveServer, workflow_id: str) -> None:
    started = server.post("/api/executions/", json={"workflow_id": workflow_id, "mode": "auto", "variables": {}})
    assert started.status_code == 201, started.text
    execution_id = started.json()["execution_id"]
    assert _settle(server, execution_id)["status"] == "waiting_decision"
    suggestion = server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]
    assert suggestion["purpose"] == "spot_check", suggestion
    answer = server.post(
        f"/api/executions/{execution_id}/coaching/decision",
        json={"suggestion_id": suggestion["suggestion_id"], "decision": "reject", "feedback": "wrong"},
    )
    assert answer.status_code == 200, answer.text
    if _settle(server, execution_id)["status"] == "waiting_correction":
        assert server.post(f"/api/executions/{execution_id}/cancel").status_code == 200


def turn_notifications_on(page: Page, server: LiveServer) -> None:
    page.context.grant_permissions(["notifications"], origin=server.base_url)
    switch = page.get_by_role("switch", name="Notifications")
    expect(switch).to_have_attribute("aria-checked", "false")
    switch.click()
    expect(switch).to_have_attribute("aria-checked", "true")


def notifications(page: Page) -> list[dict]:
    """What the page notified so far (read through the DevTools protocol: the app's CSP forbids eval)."""
    return page.evaluate("() => window.__notifications || []")


def test_a_demotion_is_notified_and_shown_on_the_dashboard_as_a_notice_that_stays_dismissed(server, page):
    workflow = create_workflow(server, "Invoice intake")
    assert server.request("PUT", f"/api/workflows/{workflow['id']}/thresholds", json=QUICK).status_code == 200
    promoted = server.post(
        f"/api/workflows/{workflow['id']}/mode", json={"mode": "auto", "force": True, "reason": "tests"}
    )
    assert promoted.status_code == 200, promoted.text

    page.add_init_script(RECORD_NOTIFICATIONS)
    log_in(page, server)
    turn_notifications_on(page, server)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Workflows").click()
    expect(page.get_by_role("heading", name="Workflows", level=1)).to_be_visible()

    for _ in range(8):  # spot checks rejected until they are evidence of a drop
        reject_spot_check(server, workflow["id"])
        if server.get(f"/api/workflows/{workflow['id']}").json()["mode"] == "coaching":
            break
    assert server.get(f"/api/workflows/{workflow['id']}").json()["mode"] == "coaching"

    [shown] = server.wait_for(
        lambda: [n for n in notifications(page) if "demoted" in n["title"]], message="a notification of the demotion"
    )
    assert shown["title"] == "“Invoice intake” was demoted to coaching"
    assert shown["body"].startswith("Spot checks show acceptance below 85%")

    # it happened on another page: the dashboard still shows it, and announces it
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Dashboard").click()
    notices = page.get_by_role("region", name="Notices")
    notice = notices.get_by_role("listitem").filter(has_text="“Invoice intake” was demoted to coaching")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Spot checks show acceptance below 85%")
    expect(page.get_by_test_id("notices-announcement")).to_have_text(
        "“Invoice intake” was demoted to coaching. " + shown["body"]
    )
    page.screenshot(path=str(server.folder / "notice.png"), full_page=True)

    page.reload()  # read back from the server
    expect(notice).to_be_visible()
    expect(page.get_by_test_id("notices-announcement")).to_be_empty()  # history is not announced again
    notice.get_by_role("button", name="Dismiss: “Invoice intake” was demoted to coaching").click()
    expect(notices).to_have_count(0)
    page.reload()
    expect(page.get_by_role("heading", name="Workflows", level=2)).to_be_visible()
    expect(page.get_by_role("region", name="Notices")).to_have_count(0)


def test_new_work_in_an_empty_queue_is_notified(server, page):
    page.add_init_script(RECORD_NOTIFICATIONS)
    log_in(page, server)
    expect(page.get_by_role("heading", name="Queue", level=1)).to_be_visible()
    with page.expect_response(lambda r: "/api/coaching/queue?page=1&per_page=1" in r.url) as read:
        turn_notifications_on(page, server)
    assert read.value.json()["total"] == 0

    workflow = create_workflow(server, "Mail the invoice")
    started = server.post("/api/executions/coaching", json={"workflow_id": workflow["id"], "variables": {}})
    assert started.status_code == 201, started.text

    [shown] = server.wait_for(lambda: notifications(page), message="a notification of the new work")
    assert (shown["title"], shown["body"]) == ("New work in the queue", "Mail the invoice: step “mail”")
    # the queue page shows the item too (the notification is news, not the only way to see it)
    expect(page.get_by_text("Mail the invoice").first).to_be_visible()
