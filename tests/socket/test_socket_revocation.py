"""Ending credentials ends the sockets that use them, at once (issue #11, item 4), against the real server with
real python-socketio clients: a revoked token, a logout, a removed or disabled member, a member whose tokens an
admin revoked. Each such socket is disconnected by the server and receives nothing afterwards; a role change is
seen by the open socket at its next event."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import socketio
from socketio.exceptions import ConnectionError as SioConnectionError

from tests.socket.conftest import disconnect_all, pending_coaching
from tests.support.live_server import LiveServer

STEPS = {
    "name": "revocation",
    "steps": [
        {"id": "one", "type": "action", "tool": "echo", "params": {"secret": "s3cr3t"}},
        {"id": "two", "type": "action", "tool": "echo", "params": {"n": 2}},
        {"id": "three", "type": "action", "tool": "echo", "params": {"n": 3}},
    ],
}
WATCHED = (
    "coaching_suggestion",
    "execution_update",
    "coaching_stats",
    "metrics_update",
    "workflow_level_changed",
    "access_ended",
    "queue_changed",
)
PASSWORD = "member-password-1"


class World:
    def __init__(self, server: LiveServer):
        self.server = server
        made = server.post("/api/workflows", json=STEPS)
        assert made.status_code == 201, made.text
        self.workflow_id = made.json()["id"]
        self.count = 0

    def coaching(self) -> tuple[str, dict]:
        return pending_coaching(self.server, self.workflow_id)

    def member(self) -> tuple[str, str]:
        """A new operator of the default workspace, through an invitation they accept: (user id, bearer token)."""
        self.count += 1
        email = f"member{self.count}@live.test"
        invited = self.server.post("/api/users", json={"email": email, "password": PASSWORD, "role": "operator"})
        assert invited.status_code == 202, invited.text
        http, login = self.server.login(email, PASSWORD)
        csrf = {"X-CSRF-Token": login["csrf_token"]}
        pending = http.get(self.server.url("/api/auth/invitations"), timeout=10).json()["items"]
        assert len(pending) == 1, pending
        accepted = http.post(
            self.server.url(f"/api/auth/invitations/{pending[0]['id']}/accept"), headers=csrf, timeout=10
        )
        assert accepted.status_code == 200, accepted.text
        token = http.post(self.server.url("/api/auth/tokens"), json={"name": "socket"}, headers=csrf, timeout=10)
        assert token.status_code == 201, token.text
        http.close()
        return login["user"]["id"], token.json()["token"]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with LiveServer(tmp_path_factory.mktemp("socket-revocation") / "server", demo="0") as server:
        yield World(server)


class Watched:
    """A connected client that records every pushed event and notices when the server disconnects it."""

    def __init__(self, world: World, clients: list, **connect):
        self.client = socketio.Client(reconnection=False)
        clients.append(self.client)
        self.events: list[tuple[float, str, Any]] = []
        self.gone = threading.Event()
        for name in WATCHED:
            self.client.on(name, lambda data=None, name=name: self.events.append((time.monotonic(), name, data)))
        self.client.on("disconnect", lambda *args: self.gone.set())
        self.client.connect(world.server.base_url, wait_timeout=10, **connect)

    def join(self, execution_id: str) -> None:
        assert self.client.call("join_workspace", {}, timeout=30)["ok"] is True
        ack = self.client.call("join_execution", {"execution_id": execution_id}, timeout=30)
        assert ack["ok"] is True, ack
        deadline = time.monotonic() + 30  # the pending suggestion is sent on join
        while not any(name == "coaching_suggestion" for _, name, _ in self.events) and time.monotonic() < deadline:
            time.sleep(0.02)

    def assert_cut_off(self, world: World, execution_id: str, suggestion: dict) -> None:
        """Disconnected by the server within 5 s; then a decision (a new suggestion with its params, stats, an
        update) and a new execution in its workspace reach it no more."""
        assert self.gone.wait(30), "the server did not disconnect the socket"
        cut = time.monotonic()
        decided = world.server.post(
            f"/api/executions/{execution_id}/coaching/decision",
            json={"suggestion_id": suggestion["suggestion_id"], "decision": "accept"},
        )
        assert decided.status_code == 200, decided.text
        world.coaching()
        time.sleep(0.7)  # anything sent to this socket would have arrived by now
        late = [(name, data) for at, name, data in self.events if at >= cut]
        assert late == [], late
        assert not self.client.connected


@pytest.fixture
def clients():
    made: list[socketio.Client] = []
    yield made
    disconnect_all(made)


def test_revoking_a_token_disconnects_its_sockets(world, clients):
    made = world.server.post("/api/auth/tokens", json={"name": "revoked while connected"})
    assert made.status_code == 201, made.text
    watched = Watched(world, clients, auth={"token": made.json()["token"]})
    bystander = Watched(world, clients, auth={"token": world.server.token})  # another token of the same user
    ex_id, suggestion = world.coaching()
    watched.join(ex_id)
    bystander.join(ex_id)
    assert any(name == "coaching_suggestion" for _, name, _ in watched.events)
    assert world.server.request("DELETE", f"/api/auth/tokens/{made.json()['id']}").status_code == 204
    watched.assert_cut_off(world, ex_id, suggestion)
    assert bystander.client.connected and not bystander.gone.is_set()
    with pytest.raises(SioConnectionError):
        Watched(world, clients, auth={"token": made.json()["token"]})


def test_logging_out_disconnects_the_cookies_sockets_and_the_cookie_is_refused_after(world, clients):
    http, login = world.server.login(world.server.admin_email, world.server.admin_password)
    cookie = http.cookies.get("coach_session")
    watched = Watched(world, clients, auth=None, headers={"Cookie": f"coach_session={cookie}"})
    token_socket = Watched(world, clients, auth={"token": world.server.token})
    ex_id, suggestion = world.coaching()
    watched.join(ex_id)
    out = http.post(world.server.url("/api/auth/logout"), headers={"X-CSRF-Token": login["csrf_token"]}, timeout=10)
    assert out.status_code == 204, out.text
    http.close()
    watched.assert_cut_off(world, ex_id, suggestion)
    assert token_socket.client.connected  # bearer tokens are not ended by a logout
    with pytest.raises(SioConnectionError):  # the copied cookie is dead
        Watched(world, clients, auth=None, headers={"Cookie": f"coach_session={cookie}"})


def test_removing_a_member_disconnects_their_sockets(world, clients):
    user_id, token = world.member()
    watched = Watched(world, clients, auth={"token": token})
    ex_id, suggestion = world.coaching()
    watched.join(ex_id)
    assert world.server.request("DELETE", f"/api/users/{user_id}").status_code == 204
    watched.assert_cut_off(world, ex_id, suggestion)
    with pytest.raises(SioConnectionError):  # no workspace left to act in
        Watched(world, clients, auth={"token": token})


def test_disabling_a_member_or_revoking_their_tokens_disconnects_them(world, clients):
    user_id, token = world.member()
    watched = Watched(world, clients, auth={"token": token})
    ex_id, suggestion = world.coaching()
    watched.join(ex_id)
    assert world.server.post(f"/api/users/{user_id}/disable").status_code == 200
    watched.assert_cut_off(world, ex_id, suggestion)
    assert world.server.post(f"/api/users/{user_id}/enable").status_code == 200

    again = Watched(world, clients, auth={"token": token})
    ex_id, suggestion = world.coaching()
    again.join(ex_id)
    assert world.server.request("DELETE", f"/api/users/{user_id}/tokens").status_code == 204
    again.assert_cut_off(world, ex_id, suggestion)


def test_a_disabled_or_removed_member_is_told_why_before_their_socket_is_disconnected(world, clients):
    workspace = world.server.get("/api/auth/me").json()["workspace_id"]
    user_id, token = world.member()
    watched = Watched(world, clients, auth={"token": token})
    assert world.server.post(f"/api/users/{user_id}/disable").status_code == 200
    assert watched.gone.wait(5), "the server did not disconnect the socket"
    told = [data for _, name, data in watched.events if name == "access_ended"]
    assert told == [{"reason": "disabled", "workspace_id": workspace}], watched.events
    assert world.server.post(f"/api/users/{user_id}/enable").status_code == 200

    again = Watched(world, clients, auth={"token": token})
    assert world.server.request("DELETE", f"/api/users/{user_id}").status_code == 204
    assert again.gone.wait(5), "the server did not disconnect the socket"
    told = [data for _, name, data in again.events if name == "access_ended"]
    assert told == [{"reason": "removed", "workspace_id": workspace}], again.events


def test_a_role_change_is_seen_by_an_open_socket(world, clients):
    user_id, token = world.member()
    watched = Watched(world, clients, auth={"token": token})
    assert watched.client.call("join_workspace", {}, timeout=30)["role"] == "operator"
    changed = world.server.request("PUT", f"/api/users/{user_id}/role", json={"role": "lead"})
    assert changed.status_code == 200, changed.text
    assert watched.client.call("join_workspace", {}, timeout=30)["role"] == "lead"
