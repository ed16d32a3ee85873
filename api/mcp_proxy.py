"""The web process's side of Coach's MCP process (asgi.py): WSGI middleware before Flask.

/mcp             proxied to the MCP process (COACH_MCP_URL), answer streamed as it comes (a held call's progress
                 notifications included): the docs promise /mcp on the server's own port, and `make run`'s one URL
                 serves it. Several machines route /mcp to the MCP processes in their proxy instead (nginx).
/internal/events the events the MCP process's gateway raised (services/gateway/relay.py), pushed here over
                 Socket.IO; COACH_MCP_TOKEN as bearer token, compared in constant time, else 401.

And the other way: a review decided here (approval_decided) is told to the MCP process (POST /internal/wake) by a
background task, so that a call held there for it answers at once instead of at its next look.
"""

from __future__ import annotations

import hmac
import json
import logging
import queue
import threading
from collections.abc import Iterator
from typing import Any

import httpx

from config import Settings
from services.notifier import Events, Notifier

log = logging.getLogger(__name__)

PATH = "/mcp"
EVENTS = "/internal/events"
IDLE_S = 10.0  # the wake-up task ends after this long without a decision to tell
HOP_BY_HOP = frozenset(
    (
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    )
)


def _status(code: int) -> str:
    import http

    try:
        return f"{code} {http.HTTPStatus(code).phrase}"
    except ValueError:
        return f"{code} Status"


def _refuse(start_response, status: int, code: str, message: str, headers: list | None = None):
    return _json(start_response, status, {"error": {"code": code, "message": message}}, headers)


def _json(start_response, status: int, body: dict[str, Any], headers: list | None = None):
    data = json.dumps(body).encode()
    start_response(
        _status(status),
        [("Content-Type", "application/json"), ("Content-Length", str(len(data))), *(headers or [])],
    )
    return [data]


