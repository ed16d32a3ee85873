"""Tenants fully apart (issue #11): each workspace's files, SQL connections and outbound hosts are its own.

Real parts: two workspaces in one app on SQLite and PostgreSQL, the real runner and tools, real files, a real
SQLite database behind sql.query, and a real HTTP server on loopback.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import Api, make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/to-metadata"):
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = json.dumps({"status": "ok", "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class Tenant(Api):
    def __init__(self, app, slug: str, role: str = "admin"):
        services = app.extensions["coach"]
        client = app.test_client()
        token = make_user(services, f"{role}@{slug}.test", role, slug)
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        client.environ_base["HTTP_X_COACH_WORKSPACE"] = slug
        super().__init__(client, services)
        self.slug = slug
        self.workspace_id = self.ok("GET", "/api/auth/me")["workspace_id"]

    def coach(self, steps: list, author: Tenant | None = None) -> tuple[str, dict]:
        """A coaching execution of a new workflow (written by `author`, a lead or admin), at its first suggestion."""
        wf = (author or self).workflow(steps, name=f"wf {len(steps)}")
        ex_id = self.ok("POST", "/api/executions/coaching", {"workflow_id": wf["id"], "variables": {}}, status=201)[
            "execution_id"
        ]
        self.settle(ex_id)
        return ex_id, self.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]

    def decide(self, ex_id: str, suggestion: dict, decision: str, **extra) -> dict:
        self.ok(
            "POST",
            f"/api/executions/{ex_id}/coaching/decision",
            {"suggestion_id": suggestion["suggestion_id"], "decision": decision, **extra},
        )
        return self.settle(ex_id)


@pytest.fixture
def make_app(settings):
    made = []

    def make(**overrides):
        from api.app import create_app

        app = create_app(settings.with_overrides(**overrides), migrate=False)
        app.config["TESTING"] = True
        made.append(app)
        return app

    yield make
    for app in made:
        app.extensions["coach"].runner.wait_idle(5)
        app.extensions["coach"].close()


def _step(ex: dict, step_id: str) -> dict:
    return next(s for s in ex["steps"] if s["step_id"] == step_id)


# ---- files ---------------------------------------------------------------------------------------------


def test_workspaces_neither_read_nor_overwrite_each_others_files(app, settings):
    a, b = Tenant(app, "a"), Tenant(app, "b")
    ex = b.run([{"id": "w", "tool": "file.write", "params": {"path": "secret.txt", "content": "B's secret"}}])
    assert ex["status"] == "completed", ex
    ex = a.run([{"id": "r", "tool": "file.read", "params": {"path": "secret.txt"}}])
    assert ex["status"] == "failed" and "no such file" in ex["error"]["message"]
    ex = a.run([{"id": "w", "tool": "file.write", "params": {"path": "secret.txt", "content": "A was here"}}])
    assert ex["status"] == "completed", ex
    data = Path(settings.resolved_data_dir)
    assert (data / b.workspace_id / "secret.txt").read_text() == "B's secret"
    assert (data / a.workspace_id / "secret.txt").read_text() == "A was here"
    assert sorted(p.name for p in data.iterdir()) == sorted([a.workspace_id, b.workspace_id])


def test_an_operator_cannot_read_another_workspaces_file_by_correcting_a_suggestion(app, settings):
    a, b = Tenant(app, "a"), Tenant(app, "b")
    assert (
        b.run([{"id": "w", "tool": "file.write", "params": {"path": "secret.txt", "content": "B's secret"}}])["status"]
        == "completed"
    )
    operator = Tenant(app, "a", role="operator")
    secret = Path(settings.resolved_data_dir) / b.workspace_id / "secret.txt"
    for path, why in ((f"../{b.workspace_id}/secret.txt", "'..'"), (str(secret), "absolute")):
        ex_id, suggestion = operator.coach([{"id": "read", "tool": "file.read", "params": {"path": "notes.txt"}}], a)
        ex = operator.decide(ex_id, suggestion, "correct", correction={"path": path})
        step = _step(ex, "read")
        assert (ex["status"], step["status"], step["decision"]) == ("failed", "failed", "correct"), ex
        assert why in step["error"] and step["output"] is None
        assert "B's secret" not in json.dumps(ex)


@pytest.mark.skipif(not Path("/bin/pwd").exists() and not Path("/usr/bin/pwd").exists(), reason="needs pwd")
def test_shell_runs_in_its_workspaces_folder(make_app, settings):
    app = make_app(shell_allow=("pwd",))
    a = Tenant(app, "a")
    a.allow("shell.run")
    ex = a.run([{"id": "where", "tool": "shell.run", "params": {"command": ["pwd"]}}])
    assert ex["status"] == "completed", ex
    out = _step(ex, "where")["output"]["stdout"].strip()
    assert Path(out).resolve() == (Path(settings.resolved_data_dir) / a.workspace_id).resolve()


def test_a_write_past_the_workspace_quota_fails_the_step(make_app, settings):
    app = make_app(data_quota_mb=0.001)  # 1048 bytes
    a, b = Tenant(app, "a"), Tenant(app, "b")
    assert (
        a.run([{"id": "w", "tool": "file.write", "params": {"path": "one.txt", "content": "x" * 800}}])["status"]
        == "completed"
    )
    ex = a.run([{"id": "w", "tool": "file.write", "params": {"path": "two.txt", "content": "y" * 800}}])
    assert ex["status"] == "failed"
    assert "quota of 1048 bytes (COACH_DATA_QUOTA_MB)" in ex["error"]["message"] and "two.txt" in ex["error"]["message"]
    assert not (Path(settings.resolved_data_dir) / a.workspace_id / "two.txt").exists()
    # the other workspace's quota is its own
    assert (
        b.run([{"id": "w", "tool": "file.write", "params": {"path": "two.txt", "content": "y" * 800}}])["status"]
        == "completed"
    )


def test_a_correction_asking_file_read_for_more_than_the_servers_limit_is_422(app):
    a = Tenant(app, "a")
    ex_id, suggestion = a.coach([{"id": "read", "tool": "file.read", "params": {"path": "notes.txt"}}])
    code, body = a.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {
            "suggestion_id": suggestion["suggestion_id"],
            "decision": "correct",
            "correction": {"path": "notes.txt", "max_bytes": 10**12},
        },
    )
    assert code == 422 and "correction.max_bytes" in body["error"]["details"], body


# ---- SQL connections -----------------------------------------------------------------------------------


def test_sql_connections_are_granted_per_workspace_and_do_not_leak_their_names(make_app, tmp_path):
    db_file = tmp_path / "warehouse.db"
    with sqlite3.connect(db_file) as conn:
        conn.execute("CREATE TABLE sales (amount INTEGER)")
        conn.execute("INSERT INTO sales VALUES (42)")
    app = make_app(
        sql_connections={
            "warehouse": {"url": f"sqlite:///{db_file}", "workspaces": ["b"]},
            "legacy": f"sqlite:///{db_file}",
        }
    )
    a, b = Tenant(app, "a"), Tenant(app, "b")
    query = [
        {"id": "q", "tool": "sql.query", "params": {"connection": "warehouse", "query": "SELECT amount FROM sales"}}
    ]
    ex = b.run(query)
    assert ex["status"] == "completed" and _step(ex, "q")["output"]["rows"] == [{"amount": 42}]
    denied = a.run(query)["error"]["message"]
    missing = a.run([{"id": "q", "tool": "sql.query", "params": {"connection": "nowhere", "query": "SELECT 1"}}])[
        "error"
    ]["message"]
    assert "is available to this workspace" in denied
    assert denied.replace("warehouse", "X") == missing.replace("nowhere", "X")
    # the old plain {name: url} form is granted to nobody
    legacy = b.run([{"id": "q", "tool": "sql.query", "params": {"connection": "legacy", "query": "SELECT 1"}}])
    assert legacy["status"] == "failed" and "available: warehouse" in legacy["error"]["message"]
    # granted by id as well as by slug
    app2 = make_app(sql_connections={"warehouse": {"url": f"sqlite:///{db_file}", "workspaces": [a.workspace_id]}})
    assert Tenant(app2, "a").run(query)["status"] == "completed"


# ---- outbound requests ---------------------------------------------------------------------------------


def test_loopback_is_refused_unless_the_server_allows_it(make_app, server):
    app = make_app(outbound_allow=())  # the default
    a = Tenant(app, "a")
    ex = a.run([{"id": "ping", "tool": "http.request", "params": {"url": f"{server}/healthz"}}])
    assert ex["status"] == "failed", ex
    message = ex["error"]["message"]
    assert "127.0.0.1" in message and "loopback" in message and "COACH_OUTBOUND_ALLOW" in message
    allowed = Tenant(make_app(outbound_allow=("127.0.0.1",)), "a")
    ex = allowed.run([{"id": "ping", "tool": "http.request", "params": {"url": f"{server}/healthz"}}])
    assert ex["status"] == "completed" and _step(ex, "ping")["output"]["json"]["status"] == "ok"


def test_a_redirect_to_a_refused_host_fails_the_step(app, server):
    a = Tenant(app, "a")
    ex = a.run([{"id": "ping", "tool": "http.request", "params": {"url": f"{server}/to-metadata"}}])
    assert ex["status"] == "failed"
    assert "169.254.169.254" in ex["error"]["message"] and "link-local" in ex["error"]["message"]


def test_correcting_a_suggestion_to_a_refused_url_fails_the_step_clearly(app, server):
    admin, a = Tenant(app, "a"), Tenant(app, "a", role="operator")
    for url, why in (
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.5/admin", "private"),
        (f"http://[::ffff:127.0.0.2]:{server.rsplit(':', 1)[1]}/", "loopback"),
    ):
        ex_id, suggestion = a.coach([{"id": "ping", "tool": "http.request", "params": {"url": f"{server}/ok"}}], admin)
        ex = a.decide(ex_id, suggestion, "correct", correction={"url": url})
        step = _step(ex, "ping")
        assert (ex["status"], step["status"], step["decision"]) == ("failed", "failed", "correct"), ex
        assert "refused" in step["error"] and why in step["error"], step["error"]
        assert step["params"]["url"] == url


def test_admins_manage_the_workspaces_outbound_lists(app, server):
    a, b = Tenant(app, "a"), Tenant(app, "b")
    assert a.ok("GET", "/api/workspace/outbound") == {"allow": [], "deny": [], "server_allow": ["127.0.0.1"]}
    code, body = a.call(
        "PUT", "/api/workspace/outbound", {"allow": ["ok.example", "not a host"], "deny": ["1.2.3.4/40"]}
    )
    assert code == 422 and set(body["error"]["details"]) == {"allow[1]", "deny[0]"}, body
    code, body = a.call("PUT", "/api/workspace/outbound", {"allow": "ok.example"})
    assert code == 422 and "allow" in body["error"]["details"], body
    saved = a.ok("PUT", "/api/workspace/outbound", {"allow": [], "deny": ["127.0.0.0/8", "*.Evil.Example"]})
    assert saved == {"allow": [], "deny": ["127.0.0.0/8", "*.evil.example"], "server_allow": ["127.0.0.1"]}
    assert a.ok("GET", "/api/workspace/outbound")["deny"] == ["127.0.0.0/8", "*.evil.example"]

    ping = [{"id": "ping", "tool": "http.request", "params": {"url": f"{server}/x"}}]
    ex = a.run(ping)
    assert ex["status"] == "failed" and "deny list (entry '127.0.0.0/8')" in ex["error"]["message"]
    assert b.run(ping)["status"] == "completed"  # B's lists are its own
    assert b.ok("GET", "/api/workspace/outbound")["deny"] == []

    # an allow list is exclusive: only the hosts on it (loopback included only if listed)
    a.ok("PUT", "/api/workspace/outbound", {"allow": ["api.example.com"], "deny": []})
    assert "not on this workspace's outbound allow list" in a.run(ping)["error"]["message"]
    a.ok("PUT", "/api/workspace/outbound", {"allow": ["api.example.com", "127.0.0.1"]})
    assert a.run(ping)["status"] == "completed"

    events = [e for e in a.ok("GET", "/api/audit?action=outbound_change")["items"]]
    assert len(events) == 3 and events[-1]["before"] == {"allow": [], "deny": []}
    assert events[-1]["after"] == {"allow": [], "deny": ["127.0.0.0/8", "*.evil.example"]}
    assert a.ok("GET", "/api/audit/verify")["ok"] is True

    lead, operator = Tenant(app, "a", role="lead"), Tenant(app, "a", role="operator")
    assert lead.ok("GET", "/api/workspace/outbound")["allow"] == ["api.example.com", "127.0.0.1"]
    assert lead.call("PUT", "/api/workspace/outbound", {"allow": []})[0] == 403
    assert operator.call("GET", "/api/workspace/outbound")[0] == 403
