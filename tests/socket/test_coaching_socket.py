"""Coaching over Socket.IO against the real server process (docs/design.md#decisions, §4, §5).

Every client gets a `Recorder`: its handlers are registered before the client joins a room, it keeps
what arrived per event in thread-safe lists, and `wait` polls them with a deadline (never a fixed sleep).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

import socketio

from tests.support.live_server import LiveServer

WATCHED = (
    "coaching_suggestion",
    "execution_update",
    "coaching_stats",
    "metrics_update",
    "workflow_level_changed",
    "queue_changed",
)
SUGGESTION_FIELDS = (
    "suggestion_id",
    "execution_id",
    "step_id",
    "tool",
    "params",
    "confidence",
    "source",
    "status",
    "version",
    "created_at",
)
STAT_KEYS = ("suggestions_made", "accepted", "rejected", "corrected", "manual_executions", "skipped", "timed_out")
WAIT = 30.0


# -- helpers ---------------------------------------------------------------------------------------------
class Recorder:
    """Collects the events one client receives; `wait` finds one that matches, or fails with what came."""

    def __init__(self, client: socketio.Client, events: tuple[str, ...] = WATCHED):
        self.client = client
        self._cond = threading.Condition()
        self._seen: dict[str, list[Any]] = {name: [] for name in events}
        for name in events:
            client.on(name, self._handler(name))

    def _handler(self, name: str) -> Callable:
        def handle(data=None):
            with self._cond:
                self._seen[name].append(data)
                self._cond.notify_all()

        return handle

    def events(self, name: str) -> list[Any]:
        with self._cond:
            return list(self._seen[name])

    def count(self, name: str) -> int:
        with self._cond:
            return len(self._seen[name])

    def wait(
        self,
        name: str,
        predicate: Callable[[Any], bool] = lambda _: True,
        *,
        since: int = 0,
        timeout: float = WAIT,
        what: str = "",
    ) -> Any:
        """The first `name` event at index >= `since` for which `predicate` holds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for payload in self._seen[name][since:]:
                    if predicate(payload):
                        return payload
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no {name} event {what} within {timeout} s; got {self._seen[name][since:]!r}")
                self._cond.wait(remaining)

    def call(self, event: str, data: Any = None, timeout: float = WAIT) -> Any:
        return self.client.call(event, data, timeout=timeout)

    def join(self, execution_id: str) -> dict:
        ack = self.call("join_execution", {"execution_id": execution_id})
        assert ack["ok"] is True, ack
        return ack

    def decide(self, execution_id: str, suggestion_id: str, decision: str, **more) -> dict:
        return self.call(
            "coaching_decision",
            {"execution_id": execution_id, "suggestion_id": suggestion_id, "decision": decision, **more},
        )


def three_steps(name: str = "coached") -> dict:
    """greet (echo) -> write (file.write, reads greet's output) -> last (echo, depends on write alone)."""
    return {
        "name": name,
        "variables": {"who": {"type": "string", "default": "world"}},
        "steps": [
            {"id": "greet", "type": "action", "tool": "echo", "params": {"message": "hi {{ vars.who }}"}},
            {
                "id": "write",
                "type": "action",
                "tool": "file.write",
                "params": {"path": "out/{{ vars.who }}.txt", "content": "{{ steps.greet.output.message }}"},
            },
            {"id": "last", "type": "action", "tool": "echo", "params": {"n": 1}},
        ],
    }


def create_workflow(server: LiveServer, definition: dict | None = None) -> dict:
    response = server.post("/api/workflows", json=definition or three_steps())
    assert response.status_code == 201, response.text
    return response.json()


