"""Security headers and CSP, the login limiter (memory and Redis), the production secret check, cookie
settings and the CSRF double-submit check (api/security.py)."""
from __future__ import annotations

import base64
import hashlib
import re
import threading
import uuid
from datetime import timedelta

import pytest

from api import security
from api.security import (LoginLimiter, MemoryStore, RedisStore, check_secret, cookie_config, csrf_ok,
                          inline_script_hashes, new_csrf_token, too_many)
from config import DEFAULT_SECRET, Settings

REDIS_URL = "redis://127.0.0.1:6379/0"
STRONG_SECRET = "s" * 40


@pytest.fixture
def make_app(settings):
    """create_app + register() (unless the factory already does it); closes every app it made."""
    from api.app import create_app

    made = []

    def make(**overrides):
        conf = settings.with_overrides(**overrides)
        app = create_app(conf, migrate=False, recover=False)
        app.config["TESTING"] = True
        if "coach_login_limiter" not in app.extensions:
            security.register(app, conf)
        made.append(app)
        return app

    yield make
    for app in made:
        app.extensions["coach"].runner.wait_idle(5)
        app.extensions["coach"].close()


def _csp(response) -> dict[str, str]:
    return {part.split(" ", 1)[0]: part.split(" ", 1)[1] if " " in part else ""
            for part in (p.strip() for p in response.headers["Content-Security-Policy"].split(";")) if part}


def _assert_common_headers(response):
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"
    permissions = response.headers["Permissions-Policy"]
    for feature in ("camera=()", "microphone=()", "geolocation=()"):
        assert feature in permissions


# ---- headers ----------------------------------------------------------------------------------------------

def test_json_response_gets_security_headers_and_a_deny_all_csp(make_app):
    response = make_app().test_client().get("/healthz")
    assert response.status_code == 200 and response.mimetype == "application/json"
    _assert_common_headers(response)
    assert response.headers["Content-Security-Policy"] == "default-src 'none'; frame-ancestors 'none'"


def test_json_error_response_gets_the_headers_too(make_app):
    response = make_app().test_client().get("/api/nothing-here")
    assert response.status_code in (401, 404) and response.get_json()["error"]["code"]  # 401 once auth is on
    _assert_common_headers(response)
    assert response.headers["Content-Security-Policy"] == "default-src 'none'; frame-ancestors 'none'"


def test_html_page_gets_the_app_csp_without_inline_scripts(make_app):
    response = make_app().test_client().get("/")
    assert response.status_code == 200 and response.mimetype == "text/html"
    _assert_common_headers(response)
    csp = _csp(response)
    assert csp["default-src"] == "'self'"
    assert csp["script-src"] == "'self'"
    assert csp["style-src"] == "'self' 'unsafe-inline'"
    assert csp["img-src"] == "'self' data:"
    assert csp["connect-src"] == "'self' ws: wss:"
    assert csp["font-src"] == "'self'"
    assert csp["object-src"] == "'none'"
    assert csp["base-uri"] == "'self'"
    assert csp["frame-ancestors"] == "'none'"
    assert csp["form-action"] == "'self'"


def test_swagger_ui_renders_and_its_inline_script_is_allowed_by_hash(make_app):
    client = make_app().test_client()
    response = client.get("/api/docs")
    assert response.status_code == 200 and response.mimetype == "text/html"
    _assert_common_headers(response)
    html = response.get_data(as_text=True)
    scripts = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    assert len(scripts) == 1 and "SwaggerUIBundle" in scripts[0]  # flask-smorest's initializer
    allowed = _csp(response)["script-src"].split()
    assert allowed[0] == "'self'" and "'unsafe-inline'" not in allowed
    assert inline_script_hashes(html) == allowed[1:]  # exactly that script, nothing else
    assert "'sha256-" + base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode() + "'" in allowed
    # the hash is for the docs page only; the app's pages allow no inline script
    assert _csp(client.get("/"))["script-src"] == "'self'"
    # the page's external files are served from 'self'
    assert client.get("/api/docs/assets/swagger-ui-bundle.js").status_code == 200


