"""A Web Push service on loopback, for tests: it hands out subscriptions as a browser's PushManager would (an
endpoint on this server, and the keys of a P-256 key pair and an auth secret it keeps), and on each POST to an
endpoint it does what a real push service and browser do together:

- checks the VAPID `Authorization: vapid t=<JWT>,k=<public key>` header (RFC 8292): `k` is the application server
  key the subscription was made with, and the JWT is signed ES256 with it, for this origin (`aud`), not expired,
  with a `sub` contact; a bad one is answered 401 and recorded as refused;
- decrypts the aes128gcm body (RFC 8291) with the subscription's private key and auth secret (http_ece);
- records what arrived (the JSON the service worker would read) and answers 201, or the next scripted status.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    message: dict | None  # the decrypted JSON, None when it was refused
    refused: str | None = None


@dataclass
class Browser:
    """One subscription: what the browser keeps (its private key, auth secret) and what it gives the server."""

    endpoint: str
    application_server_key: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes
    received: list[dict] = field(default_factory=list)

    def subscription(self) -> dict:
        public = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": b64(public), "auth": b64(self.auth)},
        }


def new_browser(endpoint: str, application_server_key: str) -> Browser:
    """A browser's side of a subscription: a fresh P-256 key pair and auth secret."""
    return Browser(endpoint, application_server_key, ec.generate_private_key(ec.SECP256R1()), os.urandom(16))


class PushService(ThreadingHTTPServer):
    def __init__(self):
        self.browsers: dict[str, Browser] = {}
        self.received: list[Received] = []
        self.statuses: list[int] = []  # answered in turn (after the checks); 201 once they run out
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = outer.handle_push(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server_address[1]}"
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def start(self) -> PushService:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def subscribe(self, application_server_key: str) -> Browser:
        """What PushManager.subscribe({applicationServerKey}) gives a page."""
        token = b64(os.urandom(12))
        browser = new_browser(f"{self.origin}/push/{token}", application_server_key)
        self.browsers[f"/push/{token}"] = browser
        return browser

    def handle_push(self, path: str, headers: dict[str, str], body: bytes) -> int:
        browser = self.browsers.get(path)
        if browser is None:
            self.received.append(Received(path, headers, None, "unknown subscription"))
            return 404
        why = self._vapid_refusal(headers.get("authorization", ""), browser)
        if why is None and headers.get("content-encoding") != "aes128gcm":
            why = f"content-encoding {headers.get('content-encoding')!r}"
        if why is not None:
            self.received.append(Received(path, headers, None, why))
            return 401
        plain = http_ece.decrypt(body, private_key=browser.private_key, auth_secret=browser.auth, version="aes128gcm")
        message = json.loads(plain)
        self.received.append(Received(path, headers, message))
        status = self.statuses.pop(0) if self.statuses else 201
        if 200 <= status < 300:
            browser.received.append(message)
        return status

    def _vapid_refusal(self, header: str, browser: Browser) -> str | None:
        scheme, _, params = header.partition(" ")
        if scheme.lower() != "vapid":
            return f"not a vapid authorization: {header[:40]!r}"
        parts = dict(p.strip().split("=", 1) for p in params.split(",") if "=" in p)
        if parts.get("k") != browser.application_server_key:
            return "k is not the key the subscription was made with"
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(parts["k"]))
        try:
            claims = jwt.decode(
                parts.get("t", ""),
                key,
                algorithms=["ES256"],
                audience=self.origin,
                options={"require": ["exp", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            return f"JWT: {exc}"
        if claims["exp"] > time.time() + 24 * 3600:
            return "exp more than 24 hours ahead"
        if not str(claims["sub"]).startswith(("mailto:", "https:")):
            return f"sub {claims['sub']!r}"
        return None
