"""Fuzz every operation of /api/openapi.json with schemathesis, as an admin (bearer token), in process (WSGI).

Checks on every answer: no 5xx, a documented content type, and a body that matches the documented schema of
its status (errors included: the "default" response documents docs/api.md's {"error": {...}} body).

- `COACH_FUZZ_EXAMPLES=500 pytest tests/api/test_fuzz.py` fuzzes harder (default: 25 examples an operation).
- Generation is derandomized: what fails in CI fails the same way locally.
- SQLite only by default; `COACH_FUZZ_BACKEND=postgresql` runs the same fuzz on PostgreSQL (COACH_TEST_PG_URL).

Real rows are seeded first and generated path ids are swapped for real ones about half of the time, so the
fuzz reaches past the 404s; `test_real_rows_answer_as_documented` then walks the happy paths explicitly.
"""

from __future__ import annotations

import os
import zlib

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis (requirements-dev.txt) is not installed")

from hypothesis import HealthCheck, settings  # noqa: E402  (hypothesis comes with schemathesis)
from hypothesis import strategies as st  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
)

from tests.conftest import Api, _fresh_url, make_user  # noqa: E402

EXAMPLES = int(os.environ.get("COACH_FUZZ_EXAMPLES", "25"))
# the operations are fuzzed in SHARDS tests of their own (by their path), so that parallel workers share them:
# together ~90 s of CPU at 25 examples; each shard's timeout grows with the example count
SHARDS = 6
pytestmark = [pytest.mark.fuzz, pytest.mark.timeout(max(120, EXAMPLES * 2))]
BACKEND = os.environ.get("COACH_FUZZ_BACKEND", "sqlite")
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
STEPS = [{"id": "a", "tool": "echo", "params": {"msg": "one"}}, {"id": "b", "tool": "echo", "params": {"msg": "two"}}]


@pytest.fixture
def database_url(request, tmp_path) -> str:
    """This module only: one backend (SQLite unless COACH_FUZZ_BACKEND says otherwise), not both."""
    return _fresh_url(BACKEND, request, tmp_path)


@pytest.fixture
def seeded(client, services) -> dict:
    """Real rows for the path parameters. Rows the fuzz may destroy (a DELETE, a cancel, a role change, a token
    revocation) are spares, so that the rows the other operations hit, and the admin's own token, survive."""
    api = Api(client, services)
    wf = api.workflow(STEPS, name="fuzz seed")
    spare_wf = api.workflow(STEPS, name="fuzz spare")

    def coaching_execution() -> str:
        started = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf["id"], "variables": {}}, status=201)
        ex = api.settle(started["execution_id"])
        assert ex["status"] == "waiting_decision", ex
        return ex["execution_id"]

    # a correction on step "a" makes a correction pack; that execution then waits on "b": the spare one
    spare_ex = coaching_execution()
    first = api.ok("GET", f"/api/executions/{spare_ex}/coaching/suggestion")["suggestion"]
    api.ok(
        "POST",
        f"/api/executions/{spare_ex}/coaching/decision",
        {"suggestion_id": first["suggestion_id"], "decision": "correct", "correction": {"msg": "uno"}},
    )
    assert api.settle(spare_ex)["status"] == "waiting_decision"
    pack = api.ok("GET", f"/api/correction-packs?workflow_id={wf['id']}")["items"][0]

    ex = coaching_execution()
    pending = api.ok("GET", f"/api/executions/{ex}/coaching/suggestion")
    assert pending["suggestion"]["status"] == "pending", pending
    make_user(services, "member@test.local", "operator")  # POST /api/users only invites: a member made directly
    member = next(m for m in api.ok("GET", "/api/users")["items"] if m["email"] == "member@test.local")
    spare_token = api.ok("POST", "/api/auth/tokens", {"name": "spare"}, status=201)
    return {
        "workflow_id": wf["id"],
        "spare_workflow_id": spare_wf["id"],
        "execution_id": ex,
        "spare_execution_id": spare_ex,
        "step_id": "a",
        "suggestion_id": pending["suggestion"]["suggestion_id"],
        "pack_id": pack["id"],
        "user_id": member["id"],
        "token_id": spare_token["id"],
    }


