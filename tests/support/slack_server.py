"""A scripted Slack Web API on loopback: real HTTP for the real slack_sdk WebClient (COACH_SLACK_API_URL).

    with ScriptedSlack(token="xoxb-test") as slack:
        settings = Settings(slack_api_url=slack.base_url, ...)
        ...
        slack.calls("chat.postMessage")     # each call received: {"method", "args", "token"}
        slack.fail("chat.postMessage", "channel_not_found")   # the next call of that method answers this error
        slack.fail("chat.postMessage", "ratelimited", status=429, retry_after=3)

It answers chat.postMessage, chat.update, chat.postEphemeral, conversations.open, conversations.history (the
messages posted to the channel, newest first, their metadata with `include_all_metadata`) views.open and auth.test like
Slack does (`{"ok": true, ...}`; a `#name` posted to is answered with its id from `channels`, an unknown one with
`channel_not_found`), and `invalid_auth` to a token other than the expected one. `sign(secret, body)` makes the
headers Slack signs an interactivity request with; `click(...)` and `submission(...)` the payloads it sends.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode

from slack_sdk.signature import SignatureVerifier


class ScriptedSlack:
    def __init__(self, token: str | None = None, channels: dict[str, str] | None = None):
        self.token = token
        self.channels = dict(channels or {})  # "#name" -> the channel id chat.postMessage answers (Slack does)
        self.received: list[dict[str, Any]] = []
        self.failures: dict[str, list[tuple[str, int, float | None]]] = {}
        self._lock = threading.Lock()
        self._ts = 0
        self.posted: dict[str, list[dict[str, Any]]] = {}  # channel id -> messages posted there, oldest first
        self.server: ThreadingHTTPServer | None = None

    def calls(self, method: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [c for c in self.received if method is None or c["method"] == method]

    def fail(self, method: str, error: str, status: int = 200, retry_after: float | None = None) -> None:
        with self._lock:
            self.failures.setdefault(method, []).append((error, status, retry_after))

    def answer(self, method: str, args: dict[str, Any], token: str) -> tuple[int, dict, dict]:
        with self._lock:
            self.received.append({"method": method, "args": args, "token": token})
            planned = self.failures.get(method) or []
            failure = planned.pop(0) if planned else None
            self._ts += 1
            ts = f"{1700000000 + self._ts}.{self._ts:06d}"
        if self.token is not None and token != self.token:
            return 200, {}, {"ok": False, "error": "invalid_auth"}
        if failure is not None:
            error, status, retry = failure
            return status, ({"Retry-After": str(int(retry))} if retry else {}), {"ok": False, "error": error}
        if method == "conversations.open":
            return 200, {}, {"ok": True, "channel": {"id": "D" + str(args.get("users", "")).lstrip("UW")[:20]}}
        if method == "chat.postMessage":
            channel = args.get("channel") or ""
            if channel.startswith("#"):
                if channel not in self.channels:
                    return 200, {}, {"ok": False, "error": "channel_not_found"}
                channel = self.channels[channel]
            message = {"type": "message", "text": args.get("text"), "ts": ts}
            if isinstance(args.get("metadata"), dict):
                message["metadata"] = args["metadata"]
            with self._lock:
                self.posted.setdefault(channel, []).append(message)
            return 200, {}, {"ok": True, "channel": channel, "ts": ts, "message": message}
        if method == "conversations.history":
            with_metadata = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
            with self._lock:
                newest = list(reversed(self.posted.get(args.get("channel") or "", [])))[: int(args.get("limit") or 100)]
            return (
                200,
                {},
                {
                    "ok": True,
                    "has_more": False,
                    "messages": [
                        m if with_metadata else {k: v for k, v in m.items() if k != "metadata"} for m in newest
                    ],
                },
            )
        if method == "chat.update":
            return 200, {}, {"ok": True, "channel": args.get("channel"), "ts": args.get("ts")}
        if method == "chat.postEphemeral":
            return 200, {}, {"ok": True, "message_ts": ts}
        if method == "auth.test":
            return (
                200,
                {},
                {
                    "ok": True,
                    "url": "https://scripted.slack.test/",
                    "team": "Scripted Team",
                    "team_id": "T0SCRIPTED",
                    "user": "coach",
                    "user_id": "U0COACHBOT",
                    "bot_id": "B0COACH",
                },
            )
        if method == "views.open":
            return 200, {}, {"ok": True, "view": {"id": f"V{self._ts:08d}"}}
        return 200, {}, {"ok": False, "error": "unknown_method"}

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/api/"

    def start(self) -> ScriptedSlack:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # the Web API's reading methods (conversations.history): arguments in the query
                self.answer(dict(parse_qsl(self.path.partition("?")[2])))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if "json" in (self.headers.get("Content-Type") or ""):
                    self.answer(json.loads(raw or b"{}"))
                    return
                args = dict(parse_qsl(raw.decode("utf-8")))
                for key in ("blocks", "view", "metadata"):
                    if isinstance(args.get(key), str):
                        args[key] = json.loads(args[key])
                self.answer(args)

            def answer(self, args: dict[str, Any]) -> None:
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                method = self.path.split("?")[0].rsplit("/", 1)[-1]
                status, headers, body = owner.answer(method, args, token)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def __enter__(self) -> ScriptedSlack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# -- what Slack sends to the interactivity endpoint ----------------------------------------------------------------


def form(payload: dict[str, Any]) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode("utf-8")


def sign(secret: str, body: bytes, timestamp: int | None = None, retry: int | None = None) -> dict[str, str]:
    """The headers of a request Slack signed with the app's signing secret at `timestamp` (now by default)."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    headers = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": SignatureVerifier(secret).generate_signature(timestamp=ts, body=body),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    if retry is not None:
        headers["X-Slack-Retry-Num"], headers["X-Slack-Retry-Reason"] = str(retry), "http_timeout"
    return headers


def click(
    slack_user: str,
    action_id: str,
    value: str,
    *,
    channel: str = "C0REVIEWS",
    ts: str = "1700000001.000001",
    action_ts: str = "1700000100.000001",
    trigger_id: str | None = None,
    text: str = "Review",
) -> dict:
    """A block_actions payload: `slack_user` clicked the button `action_id` whose value is `value`."""
    return {
        "type": "block_actions",
        "user": {"id": slack_user, "name": slack_user},
        "team": {"id": "T0TEAM"},
        "trigger_id": trigger_id,
        "channel": {"id": channel},
        "api_app_id": "A0APP",
        "container": {"type": "message", "channel_id": channel, "message_ts": ts},
        "message": {"ts": ts, "text": text},
        "actions": [{"type": "button", "action_id": action_id, "value": value, "action_ts": action_ts}],
    }


def submission(slack_user: str, private_metadata: str, comment: str | None, view_id: str = "V00000001") -> dict:
    """A view_submission payload of the Reject modal with `comment`."""
    return {
        "type": "view_submission",
        "user": {"id": slack_user},
        "team": {"id": "T0TEAM"},
        "view": {
            "id": view_id,
            "hash": "h1",
            "callback_id": "coach_reject_comment",
            "private_metadata": private_metadata,
            "state": {"values": {"comment": {"comment": {"type": "plain_text_input", "value": comment}}}},
        },
    }
