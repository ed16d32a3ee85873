"""Test fixtures: an app per test on a fresh database (SQLite always; PostgreSQL when it answers), or an app per
module that each test gets back emptied (modules marked `shared_app`: SharedApps)."""

from __future__ import annotations

import functools
import os
import shutil
import time
import uuid
from pathlib import Path

import pytest

from config import Settings
from services import workspaces
from services.db import Database
from services.migrate import upgrade
from services.models import metadata

PG_ADMIN_URL = os.environ.get("COACH_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
# a database emptied as migrated (alembic_version stays), children first
DELETE_EVERY_ROW = [f'DELETE FROM "{t.name}"' for t in reversed(metadata.sorted_tables)]


def _pg_unavailable() -> str | None:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN_URL, connect_timeout=2):
            return None
    except Exception as exc:
        return f"PostgreSQL at {PG_ADMIN_URL} does not answer ({type(exc).__name__}); set COACH_TEST_PG_URL"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    """One migrated SQLite file per session; each test gets a copy (much faster than migrating each time)."""
    path = tmp_path_factory.mktemp("template") / "coach.db"
    db = Database(f"sqlite:///{path}")
    upgrade(db)
    db.dispose()  # closing the last connection checkpoints the WAL into the file we copy
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    return path


@pytest.fixture(scope="session", autouse=True)
def live_servers_start_from_the_template(sqlite_template):
    """Live servers (tests/support/live_server.py) start on a copy of the migrated template, not an empty file."""
    from tests.support.live_server import LiveServer

    LiveServer.sqlite_template = sqlite_template


@pytest.fixture(scope="session")
def pg_database():
    reason = _pg_unavailable()
    if reason:
        pytest.skip(reason)
    import psycopg

    name = f"coach_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    db = Database(url)
    upgrade(db)
    db.dispose()
    yield url
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_emptier(pg_database):
    """Empties the worker's PostgreSQL database between tests: DELETE from every table, children first, and the
    sequences restarted (what TRUNCATE ... RESTART IDENTITY does; TRUNCATE of 22 tables takes ~200 ms, these
    statements ~10 ms on the few rows a test leaves)."""
    import psycopg

    with psycopg.connect(pg_database, autocommit=True) as conn:
        sequences = [
            row[0]
            for row in conn.execute(
                "SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename) FROM pg_sequences"
            )
        ]
    statements = DELETE_EVERY_ROW + [f"ALTER SEQUENCE {name} RESTART" for name in sequences]
    script = "; ".join(statements)

    def empty() -> None:
        with psycopg.connect(pg_database) as conn:  # one transaction: all or nothing
            conn.execute(script)

    return empty


def _fresh_url(backend: str, request, tmp_path: Path) -> str:
    if backend == "sqlite":
        target = tmp_path / "coach.db"
        shutil.copy(request.getfixturevalue("sqlite_template"), target)
        return f"sqlite:///{target}"
    request.getfixturevalue("pg_emptier")()
    return request.getfixturevalue("pg_database")


def _test_settings(database_url: str, folder: Path) -> Settings:
    data = folder / "data"
    data.mkdir(exist_ok=True)
    return Settings(
        env="test",
        database_url=database_url,
        instance_dir=str(folder),
        data_dir=str(data),
        demo=False,
        runner_workers=2,
        shell_allow=("echo", "sleep"),
        log_level="WARNING",
        secret_key="test-secret",
        random_seed=7,
        # decisions on risky calls run at once unless a test sets a window (tests/api/test_undo.py)
        undo_window_s=0.0,
        # the tests' HTTP servers listen on loopback, which outbound requests refuse by default
        outbound_allow=("127.0.0.1",),
        # the test client runs the app in this (unpatched) process: real threads, not greenlets;
        # the socket and browser tests run the real server in the default mode
        async_mode="threading",
    )


def _new_app(settings: Settings, mcp: bool = False):
    """`mcp`: with Coach's MCP process (tests/support/mcp_process.py: in a thread, on the same database), for the
    tests of /mcp and of MCP servers (marked `mcp_process`); without it, nothing answers at COACH_MCP_URL."""
    from api.app import create_app

    process = None
    if mcp:
        from tests.support.mcp_process import McpProcess

        process = McpProcess(settings).start()
        settings = process.settings
    app = create_app(settings, migrate=False)
    app.config["TESTING"] = True
    app.extensions["coach_test_mcp"] = process
    return app


