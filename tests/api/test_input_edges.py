"""Input that used to answer 500 or slip past the size limits (issue #11, items 7 and 11): lone surrogates,
YAML integers past Python's digit limit, huge descriptions; and a 405 names the methods allowed."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

SURROGATE = '"a\\ud800b"'  # JSON text: an escape of half a surrogate pair


def _raw(client, method: str, path: str, body: str, content_type: str = "application/json"):
    response = client.open(path, method=method, data=body.encode("ascii"), content_type=content_type)
    return response.status_code, response.get_json(silent=True)


@pytest.mark.parametrize(
    "path,body,field",
    [
        ("/api/workflows", '{"name": %s, "steps": [{"id": "a", "tool": "echo"}]}' % SURROGATE, "name"),
        (
            "/api/workflows",
            '{"name": "w", "description": %s, "steps": [{"id": "a", "tool": "echo"}]}' % SURROGATE,
            "description",
        ),
        (
            "/api/workflows",
            '{"name": "w", "steps": [{"id": "a", "tool": "echo", "params": {%s: 1}}]}' % SURROGATE,
            "steps[0].params",
        ),
        ("/api/auth/tokens", '{"name": %s}' % SURROGATE, "name"),
    ],
)
def test_a_lone_surrogate_is_a_400_naming_the_field(client, path, body, field):
    code, answer = _raw(client, "POST", path, body)
    assert code == 400, answer
    assert answer["error"]["code"] == "bad_request"
    assert any(key.startswith(field) for key in answer["error"]["details"]), answer


def test_a_lone_surrogate_at_login_is_a_400(app):
    code, answer = _raw(app.test_client(), "POST", "/api/auth/login", '{"email": %s, "password": "x"}' % SURROGATE)
    assert code == 400 and "email" in answer["error"]["details"], answer


def test_a_lone_surrogate_in_decision_feedback_is_a_400_and_decides_nothing(api):
    wf = api.workflow([{"id": "a", "tool": "echo", "params": {}}])
    started = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf["id"]}, status=201)
    api.settle(started["execution_id"])
    pending = api.ok("GET", f"/api/executions/{started['execution_id']}/coaching/suggestion")["suggestion"]
    body = '{"suggestion_id": "%s", "decision": "reject", "feedback": %s}' % (pending["suggestion_id"], SURROGATE)
    code, answer = _raw(api.client, "POST", f"/api/executions/{started['execution_id']}/coaching/decision", body)
    assert code == 400 and "feedback" in answer["error"]["details"], answer
    still = api.ok("GET", f"/api/executions/{started['execution_id']}/coaching/suggestion")["suggestion"]
    assert still["suggestion_id"] == pending["suggestion_id"] and still["status"] == "pending"


def test_a_yaml_integer_past_the_digit_limit_is_a_400(client):
    body = "name: w\nsteps:\n  - id: a\n    tool: echo\n    params:\n      n: " + "9" * 5000 + "\n"
    code, answer = _raw(client, "POST", "/api/workflows", body, "application/yaml")
    assert code == 400 and "yaml" in answer["error"]["details"], answer


def test_a_json_integer_past_the_digit_limit_is_a_400(client):
    code, answer = _raw(client, "POST", "/api/workflows", '{"name": "w", "n": %s}' % ("9" * 5000))
    assert code == 400, answer


def _workflow_count(client) -> int:
    return client.get("/api/workflows").get_json()["total"]


def _yaml_workflow(value: str) -> str:
    return "name: w\nsteps:\n  - id: a\n    tool: echo\n    params:\n      n: " + value + "\n"


@pytest.mark.parametrize(
    "value",
    [
        "!!int 0x" + "f" * 4000,  # the probe's: a 16,000-bit integer, answered 500 at save
        "0x" + "f" * 4000,  # the same, untagged
        "0x" + "f" * 16,  # short text, but 2**64 - 1
        "-0" + "7" * 22,  # YAML 1.1 octal, past -2**63
        "0b1" + "0" * 63,  # 2**63
        ":".join(["59"] * 5000),  # YAML 1.1 base 60: quadratic to convert, refused by its length first
    ],
)
def test_a_yaml_integer_past_64_bits_is_a_400_and_saves_nothing(client, value):
    before = _workflow_count(client)
    code, answer = _raw(client, "POST", "/api/workflows", _yaml_workflow(value), "application/yaml")
    assert code == 400, answer
    assert answer["error"]["code"] == "bad_request" and "out of range" in json.dumps(answer["error"]["details"])
    assert _workflow_count(client) == before


@pytest.mark.parametrize("number", [str(2**63), str(-(2**63) - 1), "1" + "0" * 4000])
def test_a_json_integer_past_64_bits_is_a_400_naming_it_and_saves_nothing(client, number):
    before = _workflow_count(client)
    body = '{"name": "w", "steps": [{"id": "a", "tool": "echo", "params": {"n": %s}}]}' % number
    code, answer = _raw(client, "POST", "/api/workflows", body)
    assert code == 400, answer
    assert "out of range" in answer["error"]["details"]["steps[0].params.n"][0], answer
    assert _workflow_count(client) == before


@pytest.mark.parametrize(
    "content_type,number",
    [
        ("application/json", 2**63 - 1),
        ("application/json", -(2**63)),
        ("application/yaml", 2**63 - 1),
        ("application/yaml", -(2**63)),
    ],
)
def test_64_bit_integers_at_the_bounds_are_kept_as_sent(client, content_type, number):
    if content_type == "application/json":
        body = '{"name": "w", "steps": [{"id": "a", "tool": "echo", "params": {"n": %d}}]}' % number
    else:
        body = _yaml_workflow(hex(number) if number > 0 else str(number))
    code, answer = _raw(client, "POST", "/api/workflows", body, content_type)
    assert code == 201, answer
    saved = client.get(f"/api/workflows/{answer['id']}").get_json()
    assert saved["steps"][0]["params"] == {"n": number}


@pytest.mark.parametrize("where", ["description", "step description", "step question", "variable description"])
def test_descriptions_and_questions_have_a_size_limit(api, where):
    big = "x" * 10_001
    definition = {
        "name": "w",
        "variables": {"v": {"type": "string"}},
        "steps": [{"id": "a", "type": "human_input", "question": "q?"}],
    }
    field = {
        "description": "description",
        "step description": "steps[0].description",
        "step question": "steps[0].question",
        "variable description": "variables.v.description",
    }[where]
    if where == "description":
        definition["description"] = big
    elif where == "variable description":
        definition["variables"]["v"]["description"] = big
    else:
        definition["steps"][0][field.split(".")[1]] = big
    code, answer = api.call("POST", "/api/workflows", definition)
    assert code == 422 and field in answer["error"]["details"], answer


def test_a_405_says_which_methods_are_allowed(client):
    response = client.open("/api/workflows", method="PATCH", json={})
    assert response.status_code == 405
    allowed = {m.strip() for m in response.headers["Allow"].split(",")}
    assert {"GET", "POST"} <= allowed
    assert response.get_json()["error"]["code"] == "method_not_allowed"
    json.dumps(response.get_json())


def test_a_get_on_a_post_only_api_route_is_a_405_not_the_web_apps_404(client):
    """The web app's catch-all route answered it (404, `Allow: GET`): the routes of /api are the API's alone."""
    response = client.get("/api/workflows/some-id/mode")
    assert response.status_code == 405 and response.mimetype == "application/json"
    assert response.get_json()["error"]["code"] == "method_not_allowed"
    assert {m.strip() for m in response.headers["Allow"].split(",")} == {"POST", "OPTIONS"}


def _path_pattern(path: str, operations: dict) -> re.Pattern:
    """The URLs a documented path stands for: each parameter by its declared pattern, else any segment."""
    patterns = {
        p["name"]: p["schema"]["pattern"].strip("^$")
        for op in operations.values()
        if isinstance(op, dict)
        for p in op.get("parameters", [])
        if p["in"] == "path" and "pattern" in p.get("schema", {})
    }
    patterns.update(
        {
            p["name"]: p["schema"]["pattern"].strip("^$")
            for p in operations.get("parameters", [])
            if p["in"] == "path" and "pattern" in p.get("schema", {})
        }
    )
    parts = re.split(r"\{([^}]+)\}", path)  # text, name, text, name, ..., text
    return re.compile(
        "".join(re.escape(part) if i % 2 == 0 else f"(?:{patterns.get(part, '[^/]+')})" for i, part in enumerate(parts))
        + "$"
    )


ANY_ID = "0" * 32  # fits every path parameter, a row id's pattern (api/base.py RowId) included


METHODS = ("get", "post", "put", "patch", "delete")


def _allow(response) -> set[str]:
    return {m.strip().upper() for m in response.headers.get("Allow", "").split(",") if m.strip()}


def _with_implicit(methods: set[str]) -> set[str]:
    """What `Allow` lists for a resource with these methods: OPTIONS always, HEAD beside GET."""
    return {m.upper() for m in methods} | {"OPTIONS"} | ({"HEAD"} if "GET" in {m.upper() for m in methods} else set())


def _documented(client) -> dict[str, set[str]]:
    document = client.get("/api/openapi.json").get_json()
    return {path: {m for m in operations if m in METHODS} for path, operations in document["paths"].items()}


def test_every_documented_api_path_answers_options_with_exactly_its_documented_methods(client):
    """ST205: `/api/executions/coaching` listed GET (of /api/executions/{execution_id}), /api/users/invitations
    DELETE, /api/workflows/templates PUT and DELETE: a fixed path has its own methods only, not its neighbour's."""
    documented = _documented(client)
    assert len(documented) > 20
    for path, methods in documented.items():
        url = re.sub(r"\{[^}]+\}", ANY_ID, path)
        response = client.open(url, method="OPTIONS")
        assert response.status_code == 200, (url, response.status_code)
        assert _allow(response) == _with_implicit(methods), (path, sorted(_allow(response)))