def test_swagger_hash_is_found_even_when_register_runs_before_the_docs_exist(settings):
    from flask import Flask
    from flask_smorest import Api

    app = Flask(__name__)
    app.config.update(API_TITLE="T", API_VERSION="1", OPENAPI_VERSION="3.0.3", OPENAPI_URL_PREFIX="/api",
                      OPENAPI_SWAGGER_UI_PATH="docs", OPENAPI_SWAGGER_UI_URL="/assets/")
    security.register(app, settings)  # before Api(app): nothing to hash yet
    Api(app)
    response = app.test_client().get("/api/docs")
    assert response.status_code == 200
    hashes = inline_script_hashes(response.get_data(as_text=True))
    assert hashes and all(h in _csp(response)["script-src"] for h in hashes)


def test_no_hsts_in_development(make_app):
    response = make_app(env="development").test_client().get("/healthz")
    assert "Strict-Transport-Security" not in response.headers


def test_hsts_in_production(make_app):
    response = make_app(env="production", secret_key=STRONG_SECRET).test_client().get("/healthz")
    assert response.headers["Strict-Transport-Security"].startswith("max-age=31536000")


def test_register_exposes_an_in_memory_limiter_without_redis(make_app):
    limiter = make_app(message_queue="").extensions["coach_login_limiter"]
    assert isinstance(limiter, LoginLimiter) and isinstance(limiter.store, MemoryStore)
    assert (limiter.max_failures, limiter.window_s) == (5, 300)


# ---- the limiter (memory) ---------------------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_five_failures_for_one_email_block_it_from_that_address_only():
    clock = Clock()
    limiter = LoginLimiter(clock=clock)
    for i in range(4):
        limiter.failed("a@x.io", "10.0.0.1")
        assert limiter.check("a@x.io", "10.0.0.1") is None
    limiter.failed("A@X.io ", "10.0.0.1")  # same email, other case and spacing
    clock.now += 10
    assert limiter.check("a@x.io", "10.0.0.1") == 290
    assert limiter.check("a@x.io", "10.0.0.99") is None  # the owner elsewhere is not locked out
    assert limiter.check("b@x.io", "10.0.0.98") is None  # other emails are not affected


def test_failures_spread_over_addresses_lock_nobody_out():
    limiter = LoginLimiter(clock=Clock())
    for i in range(20):
        limiter.failed("a@x.io", f"10.0.0.{i}")
    assert limiter.check("a@x.io", "10.0.1.1") is None


def test_success_clears_the_email_from_that_address_but_not_the_address():
    limiter = LoginLimiter(clock=Clock())
    for _ in range(5):
        limiter.failed("a@x.io", "10.0.0.1")
    assert limiter.check("a@x.io", "10.0.0.1") > 0
    limiter.succeeded("a@x.io", "10.0.0.1")
    assert limiter.store.blocked_for("email:a@x.io|10.0.0.1", 5, 300) is None
    assert limiter.check("other@x.io", "10.0.0.1") > 0  # the address stays blocked


def test_the_address_limit_counts_failures_across_emails():
    limiter = LoginLimiter(clock=Clock())
    for i in range(5):
        limiter.failed(f"user{i}@x.io", "10.0.0.1")
    assert limiter.check("fresh@x.io", "10.0.0.1") > 0
    assert limiter.check("fresh@x.io", "10.0.0.2") is None


