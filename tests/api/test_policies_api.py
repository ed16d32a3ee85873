"""Policies through /api/policies: every route, who may call it, every bad input as a 422 naming the field,
the dry run's explanation, audit rows, and the revision that keeps every process's compiled rules fresh."""

from __future__ import annotations

import pytest

from core.policy import Call
from services.policies import service as policies
from tests.conftest import authed_client, make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

SQL_REVIEW = {
    "name": "SQL writes need review",
    "order": 10,
    "effect": "require_review",
    "reason": "writes to the warehouse are checked by a person",
    "scope": {"workflow_id": None, "user": None},
    "match": {
        "tool": "sql.*",
        "step_type": "action",
        "risk": ["write", "destructive"],
        "workflow_id": None,
        "user": None,
        "agent_step": None,
        "sql": "not_read",
    },
}


def _error(body) -> dict:
    return body["error"]


def _audit(api, action: str) -> list[dict]:
    return api.ok("GET", f"/api/audit?action={action}")["items"]


def test_create_read_list_replace_and_delete_a_policy_each_audited(api):
    created = api.ok("POST", "/api/policies", SQL_REVIEW, status=201)
    assert created["id"] and created["revision"] == 1
    assert (created["name"], created["effect"], created["order"]) == ("SQL writes need review", "require_review", 10)
    assert created["match"] == {
        "tool": "sql.*",
        "step_type": "action",
        "risk": ["write", "destructive"],
        "sql": "not_read",
    }
    assert api.ok("GET", f"/api/policies/{created['id']}") == created
    listing = api.ok("GET", "/api/policies")
    assert [p["id"] for p in listing["items"]] == [created["id"]] and listing["revision"] == 1

    changed = api.ok("PUT", f"/api/policies/{created['id']}", {**SQL_REVIEW, "effect": "deny", "order": 3})
    assert (changed["effect"], changed["order"], changed["revision"]) == ("deny", 3, 2)
    assert api.call("DELETE", f"/api/policies/{created['id']}")[0] == 204
    assert api.call("GET", f"/api/policies/{created['id']}")[0] == 404
    assert api.ok("GET", "/api/policies") == {"items": [], "revision": 3}

    (made,), (updated,), (deleted,) = (_audit(api, a) for a in ("policy_create", "policy_update", "policy_delete"))
    assert made["target_id"] == updated["target_id"] == deleted["target_id"] == created["id"]
    assert made["after"]["effect"] == "require_review"
    assert (updated["before"]["effect"], updated["after"]["effect"]) == ("require_review", "deny")
    assert deleted["before"]["name"] == "SQL writes need review"
    assert api.ok("GET", "/api/audit/verify")["ok"] is True


def test_evaluate_explains_the_winner_and_the_rules_that_lost(api, services):
    wf = api.workflow([{"id": "q", "tool": "echo", "params": {}}])["id"]
    workspace_rule = api.ok("POST", "/api/policies", SQL_REVIEW, status=201)
    workflow_rule = api.ok(
        "POST",
        "/api/policies",
        {
            "name": "this workflow may write",
            "order": 50,
            "effect": "allow",
            "reason": "its writes are reviewed",
            "scope": {"workflow_id": wf},
            "match": {"tool": "sql.query"},
        },
        status=201,
    )
    denied = api.ok(
        "POST",
        "/api/policies",
        {
            "name": "no drops",
            "order": 1,
            "effect": "deny",
            "reason": "never",
            "match": {"tool": "sql.*", "params": "'drop' in params.query | lower"},
        },
        status=201,
    )

    verdict = api.ok(
        "POST",
        "/api/policies/evaluate",
        {
            "tool": "sql.query",
            "params": {"query": "DELETE FROM t"},
            "step_type": "action",
            "workflow_id": wf,
            "user": "a@x",
        },
    )
    assert verdict["effect"] == "allow" and verdict["default"] is False
    assert verdict["rule"] == {
        "id": workflow_rule["id"],
        "name": "this workflow may write",
        "scope": "workflow",
        "order": 50,
        "reason": "its writes are reviewed",
    }
    assert [(m["id"], m["effect"], m["scope"], m["lost_because"]) for m in verdict["matched"]] == [
        (workspace_rule["id"], "require_review", "workspace", "less specific scope")
    ]

    verdict = api.ok("POST", "/api/policies/evaluate", {"tool": "sql.query", "params": {"query": "DROP TABLE t"}})
    assert (verdict["effect"], verdict["rule"]["id"]) == ("deny", denied["id"])
    assert [(m["id"], m["lost_because"]) for m in verdict["matched"]] == [(workspace_rule["id"], "later order")]

    # nothing matches: the workspace default, by the tool's risk
    verdict = api.ok("POST", "/api/policies/evaluate", {"tool": "echo", "params": {"message": "hi"}})
    assert (verdict["effect"], verdict["default"], verdict["risk"], verdict["matched"]) == ("allow", True, "read", [])
    assert verdict["rule"]["id"] is None and "default" in verdict["rule"]["reason"]


