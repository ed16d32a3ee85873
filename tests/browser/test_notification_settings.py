"""Settings → Notifications in Chromium against the real server (`python wsgi.py`, its notification scanner on), a
real SMTP server (aiosmtpd) and a webhook receiver on loopback (issue 33): an admin chooses their email events and
quiet hours, adds a webhook endpoint (its secret shown once) and sees it failing when the receiver answers 500; the
approval's email link opens a confirmation page in the browser whose button approves."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import collect_errors
from tests.browser.conftest import FRONTEND_DIST, log_in
from tests.support.live_server import LiveServer, free_port
from tests.support.receivers import smtp_inbox, webhook_receiver

pytestmark = pytest.mark.browser


@pytest.fixture
def inbox():
    with smtp_inbox() as box:
        yield box


@pytest.fixture
def failing_receiver():
    with webhook_receiver(500) as server:
        yield server


@pytest.fixture
def server(tmp_path: Path, inbox):
    if not (FRONTEND_DIST / "index.html").is_file():
        pytest.fail(f"{FRONTEND_DIST}/index.html is missing: build the web app first")
    port = free_port()
    with LiveServer(
        tmp_path / "server",
        demo="0",
        port=port,
        env={
            "COACH_FRONTEND_DIST": str(FRONTEND_DIST),
            "COACH_SMTP_HOST": "127.0.0.1",
            "COACH_SMTP_PORT": str(inbox.port),
            "COACH_NOTIFY_SCAN_S": "0.3",
            "COACH_PUBLIC_URL": f"http://127.0.0.1:{port}",
        },
    ) as live:
        yield live


def wait_for(check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_an_admin_sets_notifications_sees_a_failing_webhook_and_approves_from_the_email(
    server, inbox, failing_receiver, page
):
    errors = collect_errors(page)
    log_in(page, server)
    page.goto(server.url("/settings"))
    section = page.get_by_role("region", name="Notifications", exact=True)
    email = section.get_by_role("group", name="Email me when")  # beside "Push when", with the same kinds
    expect(email.get_by_label("A run failed")).to_be_checked()
    email.get_by_label("A run failed").uncheck()
    section.get_by_label("Quiet hours").check()
    # quiet hours that hold later today, not now (the email below is not held)
    later = datetime.now(UTC) + timedelta(hours=6)
    start, end = later.strftime("%H:%M"), (later + timedelta(hours=1)).strftime("%H:%M")
    section.get_by_label("From", exact=True).fill(start)
    section.get_by_label("Until", exact=True).fill(end)
    section.get_by_label("Time zone").fill("UTC")
    section.get_by_role("button", name="Save notification settings").click()
    expect(section.get_by_role("status")).to_have_text("Notification settings saved.")
    saved = server.get("/api/notifications/settings").json()
    assert saved["kinds"]["run_failed"] is False and saved["quiet_start"] == start and saved["timezone"] == "UTC"

    hooks = page.get_by_role("region", name="Workspace notifications", exact=True)
    form = hooks.get_by_role("form", name="Add a webhook endpoint")
    form.get_by_label("Name").fill("ops")
    form.get_by_label("URL").fill(f"http://127.0.0.1:{failing_receiver.server_address[1]}/hook")
    form.get_by_role("button", name="Add endpoint").click()
    expect(hooks.get_by_label("Signing secret")).not_to_have_value("")

    wf = server.post(
        "/api/workflows", json={"name": "pay", "steps": [{"id": "sign_off", "type": "approval", "message": "Pay 42?"}]}
    ).json()
    assert server.post("/api/executions/", json={"workflow_id": wf["id"], "variables": {}}).status_code == 201
    wait_for(lambda: failing_receiver.requests)
    page.reload()
    expect(page.get_by_role("list", name="Webhook endpoints")).to_contain_text("failing")

    mail = wait_for(lambda: [m for m in inbox.messages if "Pay 42?" in m["Subject"]])[0]
    link = re.search(r"^Approve: (\S+)$", mail.get_body(("plain",)).get_content().replace("\r\n", "\n"), re.M).group(1)
    page.goto(link)
    expect(page.get_by_role("heading", name="Approve?")).to_be_visible()
    page.get_by_label("Comment (optional)").fill("from the email")
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_text("the approval is approved")).to_be_visible()
    page.goto(link)
    expect(page.get_by_text("This link was already used.")).to_be_visible()
    # the browser logs each non-2xx answer (the 401 before logging in, the used link's 409): not errors of the app
    assert [e for e in errors if not e.startswith("Failed to load resource")] == []