def real_path_parameters(method: str, path: str, seeded: dict) -> dict:
    """The real id for each path parameter of an operation; the spares for the operations that destroy."""
    ids = {
        "workflow_id": seeded["workflow_id"],
        "execution_id": seeded["execution_id"],
        "step_id": seeded["step_id"],
        "pack_id": seeded["pack_id"],
        "user_id": seeded["user_id"],
        "token_id": seeded["token_id"],
    }
    if method.upper() == "DELETE":
        ids["workflow_id"] = seeded["spare_workflow_id"]
    if path.endswith("/cancel"):
        ids["execution_id"] = seeded["spare_execution_id"]
    return ids


@pytest.fixture(autouse=True)
def _node_id_shim(request):
    """schemathesis 4.32's lazy schema reads and writes `Function._nodeid`, which pytest 9.2 no longer has
    (it only uses it to put "[METHOD /path]" in report names): give it a plain attribute to use."""
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


def shard_of(path: str) -> int:
    return zlib.crc32(path.encode()) % SHARDS


@pytest.fixture
def api_schema(app, seeded):
    loaded = schemathesis.openapi.from_wsgi("/api/openapi.json", app)

    @loaded.hook("flatmap_path_parameters")
    def sometimes_real_ids(context, path_parameters):
        if not path_parameters or context.operation is None:
            return st.just(path_parameters)
        ids = real_path_parameters(context.operation.method, context.operation.path, seeded)
        real = {name: ids.get(name, value) for name, value in path_parameters.items()}
        return st.sampled_from([path_parameters, real])

    @loaded.hook("flatmap_body")
    def sometimes_the_real_suggestion(context, body):
        if (
            context.operation is None
            or not context.operation.path.endswith("/coaching/decision")
            or not isinstance(body, dict)
        ):
            return st.just(body)
        return st.sampled_from([body, {**body, "suggestion_id": seeded["suggestion_id"]}])

    return loaded


schema = schemathesis.pytest.from_fixture("api_schema")