def test_failures_leave_the_sliding_window():
    clock = Clock()
    limiter = LoginLimiter(max_failures=3, window_s=60, clock=clock)
    for _ in range(2):
        limiter.failed("a@x.io", "1.1.1.1")  # t=0, 0
    clock.now += 50
    limiter.failed("a@x.io", "1.1.1.1")  # t=50
    assert limiter.check("a@x.io", "1.1.1.1") == 10  # the first failures leave the window at t=60
    clock.now += 10
    assert limiter.check("a@x.io", "1.1.1.1") is None
    limiter.failed("a@x.io", "1.1.1.1")  # t=60: only t=50 and t=60 are inside the window
    assert limiter.check("a@x.io", "1.1.1.1") is None
    clock.now += 5
    limiter.failed("a@x.io", "1.1.1.1")  # t=65: three within 60 s again, blocked until t=50+60
    assert limiter.check("a@x.io", "1.1.1.1") == 45


def test_retry_after_is_whole_seconds_and_at_least_one():
    clock = Clock()
    limiter = LoginLimiter(max_failures=1, window_s=60, clock=clock)
    limiter.failed("a@x.io", None)
    clock.now += 59.6
    assert limiter.check("a@x.io", None) == 1


def test_missing_email_or_address_is_not_a_shared_bucket():
    limiter = LoginLimiter(max_failures=1, clock=Clock())
    limiter.failed("", None)
    assert limiter.check("", None) is None
    assert limiter.check("a@x.io", "1.1.1.1") is None


def test_memory_store_stays_bounded_when_keys_are_sprayed():
    clock = Clock()
    store = MemoryStore(clock, max_keys=100)
    limiter = LoginLimiter(store=store)
    for i in range(1000):
        limiter.failed(f"u{i}@x.io", None)
    assert len(store._hits) <= 100


