"""Socket.IO authentication and workspace isolation against the real server (docs/auth.md,
docs/api.md#real-time-socketio).

One live server for the module. The second workspace ("other") and its operator are made with the CLI
(`flask --app wsgi create-workspace` / `create-user`) on the server's own SQLite file, before any execution
exists (the CLI's app would otherwise recover runnable executions of the server's database).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

import pytest
import requests
import socketio
from socketio.exceptions import ConnectionError as SioConnectionError

from tests.socket.conftest import disconnect_all, pending_coaching
from tests.support.live_server import REPO_ROOT, LiveServer

OTHER_EMAIL = "op@other.test"
OTHER_PASSWORD = "other-password-1"
STEPS = {
    "name": "socket auth",
    "steps": [
        {"id": "greet", "type": "action", "tool": "echo", "params": {"message": "hi"}},
        {"id": "last", "type": "action", "tool": "echo", "params": {"n": 1}},
    ],
}
WATCHED = (
    "coaching_suggestion",
    "execution_update",
    "coaching_stats",
    "metrics_update",
    "workflow_level_changed",
    "queue_changed",
)


def _cli(server: LiveServer, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", *args],
        cwd=REPO_ROOT,
        env=server.environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"flask {' '.join(args)}: {done.stdout}\n{done.stderr}"
    return done.stdout


def _token(server: LiveServer, http: requests.Session, csrf: str, name: str = "socket") -> dict:
    made = http.post(server.url("/api/auth/tokens"), json={"name": name}, headers={"X-CSRF-Token": csrf}, timeout=10)
    assert made.status_code == 201, made.text
    return made.json()


class World:
    def __init__(self, server: LiveServer):
        self.server = server
        self.default_ws = server.get("/api/auth/me").json()["workspace_id"]
        _cli(server, "create-workspace", "other", "--name", "Other")
        _cli(
            server,
            "create-user",
            OTHER_EMAIL,
            "--password",
            OTHER_PASSWORD,
            "--workspace",
            "other",
            "--role",
            "operator",
        )
        http, login = server.login(OTHER_EMAIL, OTHER_PASSWORD)
        self.other_ws = login["workspace_id"]
        assert [(w["slug"], w["role"]) for w in login["workspaces"]] == [("other", "operator")]
        self.other_token = _token(server, http, login["csrf_token"])["token"]
        http.close()
        assert self.other_ws != self.default_ws
        made = server.post("/api/workflows", json=STEPS)
        assert made.status_code == 201, made.text
        self.workflow_id = made.json()["id"]

    def coaching(self) -> tuple[str, dict]:
        """A default-workspace coaching execution waiting for a decision: (id, its pending suggestion)."""
        return pending_coaching(self.server, self.workflow_id)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with LiveServer(tmp_path_factory.mktemp("socket-auth") / "server", demo="0") as server:
        yield World(server)


@pytest.fixture
def connect(world):
    """`connect(auth=..., headers=...)` -> a connected client; every one is disconnected at teardown."""
    clients: list[socketio.Client] = []

    def make(**kwargs) -> socketio.Client:
        client = socketio.Client(reconnection=False)
        clients.append(client)
        kwargs.setdefault("wait_timeout", 10)
        client.connect(world.server.base_url, **kwargs)
        return client

    yield make
    disconnect_all(clients)


def _refused(connect, **kwargs) -> None:
    with pytest.raises(SioConnectionError):
        connect(**kwargs)


def _error(ack: Any, code: str) -> None:
    assert isinstance(ack, dict) and ack.get("ok") is False, ack
    assert ack["error"]["code"] == code, ack


# ---- connecting -------------------------------------------------------------------------------------------
def test_no_credentials_are_refused(connect):
    _refused(connect, auth=None)
    _refused(connect, auth={})
    _refused(connect, auth={"token": ""})


@pytest.mark.parametrize("token", ["coach_made-up", "not even a token", "x" * 300])
def test_a_wrong_token_is_refused(connect, token):
    _refused(connect, auth={"token": token})


def test_a_revoked_token_is_refused(world, connect):
    made = world.server.post("/api/auth/tokens", json={"name": "to revoke"})
    assert made.status_code == 201, made.text
    client = connect(auth={"token": made.json()["token"]})  # fine while valid
    assert client.connected
    assert world.server.request("DELETE", f"/api/auth/tokens/{made.json()['id']}").status_code == 204
    _refused(connect, auth={"token": made.json()["token"]})


def test_a_valid_token_is_accepted(world, connect):
    client = connect(auth={"token": world.server.token})
    assert client.connected
    ack = client.call("join_workspace", {}, timeout=30)
    assert ack == {"ok": True, "workspace_id": world.default_ws, "role": "admin"}, ack


def test_a_session_cookie_is_accepted(world, connect):
    http, login = world.server.login(world.server.admin_email, world.server.admin_password)
    cookie = http.cookies.get("coach_session")
    http.close()
    assert cookie
    client = connect(auth=None, headers={"Cookie": f"coach_session={cookie}"})
    assert client.connected
    assert client.call("join_workspace", {}, timeout=30)["workspace_id"] == login["workspace_id"]
    ex_id, _ = world.coaching()
    ack = client.call("join_execution", {"execution_id": ex_id}, timeout=30)
    assert ack["ok"] is True, ack


def test_a_forged_or_foreign_signed_cookie_is_refused(world, connect):
    http, _ = world.server.login(world.server.admin_email, world.server.admin_password)
    cookie = http.cookies.get("coach_session")
    http.close()
    tampered = cookie[:-4] + ("AAAA" if not cookie.endswith("AAAA") else "BBBB")
    _refused(connect, auth=None, headers={"Cookie": f"coach_session={tampered}"})
    _refused(connect, auth=None, headers={"Cookie": "coach_session=eyJ1c2VyX2lkIjoieCJ9.Zm9v.YmFy"})


def test_a_workspace_you_are_not_in_is_refused(world, connect):
    _refused(connect, auth={"token": world.other_token, "workspace": "default"})
    _refused(connect, auth={"token": world.other_token, "workspace": world.default_ws})
    _refused(connect, auth={"token": world.server.token, "workspace": "other"})
    _refused(connect, auth={"token": world.server.token, "workspace": "no-such-workspace"})
    assert connect(auth={"token": world.other_token, "workspace": "other"}).connected


# ---- another workspace's rows -----------------------------------------------------------------------------
def test_an_operator_of_another_workspace_cannot_join_or_decide(world, connect):
    ex_id, suggestion = world.coaching()
    client = connect(auth={"token": world.other_token})
    seen: list[tuple[str, Any]] = []
    for name in WATCHED:
        client.on(name, lambda data=None, name=name: seen.append((name, data)))

    _error(client.call("join_execution", {"execution_id": ex_id}, timeout=30), "not_found")
    # the same answer as for an execution that does not exist
    _error(client.call("join_execution", {"execution_id": "no-such-execution"}, timeout=30), "not_found")
    for decision in ("accept", "skip", "reject"):
        ack = client.call(
            "coaching_decision",
            {"execution_id": ex_id, "suggestion_id": suggestion["suggestion_id"], "decision": decision},
            timeout=5,
        )
        _error(ack, "not_found")
    ack = client.call(
        "coaching_decision",
        {
            "execution_id": ex_id,
            "suggestion_id": suggestion["suggestion_id"],
            "decision": "accept",
            "idempotency_key": "k-other",
        },
        timeout=5,
    )
    _error(ack, "not_found")
    # nothing happened to the execution, and nothing of it was sent to this client
    pending = world.server.get(f"/api/executions/{ex_id}/coaching/suggestion").json()
    assert pending["status"] == "waiting_decision"
    assert pending["suggestion"]["suggestion_id"] == suggestion["suggestion_id"]
    stats = world.server.get(f"/api/executions/{ex_id}/coaching/stats").json()
    assert stats["accepted"] == stats["rejected"] == stats["skipped"] == 0, stats
    time.sleep(0.3)
    assert seen == []


def test_join_workspace_of_another_workspace_is_not_found(world, connect):
    other = connect(auth={"token": world.other_token})
    _error(other.call("join_workspace", {"workspace_id": world.default_ws}, timeout=30), "not_found")
    assert other.call("join_workspace", {}, timeout=30) == {
        "ok": True,
        "workspace_id": world.other_ws,
        "role": "operator",
    }
    mine = connect(auth={"token": world.server.token})
    _error(mine.call("join_workspace", {"workspace_id": world.other_ws}, timeout=30), "not_found")
    _error(mine.call("join_workspace", {"workspace_id": "no-such-workspace"}, timeout=30), "not_found")


def test_workspace_rooms_carry_only_their_own_workspace(world, connect):
    """A dashboard of workspace "other" hears nothing while the default workspace's operator decides."""
    other = connect(auth={"token": world.other_token})
    heard_by_other: list[tuple[str, Any]] = []
    for name in WATCHED:
        other.on(name, lambda data=None, name=name: heard_by_other.append((name, data)))
    assert other.call("join_workspace", {}, timeout=30)["ok"] is True

    mine = connect(auth={"token": world.server.token})
    heard = threading.Event()
    mine.on("queue_changed", lambda data=None: heard.set())
    assert mine.call("join_workspace", {}, timeout=30)["ok"] is True

    ex_id, suggestion = world.coaching()
    ack = mine.call(
        "coaching_decision",
        {"execution_id": ex_id, "suggestion_id": suggestion["suggestion_id"], "decision": "accept"},
        timeout=10,
    )
    assert ack["ok"] is True, ack
    assert heard.wait(30), "the default workspace's dashboard heard nothing"
    time.sleep(0.5)  # anything sent to the wrong room would have arrived with the right one
    assert heard_by_other == []


def test_a_connection_whose_token_is_revoked_can_no_longer_decide(world, connect):
    made = world.server.post("/api/auth/tokens", json={"name": "revoked while connected"})
    assert made.status_code == 201, made.text
    client = connect(auth={"token": made.json()["token"]})
    assert world.server.request("DELETE", f"/api/auth/tokens/{made.json()['id']}").status_code == 204
    ex_id, suggestion = world.coaching()
    try:
        ack = client.call(
            "coaching_decision",
            {"execution_id": ex_id, "suggestion_id": suggestion["suggestion_id"], "decision": "accept"},
            timeout=5,
        )
    except (
        socketio.exceptions.TimeoutError,
        socketio.exceptions.BadNamespaceError,
        socketio.exceptions.DisconnectedError,
    ):
        ack = None  # disconnected by the server: fine too
    assert not (isinstance(ack, dict) and ack.get("ok") is True), ack
    pending = world.server.get(f"/api/executions/{ex_id}/coaching/suggestion").json()["suggestion"]
    assert pending is not None and pending["suggestion_id"] == suggestion["suggestion_id"]