def fuzz_test(shard: int):
    """The test of the operations whose path falls in `shard`: every operation is in exactly one of them."""

    @schema.include(func=lambda ctx: shard_of(ctx.operation.path) == shard).parametrize()
    @settings(
        max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def test(case, admin_token):
        case.call_and_validate(headers={"Authorization": f"Bearer {admin_token}"}, checks=CHECKS)

    test.__name__ = f"test_every_operation_answers_as_documented_{shard}"
    return test


for _shard in range(SHARDS):
    globals()[f"test_every_operation_answers_as_documented_{_shard}"] = fuzz_test(_shard)


def test_the_shards_cover_every_operation(app):
    """Every documented path lands in one shard, and no shard is empty (a shard without operations would pass
    without testing anything)."""
    paths = app.test_client().get("/api/openapi.json").get_json()["paths"]
    shards = {shard_of(path) for path in paths}
    assert shards == set(range(SHARDS)), sorted(shards)


def test_real_rows_answer_as_documented(app, seeded, admin_token):
    """The happy paths the fuzz rarely reaches (a valid workflow, a decision on the real suggestion...), with the
    same checks, in an order that keeps the rows alive for the calls after them."""
    loaded = schemathesis.openapi.from_wsgi("/api/openapi.json", app)
    auth = {"Authorization": f"Bearer {admin_token}"}
    wf = seeded["workflow_id"]
    calls = [
        ("GET", "/api/auth/me", None, None),
        ("GET", "/api/auth/tokens", None, None),
        ("POST", "/api/auth/tokens", None, {"name": "another"}),
        ("GET", "/api/users", None, None),
        ("POST", "/api/users", None, {"email": "new@test.local", "password": "password-123", "role": "lead"}),
        ("PUT", "/api/users/{user_id}/role", None, {"role": "lead"}),
        ("GET", "/api/workflows", {"page": 1, "per_page": 5}, None),
        ("POST", "/api/workflows", None, {"name": "explicit", "steps": STEPS}),
        ("GET", "/api/workflows/{workflow_id}", {"version": 1}, None),
        ("PUT", "/api/workflows/{workflow_id}", None, {"name": "fuzz seed", "steps": STEPS}),
        ("PUT", "/api/workflows/{workflow_id}/thresholds", None, {"coaching_after": 3, "window": 20}),
        ("POST", "/api/workflows/{workflow_id}/mode", None, {"mode": "coaching"}),
        ("GET", "/api/executions/", {"workflow_id": wf, "status": "waiting_decision"}, None),
        ("GET", "/api/executions/{execution_id}", None, None),
        ("GET", "/api/executions/{execution_id}/coaching/suggestion", None, None),
        ("GET", "/api/executions/{execution_id}/coaching/stats", None, None),
        ("POST", "/api/executions/{execution_id}/coaching/pause", None, None),
        ("POST", "/api/executions/{execution_id}/coaching/resume", None, None),
        (
            "POST",
            "/api/executions/{execution_id}/coaching/decision",
            None,
            {"suggestion_id": seeded["suggestion_id"], "decision": "accept", "feedback": "fine"},
        ),
        ("POST", "/api/executions/{execution_id}/steps/{step_id}/answer", None, {"answer": "yes"}),
        ("POST", "/api/executions/{execution_id}/cancel", None, None),
        ("POST", "/api/executions/", None, {"workflow_id": wf, "variables": {}, "mode": "normal"}),
        ("POST", "/api/executions/coaching", None, {"workflow_id": wf, "variables": {}}),
        ("GET", "/api/metrics/global", None, None),
        ("GET", "/api/metrics/workflows", None, None),
        ("GET", "/api/metrics/workflows/{workflow_id}", None, None),
        ("GET", "/api/metrics/operators", None, None),
        ("GET", "/api/metrics/workflows/{workflow_id}/reviewers", None, None),
        ("GET", "/api/metrics/workflows/{workflow_id}/reviewers", {"step_id": "a", "days": 7}, None),
        ("PUT", "/api/workspace/reviews", None, {"attentive_floor_ms": 2000}),
        ("GET", "/api/workspace/reviews", None, None),
        ("GET", "/api/correction-packs", {"workflow_id": wf}, None),
        ("GET", "/api/correction-packs/{pack_id}", None, None),
        ("PATCH", "/api/correction-packs/{pack_id}", None, {"enabled": False}),
        ("GET", "/api/correction-packs/{pack_id}/export", None, None),
        ("GET", "/api/audit", {"action": "workflow_create", "since": "2000-01-01T00:00:00Z"}, None),
        ("GET", "/api/audit", {"format": "jsonl"}, None),
        ("GET", "/api/audit/verify", None, None),
        ("DELETE", "/api/auth/tokens/{token_id}", None, None),
        ("DELETE", "/api/workflows/{workflow_id}", None, None),
        ("POST", "/api/auth/logout", None, None),
        ("POST", "/api/auth/login", None, {"email": "member@test.local", "password": "password-123"}),
    ]
    statuses = {}
    for method, path, query, body in calls:
        operation = loaded[path][method]
        ids = real_path_parameters(method, path, seeded)
        path_parameters = {
            name: ids[name]
            for name in ("workflow_id", "execution_id", "step_id", "pack_id", "user_id", "token_id")
            if "{" + name + "}" in path
        }
        kwargs = {"path_parameters": path_parameters, "query": query}
        if body is not None:
            kwargs["body"] = body
            kwargs["media_type"] = "application/json"
        case = operation.Case(**kwargs)
        response = case.call_and_validate(headers=auth, checks=CHECKS)
        statuses[f"{method} {path}"] = response.status_code
    # the explicit cases are worth something only if they reached the handlers' happy paths
    assert statuses["POST /api/workflows"] == 201, statuses
    assert statuses["POST /api/executions/{execution_id}/coaching/decision"] == 200, statuses
    assert statuses["PATCH /api/correction-packs/{pack_id}"] == 200, statuses
    assert statuses["DELETE /api/workflows/{workflow_id}"] == 204, statuses
    assert statuses["POST /api/auth/login"] == 200, statuses
    assert statuses["POST /api/executions/{execution_id}/steps/{step_id}/answer"] == 409, statuses  # no question
