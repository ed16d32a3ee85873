"""Security headers and CSP, the login limiter (Flask-Limiter, in memory and in Redis), the production secret check,
cookie settings and the CSRF double-submit check (api/security.py)."""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from datetime import timedelta

import pytest
import time_machine
from flask_limiter import Limiter
from limits.storage import MemoryStorage, RedisStorage

from api import security
from api.security import check_secret, cookie_config, csrf_ok, inline_script_hashes, new_csrf_token, too_many
from config import DEFAULT_SECRET, Settings

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

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
    return {
        part.split(" ", 1)[0]: part.split(" ", 1)[1] if " " in part else ""
        for part in (p.strip() for p in response.headers["Content-Security-Policy"].split(";"))
        if part
    }


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
    app.config.update(
        API_TITLE="T",
        API_VERSION="1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/api",
        OPENAPI_SWAGGER_UI_PATH="docs",
        OPENAPI_SWAGGER_UI_URL="/assets/",
    )
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


def test_register_puts_an_in_memory_limiter_on_login_without_redis(make_app):
    limiter = make_app(message_queue="").extensions["coach_login_limiter"]
    assert isinstance(limiter, Limiter) and isinstance(limiter.storage, MemoryStorage)
    assert security.LOGIN_LIMIT == "5 per 300 seconds"


# ---- the login limiter (Flask-Limiter), through the login route -------------------------------------------

GOOD, BAD = "password-123", "wrong-password"


@pytest.fixture
def login(make_app):
    """POST /api/auth/login from a given client address; ann@x.io exists with password GOOD."""
    from tests.conftest import make_user

    app = make_app(message_queue="")
    make_user(app.extensions["coach"], "ann@x.io", "operator")
    client = app.test_client()

    def post(email: str, password: str, address: str = "10.0.0.1"):
        return client.post(
            "/api/auth/login", json={"email": email, "password": password}, environ_base={"REMOTE_ADDR": address}
        )

    return post


@pytest.fixture
def clock():
    with time_machine.travel(1_000_000, tick=False) as traveller:
        yield traveller


def _retry_after(response) -> int:
    assert response.status_code == 429, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "too_many_requests" and error["message"]
    assert error["details"] == {"retry_after_s": int(response.headers["Retry-After"])}
    return int(response.headers["Retry-After"])


def test_five_failures_block_that_address_for_the_rest_of_the_window(login, clock):
    for _ in range(4):
        assert login("ann@x.io", BAD).status_code == 401
    assert login("A@X.io ", BAD).status_code == 401  # the fifth: still checked, then counted
    clock.shift(10)
    assert _retry_after(login("ann@x.io", BAD)) == 290
    assert _retry_after(login("ann@x.io", GOOD)) == 290  # the right password too: nothing is checked
    assert login("ann@x.io", GOOD, "10.0.0.99").status_code == 200  # the owner elsewhere is not locked out


def test_failures_spread_over_addresses_lock_nobody_out(login, clock):
    for i in range(20):
        assert login("ann@x.io", BAD, f"10.0.0.{i}").status_code == 401
    assert login("ann@x.io", GOOD, "10.0.1.1").status_code == 200


def test_the_address_limit_counts_failures_across_emails(login, clock):
    for i in range(5):
        assert login(f"user{i}@x.io", BAD).status_code == 401
    assert _retry_after(login("fresh@x.io", BAD)) == 300
    assert login("fresh@x.io", BAD, "10.0.0.2").status_code == 401


def test_only_failed_logins_count(login, clock):
    for _ in range(6):
        assert login("ann@x.io", GOOD).status_code == 200
    for _ in range(6):
        assert login("ann@x.io", None).status_code == 422  # a refused body checked no password
    assert [login("ann@x.io", BAD).status_code for _ in range(6)] == [401] * 5 + [429]


