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
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from flask import Flask, Response, g, request
from flask.sessions import SecureCookieSessionInterface
from flask_limiter import Limiter, RateLimitExceeded

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
HTML_CSP = (
    "default-src 'self'; script-src 'self'{extra}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "frame-ancestors 'none'; form-action 'self'"
)
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
    fresh request context, never from the response being sent, so nothing injected at runtime gets whitelisted.

    Not Flask-Talisman (1.1): it sets one CSP per view, not per response type (the SPA's catch-all serves both
    pages and files, and every JSON answer gets the deny-all policy), has no Cross-Origin-Opener-Policy, takes
    per-view options only as an attribute set on the view function (flask-smorest's Swagger UI view is a bound
    method), and overwrites headers a response set itself. Half of the policy in Talisman and half here would be
    two hooks writing the same headers."""

    def __init__(self, app: Flask, production: bool):
        self.app, self.production = app, production
        self.docs_endpoint: str | None = None
        self.docs_csp: str | None = None
        self._lock = threading.Lock()
        self.compute_docs_csp()

    def compute_docs_csp(self) -> None:
        endpoint = next((e for e in self.app.view_functions if e.endswith(SWAGGER_ENDPOINT_SUFFIX)), None)
        rule = next(iter(self.app.url_map.iter_rules(endpoint)), None) if endpoint else None
        if endpoint is None or rule is None:
            return  # not registered yet (register() called before the Api): retried on the first request
        with self.app.test_request_context(rule.rule):
            page = self.app.view_functions[endpoint]()
        if isinstance(page, Response):
            page = page.get_data(as_text=True)
        if not isinstance(page, str):
            raise TypeError(f"the API docs page is {type(page).__name__}, not HTML")
        html = page
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


# ---- login rate limiting (Flask-Limiter) -------------------------------------------------------------------

# Failed logins are counted per client address: LOGIN_LIMIT failures in a moving window block that address, for
# any email (docs/auth.md). An email is never blocked for everyone: anyone could lock any account out by failing
# five times, so the right password from another address still works. Guessing one account from many addresses
# costs five tries per address per window, each audited as `login_failed`. Only failures count (a 401).
# The former second count, per (email, address), is implied: its failures are a subset of the address's, against
# the same threshold, so it could never block a login the address count did not.
LOGIN_LIMIT = "5 per 300 seconds"
LOGIN_ENDPOINT = "auth.Login"
LOGIN_KEY_PREFIX = "coach:login"


def login_address_key() -> str:
    return f"addr:{(request.remote_addr or '?')[:64]}"


def _failed_login(response: Response) -> bool:
    return response.status_code == 401


def login_limiter(app: Flask, settings: Settings) -> Limiter:
    """The app's own Limiter (one per app: a Limiter keeps one storage, and tests build many apps), on the login
    view only. With a Redis message queue the counts live in that Redis, shared by every server; Redis trouble
    never blocks logins (errors are swallowed, logged: the passwords are still checked)."""
    redis = settings.message_queue.startswith("redis://")
    limiter = Limiter(
        login_address_key,
        app=app,
        strategy="moving-window",
        key_prefix=LOGIN_KEY_PREFIX,
        storage_uri=settings.message_queue if redis else "memory://",
        storage_options={"socket_timeout": 1, "socket_connect_timeout": 1} if redis else {},
        swallow_errors=True,
        headers_enabled=False,
    )
    if LOGIN_ENDPOINT in app.view_functions:  # an app without the auth blueprint has no login to limit
        failures = limiter.limit(LOGIN_LIMIT, deduct_when=_failed_login)
        # one callable type for the decorator to keep (Flask's view type is a union of sync and async views)
        login: Callable[..., Any] = app.view_functions[LOGIN_ENDPOINT]
        app.view_functions[LOGIN_ENDPOINT] = failures(login)
    # the same limiter counts an incoming webhook's deliveries (api/triggers.py): its 429 says so
    app.register_error_handler(
        RateLimitExceeded,
        lambda _: too_many(
            _seconds_until_allowed(limiter),
            *(() if request.endpoint == LOGIN_ENDPOINT else ("too many requests to this webhook; try again later",)),
        ),
    )
    return limiter


def _seconds_until_allowed(limiter: Limiter) -> float:
    """Until the oldest failure in the window leaves it (the moving window's reset time)."""
    now = time.time()
    return max((limit.window.reset_time - now for limit in limiter.current_limits if limit.breached), default=1)


def too_many(retry_after: float, message: str = "too many failed login attempts; try again later") -> Response:
    seconds = max(1, math.ceil(retry_after))
    response = body(429, "too_many_requests", message, {"retry_after_s": seconds})
    response.headers["Retry-After"] = str(seconds)
    return response


# ---- secret, cookies, CSRF --------------------------------------------------------------------------------


def check_secret(settings: Settings) -> None:
    """The secret signs session cookies: a known or short one lets anyone forge a login."""
    if settings.env == "production" and (
        settings.secret_key == DEFAULT_SECRET or len(settings.secret_key) < MIN_SECRET_LEN
    ):
        raise RuntimeError(
            f"COACH_SECRET_KEY must be set in production to a random string of at least "
            f"{MIN_SECRET_LEN} characters, e.g. "
            f"python -c 'import secrets; print(secrets.token_urlsafe(48))'"
        )


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
    app.extensions["coach_login_limiter"] = login_limiter(app, settings)
    app.after_request(_Headers(app, production=settings.env == "production"))
