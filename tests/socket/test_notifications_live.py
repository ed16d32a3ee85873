"""Notifications against the real server process (`python wsgi.py`), an SMTP server (aiosmtpd) and a webhook
receiver on loopback: a server killed (SIGKILL) after an approval's commit and before any delivery loses nothing:
restarted, it sends the email and the webhook once each."""

from __future__ import annotations

import time

import pytest

from tests.socket.test_approvals_live import approval_of, approval_workflow, start
from tests.support.live_server import LiveServer
from tests.support.receivers import smtp_inbox, webhook_receiver


@pytest.fixture
def inbox():
    with smtp_inbox() as box:
        yield box


@pytest.fixture
def receiver():
    with webhook_receiver(204) as server:
        yield server


def test_a_server_killed_between_the_commit_and_the_delivery_sends_once_after_its_restart(tmp_path, inbox, receiver):
    # COACH_NOTIFY_SCAN_S=0: this server never sends, so the kill surely falls between the commit and the delivery
    with LiveServer(
        tmp_path / "server",
        env={"COACH_SMTP_HOST": "127.0.0.1", "COACH_SMTP_PORT": str(inbox.port), "COACH_NOTIFY_SCAN_S": "0"},
    ) as server:
        hook = server.post(
            "/api/notifications/webhooks",
            json={"url": f"http://127.0.0.1:{receiver.server_address[1]}/hook", "events": ["approval_requested"]},
        )
        assert hook.status_code == 201, hook.text
        approval = approval_of(server, start(server, approval_workflow(server)))
        assert approval["status"] == "pending"
        server.kill()
        assert inbox.messages == [] and receiver.deliveries == []
        server.extra_env["COACH_NOTIFY_SCAN_S"] = "0.2"
        server.restart()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (inbox.messages and receiver.deliveries):
            time.sleep(0.1)
        time.sleep(1.0)  # several more rounds of the scanner: nothing more comes
        assert [m["To"] for m in inbox.messages] == [server.admin_email]
        assert "Pay 42?" in inbox.messages[0]["Subject"]
        assert len(receiver.deliveries) == 1
        listed = server.get("/api/notifications/webhooks").json()["items"][0]
        assert listed["failing"] is False and listed["deliveries"][0]["status"] == "sent"
