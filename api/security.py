"""Hardening: security headers and CSP, login rate limiting, the production secret check, session cookie
settings and the CSRF double-submit check of docs/auth.md.

Wiring (create_app): `check_secret(settings)` first, `app.config.update(cookie_config(settings))`, and
`register(app, settings)` after the blueprints, so the Swagger UI script hash is computed at startup.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import math
import re
import secrets
import threading
import time
from collections import deque
from datetime import timedelta
from typing import Callable

from flask import Flask, Response, g, request
from flask.sessions import SecureCookieSessionInterface

from api.errors import body
from config import DEFAULT_SECRET, Settings

log = logging.getLogger(__name__)

CSRF_COOKIE = "coach_csrf"
SESSION_COOKIE = "coach_session"
CSRF_HEADER = "X-CSRF-Token"
SESSION_CSRF_KEY = "csrf_token"  # if the login view also keeps the token in the session, csrf_ok checks it too
MIN_SECRET_LEN = 32

# The web app is built by Vite: external module scripts only, so no inline script is allowed. Inline styles are
# (React's style={...} props); ws:/wss: are Socket.IO's transport.
HTML_CSP = ("default-src 'self'; script-src 'self'{extra}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "connect-src 'self' ws: wss:; font-src 'self'; object-src 'none'; base-uri 'self'; "
            "frame-ancestors 'none'; form-action 'self'")
# Anything that is not a page (JSON, files) must never run anything, even when opened directly in a tab.
OTHER_CSP = "default-src 'none'; frame-ancestors 'none'"
STATIC_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
HSTS = "max-age=31536000; includeSubDomains"
SWAGGER_ENDPOINT_SUFFIX = ".openapi_swagger_ui"  # flask-smorest's docs blueprint endpoint
_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)


def csp_hash(script: str) -> str:
    """The CSP source allowing exactly this inline script (hash of the text between the tags)."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"


def inline_script_hashes(html: str) -> list[str]:
    return [csp_hash(script) for script in _INLINE_SCRIPT.findall(html)]


class _Headers:
    """after_request hook. Swagger UI's page (flask-smorest's template) has one inline initializer script; we
    allow exactly that script by hash, on that page only. The hash comes from rendering the page ourselves in a
    fresh request context, never from the response being sent, so nothing injected at runtime gets whitelisted."""

    def __init__(self, app: Flask, production: bool):
        self.app, self.production = app, production
        self.docs_endpoint: str | None = None
        self.docs_csp: str | None = None
        self._lock = threading.Lock()
        self.compute_docs_csp()

    def compute_docs_csp(self) -> None:
        endpoint = next((e for e in self.app.view_functions if e.endswith(SWAGGER_ENDPOINT_SUFFIX)), None)
        rule = next(iter(self.app.url_map.iter_rules(endpoint)), None) if endpoint else None
        if rule is None:
            return  # not registered yet (register() called before the Api): retried on the first request
        with self.app.test_request_context(rule.rule):
            html = self.app.view_functions[endpoint]()
        html = html if isinstance(html, str) else html.get_data(as_text=True)
        self.docs_csp = HTML_CSP.format(extra="".join(" " + h for h in inline_script_hashes(html)))
        self.docs_endpoint = endpoint

    def __call__(self, response: Response) -> Response:
        headers = response.headers
        for name, value in STATIC_HEADERS.items():
            headers.setdefault(name, value)
        if self.production:
            headers.setdefault("Strict-Transport-Security", HSTS)
        if response.mimetype == "text/html":
            if self.docs_endpoint is None and request.endpoint and request.endpoint.endswith(SWAGGER_ENDPOINT_SUFFIX):
                with self._lock:
                    if self.docs_endpoint is None:
                        self.compute_docs_csp()
            page_csp = self.docs_csp if request.endpoint and request.endpoint == self.docs_endpoint else None
            headers.setdefault("Content-Security-Policy", page_csp or HTML_CSP.format(extra=""))
        else:
            headers.setdefault("Content-Security-Policy", OTHER_CSP)
        return response


# ---- login rate limiting ----------------------------------------------------------------------------------