def test_limiter_is_thread_safe():
    limiter = LoginLimiter(max_failures=10_000, clock=Clock())
    threads = [threading.Thread(target=lambda: [limiter.failed("a@x.io", "1.1.1.1") for _ in range(500)])
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(limiter.store._hits["email:a@x.io|1.1.1.1"]) == 4000


def test_too_many_builds_the_429_error_body_with_retry_after():
    from flask import Flask

    with Flask(__name__).app_context():
        response = too_many(12.2)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "13"
    error = response.get_json()["error"]
    assert error["code"] == "too_many_requests" and error["message"]
    assert error["details"] == {"retry_after_s": 13}


# ---- the limiter (Redis) ----------------------------------------------------------------------------------

@pytest.fixture
def redis_client():
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
    try:
        client.ping()
    except Exception as exc:
        pytest.skip(f"Redis at {REDIS_URL} does not answer ({type(exc).__name__})")
    yield client
    client.close()


@pytest.fixture
def redis_prefix(redis_client):
    prefix = f"coach:test:{uuid.uuid4().hex}:"
    yield prefix
    for key in redis_client.scan_iter(prefix + "*"):
        redis_client.delete(key)


def test_redis_backend_blocks_clears_and_counts_addresses(redis_client, redis_prefix):
    limiter = LoginLimiter(store=RedisStore(redis_client, prefix=redis_prefix))
    for i in range(5):
        assert limiter.check("a@x.io", "10.0.0.1") is None
        limiter.failed("a@x.io", "10.0.0.1")
    assert 0 < limiter.check("a@x.io", "10.0.0.1") <= 300
    assert limiter.check("a@x.io", "10.0.0.9") is None  # from another address: not blocked
    assert 0 < redis_client.ttl(redis_prefix + "email:a@x.io|10.0.0.1") <= 300
    assert int(redis_client.get(redis_prefix + "addr:10.0.0.1")) == 5
    limiter.succeeded("a@x.io", "10.0.0.1")
    assert redis_client.get(redis_prefix + "email:a@x.io|10.0.0.1") is None
    assert limiter.check("b@x.io", "10.0.0.1") > 0  # the address limit spans emails and survives success


def test_redis_backend_is_shared_between_limiters(redis_client, redis_prefix):
    one = LoginLimiter(store=RedisStore(redis_client, prefix=redis_prefix))
    two = LoginLimiter(store=RedisStore(redis_client, prefix=redis_prefix))
    for _ in range(3):
        one.failed("a@x.io", None)
        two.failed("a@x.io", None)
    assert one.check("a@x.io", None) > 0 and two.check("a@x.io", None) > 0


def test_redis_backend_window_expires_with_the_key(redis_client, redis_prefix):
    limiter = LoginLimiter(store=RedisStore(redis_client, prefix=redis_prefix))
    for _ in range(5):
        limiter.failed("a@x.io", None)
    assert limiter.check("a@x.io", None) > 0
    redis_client.delete(redis_prefix + "email:a@x.io|-")  # what EXPIRE does when the window ends
    assert limiter.check("a@x.io", None) is None


def test_redis_message_queue_selects_the_redis_backend_with_the_documented_keys(redis_client):
    email = f"limiter-{uuid.uuid4().hex}@x.io"
    addr = f"test-{uuid.uuid4().hex}"
    limiter = LoginLimiter.from_settings(Settings(message_queue=REDIS_URL))
    try:
        assert isinstance(limiter.store, RedisStore)
        limiter.failed(email, addr)
        assert redis_client.get(f"coach:login:email:{email}|{addr}") == b"1"
        assert redis_client.get(f"coach:login:addr:{addr}") == b"1"
    finally:
        redis_client.delete(f"coach:login:email:{email}|{addr}", f"coach:login:addr:{addr}")


def test_redis_backend_fails_open_when_redis_is_down():
    limiter = LoginLimiter(store=RedisStore.from_url("redis://127.0.0.1:1/0"), max_failures=1)
    limiter.failed("a@x.io", "1.1.1.1")
    assert limiter.check("a@x.io", "1.1.1.1") is None
    limiter.succeeded("a@x.io", "1.1.1.1")


# ---- Socket.IO origins ------------------------------------------------------------------------------------

HANDSHAKE = "/socket.io/?EIO=4&transport=polling"


def _handshake(app, origin: str | None, host: str = "coach.example"):
    headers = {"Origin": origin} if origin else {}
    return app.test_client().get(HANDSHAKE, headers=headers, base_url=f"https://{host}")


def test_production_refuses_a_socket_from_a_foreign_origin(make_app):
    """COACH_ENV=production used to pass cors_allowed_origins=[], which turns Socket.IO's Origin check off: a
    page of any site could connect with the victim's cookie."""
    app = make_app(env="production", secret_key=STRONG_SECRET)
    assert _handshake(app, "https://evil.example").status_code == 400
    assert _handshake(app, "https://coach.example").status_code == 200  # the request's own origin
    assert _handshake(app, None).status_code == 200  # no Origin: not a browser page of another site


def test_production_takes_its_public_origins_from_the_setting(make_app):
    app = make_app(env="production", secret_key=STRONG_SECRET,
                   public_origins=("https://coach.example.com", "https://ops.example.com"))
    assert _handshake(app, "https://ops.example.com", host="internal:5000").status_code == 200
    assert _handshake(app, "https://evil.example", host="internal:5000").status_code == 400
    assert _handshake(app, "https://internal:5000", host="internal:5000").status_code == 400  # only the list


def test_public_origins_are_read_from_the_environment_and_any_is_refused_in_production():
    settings = Settings.from_env({"COACH_PUBLIC_ORIGINS": " https://a.example/ ,https://b.example"})
    assert settings.public_origins == ("https://a.example", "https://b.example")
    assert security.socket_origins(settings) == ["https://a.example", "https://b.example"]
    assert security.socket_origins(Settings(env="production")) is None  # same origin, never []
    with pytest.raises(RuntimeError, match="COACH_PUBLIC_ORIGINS"):
        security.socket_origins(Settings(env="production", public_origins=("*",)))


# ---- secret and cookies -----------------------------------------------------------------------------------

@pytest.mark.parametrize("secret", [DEFAULT_SECRET, "short-secret", "x" * 31])
def test_check_secret_refuses_default_or_short_secrets_in_production(secret):
    with pytest.raises(RuntimeError, match="COACH_SECRET_KEY must be set in production"):
        check_secret(Settings(env="production", secret_key=secret))


@pytest.mark.parametrize("env", ["development", "test"])
def test_check_secret_accepts_the_default_outside_production(env):
    check_secret(Settings(env=env, secret_key=DEFAULT_SECRET))
    check_secret(Settings(env=env, secret_key="short"))


def test_check_secret_accepts_a_long_random_secret_in_production():
    check_secret(Settings(env="production", secret_key=STRONG_SECRET))


def test_cookie_config_is_secure_only_in_production():
    dev = cookie_config(Settings(env="development"))
    assert dev == {"SESSION_COOKIE_NAME": "coach_session", "SESSION_COOKIE_HTTPONLY": True,
                   "SESSION_COOKIE_SAMESITE": "Lax", "SESSION_COOKIE_SECURE": False,
                   "PERMANENT_SESSION_LIFETIME": timedelta(hours=12)}
    assert cookie_config(Settings(env="production"))["SESSION_COOKIE_SECURE"] is True


def test_the_web_apps_hashed_files_are_cached_for_a_year_and_never_carry_the_session_cookie(make_app, tmp_path):
    from tests.conftest import make_user

    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>Coach</title>", encoding="utf-8")
    (dist / "assets" / "index-Ab12.js").write_text("export {};", encoding="utf-8")
    app = make_app(frontend_dist=str(dist))
    make_user(app.extensions["coach"], "ann@files.test", "operator")
    client = app.test_client()
    assert client.post("/api/auth/login", json={"email": "ann@files.test", "password": "password-123"}).status_code == 200

    asset = client.get("/assets/index-Ab12.js")
    assert asset.status_code == 200 and asset.data == b"export {};"
    assert asset.cache_control.public and asset.cache_control.max_age == 31536000 and asset.cache_control.immutable
    assert "Set-Cookie" not in asset.headers  # a shared cache must not keep someone's session with the file
    assert "cookie" not in asset.headers.get("Vary", "").lower()  # the refreshed cookie would miss the cache

    # the session is refreshed as before on everything else, the page itself included
    for path in ("/api/auth/me", "/queue"):
        answer = client.get(path)
        assert answer.status_code == 200
        assert any(c.startswith("coach_session=") for c in answer.headers.getlist("Set-Cookie")), path
        assert "cookie" in answer.headers.get("Vary", "").lower(), path
    page = client.get("/queue")
    assert page.cache_control.no_cache and "immutable" not in page.headers["Cache-Control"]


# ---- CSRF -------------------------------------------------------------------------------------------------

def _csrf(header=None, cookie=None, session=None) -> bool:
    from flask import Flask

    app = Flask(__name__)
    headers = {"X-CSRF-Token": header} if header is not None else {}
    if cookie is not None:
        headers["Cookie"] = f"coach_csrf={cookie}"
    with app.test_request_context("/", method="POST", headers=headers):
        from flask import request
        return csrf_ok(request, session if session is not None else {})


def test_csrf_ok_when_header_matches_cookie():
    token = new_csrf_token()
    assert _csrf(token, token)


def test_csrf_fails_when_header_differs_from_cookie():
    assert not _csrf(new_csrf_token(), new_csrf_token())


def test_csrf_fails_without_header_or_without_cookie():
    token = new_csrf_token()
    assert not _csrf(None, token)
    assert not _csrf(token, None)
    assert not _csrf("", "")
    assert not _csrf(None, None)


def test_csrf_checks_the_session_copy_when_there_is_one():
    token = new_csrf_token()
    assert _csrf(token, token, {"csrf_token": token})
    assert not _csrf(token, token, {"csrf_token": new_csrf_token()})  # a planted cookie is not enough


def test_csrf_rejects_non_ascii_tokens_without_raising():
    assert not _csrf("é", "e")


def test_new_csrf_tokens_are_long_and_unique():
    tokens = {new_csrf_token() for _ in range(50)}
    assert len(tokens) == 50 and all(len(t) >= 43 for t in tokens)