def test_every_documented_api_path_answers_405_with_its_documented_methods_for_the_others(client):
    checked = 0
    for path, documented in _documented(client).items():
        url = re.sub(r"\{[^}]+\}", ANY_ID, path)
        for method in sorted(set(METHODS) - documented):
            response = client.open(url, method=method.upper())
            assert response.status_code == 405, (method, url, response.status_code)
            assert response.get_json()["error"]["code"] == "method_not_allowed"
            assert _allow(response) == _with_implicit(documented), (method, url, sorted(_allow(response)))
            checked += 1
    assert checked > 50


def _sample_url(rule: str) -> str:
    """A URL of a route: a row id where the route takes one (`<id:…>`), a word for any other parameter."""
    return re.sub(r"<(?:(\w+)(?:\([^)]*\))?:)?\w+>", lambda m: ANY_ID if m.group(1) == "id" else "some-name", rule)


def test_every_route_of_the_app_answers_its_own_methods_to_options_and_in_a_405(app, client):
    """The url_map, documented or not (the web app's pages, /act/<token>, /healthz): a route overlapped by a
    parameterised one (`/api/executions/coaching` is also `/api/executions/<execution_id>`) answers its own methods,
    to OPTIONS and in a 405, and every method it lacks is a 405 (GET /api/executions/coaching was a 404 of the
    execution "coaching")."""
    routes: dict[str, set[str]] = {}
    for rule in app.url_map.iter_rules():
        routes.setdefault(rule.rule, set()).update(rule.methods)
    overlapped, router = 0, app.url_map.bind("localhost")
    for rule, methods in routes.items():
        url = _sample_url(rule)
        options = client.open(url, method="OPTIONS")
        assert options.status_code == 200 and _allow(options) == methods, (rule, sorted(_allow(options)))
        for method in sorted({m.upper() for m in METHODS} - methods):
            response = client.open(url, method=method)
            assert response.status_code == 405, (method, url, response.status_code)
            assert _allow(response) == methods, (method, url, sorted(_allow(response)))
        # the router alone (no app) falls through to another route for a method this one lacks
        overlapped += any(router.test(url, method=m) for m in {m.upper() for m in METHODS} - methods)
    assert overlapped >= 5  # /executions/coaching, /users/invitations, /workflows/templates, /correction-packs/import…


