"""Notifications against the real server process (`python wsgi.py`), an SMTP server (aiosmtpd) and a webhook
receiver on loopback: a server killed (SIGKILL) after an approval's commit and before any delivery loses nothing:
restarted, it sends the email and the webhook once each."""
from __future__ import annotations

import email
import email.policy
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from aiosmtpd.controller import Controller

from tests.socket.test_approvals_live import approval_of, approval_workflow, start
from tests.support.live_server import LiveServer


class Inbox:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def inbox():
    box = Inbox()
    controller = Controller(box, hostname="127.0.0.1", port=_free_port())
    controller.start()
    box.port = controller.port
    yield box
    controller.stop()


@pytest.fixture
def receiver():
    deliveries = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            deliveries.append(self.headers["X-Coach-Delivery"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.deliveries = deliveries
    yield server
    server.shutdown()
    server.server_close()


def test_a_server_killed_between_the_commit_and_the_delivery_sends_once_after_its_restart(tmp_path, inbox, receiver):
    # COACH_NOTIFY_SCAN_S=0: this server never sends, so the kill surely falls between the commit and the delivery
    server = LiveServer(tmp_path / "server", env={"COACH_SMTP_HOST": "127.0.0.1", "COACH_SMTP_PORT": str(inbox.port),
                                                  "COACH_NOTIFY_SCAN_S": "0"})
    try:
        server.start()
        hook = server.post("/api/notifications/webhooks", json={
            "url": f"http://127.0.0.1:{receiver.server_address[1]}/hook", "events": ["approval_requested"]})
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
    finally:
        server.stop()
        server.http.close()
