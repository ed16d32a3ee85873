"""Edges of the API: bodies the databases cannot store, out-of-range numbers, races between two operators."""

from __future__ import annotations

import threading
import time

import pytest

from tests.conftest import authed_client

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


NOOP = [{"id": "a", "tool": "noop"}]


def _count(api) -> int:
    return api.ok("GET", "/api/workflows")["total"]


def _error(response, status: int, code: str) -> dict:
    body = response.get_json()
    assert response.status_code == status, body
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert "Traceback" not in str(body) and "psycopg" not in str(body) and "sqlite3" not in str(body)
    return body["error"]


NOT_PLAIN_JSON = [
    '{"name": "x", "steps": [{"id": "a", "tool": "echo", "params": {"v": NaN}}]}',
    '{"name": "x", "steps": [{"id": "a", "tool": "echo", "params": {"v": Infinity}}]}',
    b'{"name": "\xff", "steps": []}',
    '{"name": "x", "steps": [{"id": "a", "tool": "echo", "params": {"v": ' + "[" * 5000 + "]" * 5000 + "}}]}",
]


def test_json_that_is_not_plain_json_is_400_and_creates_nothing(api):
    for raw in NOT_PLAIN_JSON:
        response = api.client.post("/api/workflows", data=raw, content_type="application/json")
        _error(response, 400, "bad_request")
    assert _count(api) == 0


def test_nul_characters_in_a_body_are_400_naming_the_field(api):
    for definition, field in [
        ({"name": "a\u0000b", "steps": NOOP}, "name"),
        ({"name": "x", "steps": [{"id": "a", "tool": "echo", "params": {"v": "a\u0000"}}]}, "steps[0].params.v"),
    ]:
        error = _error(api.client.post("/api/workflows", json=definition), 400, "bad_request")
        assert field in error["details"]
    assert _count(api) == 0
    wf = api.workflow(NOOP)
    _error(
        api.client.post("/api/executions/", json={"workflow_id": wf["id"], "variables": {"x\u0000": 1}}),
        400,
        "bad_request",
    )
    assert api.ok("GET", "/api/executions/")["total"] == 0


def test_deep_nesting_is_refused_before_it_reaches_the_validator(api):
    value: list = []
    for _ in range(100):
        value = [value]
    response = api.client.post(
        "/api/workflows", json={"name": "x", "steps": [{"id": "a", "tool": "echo", "params": {"v": value}}]}
    )
    _error(response, 400, "bad_request")


def test_nul_characters_in_the_url_are_400(api):
    for method, path in [
        ("GET", "/api/workflows/a%00b"),
        ("DELETE", "/api/workflows/a%00b"),
        ("GET", "/api/executions/a%00b"),
        ("GET", "/api/executions/?workflow_id=a%00b"),
        ("POST", "/api/executions/a%00b/cancel"),
    ]:
        _error(api.client.open(path, method=method), 400, "bad_request")


def test_yaml_dates_stay_strings(api):
    body = "name: dated\nsteps:\n- id: a\n  tool: echo\n  params: {day: 2024-01-31}\n"
    response = api.client.post("/api/workflows", data=body, content_type="application/yaml")
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["steps"][0]["params"] == {"day": "2024-01-31"}
    ex = api.settle(api.start(response.get_json()["id"])["execution_id"])
    assert ex["steps"][0]["output"] == {"day": "2024-01-31"}


def test_yaml_values_json_cannot_hold_are_400(api):
    for value in ["!!binary aGVsbG8=", ".nan", "!!timestamp 2024-01-01", "{1: one}"]:
        body = f"name: odd\nsteps:\n- id: a\n  tool: echo\n  params: {{v: {value}}}\n"
        response = api.client.post("/api/workflows", data=body, content_type="application/yaml")
        error = _error(response, 400, "bad_request")
        assert any(key.startswith("steps[0].params") for key in error["details"]), (value, error)
    assert _count(api) == 0


