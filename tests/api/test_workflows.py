"""/api/workflows through the Flask test client: create (JSON and YAML), read, list, version, delete, errors."""

from __future__ import annotations

import copy

import pytest
import yaml

from tests.conftest import authed_client
from tests.core.test_workflow_validation import SHAPES_EXAMPLE

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


def _count(api) -> int:
    return api.ok("GET", "/api/workflows")["total"]


def _assert_error_body(body: dict, code: str) -> None:
    assert set(body) == {"error"}
    assert set(body["error"]) - {"lines"} == {"code", "message", "details"}  # lines: where the fields are written
    assert body["error"]["code"] == code
    text = str(body)
    assert "Traceback" not in text
    assert "SELECT" not in text and "INSERT" not in text and "sqlalchemy" not in text.lower()


def _assert_created_shape(body: dict) -> None:
    assert body["id"]
    assert body["version"] == 1
    assert body["name"] == "Invoice intake"
    assert [s["id"] for s in body["steps"]] == ["greet", "check"]
    assert body["steps"][0]["params"] == {"message": "hi {{ vars.who }}"}
    assert body["variables"] == {"who": {"type": "string", "default": "world"}}
    assert body["level"] == "OBSERVATION"
    assert body["mode"] == "coaching"


def test_post_json_definition_creates_version_1(api):
    body = api.ok("POST", "/api/workflows", SHAPES_EXAMPLE, status=201)
    _assert_created_shape(body)


def test_post_yaml_definition_works_like_json(api):
    response = api.client.post("/api/workflows", data=yaml.safe_dump(SHAPES_EXAMPLE), content_type="application/yaml")
    assert response.status_code == 201, response.get_json()
    _assert_created_shape(response.get_json())


def test_get_by_id_returns_the_definition(api):
    created = api.ok("POST", "/api/workflows", SHAPES_EXAMPLE, status=201)
    got = api.ok("GET", f"/api/workflows/{created['id']}")
    _assert_created_shape(got)
    assert got["id"] == created["id"]


def test_list_is_paginated(api):
    ids = [api.workflow([{"id": "a", "tool": "noop"}], name=f"wf{i}")["id"] for i in range(3)]
    page1 = api.ok("GET", "/api/workflows?page=1&per_page=2")
    assert (page1["total"], page1["page"], page1["per_page"], len(page1["items"])) == (3, 1, 2, 2)
    page2 = api.ok("GET", "/api/workflows?page=2&per_page=2")
    assert (page2["page"], len(page2["items"])) == (2, 1)
    assert {w["id"] for w in page1["items"] + page2["items"]} == set(ids)


def test_per_page_over_200_is_422(api):
    code, body = api.call("GET", "/api/workflows?per_page=201")
    assert code == 422
    _assert_error_body(body, "validation_failed")
    assert "per_page" in body["error"]["details"]


def test_put_makes_version_2_and_version_1_stays_readable(api):
    wf = api.workflow([{"id": "old", "tool": "echo", "params": {"v": 1}}])
    updated = api.ok(
        "PUT",
        f"/api/workflows/{wf['id']}",
        {"name": "wf", "steps": [{"id": "new", "tool": "echo", "params": {"v": 2}}]},
    )
    assert updated["version"] == 2
    current = api.ok("GET", f"/api/workflows/{wf['id']}")
    assert current["version"] == 2 and [s["id"] for s in current["steps"]] == ["new"]
    old = api.ok("GET", f"/api/workflows/{wf['id']}?version=1")
    assert old["version"] == 1 and [s["id"] for s in old["steps"]] == ["old"]


def test_execution_started_before_put_keeps_version_1_and_runs_old_steps(api):
    wf = api.workflow(
        [
            {"id": "ask", "type": "human_input", "question": "go?"},
            {"id": "old", "tool": "echo", "params": {"v": 1}},
        ]
    )
    ex = api.start(wf["id"])
    assert api.settle(ex["execution_id"])["status"] == "waiting_clarification"
    api.ok(
        "PUT",
        f"/api/workflows/{wf['id']}",
        {"name": "wf", "steps": [{"id": "new", "tool": "echo", "params": {"v": 2}}]},
    )
    api.ok("POST", f"/api/executions/{ex['execution_id']}/steps/ask/answer", {"answer": "yes"})
    done = api.settle(ex["execution_id"])
    assert done["status"] == "completed"
    assert done["workflow_version"] == 1
    assert {s["step_id"]: s["output"] for s in done["steps"]}["old"] == {"v": 1}
    fresh = api.settle(api.start(wf["id"])["execution_id"])
    assert fresh["workflow_version"] == 2 and [s["step_id"] for s in fresh["steps"]] == ["new"]


