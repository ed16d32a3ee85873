"""Real protocol servers on loopback for what Coach sends out: an SMTP server (aiosmtpd) that keeps every message,
and an HTTP server that records every POST (a webhook receiver) and answers the statuses it is told to."""

from __future__ import annotations

import email
import email.policy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller

from tests.support.live_server import free_port


class Inbox:
    """What the SMTP server received, parsed (`port`: where it listens)."""

    def __init__(self):
        self.messages: list[email.message.EmailMessage] = []
        self.port = 0

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
        return "250 OK"

    def to(self, address: str) -> list:
        return [m for m in self.messages if m["To"] == address]


@contextmanager
def smtp_inbox() -> Iterator[Inbox]:
    box = Inbox()
    controller = Controller(box, hostname="127.0.0.1", port=free_port())
    controller.start()
    box.port = controller.port
    try:
        yield box
    finally:
        controller.stop()


class Receiver(ThreadingHTTPServer):
    """Records each POST as (lower-cased headers, body) in `requests`; answers `statuses` in turn, then `status`."""

    def __init__(self, status: int = 200):
        self.requests: list[tuple[dict, bytes]] = []
        self.statuses: list[int] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(outer.statuses.pop(0) if outer.statuses else status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook"

    @property
    def deliveries(self) -> list[str]:
        """The X-Coach-Delivery id of each request, in order."""
        return [headers.get("x-coach-delivery") for headers, _ in self.requests]


@contextmanager
def webhook_receiver(status: int = 200) -> Iterator[Receiver]:
    server = Receiver(status)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