def test_a_failing_predicate_is_a_fail_closed_require_review_in_the_explanation(api):
    rule = api.ok(
        "POST",
        "/api/policies",
        {
            "name": "big amounts",
            "effect": "allow",
            "order": 1,
            "match": {"tool": "echo", "params": "params.amount > 10"},
        },
        status=201,
    )
    verdict = api.ok("POST", "/api/policies/evaluate", {"tool": "echo", "params": {"message": "no amount"}})
    assert (verdict["effect"], verdict["default"], verdict["rule"]["id"]) == ("require_review", False, rule["id"])
    assert "amount" in verdict["rule"]["error"]
    assert api.ok("POST", "/api/policies/evaluate", {"tool": "echo", "params": {"amount": 11}})["effect"] == "allow"


def test_the_workspace_default_is_read_changed_audited_and_applied(api):
    assert api.ok("GET", "/api/policies/default") == {
        "read": "allow",
        "write": "allow",
        "external": "allow",
        "destructive": "require_review",
    }
    body = api.ok("PUT", "/api/policies/default", {"write": "require_review", "destructive": "deny"})
    assert body == {"read": "allow", "write": "require_review", "external": "allow", "destructive": "deny"}
    assert api.ok("GET", "/api/policies/default") == body
    (event,) = _audit(api, "policy_default_change")
    assert (event["before"]["destructive"], event["after"]["destructive"]) == ("require_review", "deny")
    verdict = api.ok("POST", "/api/policies/evaluate", {"tool": "file.write", "params": {"path": "x", "content": ""}})
    assert (verdict["effect"], verdict["default"], verdict["risk"]) == ("require_review", True, "write")
    # a tool the registry does not know is taken as destructive
    verdict = api.ok("POST", "/api/policies/evaluate", {"tool": "nowhere.tool"})
    assert (verdict["effect"], verdict["risk"]) == ("deny", None)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"effect": "maybe"}, "effect"),
        ({"order": "ten"}, "order"),
        ({"order": 1.5}, "order"),
        ({"name": ""}, "name"),
        ({"match": {"tool": "sql.[query"}}, "match.tool"),
        ({"match": {"tool": "sql query"}}, "match.tool"),
        ({"match": {"params": "params.amount >"}}, "match.params"),
        ({"match": {"params": "parms.amount > 1"}}, "match.params"),
        ({"match": {"risk": ["write", "scary"]}}, "match.risk"),
        ({"match": {"step_type": "dance"}}, "match.step_type"),
        ({"match": {"colour": "red"}}, "match.colour"),
        ({"match": {"sql": "is_write"}}, "match.sql"),
        ({"match": {"host_not_in": ["not a host!"]}}, "match.host_not_in"),
        ({"match": {"path_outside": "/etc"}}, "match.path_outside"),
        ({"scope": {"team": "x"}}, "scope.team"),
        ({"scope": {"workflow_id": "no-such-workflow"}}, "scope.workflow_id"),
        ({"effect": "confirm", "fallback": "allow"}, "fallback"),  # asking is skipped only by learning, never to allow
        ({"effect": "confirm", "fallback": "maybe"}, "fallback"),
        ({"effect": "confirm", "fallback": 3}, "fallback"),
        ({"effect": "deny", "fallback": "require_review"}, "fallback"),  # only a confirm rule has one
    ],
)
def test_a_bad_rule_is_a_422_naming_the_field_and_changes_nothing(api, change, field):
    code, body = api.call("POST", "/api/policies", {**SQL_REVIEW, **change})
    assert code == 422, body
    assert field in _error(body)["details"], body
    assert api.ok("GET", "/api/policies") == {"items": [], "revision": 0}
    assert _audit(api, "policy_create") == []


def test_a_confirm_rule_keeps_its_fallback_and_a_workflows_call_gets_it(api):
    body = {
        "name": "ask the user before refunds",
        "effect": "confirm",
        "reason": "money",
        "match": {"tool": "sql.*"},
    }
    made = api.ok("POST", "/api/policies", body, status=201)
    assert (made["effect"], made["fallback"]) == ("confirm", "require_review")  # the default fallback
    again = api.ok("PUT", f"/api/policies/{made['id']}", {**body, "fallback": "deny"})
    assert again["fallback"] == "deny" and api.ok("GET", f"/api/policies/{made['id']}")["fallback"] == "deny"
    (event,) = _audit(api, "policy_update")
    assert (event["before"]["fallback"], event["after"]["fallback"]) == ("require_review", "deny")
    # an agent's call is asked about (confirm, with its fallback); a workflow's call has nobody to ask: the fallback
    asked = api.ok("POST", "/api/policies/evaluate", {"tool": "sql.query", "params": {"query": "x"}, "agent": "bot"})
    assert (asked["effect"], asked["fallback"], asked["rule"]["fallback"]) == ("confirm", "deny", "deny")
    workflow = api.ok("POST", "/api/policies/evaluate", {"tool": "sql.query", "params": {"query": "x"}})
    assert workflow["effect"] == "deny" and "fallback applies" in workflow["rule"]["note"]
    # switching the effect away drops the fallback
    plain = api.ok("PUT", f"/api/policies/{made['id']}", {**body, "effect": "allow"})
    assert "fallback" not in plain or plain["fallback"] is None
    api.ok("DELETE", f"/api/policies/{made['id']}", status=204)