def test_a_fixed_path_beside_a_parameterised_one_refuses_the_other_routes_methods(client):
    response = client.get("/api/executions/coaching")
    assert response.status_code == 405 and response.get_json()["error"]["code"] == "method_not_allowed"
    assert response.headers["Allow"] == "OPTIONS, POST"
    assert client.open("/api/executions/coaching", method="OPTIONS").headers["Allow"] == "OPTIONS, POST"
    assert client.delete("/api/users/invitations").status_code == 405
    assert _allow(client.put("/api/workflows/templates", json={})) == {"GET", "HEAD", "OPTIONS"}
    assert _allow(client.open(f"/api/workflows/{ANY_ID}", method="OPTIONS")) == {
        "GET",
        "HEAD",
        "OPTIONS",
        "PUT",
        "DELETE",
    }


def test_an_unknown_api_path_is_the_apis_json_404_not_a_page(client):
    response = client.get("/api/no-such-thing")
    assert response.status_code == 404 and response.get_json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "path,body",
    [
        ("/api/workspace/outbound", {"allow": ["api.example.com"], "deny": ["*.evil.example"]}),
        ("/api/policies/default", {"write": "require_review", "destructive": "deny"}),
    ],
)
@pytest.mark.parametrize(
    "data,content_type,status",
    [
        (b"", None, 422),  # the probe's: an empty PUT wiped the workspace's deny list
        (b"", "application/json", 422),
        (b"  \n", "application/yaml", 422),
        (b'{"deny": []}', "text/plain", 415),  # a body webargs would not read: taken as {} before
    ],
)
def test_a_put_without_a_json_body_is_refused_and_changes_nothing(api, path, body, data, content_type, status):
    kept = api.ok("PUT", path, body)
    response = api.client.open(path, method="PUT", data=data, content_type=content_type)
    assert response.status_code == status, response.get_json()
    assert response.get_json()["error"]["code"] == {422: "validation_failed", 415: "unsupported_media_type"}[status]
    assert api.ok("GET", path) == kept