def test_delete_is_204_then_get_is_404_and_list_omits_it(api):
    keep = api.workflow([{"id": "a", "tool": "noop"}], name="keep")
    gone = api.workflow([{"id": "a", "tool": "noop"}], name="gone")
    response = api.client.delete(f"/api/workflows/{gone['id']}")
    assert response.status_code == 204
    code, body = api.call("GET", f"/api/workflows/{gone['id']}")
    assert code == 404
    _assert_error_body(body, "not_found")
    listed = api.ok("GET", "/api/workflows")
    assert [w["id"] for w in listed["items"]] == [keep["id"]] and listed["total"] == 1


def test_unknown_workflow_id_is_404_for_get_put_and_delete(api):
    for method in ("GET", "PUT", "DELETE"):
        code, body = api.call(
            method,
            "/api/workflows/no-such-id",
            json={"name": "x", "steps": [{"id": "a", "tool": "noop"}]} if method == "PUT" else None,
        )
        assert code == 404, method
        _assert_error_body(body, "not_found")


def _with_steps(*steps, **top):
    return {"name": "bad", **top, "steps": list(steps)}


INVALID = {
    "unknown_step_type": (_with_steps({"id": "a", "type": "teleport"}), "steps[0].type"),
    "unknown_tool": (_with_steps({"id": "a", "type": "action", "tool": "no.such.tool"}), "steps[0].tool"),
    "duplicate_step_ids": (_with_steps({"id": "a", "tool": "noop"}, {"id": "a", "tool": "noop"}), "steps[1].id"),
    "unknown_depends_on": (_with_steps({"id": "a", "tool": "noop", "depends_on": ["ghost"]}), "steps[0].depends_on"),
    "cyclic_depends_on": (
        _with_steps({"id": "a", "tool": "noop", "depends_on": ["b"]}, {"id": "b", "tool": "noop", "depends_on": ["a"]}),
        "steps[0].depends_on",
    ),
    "params_fail_tool_schema": (
        _with_steps({"id": "a", "tool": "http.request", "params": {"url": "http://example.com", "timeout_s": "x"}}),
        "steps[0].params.timeout_s",
    ),
    "missing_name": ({"steps": [{"id": "a", "tool": "noop"}]}, "name"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_definition_is_422_naming_the_field_and_changes_nothing(api, case):
    definition, field = INVALID[case]
    api.workflow([{"id": "a", "tool": "noop"}])
    before = _count(api)
    code, body = api.call("POST", "/api/workflows", definition)
    assert code == 422, body
    _assert_error_body(body, "validation_failed")
    assert field in body["error"]["details"], body["error"]["details"]
    assert _count(api) == before


def test_failed_put_leaves_the_version_unchanged(api):
    wf = api.workflow([{"id": "a", "tool": "echo", "params": {"v": 1}}])
    for case in ("unknown_tool", "cyclic_depends_on", "missing_name"):
        definition, field = INVALID[case]
        code, body = api.call("PUT", f"/api/workflows/{wf['id']}", copy.deepcopy(definition))
        assert code == 422, case
        assert field in body["error"]["details"], case
    got = api.ok("GET", f"/api/workflows/{wf['id']}")
    assert got["version"] == 1 and got["latest_version"] == 1
    assert got["steps"] == [{"id": "a", "tool": "echo", "params": {"v": 1}}]


def test_malformed_json_is_400_bad_request(api):
    before = _count(api)
    response = api.client.post("/api/workflows", data='{"name": "x", "steps": [', content_type="application/json")
    assert response.status_code == 400
    _assert_error_body(response.get_json(), "bad_request")
    assert _count(api) == before


def test_malformed_yaml_is_400_bad_request(api):
    before = _count(api)
    response = api.client.post("/api/workflows", data="name: [unclosed\nsteps: {", content_type="application/yaml")
    assert response.status_code == 400
    _assert_error_body(response.get_json(), "bad_request")
    assert _count(api) == before


def test_body_over_the_limit_is_413(settings):
    from api.app import create_app

    app = create_app(settings.with_overrides(max_body_mb=0.01), migrate=False)
    try:
        client = authed_client(app)
        big = {"name": "big", "description": "x" * 20_000, "steps": [{"id": "a", "tool": "noop"}]}
        response = client.post("/api/workflows", json=big)
        assert response.status_code == 413
        _assert_error_body(response.get_json(), "payload_too_large")
        assert client.get("/api/workflows").get_json()["total"] == 0
    finally:
        app.extensions["coach"].close()


def test_error_bodies_never_leak_tracebacks_or_sql(api):
    for method, path, payload in [
        ("GET", "/api/workflows/x' OR 1=1 --", None),
        ("POST", "/api/workflows", {"name": 5, "steps": "nope"}),
        ("GET", "/api/workflows?page=0", None),
    ]:
        code, body = api.call(method, path, payload)
        assert code in (404, 422), (path, code, body)
        _assert_error_body(body, "not_found" if code == 404 else "validation_failed")


def test_a_422_places_each_field_on_its_line_of_the_yaml_or_json_sent(api):
    source = "name: Lines\nsteps:\n  - id: a\n    tool: echo\n    params: {message: hi}\n  - id: b\n    tool: nope\n"
    response = api.client.post("/api/workflows", data=source, content_type="application/yaml")
    body = response.get_json()
    assert response.status_code == 422 and "steps[1].tool" in body["error"]["details"], body
    assert body["error"]["lines"] == {"steps[1].tool": 7}
    wf = api.workflow([{"id": "a", "tool": "echo", "params": {"message": "hi"}}], name="Lines")
    text = '{\n  "name": "Lines",\n  "steps": [\n    {"id": "a", "timeout_s": -1, "tool": "echo"}\n  ]\n}'
    response = api.client.put(f"/api/workflows/{wf['id']}", data=text, content_type="application/json")
    body = response.get_json()
    assert response.status_code == 422 and body["error"]["lines"] == {"steps[0].timeout_s": 4}, body


def test_every_problem_of_a_definition_is_reported_at_once_in_words_on_its_line(api):
    source = (
        "name: Typos\nsteps:\n  - id: fetch\n    tool: ecoh\n    params: {message: hi}\n"
        "  - id: report\n    tool: echo\n    depends_on: [fetsh]\n    params: {message: done}\n"
    )
    response = api.client.post("/api/workflows", data=source, content_type="application/yaml")
    body = response.get_json()
    assert response.status_code == 422, body
    # the tool typo and the unknown depends_on in one answer, not one per save
    (tool,) = body["error"]["details"]["steps[0].tool"]
    assert tool.startswith("unknown tool 'ecoh': did you mean 'echo'? Known tools: ")
    assert "[" not in tool and "echo, " in tool  # names in words, not a Python list
    assert body["error"]["details"]["steps[1].depends_on"] == ["unknown step 'fetsh'; the steps are fetch and report"]
    assert body["error"]["lines"] == {"steps[0].tool": 4, "steps[1].depends_on": 8}


def test_a_yaml_syntax_error_is_said_in_words_on_its_line(api):
    source = "name: Broken\nsteps:\n  - id: a\n    tool: echo\n    params: {message: hi\n  - id: b\n"
    response = api.client.post("/api/workflows", data=source, content_type="application/yaml")
    body = response.get_json()
    assert response.status_code == 400, body
    assert body["error"]["details"] == {
        "yaml": [
            "YAML syntax error on line 6, column 7: a ',' or the closing '}' is missing "
            "(the { … } that starts on line 5)"
        ]
    }
    assert body["error"]["lines"] == {"yaml": 6}
    response = api.client.post("/api/workflows", data="name: a: b\nsteps: []\n", content_type="application/yaml")
    (message,) = response.get_json()["error"]["details"]["yaml"]
    assert message.startswith("YAML syntax error on line 1, column 8: a ':' where a value was expected")
    assert "<byte string>" not in message


def test_malformed_sources_say_their_line(api):
    response = api.client.post("/api/workflows", data="name: x\nsteps: [\n  {id: a\n", content_type="application/yaml")
    assert response.status_code == 400 and response.get_json()["error"]["lines"]["yaml"] >= 3
    response = api.client.post("/api/workflows", data='{\n"name": "x",\n}', content_type="application/json")
    assert response.status_code == 400 and response.get_json()["error"]["lines"] == {"json": 3}


def test_templates_are_the_demo_workflows_as_yaml_that_posts_as_is(api):
    items = api.ok("GET", "/api/workflows/templates")["items"]
    assert {"Invoice intake", "Refund review"} <= {t["name"] for t in items}
    template = next(t for t in items if t["name"] == "Refund review")
    response = api.client.post("/api/workflows", data=template["yaml"], content_type="application/yaml")
    assert response.status_code == 201, response.get_json()