def test_failures_leave_the_moving_window(login, clock):
    for _ in range(4):
        login("ann@x.io", BAD)  # t=0
    clock.shift(50)
    login("ann@x.io", BAD)  # t=50: five within 300 s
    assert _retry_after(login("ann@x.io", BAD)) == 250  # the first four leave the window at t=300
    clock.shift(250.5)
    for _ in range(3):
        assert login("ann@x.io", BAD).status_code == 401  # t=300.5: only t=50 was left in the window
    assert login("ann@x.io", BAD).status_code == 401  # five again: t=50 and four at t=300.5
    clock.shift(4.5)
    assert _retry_after(login("ann@x.io", BAD)) == 45  # t=305: until t=50 leaves, at t=350


def test_retry_after_is_whole_seconds_and_at_least_one(login, clock):
    for _ in range(5):
        login("ann@x.io", BAD)
    clock.shift(299.6)
    assert _retry_after(login("ann@x.io", BAD)) == 1
    clock.shift(0.5)
    assert login("ann@x.io", GOOD).status_code == 200


def test_too_many_builds_the_429_error_body_with_retry_after():
    from flask import Flask

    with Flask(__name__).app_context():
        response = too_many(12.2)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "13"
    error = response.get_json()["error"]
    assert error["code"] == "too_many_requests" and error["message"]
    assert error["details"] == {"retry_after_s": 13}


# ---- the login limiter (Redis) ----------------------------------------------------------------------------


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
def redis_address(redis_client):
    """A client address of this test's own, so its counts in the shared Redis are its own too."""
    address = f"test-{uuid.uuid4().hex}"
    yield address
    for key in redis_client.scan_iter(f"*/{security.LOGIN_KEY_PREFIX}/addr:{address}/*"):
        redis_client.delete(key)


def test_a_redis_message_queue_shares_the_counts_between_servers(make_app, redis_client, redis_address):
    from tests.conftest import make_user

    one, two = make_app(message_queue=REDIS_URL), make_app(message_queue=REDIS_URL)
    assert isinstance(one.extensions["coach_login_limiter"].storage, RedisStorage)
    make_user(one.extensions["coach"], "ann@x.io", "operator")

    def login(app, password):
        return app.test_client().post(
            "/api/auth/login",
            json={"email": "ann@x.io", "password": password},
            environ_base={"REMOTE_ADDR": redis_address},
        )

    assert [login(one, BAD).status_code for _ in range(3)] == [401] * 3
    assert [login(two, BAD).status_code for _ in range(2)] == [401] * 2
    assert 0 < _retry_after(login(one, GOOD)) <= 300 and 0 < _retry_after(login(two, GOOD)) <= 300
    keys = list(redis_client.scan_iter(f"*/{security.LOGIN_KEY_PREFIX}/addr:{redis_address}/*"))
    assert len(keys) == 1 and 0 < redis_client.ttl(keys[0]) <= 300  # Redis forgets the window by itself
    assert (
        one.test_client()
        .post("/api/auth/login", json={"email": "ann@x.io", "password": GOOD}, environ_base={"REMOTE_ADDR": "10.9.9.9"})
        .status_code
        == 200
    )


def test_the_login_limiter_fails_open_when_redis_is_down():
    from flask import Flask

    app = Flask(__name__)
    app.add_url_rule("/login", security.LOGIN_ENDPOINT, lambda: ("wrong password", 401), methods=["POST"])
    limiter = security.login_limiter(app, Settings(message_queue="redis://127.0.0.1:1/0"))
    assert isinstance(limiter.storage, RedisStorage)
    client = app.test_client()
    assert [client.post("/login").status_code for _ in range(7)] == [401] * 7  # passwords are still checked


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
    app = make_app(
        env="production",
        secret_key=STRONG_SECRET,
        public_origins=("https://coach.example.com", "https://ops.example.com"),
    )
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
    assert dev == {
        "SESSION_COOKIE_NAME": "coach_session",
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": False,
        "PERMANENT_SESSION_LIFETIME": timedelta(hours=12),
    }
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
    assert (
        client.post("/api/auth/login", json={"email": "ann@files.test", "password": "password-123"}).status_code == 200
    )

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
