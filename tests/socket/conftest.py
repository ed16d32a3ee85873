"""Fixtures for tests against the real server process: `live_server` and `sio_client`."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import socketio

from tests.socket.test_coaching_socket import Recorder
from tests.support.live_server import LiveServer


@pytest.fixture
def live_server(tmp_path):
    """A started `python wsgi.py` on a fresh SQLite file in tmp_path, demo workflows off."""
    with LiveServer(tmp_path / "server", demo="0") as server:
        yield server


@pytest.fixture
def sio_client(live_server):
    """A factory: `sio_client()` -> a connected `socketio.Client` (default transports) to the live server.

    `sio_client(url=..., **connect_kwargs)` connects elsewhere. Every client is disconnected at teardown.
    """
    clients: list[socketio.Client] = []

    def connect(url: str | None = None, **kwargs) -> socketio.Client:
        client = socketio.Client(reconnection=False)
        clients.append(client)
        kwargs.setdefault("wait_timeout", 10)
        kwargs.setdefault("auth", {"token": live_server.token})  # connections need credentials
        client.connect(url or live_server.base_url, **kwargs)
        return client

    yield connect
    disconnect_all(clients)


def pending_coaching(server: LiveServer, workflow_id: str) -> tuple[str, dict]:
    """A new coaching execution of the workflow, once it waits for a decision: (its id, its pending suggestion)."""
    started = server.post("/api/executions/coaching", json={"workflow_id": workflow_id})
    assert started.status_code == 201, started.text
    ex_id = started.json()["execution_id"]

    def pending():
        return server.get(f"/api/executions/{ex_id}/coaching/suggestion").json()["suggestion"]

    return ex_id, server.wait_for(pending, 10, message="a pending suggestion")


def disconnect_all(clients: list[socketio.Client]) -> None:
    # In parallel: over WebSocket, python-socketio's disconnect() waits up to 3 s for the close frame
    # (websocket-client's close() races the client's own read loop for it), so one at a time would add up.
    threads = [threading.Thread(target=_disconnect, args=(client,), daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)


def _disconnect(client: socketio.Client) -> None:
    try:
        client.disconnect()
    except Exception:
        pass


@pytest.fixture
def coach_client(sio_client) -> Callable[[], Recorder]:
    """A factory: a connected client (disconnected by `sio_client` at teardown) wrapped in a Recorder."""
    return lambda: Recorder(sio_client())