def _close_app(app) -> None:
    services = app.extensions["coach"]
    services.runner.wait_idle(5)
    services.close()
    process = app.extensions.get("coach_test_mcp")
    if process is not None:
        process.stop()


class SharedApps:
    """An app per module and database, for the modules marked `shared_app`: building an app costs ~0.25 s of CPU
    (flask-smorest documents ~90 routes), more than most API tests take. Each test gets the module's app back as a
    new one would be: the runner idle, the database emptied and the default workspace made again (a new id, so
    nothing kept by workspace carries over: tool lists, policy rule sets), the data folder empty, the login limiter
    reset.
    A module whose tests change the settings, or keep state outside the database, stays with an app per test."""

    def __init__(self, request, folder: Path, mcp: bool = False):
        self.request, self.folder, self.mcp = request, folder, mcp
        self.apps: dict[str, object] = {}

    def url(self, backend: str) -> str:
        if backend == "sqlite":
            target = self.folder / "coach.db"
            if not target.exists():
                shutil.copy(self.request.getfixturevalue("sqlite_template"), target)
            return f"sqlite:///{target}"
        return self.request.getfixturevalue("pg_database")

    def app(self, database_url: str):
        app = self.apps.get(database_url)
        if app is not None and not app.extensions["coach"].runner.wait_idle(30):
            _close_app(self.apps.pop(database_url))  # a run the last test left going: the next test gets a new app
            app = None
        folder = self.folder / ("sqlite" if database_url.startswith("sqlite") else "postgresql")
        self._empty(database_url, folder / "data")
        if app is None:
            folder.mkdir(exist_ok=True)
            app = self.apps[database_url] = _new_app(_test_settings(database_url, folder), self.mcp)
        else:  # what a new app does at its start
            app.extensions["coach_default_workspace"] = app.extensions["coach"].default_workspace_id()
            app.extensions["coach_login_limiter"].reset()
        return app

    def _empty(self, database_url: str, data: Path) -> None:
        """The database as migrated, and no files: what earlier tests (here, or in earlier modules) left is gone."""
        if database_url.startswith("sqlite"):
            import sqlite3

            with sqlite3.connect(database_url.removeprefix("sqlite:///")) as conn:
                conn.executescript(";".join(DELETE_EVERY_ROW))
            conn.close()
        else:
            self.request.getfixturevalue("pg_emptier")()
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir(parents=True)

    def close(self) -> None:
        for app in self.apps.values():
            _close_app(app)


@pytest.fixture(scope="module")
def shared_apps(request, tmp_path_factory):
    apps = SharedApps(request, tmp_path_factory.mktemp("app"), _with_mcp(request))
    yield apps
    apps.close()


def _shared(request) -> bool:
    return request.node.get_closest_marker("shared_app") is not None


def _with_mcp(request) -> bool:
    return request.node.get_closest_marker("mcp_process") is not None


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request, tmp_path) -> str:
    """Storage and API tests run once per database backend."""
    if _shared(request):
        if request.param == "postgresql":
            request.getfixturevalue("pg_database")  # skips when PostgreSQL does not answer
        return request.getfixturevalue("shared_apps").url(request.param)
    return _fresh_url(request.param, request, tmp_path)


@pytest.fixture
def settings(request, database_url, tmp_path) -> Settings:
    if _shared(request):
        return request.getfixturevalue("app").extensions["coach"].settings
    return _test_settings(database_url, tmp_path)


@pytest.fixture
def app(request, database_url, tmp_path):
    if _shared(request):
        app = request.getfixturevalue("shared_apps").app(database_url)
        yield app
        app.extensions["coach"].runner.wait_idle(5)
        return
    app = _new_app(request.getfixturevalue("settings"), _with_mcp(request))
    yield app
    _close_app(app)


@pytest.fixture
def services(app):
    return app.extensions["coach"]


TEST_PASSWORD = "password-123"


@functools.cache
def hashed_test_password() -> str:
    """The test users' password, hashed once per process (scrypt costs ~0.1 s of CPU by design)."""
    from services.users import service as users

    return users.hash_password(TEST_PASSWORD)