class McpMiddleware:
    def __init__(self, wsgi_app, settings: Settings, notifier: Notifier, spawn):
        self.wsgi_app, self.settings, self.notifier = wsgi_app, settings, notifier
        self.url = settings.resolved_mcp_url
        self.expected = f"Bearer {settings.mcp_token}".encode()
        # one client for every proxied request and wake-up: its connections to the MCP process are kept alive
        self.http = httpx.Client(trust_env=False, follow_redirects=False, timeout=httpx.Timeout(None, connect=5.0))
        self._wakes: queue.Queue[str] = queue.Queue()
        self._spawn = spawn
        self._waker_lock = threading.Lock()
        self._waker_running = False
        notifier.listen(self._heard)

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO") or ""
        if path in (PATH, PATH + "/"):
            return self.proxy(environ, start_response)
        if path == EVENTS:
            return self.events(environ, start_response)
        return self.wsgi_app(environ, start_response)

    # -- /mcp -----------------------------------------------------------------------------------------------------

    def proxy(self, environ, start_response):
        limit = self.settings.max_body_bytes
        stream = environ.get("wsgi.input")
        length = environ.get("CONTENT_LENGTH") or ""
        if length:
            try:
                size = int(length)
            except ValueError:
                return _json(start_response, 400, {"error": {"code": "bad_request", "message": "bad Content-Length"}})
            if size > limit:
                return _json(
                    start_response, 413, {"error": {"code": "too_large", "message": "the request body is too large"}}
                )
            body = stream.read(size) if stream is not None and size > 0 else b""
        elif stream is not None and (environ.get("HTTP_TRANSFER_ENCODING") or "").lower() == "chunked":
            body = stream.read(limit + 1)
            if len(body) > limit:
                return _json(
                    start_response, 413, {"error": {"code": "too_large", "message": "the request body is too large"}}
                )
        else:
            body = b""
        headers = [
            (key[5:].replace("_", "-").lower(), value)
            for key, value in environ.items()
            if key.startswith("HTTP_") and key[5:].replace("_", "-").lower() not in HOP_BY_HOP
        ]
        if environ.get("CONTENT_TYPE"):
            headers.append(("content-type", environ["CONTENT_TYPE"]))
        forwarded = environ.get("HTTP_X_FORWARDED_FOR")
        client = environ.get("REMOTE_ADDR") or ""
        headers = [(k, v) for k, v in headers if k != "x-forwarded-for"]
        headers.append(("x-forwarded-for", f"{forwarded}, {client}" if forwarded else client))
        request = self.http.build_request(
            environ.get("REQUEST_METHOD", "GET"),
            self.url + path_of(environ),
            headers=headers,
            content=body,
        )
        try:
            answer = self.http.send(request, stream=True)
        except httpx.HTTPError as exc:
            log.warning("Coach's MCP process at %s did not answer: %s", self.url, type(exc).__name__)
            return _json(
                start_response,
                502,
                {"error": {"code": "mcp_unavailable", "message": "Coach's MCP process is not answering; try again"}},
            )
        start_response(
            _status(answer.status_code),
            [(k, v) for k, v in answer.headers.multi_items() if k.lower() not in HOP_BY_HOP - {"content-length"}],
        )
        return _streamed(answer)

    # -- /internal/events --------------------------------------------------------------------------------------------

    def events(self, environ, start_response):
        sent = (environ.get("HTTP_AUTHORIZATION") or "").encode("latin-1", "replace")
        if not self.settings.mcp_token or not hmac.compare_digest(sent, self.expected):
            return _json(
                start_response,
                401,
                {"error": {"code": "unauthorized", "message": "send Authorization: Bearer <COACH_MCP_TOKEN>"}},
            )
        if (environ.get("REQUEST_METHOD") or "").upper() != "POST":
            return _json(
                start_response, 405, {"error": {"code": "method_not_allowed", "message": "POST"}}, [("Allow", "POST")]
            )
        try:
            size = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = -1
        if size < 0 or size > self.settings.max_body_bytes:
            return _json(start_response, 413, {"error": {"code": "too_large", "message": "the body is too large"}})
        try:
            data = json.loads(environ["wsgi.input"].read(size) if size else b"")
        except ValueError:
            data = None
        items = data.get("events") if isinstance(data, dict) else None
        if not isinstance(items, list) or not all(
            isinstance(i, list) and len(i) == 3 and isinstance(i[0], str) and isinstance(i[2], (str, list))
            for i in items
        ):
            return _json(
                start_response,
                400,
                {
                    "error": {
                        "code": "bad_request",
                        "message": 'the body must be {"events": [[event, payload, room], ...]}',
                    }
                },
            )
        events = Events()
        events.items = [(e, payload, room if isinstance(room, str) else tuple(room)) for e, payload, room in items]
        self.notifier.send(events)  # as this process's own: the execution's room, its workspace's queue_changed …
        return _json(start_response, 200, {"pushed": len(items)})

    # -- approval_decided -> the MCP process ------------------------------------------------------------------------

    def _heard(self, event: str, payload: Any) -> None:
        if event != "approval_decided" or not isinstance(payload, dict) or not payload.get("approval_id"):
            return
        self._wakes.put(str(payload["approval_id"]))
        with self._waker_lock:
            if not self._waker_running:
                self._waker_running = True
                self._spawn(self._wake_all)

    def _wake_all(self) -> None:
        """One background task while there are decisions to tell (it ends when none came for a while)."""
        while True:
            try:
                ids = [self._wakes.get(timeout=IDLE_S)]
            except queue.Empty:
                with self._waker_lock:
                    if self._wakes.empty():
                        self._waker_running = False
                        return
                continue
            while not self._wakes.empty() and len(ids) < 200:
                ids.append(self._wakes.get_nowait())
            try:
                self.http.post(
                    self.url + "/internal/wake",
                    json={"approval_ids": ids},
                    headers={"Authorization": self.expected.decode()},
                    timeout=httpx.Timeout(5.0, connect=2.0),
                )
            except httpx.HTTPError:  # the held call looks at its review by itself soon (COACH_GATEWAY_POLL_S)
                log.info("could not tell Coach's MCP process of %d decided reviews", len(ids))

    def close(self) -> None:
        self.http.close()


def path_of(environ) -> str:
    path = environ.get("PATH_INFO") or "/"
    query = environ.get("QUERY_STRING") or ""
    return path + ("?" + query if query else "")


def _streamed(answer: httpx.Response) -> Iterator[bytes]:
    try:
        yield from answer.iter_raw()
    except httpx.HTTPError:
        # the MCP process went away mid-answer (a crash): the agent's connection is cut too, as it would be
        # without the proxy, so that its client knows the answer is not coming (an answer ended cleanly would say
        # nothing of the request)
        log.warning("Coach's MCP process ended an answer early: the agent's connection is closed")
        raise
    finally:
        answer.close()