class MemoryStore:
    """Failure timestamps per key, in this process. Keeps only the last `limit` per key (enough to know whether
    `limit` fell inside the window), and drops stale keys when many accumulate, so spraying many emails or
    addresses cannot grow memory without bound."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_keys: int = 50_000):
        self.clock, self.max_keys = clock, max_keys
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str, limit: int, window_s: float) -> None:
        now = self.clock()
        with self._lock:
            hits = self._hits.get(key)
            if hits is None:
                if len(self._hits) >= self.max_keys:
                    self._prune(now, window_s)
                hits = self._hits[key] = deque(maxlen=limit)
            hits.append(now)

    def blocked_for(self, key: str, limit: int, window_s: float) -> float | None:
        now = self.clock()
        with self._lock:
            hits = self._hits.get(key)
            if not hits or len(hits) < limit:
                return None
            wait = hits[0] + window_s - now  # the oldest of the last `limit` failures leaves the window then
            return wait if wait > 0 else None  # keep the hits: the newer ones still count toward the next block

    def clear(self, key: str) -> None:
        with self._lock:
            self._hits.pop(key, None)

    def _prune(self, now: float, window_s: float) -> None:
        for key in [k for k, hits in self._hits.items() if not hits or hits[-1] <= now - window_s]:
            del self._hits[key]
        while len(self._hits) >= self.max_keys:  # still full inside the window: forget the oldest keys
            del self._hits[next(iter(self._hits))]


class RedisStore:
    """A counter per key that expires `window_s` after the first failure, shared by every server. Redis
    trouble never blocks logins (fails open, logged): the passwords are still checked."""

    def __init__(self, client, prefix: str = "coach:login:"):
        import redis

        self.client, self.prefix, self._errors = client, prefix, (redis.RedisError, OSError)

    @classmethod
    def from_url(cls, url: str, prefix: str = "coach:login:") -> "RedisStore":
        import redis

        return cls(redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1), prefix)

    def hit(self, key: str, limit: int, window_s: float) -> None:
        try:
            pipe = self.client.pipeline(transaction=True)
            # = INCR + EXPIRE on the first failure, but atomic: creating the key with its TTL in one command
            # means a crash can never leave a counter that never expires (INCR keeps the TTL).
            pipe.set(self.prefix + key, 0, ex=max(1, math.ceil(window_s)), nx=True)
            pipe.incr(self.prefix + key)
            pipe.execute()
        except self._errors as exc:
            log.warning("login limiter: Redis unavailable, failure not counted (%s)", exc)

    def blocked_for(self, key: str, limit: int, window_s: float) -> float | None:
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.get(self.prefix + key)
            pipe.pttl(self.prefix + key)
            count, pttl = pipe.execute()
        except self._errors as exc:
            log.warning("login limiter: Redis unavailable, not limiting (%s)", exc)
            return None
        if count is None or int(count) < limit:
            return None
        return pttl / 1000 if pttl > 0 else float(window_s)

    def clear(self, key: str) -> None:
        try:
            self.client.delete(self.prefix + key)
        except self._errors as exc:
            log.warning("login limiter: Redis unavailable, not cleared (%s)", exc)


class LoginLimiter:
    """Failed logins, counted per (email, client address) and per client address: `max_failures` within
    `window_s` blocks that email *from that address* (guessing one account's password) or that address (trying
    many accounts). An email is never blocked for everyone: anyone could lock any account out by failing five
    times, so the right password from another address still works. Guessing one account from many addresses
    costs `max_failures` tries per address per window, each audited as `login_failed` (docs/auth.md)."""

    def __init__(self, max_failures: int = 5, window_s: float = 300, *, store=None,
                 clock: Callable[[], float] = time.monotonic):
        self.max_failures, self.window_s = max_failures, window_s
        self.store = store if store is not None else MemoryStore(clock)

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs) -> "LoginLimiter":
        if settings.message_queue.startswith("redis://"):
            return cls(store=RedisStore.from_url(settings.message_queue), **kwargs)
        return cls(**kwargs)

    @staticmethod
    def _email_key(email: str | None, addr: str | None) -> str | None:
        email = (email or "").strip().lower()[:254]  # 254: the longest valid address; bounds the key size
        return f"email:{email}|{(addr or '-')[:64]}" if email else None

    @staticmethod
    def _addr_key(addr: str | None) -> str | None:
        return f"addr:{addr[:64]}" if addr else None  # no address known: don't lump all such clients together

    def _keys(self, email, addr) -> list[str]:
        return [k for k in (self._email_key(email, addr), self._addr_key(addr)) if k]

    def check(self, email: str | None, addr: str | None) -> int | None:
        """Seconds until a login may be tried again, or None when it may be tried now."""
        waits = [self.store.blocked_for(k, self.max_failures, self.window_s) for k in self._keys(email, addr)]
        waits = [w for w in waits if w]
        return max(1, math.ceil(max(waits))) if waits else None

    def failed(self, email: str | None, addr: str | None) -> None:
        for key in self._keys(email, addr):
            self.store.hit(key, self.max_failures, self.window_s)

    def succeeded(self, email: str | None, addr: str | None) -> None:
        # only this email from this address: one valid account must not reset an address trying many others
        key = self._email_key(email, addr)
        if key:
            self.store.clear(key)


def too_many(retry_after: float) -> Response:
    seconds = max(1, math.ceil(retry_after))
    response = body(429, "too_many_requests", "too many failed login attempts; try again later",
                    {"retry_after_s": seconds})
    response.headers["Retry-After"] = str(seconds)
    return response


# ---- secret, cookies, CSRF --------------------------------------------------------------------------------

def check_secret(settings: Settings) -> None:
    """The secret signs session cookies: a known or short one lets anyone forge a login."""
    if settings.env == "production" and (settings.secret_key == DEFAULT_SECRET
                                         or len(settings.secret_key) < MIN_SECRET_LEN):
        raise RuntimeError(f"COACH_SECRET_KEY must be set in production to a random string of at least "
                           f"{MIN_SECRET_LEN} characters, e.g. "
                           f"python -c 'import secrets; print(secrets.token_urlsafe(48))'")


def socket_origins(settings: Settings) -> list[str] | None:
    """`cors_allowed_origins` for Socket.IO: COACH_PUBLIC_ORIGINS, or None (the request's own scheme://Host,
    X-Forwarded-Proto/-Host included). "*" is refused in production."""
    origins = [o for o in settings.public_origins if o]
    if "*" in origins and settings.env == "production":
        raise RuntimeError("COACH_PUBLIC_ORIGINS must list origins in production, not '*'")
    return origins or None


def cookie_config(settings: Settings) -> dict:
    return {
        "SESSION_COOKIE_NAME": SESSION_COOKIE,
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": settings.env == "production",  # development runs on plain http://localhost
        "PERMANENT_SESSION_LIFETIME": timedelta(hours=12),
    }


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed cookie session, except on a response marked `g.cookieless` (the web app's hashed files,
    api/frontend.py): those are the same for everyone and cached for a year, so they must not refresh the session
    cookie (a Set-Cookie kept by a cache shared by several people would hand one person's session to the others).
    Such a request does not read the session either, so its response does not vary on the cookie: the cookie,
    refreshed on every other response, was never the same twice, and the browser asked again for every file on
    every page load."""

    def should_set_cookie(self, app: Flask, session) -> bool:
        return not g.get("cookieless", False) and super().should_set_cookie(app, session)


def new_csrf_token() -> str:
    return secrets.token_urlsafe(32)


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))  # bytes: str compare rejects non-ASCII


def csrf_ok(request, session) -> bool:
    """Double submit: another site can make the browser send our cookies but cannot read `coach_csrf` to
    copy it into the header. When the session holds the token too, the header must match it as well, so a
    cookie planted by a sibling subdomain is not enough."""
    header = request.headers.get(CSRF_HEADER) or ""
    cookie = request.cookies.get(CSRF_COOKIE) or ""
    if not header or not cookie or not _same(header, cookie):
        return False
    expected = session.get(SESSION_CSRF_KEY) if session is not None else None
    return expected is None or _same(header, str(expected))


def register(app: Flask, settings: Settings) -> None:
    app.extensions["coach_login_limiter"] = LoginLimiter.from_settings(settings)
    app.after_request(_Headers(app, production=settings.env == "production"))