def make_user(services, email: str, role: str, workspace_slug: str = "default") -> str:
    """A user with `role` in the workspace (created if need be); returns a bearer token for them."""
    from services.models.users import User
    from services.users import service as users
    from services.users import tokens

    with services.db.transaction() as session:
        ws = users.find_workspace(session, workspace_slug) or workspaces.create(session, workspace_slug)
        user = session.query(User).filter(User.email == email).one_or_none() or users.create_user(
            session, email, TEST_PASSWORD, password_hash=hashed_test_password()
        )
        users.set_role(session, user, ws, role)
        return tokens.create_token(session, user, "tests")[1]


def authed_client(app, role: str = "admin"):
    """A test client acting as a user with `role` in the default workspace."""
    client = app.test_client()
    token = make_user(app.extensions["coach"], f"{role}@test.local", role)
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client


@pytest.fixture
def llm():
    """A scripted OpenAI-compatible LLM server on loopback (tests/support/llm_server.py), stopped after the test."""
    from tests.support.llm_server import ScriptedLLM

    with ScriptedLLM() as server:
        yield server


@pytest.fixture
def admin_token(services) -> str:
    return make_user(services, "admin@test.local", "admin")


@pytest.fixture
def client(app, admin_token):
    """pytest-flask's client, acting as an admin of the default workspace unless a test says otherwise."""
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {admin_token}"
    return client


class Api:
    """A thin helper over the test client: JSON in, (status, JSON) out, and waiting for the runner."""

    def __init__(self, client, services):
        self.client, self.services = client, services

    def call(self, method: str, path: str, json=None, **kwargs):
        response = self.client.open(path, method=method, json=json, **kwargs)
        return response.status_code, response.get_json(silent=True)

    def ok(self, method: str, path: str, json=None, status: int = 200, **kwargs):
        code, body = self.call(method, path, json, **kwargs)
        assert code == status, f"{method} {path} -> {code}: {body}"
        return body

    def workflow(self, steps: list, name: str = "wf", **extra) -> dict:
        return self.ok("POST", "/api/workflows", {"name": name, "steps": steps, **extra}, status=201)

    def allow(self, tool: str) -> dict:
        """A workspace rule that lets `tool` run unreviewed (shell.run is destructive: the default policy asks a
        person first), for tests about something else than policies."""
        return self.ok(
            "POST",
            "/api/policies",
            {"name": f"allow {tool}", "effect": "allow", "order": 0, "reason": "tests", "match": {"tool": tool}},
            status=201,
        )

    def start(self, workflow_id: str, variables: dict | None = None, mode: str = "normal") -> dict:
        return self.ok(
            "POST",
            "/api/executions/",
            {"workflow_id": workflow_id, "variables": variables or {}, "mode": mode},
            status=201,
        )

    def settle(self, execution_id: str, timeout: float = 30.0) -> dict:
        """Wait until the runner has nothing left to do for this execution, then read it."""
        deadline = time.monotonic() + timeout
        while True:
            self.services.runner.wait_idle(timeout)
            body = self.ok("GET", f"/api/executions/{execution_id}")
            if body["status"] not in ("pending", "running", "resumed") or time.monotonic() > deadline:
                return body
            time.sleep(0.01)

    def data_dir(self) -> Path:
        """The data folder of the caller's workspace, <data>/<workspace id>/ (made if need be)."""
        folder = Path(self.services.settings.resolved_data_dir) / self.ok("GET", "/api/auth/me")["workspace_id"]
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def run(self, steps: list, variables: dict | None = None, **extra) -> dict:
        wf = self.workflow(steps, **extra)
        return self.settle(self.start(wf["id"], variables)["execution_id"])


@pytest.fixture
def api(client, services) -> Api:
    return Api(client, services)


# Files whose tests start live servers and browsers take longest: started first, they do not hold up the end of a
# parallel run while the other workers wait. With --dist loadfile --no-loadscope-reorder (the Makefile) a worker
# takes the next file in this order; xdist would otherwise take the files with the most tests first.
SLOW_FIRST = {"socket": 0, "browser": 1, "api": 2, "services": 3, "core": 4}


def pytest_collection_modifyitems(config, items):
    def folder_rank(item) -> int:
        parts = item.nodeid.split("/")
        return SLOW_FIRST.get(parts[1], len(SLOW_FIRST)) if len(parts) > 2 and parts[0] == "tests" else len(SLOW_FIRST)

    items.sort(key=folder_rank)  # stable: the order inside a folder stays