def test_yaml_alias_bomb_is_413_not_a_hang(api):
    lines = ["name: bomb", "x0: &x0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 9)}]" for i in range(1, 9)]
    lines += ["steps:", "- {id: a, tool: echo, params: {v: *x8}}"]
    started = time.process_time()
    response = api.client.post("/api/workflows", data="\n".join(lines), content_type="application/yaml")
    _error(response, 413, "payload_too_large")
    assert time.process_time() - started < 5  # CPU seconds; expanding the bomb would take minutes and gigabytes
    assert _count(api) == 0


def test_a_page_past_any_offset_the_database_takes_is_422(api):
    for path in ["/api/workflows?page=99999999999999999999", "/api/executions/?page=99999999999999999999"]:
        error = _error(api.client.get(path), 422, "validation_failed")
        assert "page" in error["details"]


def test_out_of_range_version_is_422(api):
    wf = api.workflow(NOOP)
    for version in ["0", "-1", "99999999999999999999"]:
        error = _error(api.client.get(f"/api/workflows/{wf['id']}?version={version}"), 422, "validation_failed")
        assert "version" in error["details"]


def test_missing_version_is_404(api):
    wf = api.workflow(NOOP)
    _error(api.client.get(f"/api/workflows/{wf['id']}?version=2"), 404, "not_found")


def test_put_on_a_deleted_workflow_is_404(api):
    wf = api.workflow(NOOP)
    api.client.delete(f"/api/workflows/{wf['id']}")
    _error(api.client.put(f"/api/workflows/{wf['id']}", json={"name": "x", "steps": NOOP}), 404, "not_found")


def test_an_execution_of_a_deleted_workflow_stays_readable_and_answerable(api):
    wf = api.workflow([{"id": "ask", "type": "human_input", "question": "q"}])
    ex = api.settle(api.start(wf["id"])["execution_id"])
    api.client.delete(f"/api/workflows/{wf['id']}")
    api.ok("POST", f"/api/executions/{ex['execution_id']}/steps/ask/answer", {"answer": None})
    done = api.settle(ex["execution_id"])
    assert done["status"] == "completed" and done["steps"][0]["output"] == {"answer": None}
    _error(api.client.post("/api/executions/", json={"workflow_id": wf["id"]}), 404, "not_found")


def test_two_operators_answering_at_once_get_one_200_and_one_409(app, api):
    wf = api.workflow([{"id": "ask", "type": "human_input", "question": "q"}])
    ex = api.settle(api.start(wf["id"])["execution_id"])
    results: list = []
    barrier = threading.Barrier(2)

    def answer(value: str) -> None:
        client = authed_client(app)
        barrier.wait()
        response = client.post(f"/api/executions/{ex['execution_id']}/steps/ask/answer", json={"answer": value})
        results.append((response.status_code, value))

    threads = [threading.Thread(target=answer, args=(v,)) for v in ("first", "second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(code for code, _ in results) == [200, 409]
    winner = next(value for code, value in results if code == 200)
    assert api.settle(ex["execution_id"])["steps"][0]["output"] == {"answer": winner}


class Waits:
    """A step that runs until the test lets it return: it is running for as long as the test needs, however slow
    the machine (a `sleep 0.5` step could be over before a loaded machine's poll saw it running)."""

    name, description, risk = "test.waits", "returns when the test says so", "read"
    params_schema = {"type": "object"}

    def __init__(self):
        self.started, self.release = threading.Event(), threading.Event()

    def run(self, params, ctx):
        self.started.set()
        self.release.wait(60)
        return {"done": True}


def test_cancel_while_a_step_runs_keeps_the_cancel(api):
    tool = Waits()
    api.services.tools.register(tool)
    wf = api.workflow([{"id": "nap", "tool": "test.waits", "params": {}}, {"id": "next", "tool": "noop"}])
    ex = api.start(wf["id"])
    try:
        assert tool.started.wait(60), "the step did not start"
        assert api.ok("GET", f"/api/executions/{ex['execution_id']}")["status"] == "running"
        assert api.ok("POST", f"/api/executions/{ex['execution_id']}/cancel")["status"] == "cancelled"
    finally:
        tool.release.set()  # the step's tool returns after the cancel: its result must not undo it
    done = api.settle(ex["execution_id"])
    assert done["status"] == "cancelled"
    assert {s["step_id"]: s["status"] for s in done["steps"]} == {"nap": "cancelled", "next": "cancelled"}