def test_a_bad_default_or_dry_run_is_a_422_naming_the_field(api):
    code, body = api.call("PUT", "/api/policies/default", {"destructive": "later"})
    assert code == 422 and "destructive" in _error(body)["details"]
    code, body = api.call("PUT", "/api/policies/default", {"destructive": "confirm"})  # a rule's effect only
    assert code == 422 and "destructive" in _error(body)["details"]
    code, body = api.call("PUT", "/api/policies/default", {"dangerous": "deny"})
    assert code == 422 and "dangerous" in _error(body)["details"]
    code, body = api.call("POST", "/api/policies/evaluate", {"params": {}})
    assert code == 422 and "tool" in _error(body)["details"]
    code, body = api.call("POST", "/api/policies/evaluate", {"tool": "echo", "step_type": "dance"})
    assert code == 422 and "step_type" in _error(body)["details"]


def test_operators_read_policies_and_are_refused_every_change(app, api):
    rule = api.ok("POST", "/api/policies", SQL_REVIEW, status=201)
    operator = authed_client(app, "operator")
    assert operator.get("/api/policies").status_code == 200
    assert operator.get(f"/api/policies/{rule['id']}").status_code == 200
    assert operator.get("/api/policies/default").status_code == 200
    for method, path, body in (
        ("POST", "/api/policies", SQL_REVIEW),
        ("PUT", f"/api/policies/{rule['id']}", SQL_REVIEW),
        ("DELETE", f"/api/policies/{rule['id']}", None),
        ("PUT", "/api/policies/default", {"destructive": "allow"}),
        ("POST", "/api/policies/evaluate", {"tool": "echo"}),
    ):
        response = operator.open(path, method=method, json=body)
        assert response.status_code == 403, (method, path, response.get_json())
    lead = authed_client(app, "lead")
    assert lead.post("/api/policies/evaluate", json={"tool": "echo"}).status_code == 200
    assert lead.delete(f"/api/policies/{rule['id']}").status_code == 204


def test_another_workspaces_policy_is_a_404(app, api, services):
    rule = api.ok("POST", "/api/policies", SQL_REVIEW, status=201)
    other = app.test_client()
    other.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, 'lead@other.test', 'lead', 'other')}"
    for method, body in (("GET", None), ("PUT", SQL_REVIEW), ("DELETE", None)):
        response = other.open(f"/api/policies/{rule['id']}", method=method, json=body)
        assert (response.status_code, response.get_json()["error"]["code"]) == (404, "not_found"), method
    assert other.get("/api/policies").get_json() == {"items": [], "revision": 0}
    # the other workspace's rules never decide here
    assert (
        other.post(
            "/api/policies/evaluate", json={"tool": "sql.query", "params": {"query": "DELETE FROM t"}}
        ).get_json()["default"]
        is True
    )
    assert api.ok("GET", f"/api/policies/{rule['id']}")["id"] == rule["id"]


def test_a_change_made_elsewhere_reaches_the_compiled_rules_at_the_next_evaluation(api, services):
    """The per-process cache is keyed by the revision read in the evaluating transaction: a change committed by
    any process (here: straight through the service, as another server would) is seen at once."""
    ws = api.ok("GET", "/api/auth/me")["workspace_id"]
    call = Call(tool="sql.query", params={"query": "UPDATE t SET a = 1"}, risk="write")
    with services.db.read() as session:
        assert policies.evaluate(session, ws, call).default is True
    with services.db.transaction() as session:
        rule = policies.create(session, ws, SQL_REVIEW, "another-process@x")
        # inside the changing transaction the new rule applies already, and nothing is cached from it
        assert policies.evaluate(session, ws, call).rule.id == rule.id
    with services.db.read() as session:
        first = policies.evaluate(session, ws, call)
        again = policies.evaluate(session, ws, call)
    assert (first.effect, first.rule.id, first.revision) == ("require_review", rule.id, 1)
    assert again.rule is first.rule  # the same compiled rule: served from the cache
    with services.db.transaction() as session:
        policies.delete(session, ws, rule.id, "another-process@x")
    with services.db.read() as session:
        assert policies.evaluate(session, ws, call).default is True