def test_a_body_the_document_marks_optional_may_be_left_out(api):
    document = api.ok("GET", "/api/openapi.json")
    assert document["paths"]["/api/executions/{execution_id}/resume"]["post"]["requestBody"]["required"] is False
    assert document["paths"]["/api/workspace/outbound"]["put"]["requestBody"]["required"] is True
    wf = api.workflow([{"id": "a", "tool": "echo", "params": {}}])
    started = api.ok("POST", "/api/executions/", {"workflow_id": wf["id"]}, status=201)
    response = api.client.post(f"/api/executions/{started['execution_id']}/resume")
    assert response.status_code != 422, response.get_json()  # not running paused: a 409, but not for the body


@pytest.mark.parametrize("value", [0, 1, "false", "yes", None])
def test_enabled_must_be_a_json_boolean_and_nothing_changes_otherwise(api, value):
    """`"enabled": 0` disabled a policy rule although the document says boolean."""
    rule = api.ok("POST", "/api/policies", {"name": "r", "effect": "deny", "match": {"tool": "echo"}}, status=201)
    code, answer = api.call(
        "PUT",
        f"/api/policies/{rule['id']}",
        {"name": "r", "effect": "deny", "match": {"tool": "echo"}, "enabled": value},
    )
    assert code == 422 and "enabled" in answer["error"]["details"], answer
    code, answer = api.call("POST", "/api/policies", {"name": "s", "effect": "deny", "enabled": value})
    assert code == 422 and "enabled" in answer["error"]["details"], answer
    assert [(r["name"], r["enabled"]) for r in api.ok("GET", "/api/policies")["items"]] == [("r", True)]


def _boolean_body_fields(document) -> list[tuple[str, str, str]]:
    """(method, path, field) for every boolean property of a request body in the published document."""
    schemas = document["components"]["schemas"]
    found = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {}) if isinstance(operation, dict) else {}
            for media in content.values():
                ref = media["schema"].get("$ref", "")
                properties = schemas[ref.rsplit("/", 1)[-1]].get("properties", {}) if ref else {}
                found += [
                    (method, path, name)
                    for name, prop in properties.items()
                    if prop.get("type") == "boolean" and not prop.get("readOnly")
                ]
    return found


def test_every_boolean_of_a_request_body_refuses_a_number(api):
    fields = _boolean_body_fields(api.ok("GET", "/api/openapi.json"))
    assert {f for _, _, f in fields} >= {"enabled", "force", "trusted"}
    for method, path, name in fields:
        url = re.sub(r"\{[^}]+\}", ANY_ID, path)
        code, answer = api.call(method.upper(), url, {name: 0})
        # the body is read before the path's id is looked up: the field is refused whatever else is wrong
        assert code == 422 and name in answer["error"]["details"], (method, path, name, answer)