def start_coaching(server: LiveServer, workflow_id: str, variables: dict | None = None) -> str:
    response = server.post(
        "/api/executions/coaching", json={"workflow_id": workflow_id, "variables": variables or {"who": "bob"}}
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["mode"] == "coaching" and body["is_coaching"] is True, body
    return body["execution_id"]


def read(server: LiveServer, execution_id: str) -> dict:
    response = server.get(f"/api/executions/{execution_id}")
    assert response.status_code == 200, response.text
    return response.json()


def steps_of(server: LiveServer, execution_id: str) -> dict[str, dict]:
    return {s["step_id"]: s for s in read(server, execution_id)["steps"]}


def stats(server: LiveServer, execution_id: str) -> dict:
    response = server.get(f"/api/executions/{execution_id}/coaching/stats")
    assert response.status_code == 200, response.text
    return {k: response.json()[k] for k in STAT_KEYS}


def expected_stats(**counts: int) -> dict:
    return {k: counts.get(k, 0) for k in STAT_KEYS}


def wait_pending(
    server: LiveServer, execution_id: str, step_id: str, purpose: str | None = None, timeout: float = WAIT
) -> dict:
    """The pending suggestion (REST) once it is the one for `step_id`."""

    def ready():
        response = server.get(f"/api/executions/{execution_id}/coaching/suggestion")
        assert response.status_code == 200, response.text
        sug = response.json()["suggestion"]
        if sug and sug["step_id"] == step_id and (purpose is None or sug["purpose"] == purpose):
            return sug
        return None

    return server.wait_for(ready, timeout, message=f"a pending suggestion for step {step_id!r}")


def wait_status(server: LiveServer, execution_id: str, statuses: tuple[str, ...], timeout: float = WAIT) -> dict:
    def reached():
        body = read(server, execution_id)
        return body if body["status"] in statuses else None

    return server.wait_for(reached, timeout, message=f"execution {execution_id} in {statuses}")


def rest_decide(server: LiveServer, execution_id: str, suggestion_id: str, decision: str, **more):
    return server.post(
        f"/api/executions/{execution_id}/coaching/decision",
        json={"suggestion_id": suggestion_id, "decision": decision, **more},
    )


def assert_error(ack: dict, code: str) -> dict:
    assert ack["ok"] is False, ack
    assert ack["error"]["code"] == code, ack
    assert ack["error"]["message"], ack
    assert isinstance(ack["error"].get("details"), dict), ack
    return ack["error"]


def is_step(step_id: str, *, not_id: str | None = None) -> Callable[[dict], bool]:
    return lambda s: s["step_id"] == step_id and s["suggestion_id"] != not_id and s["status"] == "pending"


def coached_to_greet(server: LiveServer, coach_client: Callable[[], Recorder]) -> tuple[str, Recorder, dict]:
    """A coaching execution of `three_steps` and a client that joined it and got greet's suggestion:
    (execution_id, client, greet's suggestion)."""
    execution_id = start_coaching(server, create_workflow(server)["id"])
    wait_pending(server, execution_id, "greet")
    client = coach_client()
    client.join(execution_id)
    return execution_id, client, client.wait("coaching_suggestion", is_step("greet"))


# -- 1. joining --------------------------------------------------------------------------------------------
def test_a_joining_client_gets_the_pending_suggestion_at_once_and_so_does_a_later_one(live_server, coach_client):
    wf = create_workflow(live_server)
    execution_id = start_coaching(live_server, wf["id"])
    pending = wait_pending(live_server, execution_id, "greet")

    first = coach_client()
    ack = first.join(execution_id)
    assert ack["execution"]["execution_id"] == execution_id
    assert ack["execution"]["status"] == "waiting_decision", ack
    assert ack["pending"] == 1, ack

    pushed = first.wait("coaching_suggestion", what="on join")
    for field in SUGGESTION_FIELDS:
        assert field in pushed, (field, pushed)
    assert pushed["suggestion_id"] == pending["suggestion_id"]
    assert pushed["execution_id"] == execution_id
    assert pushed["step_id"] == "greet"
    assert pushed["tool"] == "echo"
    assert pushed["params"] == {"message": "hi bob"}, "params are sent resolved, not as templates"
    assert isinstance(pushed["confidence"], (int, float)) and 0.0 <= pushed["confidence"] <= 1.0, pushed
    assert pushed["source"] == "definition"
    assert pushed["status"] == "pending"
    assert isinstance(pushed["version"], int) and pushed["version"] >= 1, pushed
    assert datetime.fromisoformat(pushed["created_at"]), pushed
    assert {k: pushed[k] for k in SUGGESTION_FIELDS} == {k: pending[k] for k in SUGGESTION_FIELDS}
    joined_stats = first.wait("coaching_stats", what="on join")
    assert joined_stats["execution_id"] == execution_id
    assert {k: joined_stats[k] for k in STAT_KEYS} == expected_stats(suggestions_made=1)

    second = coach_client()
    assert second.join(execution_id)["pending"] == 1
    again = second.wait("coaching_suggestion", what="on a later join")
    assert again["suggestion_id"] == pending["suggestion_id"]
    assert {k: again[k] for k in SUGGESTION_FIELDS} == {k: pushed[k] for k in SUGGESTION_FIELDS}
    # the second join is private to the joining client: the first one got its suggestion once
    second.wait("coaching_stats", what="on a later join")
    assert first.count("coaching_suggestion") == 1, first.events("coaching_suggestion")


# -- 2. accepting over the socket ----------------------------------------------------------------------------
def test_socket_accepts_push_each_next_suggestion_to_every_client_until_completed(live_server, coach_client):
    wf = create_workflow(live_server)
    execution_id = start_coaching(live_server, wf["id"])
    wait_pending(live_server, execution_id, "greet")
    clients = [coach_client(), coach_client()]
    current = None
    for client in clients:
        client.join(execution_id)
        current = client.wait("coaching_suggestion", is_step("greet"))

    # (step, next step, suggestions counted in the ack): accepting "greet" opens "write"'s suggestion in the
    # same transaction; accepting "write" hands file.write to the runner, which opens "last" a moment later
    for number, (step_id, next_step, made_at_ack) in enumerate(
        [("greet", "write", 2), ("write", "last", 2), ("last", None, 3)], 1
    ):
        assert current["step_id"] == step_id
        marks = {id(c): {e: c.count(e) for e in WATCHED} for c in clients}
        ack = clients[number % 2].decide(execution_id, current["suggestion_id"], "accept")

        assert ack["ok"] is True, ack
        assert ack["decision"]["decision"] == "accept"
        assert ack["decision"]["suggestion_id"] == current["suggestion_id"]
        assert ack["execution"]["execution_id"] == execution_id
        assert ack["stats"] == expected_stats(suggestions_made=made_at_ack, accepted=number), ack
        # every panel's stats end up counting the next suggestion too, whoever opened it
        made = number + 1 if next_step else number
        for client in clients:
            mark = marks[id(client)]
            client.wait(
                "coaching_stats",
                lambda s, number=number, made=made: (
                    s["execution_id"] == execution_id and s["accepted"] == number and s["suggestions_made"] == made
                ),
                since=mark["coaching_stats"],
                what=f"with accepted={number}, suggestions_made={made}",
            )
            # the decided step's new state is pushed (in the one update of the decision's transaction)
            client.wait(
                "execution_update",
                lambda u, step_id=step_id: (
                    u["execution_id"] == execution_id
                    and any(s["step_id"] == step_id and s["decision"] == "accept" for s in u["steps"])
                ),
                since=mark["execution_update"],
                what=f"carrying step {step_id} accepted",
            )
            if next_step:
                nxt = client.wait(
                    "coaching_suggestion",
                    is_step(next_step, not_id=current["suggestion_id"]),
                    since=mark["coaching_suggestion"],
                    what=f"for step {next_step}",
                )
        if next_step:
            current = nxt

    for client in clients:
        done = client.wait("execution_update", lambda u: u["status"] == "completed", what="completed")
        assert done["progress"]["done"] == done["progress"]["total"] == 3, done
    body = read(live_server, execution_id)
    assert body["status"] == "completed", body
    assert [(s["step_id"], s["status"], s["decision"]) for s in body["steps"]] == [
        ("greet", "succeeded", "accept"),
        ("write", "succeeded", "accept"),
        ("last", "succeeded", "accept"),
    ]
    assert (live_server.workspace_data_dir() / "out" / "bob.txt").read_text(encoding="utf-8") == "hi bob"
    assert stats(live_server, execution_id) == expected_stats(suggestions_made=3, accepted=3)
    for client in clients:  # every suggestion was pushed to each client once: 3 in all, no repeats
        assert [s["step_id"] for s in client.events("coaching_suggestion")] == ["greet", "write", "last"]


# -- 3. REST and socket together; two operators racing -------------------------------------------------------
def test_a_rest_decision_is_seen_live_and_a_second_decision_on_it_conflicts(live_server, coach_client):
    wf = create_workflow(live_server)
    execution_id = start_coaching(live_server, wf["id"])
    greet = wait_pending(live_server, execution_id, "greet")
    client, left = coach_client(), coach_client()
    for each in (client, left):
        each.join(execution_id)
        each.wait("coaching_suggestion", is_step("greet"))
    assert left.call("leave_execution", {"execution_id": execution_id}) == {"ok": True}
    assert_error(left.call("leave_execution", {}), "validation_failed")

    response = rest_decide(live_server, execution_id, greet["suggestion_id"], "accept")
    assert response.status_code == 200, response.text
    assert response.json()["ok"] is True

    nxt = client.wait("coaching_suggestion", is_step("write", not_id=greet["suggestion_id"]), what="after REST")
    assert nxt["params"] == {"path": "out/bob.txt", "content": "hi bob"}
    client.wait("coaching_stats", lambda s: s["accepted"] == 1, what="after REST")
    assert left.count("coaching_suggestion") == 1, "a client that left the room gets no more pushes"

    error = assert_error(client.decide(execution_id, greet["suggestion_id"], "skip"), "conflict")
    assert error["message"]
    again = rest_decide(live_server, execution_id, greet["suggestion_id"], "accept")
    assert again.status_code == 409, again.text
    assert again.json()["error"]["code"] == "conflict"

    assert stats(live_server, execution_id) == expected_stats(suggestions_made=2, accepted=1)
    assert wait_pending(live_server, execution_id, "write")["suggestion_id"] == nxt["suggestion_id"]
    assert steps_of(live_server, execution_id)["greet"]["decision"] == "accept"

    # a retry with the same idempotency key gets the first answer again, over either channel
    key = uuid.uuid4().hex
    first = client.decide(execution_id, nxt["suggestion_id"], "accept", idempotency_key=key)
    assert first["ok"] is True, first
    assert client.decide(execution_id, nxt["suggestion_id"], "accept", idempotency_key=key) == first
    replayed = live_server.post(
        f"/api/executions/{execution_id}/coaching/decision",
        headers={"Idempotency-Key": key},
        json={"suggestion_id": nxt["suggestion_id"], "decision": "accept"},
    )
    assert replayed.status_code == 200, replayed.text
    assert replayed.json()["decision"]["decision_id"] == first["decision"]["decision_id"]
    last = client.wait("coaching_suggestion", is_step("last"))
    assert_error(client.decide(execution_id, last["suggestion_id"], "accept", idempotency_key=key), "conflict")
    assert stats(live_server, execution_id) == expected_stats(suggestions_made=3, accepted=2)


def test_a_colleagues_decision_is_told_with_who_and_what_before_the_next_suggestion(live_server, sio_client):
    wf = create_workflow(live_server)
    execution_id = start_coaching(live_server, wf["id"])
    greet = wait_pending(live_server, execution_id, "greet")
    watcher = sio_client()
    seen: list[tuple[str, Any]] = []
    arrived = threading.Condition()

    def record(name):
        def handle(data=None):
            with arrived:
                seen.append((name, data))
                arrived.notify_all()

        return handle

    for name in ("suggestion_decided", "coaching_suggestion"):
        watcher.on(name, record(name))
    assert watcher.call("join_execution", {"execution_id": execution_id}, timeout=5)["ok"] is True

    response = rest_decide(live_server, execution_id, greet["suggestion_id"], "accept")
    assert response.status_code == 200, response.text
    with arrived:
        assert arrived.wait_for(
            lambda: any(n == "coaching_suggestion" and d["step_id"] == "write" for n, d in seen), timeout=WAIT
        ), seen
    order = [(n, d["step_id"]) for n, d in seen]
    decided = [d for n, d in seen if n == "suggestion_decided"]
    assert decided == [
        {
            "execution_id": execution_id,
            "suggestion_id": greet["suggestion_id"],
            "step_id": "greet",
            "decision": "accept",
            "by": live_server.admin_email,
            "held_until": None,
        }
    ], seen
    assert order.index(("suggestion_decided", "greet")) < order.index(("coaching_suggestion", "write")), order


def test_two_operators_racing_on_one_suggestion_get_one_ok_and_one_conflict(live_server, coach_client):
    wf = create_workflow(live_server)
    execution_id = start_coaching(live_server, wf["id"])
    wait_pending(live_server, execution_id, "greet")
    clients = [coach_client(), coach_client()]
    for client in clients:
        client.join(execution_id)
    current = clients[0].wait("coaching_suggestion", is_step("greet"))

    for number, next_step in enumerate(["write", "last", None], 1):
        barrier = threading.Barrier(len(clients))
        acks: list[Any] = [None] * len(clients)

        def fire(index: int, barrier=barrier, acks=acks, current=current) -> None:
            barrier.wait(5)
            try:
                acks[index] = clients[index].decide(execution_id, current["suggestion_id"], "accept")
            except Exception as exc:  # a timeout shows up as a failed assertion below
                acks[index] = exc

        threads = [threading.Thread(target=fire, args=(i,)) for i in range(len(clients))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert all(isinstance(a, dict) for a in acks), acks
        assert sorted(a["ok"] for a in acks) == [False, True], acks
        assert_error(next(a for a in acks if not a["ok"]), "conflict")
        winner = next(a for a in acks if a["ok"])
        assert winner["stats"]["accepted"] == number, winner
        if next_step:
            current = clients[0].wait("coaching_suggestion", is_step(next_step, not_id=current["suggestion_id"]))

    wait_status(live_server, execution_id, ("completed",))
    assert stats(live_server, execution_id) == expected_stats(suggestions_made=3, accepted=3)
    metrics = live_server.get(f"/api/metrics/workflows/{wf['id']}")
    assert metrics.status_code == 200, metrics.text
    assert metrics.json()["decisions"] == 3 and metrics.json()["accepted"] == 3, metrics.json()


# -- 4. every decision kind over the socket ---------------------------------------------------------------
def test_socket_correct_runs_the_step_with_valid_params_and_refuses_invalid_ones(live_server, coach_client):
    execution_id, client, greet = coached_to_greet(live_server, coach_client)
    assert client.decide(execution_id, greet["suggestion_id"], "accept")["ok"] is True
    write = client.wait("coaching_suggestion", is_step("write"))

    for bad in ({"content": 5}, {"path": "", "content": "x", "extra": True}):
        error = assert_error(
            client.decide(execution_id, write["suggestion_id"], "correct", correction=bad), "validation_failed"
        )
        assert error["details"] and all(k.startswith("correction") for k in error["details"]), error
    assert_error(client.decide(execution_id, write["suggestion_id"], "correct"), "validation_failed")
    rest = rest_decide(live_server, execution_id, write["suggestion_id"], "correct", correction={"content": 5})
    assert rest.status_code == 422, rest.text
    # nothing changed: the same suggestion is still pending, nothing counted
    assert wait_pending(live_server, execution_id, "write")["suggestion_id"] == write["suggestion_id"]
    assert stats(live_server, execution_id) == expected_stats(suggestions_made=2, accepted=1)

    fixed = {"path": "out/corrected.txt", "content": "fixed by hand"}
    ack = client.decide(execution_id, write["suggestion_id"], "correct", correction=fixed, feedback="wrong file")
    assert ack["ok"] is True, ack
    assert ack["decision"]["decision"] == "correct"
    assert ack["stats"] == expected_stats(suggestions_made=2, accepted=1, corrected=1), ack
    client.wait("coaching_suggestion", is_step("last"))
    step = steps_of(live_server, execution_id)["write"]
    assert step["status"] == "succeeded" and step["decision"] == "correct", step
    assert step["params"] == fixed, step
    assert step["output"]["path"] == "out/corrected.txt", step
    assert (live_server.workspace_data_dir() / "out" / "corrected.txt").read_text(encoding="utf-8") == "fixed by hand"
    assert not (live_server.workspace_data_dir() / "out" / "bob.txt").exists()


def test_socket_reject_waits_for_a_correction_then_manual_settles_the_step(live_server, coach_client):
    execution_id, client, greet = coached_to_greet(live_server, coach_client)

    ack = client.decide(execution_id, greet["suggestion_id"], "reject", feedback="say it politely")
    assert ack["ok"] is True, ack
    assert ack["execution"]["status"] == "waiting_correction", ack
    assert ack["stats"]["rejected"] == 1, ack
    fix = client.wait(
        "coaching_suggestion", is_step("greet", not_id=greet["suggestion_id"]), what="asking for a correction"
    )
    assert fix["purpose"] == "correction", fix
    assert fix["params"] == greet["params"], fix
    client.wait("execution_update", lambda u: u["status"] == "waiting_correction")
    assert read(live_server, execution_id)["status"] == "waiting_correction"
    assert steps_of(live_server, execution_id)["greet"]["status"] not in ("succeeded", "running"), "it must not run"

    # after a rejection only correct, manual and skip settle the step
    assert_error(client.decide(execution_id, fix["suggestion_id"], "accept"), "conflict")
    ack = client.decide(execution_id, fix["suggestion_id"], "manual", manual_output={"message": "hello, kindly"})
    assert ack["ok"] is True, ack
    # greet, its correction request, and write's suggestion (opened before the answer returns)
    assert ack["stats"] == expected_stats(suggestions_made=3, rejected=1, manual_executions=1), ack

    write = client.wait("coaching_suggestion", is_step("write"))
    assert write["params"]["content"] == "hello, kindly", "the manual output is the step's output"
    greet_row = steps_of(live_server, execution_id)["greet"]
    assert greet_row["status"] == "succeeded" and greet_row["decision"] == "manual", greet_row
    assert greet_row["output"] == {"message": "hello, kindly"}, greet_row


def test_socket_skip_skips_the_steps_reading_its_output_and_goes_on(live_server, coach_client):
    execution_id, client, greet = coached_to_greet(live_server, coach_client)

    ack = client.decide(execution_id, greet["suggestion_id"], "skip")
    assert ack["ok"] is True, ack
    # the answer counts the skip; "last"'s suggestion too when the decision's transaction got that far within the
    # runner's time slice (a loaded machine leaves it to the runner's next transaction)
    assert ack["stats"]["skipped"] == 1 and ack["stats"]["suggestions_made"] in (1, 2), ack
    last = client.wait("coaching_suggestion", lambda s: s["status"] == "pending" and s["step_id"] != "greet")
    assert last["step_id"] == "last", "write reads greet's output, so it is skipped without a suggestion"
    assert stats(live_server, execution_id) == expected_stats(suggestions_made=2, skipped=1)
    rows = steps_of(live_server, execution_id)
    assert rows["greet"]["status"] == "skipped" and rows["greet"]["decision"] == "skip", rows["greet"]
    assert rows["write"]["status"] == "skipped", rows["write"]

    assert client.decide(execution_id, last["suggestion_id"], "manual")["ok"] is True  # no manual_output
    client.wait("execution_update", lambda u: u["status"] == "completed")
    assert stats(live_server, execution_id) == expected_stats(suggestions_made=2, skipped=1, manual_executions=1)


def test_malformed_socket_decisions_are_refused_with_the_rest_error_codes(live_server, coach_client):
    wf = create_workflow(live_server)
    execution_id = start_coaching(live_server, wf["id"])
    greet = wait_pending(live_server, execution_id, "greet")
    client = coach_client()
    sid = greet["suggestion_id"]

    error = assert_error(
        client.call("coaching_decision", {"suggestion_id": sid, "decision": "accept"}), "validation_failed"
    )
    assert "execution_id" in error["details"], error
    assert_error(client.call("coaching_decision", None), "validation_failed")
    assert_error(
        client.call("coaching_decision", {"execution_id": execution_id, "decision": "accept"}), "validation_failed"
    )
    assert_error(client.decide(execution_id, sid, "maybe"), "validation_failed")
    assert_error(client.decide(uuid.uuid4().hex, sid, "accept"), "not_found")
    assert_error(client.decide(execution_id, uuid.uuid4().hex, "accept"), "not_found")
    # the REST body check's refusals too: an integer past 64 bits (a 400 there)
    error = assert_error(client.decide(execution_id, sid, "manual", manual_output={"n": 2**64}), "bad_request")
    assert "out of range" in error["details"]["(body).manual_output.n"][0], error

    # none of that counted, and the socket still works: a valid decision goes through on it
    assert stats(live_server, execution_id) == expected_stats(suggestions_made=1)
    assert client.decide(execution_id, sid, "accept")["ok"] is True


# -- 5. the workspace room ------------------------------------------------------------------------------------
def test_workspace_room_gets_metrics_updates_and_the_level_change(live_server, coach_client):
    wf = create_workflow(live_server)
    response = live_server.request("PUT", f"/api/workflows/{wf['id']}/thresholds", json={"coaching_after": 2})
    assert response.status_code == 200, response.text
    execution_id = start_coaching(live_server, wf["id"])
    greet = wait_pending(live_server, execution_id, "greet")
    dashboard = coach_client()
    ack = dashboard.call("join_workspace", {})
    assert ack["ok"] is True, ack

    assert rest_decide(live_server, execution_id, greet["suggestion_id"], "accept").status_code == 200
    first = dashboard.wait("metrics_update", lambda m: m["workflow_id"] == wf["id"], what="after decision 1")
    assert first["decisions"] == 1 and first["accepted"] == 1, first
    assert first["level"] == "OBSERVATION", first
    # the workspace room also sees the coaching queue move: told in a small queue_changed, not sent the suggestion
    dashboard.wait(
        "queue_changed",
        lambda c: execution_id in [e["execution_id"] for e in c["executions"]] and "coaching_suggestion" in c["events"],
        what="in the workspace room",
    )
    write = wait_pending(live_server, execution_id, "write")

    assert rest_decide(live_server, execution_id, write["suggestion_id"], "accept").status_code == 200
    second = dashboard.wait("metrics_update", lambda m: m["decisions"] == 2, what="after decision 2")
    assert second["workflow_id"] == wf["id"] and second["level"] == "COACHING", second
    changed = dashboard.wait("workflow_level_changed", what="after decision 2")
    assert changed["workflow_id"] == wf["id"], changed
    assert (changed["previous_level"], changed["level"]) == ("OBSERVATION", "COACHING"), changed
    assert changed["auto_ready"] is False, changed
    # events are pushed in order: had decision 1 changed the level, that event would be here already
    assert len(dashboard.events("workflow_level_changed")) == 1, dashboard.events("workflow_level_changed")
    assert live_server.get(f"/api/metrics/workflows/{wf['id']}").json()["level"] == "COACHING"
    assert (dashboard.count("coaching_suggestion"), dashboard.count("execution_update")) == (0, 0)


def test_a_leads_promotion_and_demotion_reach_the_dashboards_with_the_mode(live_server, coach_client):
    wf = create_workflow(live_server)
    dashboard = coach_client()
    assert dashboard.call("join_workspace", {})["ok"] is True
    for mode, before in (("auto", "coaching"), ("coaching", "auto")):
        response = live_server.request(
            "POST", f"/api/workflows/{wf['id']}/mode", json={"mode": mode, "force": True, "reason": "tests"}
        )
        assert response.status_code == 200 and response.json()["mode"] == mode, response.text
        changed = dashboard.wait("workflow_level_changed", lambda e, mode=mode: e["mode"] == mode, what=mode)
        assert changed["workflow_id"] == wf["id"] and changed["previous_mode"] == before, changed
        assert (changed["level"], changed["previous_level"], changed["auto_ready"]) == ("OBSERVATION",) * 2 + (False,)
    # asking for the mode it already has changes nothing, and says nothing
    assert live_server.request("POST", f"/api/workflows/{wf['id']}/mode", json={"mode": "coaching"}).status_code == 200
    time.sleep(0.3)
    assert len(dashboard.events("workflow_level_changed")) == 2, dashboard.events("workflow_level_changed")


def test_a_step_pinned_and_unpinned_reaches_the_dashboards_with_its_step(live_server, coach_client):
    wf = create_workflow(live_server)
    step_id = wf["steps"][0]["id"]
    dashboard = coach_client()
    assert dashboard.call("join_workspace", {})["ok"] is True
    for mode, before in (("always_review", "coaching"), ("coaching", "always_review")):
        response = live_server.request("POST", f"/api/workflows/{wf['id']}/steps/{step_id}/mode", json={"mode": mode})
        assert response.status_code == 200, response.text
        changed = dashboard.wait("workflow_level_changed", lambda e, mode=mode: e.get("mode") == mode, what=mode)
        assert (changed["workflow_id"], changed["step_id"], changed["previous_mode"]) == (wf["id"], step_id, before)
        assert changed["workflow_mode"] == "coaching", changed


# -- 7. pause and resume -----------------------------------------------------------------------------------
def test_pause_blocks_socket_decisions_and_resume_pushes_the_suggestion_again(live_server, coach_client):
    execution_id, client, greet = coached_to_greet(live_server, coach_client)

    paused = live_server.post(f"/api/executions/{execution_id}/coaching/pause")
    assert paused.status_code == 200, paused.text
    assert paused.json()["paused"] is True
    client.wait("execution_update", lambda u: u["status"] == "paused", what="after pause")

    error = assert_error(client.decide(execution_id, greet["suggestion_id"], "accept"), "conflict")
    assert error["details"].get("status") == "paused", error
    assert stats(live_server, execution_id) == expected_stats(suggestions_made=1)
    assert read(live_server, execution_id)["status"] == "paused"

    mark, updates = client.count("coaching_suggestion"), client.count("execution_update")
    resumed = live_server.post(f"/api/executions/{execution_id}/coaching/resume")
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["paused"] is False
    again = client.wait("coaching_suggestion", since=mark, what="after resume")
    assert again["suggestion_id"] == greet["suggestion_id"] and again["status"] == "pending", again
    # the re-pushed suggestion is as complete as the first one: a panel can show the step and edit the params
    assert again["step_name"] == greet["step_name"] and again["params_schema"] == greet["params_schema"], again
    assert again["params_schema"] is not None
    client.wait("execution_update", lambda u: u["status"] == "waiting_decision", since=updates, what="after resume")

    assert client.decide(execution_id, greet["suggestion_id"], "accept")["ok"] is True
    client.wait("coaching_suggestion", is_step("write"))
