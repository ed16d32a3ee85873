"""Proposed regions and counterfactual replay through the API (docs/autonomy.md "Proposals and replay"): the counts
are those of the decisions made here through the REST API; a policy rule is replayed as if added; bad conditions and
rules are 422s naming the problem; a condition beyond the budget is refused; leads only; tenants apart."""

from __future__ import annotations

import pytest

from tests.conftest import make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEPS = [{"id": "refund", "tool": "echo", "params": {"amount": "{{ vars.amount }}", "currency": "GBP"}}]
VARIABLES = {"amount": {"type": "integer"}}
# (amount, decision): every refund up to 200 accepted but two corrected and one skipped; above it, mostly not
SCRIPT = (
    [(10 + round(190 * i / 47), "accept") for i in range(48)]
    + [(40, "correct"), (100, "correct"), (120, "skip")]
    + [
        (210 + 10 * i, d)
        for i, d in enumerate(
            [
                "reject",
                "accept",
                "correct",
                "reject",
                "manual",
                "reject",
                "accept",
                "reject",
                "reject",
                "correct",
                "reject",
                "skip",
                "reject",
                "accept",
                "reject",
                "reject",
            ]
        )
    ]
)


def _decide(api, wf_id: str, amount: int, kind: str) -> dict:
    ex_id = api.ok(
        "POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {"amount": amount}}, status=201
    )["execution_id"]
    api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug["params"]["amount"] == amount
    body = {"suggestion_id": sug["suggestion_id"], "decision": kind}
    if kind == "correct":
        body["correction"] = {**sug["params"], "currency": "EUR"}
    if kind == "manual":
        body["manual_output"] = {"done": True}
    api.ok("POST", f"/api/executions/{ex_id}/coaching/decision", body)
    api.settle(ex_id)
    return {"amount": amount, "decision": kind, "suggestion_id": sug["suggestion_id"], "execution_id": ex_id}


@pytest.fixture
def refunds(api):
    wf_id = api.workflow(STEPS, variables=VARIABLES)["id"]
    made = [_decide(api, wf_id, amount, kind) for amount, kind in SCRIPT]
    return wf_id, made[::-1]  # newest first, as a replay reads them


@pytest.fixture
def one_call(api):
    wf_id = api.workflow(STEPS, variables=VARIABLES)["id"]
    _decide(api, wf_id, 10, "accept")
    return wf_id


def _expected(made, inside) -> dict:
    names = {"accept": "accepted", "correct": "corrected", "reject": "rejected", "manual": "manual", "skip": "skipped"}
    tally = {"calls": 0, **{v: 0 for v in names.values()}}
    for m in made:
        if inside(m["amount"]):
            tally["calls"] += 1
            tally[names[m["decision"]]] += 1
    return tally


def test_a_step_replay_counts_the_decisions_made_and_links_the_bad_ones(api, refunds):
    wf_id, made = refunds
    table = api.ok("POST", f"/api/workflows/{wf_id}/steps/refund/replay", {"when": "params.amount <= 250"})
    assert table["calls"] == len(SCRIPT) and table["limit"] == 500 and table["evidence"] is False
    assert table["unattended"] == _expected(made, lambda a: a <= 250)
    assert table["asked"] == _expected(made, lambda a: a > 250)
    assert table["denied"]["calls"] == 0 and table["in_region"] == table["unattended"]["calls"]
    bad = [m for m in made if m["amount"] <= 250 and m["decision"] in ("correct", "reject")]
    assert [(link["suggestion_id"], link["execution_id"], link["decision"]) for link in table["links"]] == [
        (m["suggestion_id"], m["execution_id"], m["decision"]) for m in bad
    ]
    assert table["links"][0]["path"] == f"/executions/{bad[0]['execution_id']}"
    # the latest `limit` calls only
    table = api.ok("POST", f"/api/workflows/{wf_id}/steps/refund/replay", {"when": "true", "limit": 5})
    assert table["calls"] == 5 and table["unattended"] == _expected(made[:5], lambda a: True)


def test_the_proposals_find_the_threshold_and_carry_their_replay(api, refunds):
    wf_id, made = refunds
    found = api.ok("GET", f"/api/workflows/{wf_id}/steps/refund/proposals")
    assert found["min_decisions"] == 30
    auto = [p for p in found["items"] if p["suggested_mode"] == "auto" and p["params"] == ["amount"]]
    assert auto, found
    threshold = float(auto[0]["when"].rsplit("<=", 1)[1])
    assert 200 <= threshold < 210, auto[0]
    counted = [m for m in made if m["amount"] <= threshold and m["decision"] != "skip"]
    assert (auto[0]["decisions"], auto[0]["accepted"]) == (
        len(counted),
        sum(m["decision"] == "accept" for m in counted),
    )
    assert (
        auto[0]["explanation"] == f"echo calls with amount ≤ {int(threshold)}: {auto[0]['accepted']} of "
        f"{auto[0]['decisions']} accepted"
    )
    assert auto[0]["lower_bound"] >= 0.85 and 0 < auto[0]["coverage"] < 1
    assert auto[0]["replay"]["unattended"] == _expected(made, lambda a: a <= threshold)


def test_a_policy_requiring_review_wins_over_the_region_in_the_replay(api, refunds):
    wf_id, made = refunds
    api.ok(
        "POST",
        "/api/policies",
        {"name": "big refunds", "effect": "require_review", "match": {"tool": "echo", "params": "params.amount > 220"}},
        status=201,
    )
    table = api.ok("POST", f"/api/workflows/{wf_id}/steps/refund/replay", {"when": "params.amount <= 250"})
    assert table["unattended"] == _expected(made, lambda a: a <= 220)
    assert table["asked"]["calls"] == len(SCRIPT) - table["unattended"]["calls"]


def test_a_policy_rule_being_written_is_replayed_as_if_added(api, refunds):
    wf_id, made = refunds
    rule = {
        "name": "no big refunds",
        "effect": "deny",
        "reason": "too big",
        "match": {"tool": "echo", "params": "params.amount > 300"},
    }
    table = api.ok("POST", "/api/policies/replay", {"rule": rule, "workflow_id": wf_id, "step_id": "refund"})
    assert table["denied"] == _expected(made, lambda a: a > 300)
    assert table["matched"] == table["changed"] == table["denied"]["calls"]
    assert table["effects"]["deny"] == table["denied"]["calls"] and table["unattended"]["calls"] == 0  # coaching
    # the whole workflow's calls, and the workspace's, are the same here
    assert api.ok("POST", "/api/policies/replay", {"rule": rule, "workflow_id": wf_id})["denied"] == table["denied"]
    assert api.ok("POST", "/api/policies/replay", {"rule": rule})["denied"] == table["denied"]
    # nothing was saved
    assert api.ok("GET", "/api/policies")["items"] == []
    # in AUTO, what the rule leaves allowed would have run unattended
    api.ok("POST", f"/api/workflows/{wf_id}/steps/refund/mode", {"mode": "auto", "force": True, "reason": "tests"})
    review = {**rule, "effect": "require_review"}
    table = api.ok("POST", "/api/policies/replay", {"rule": review, "workflow_id": wf_id, "step_id": "refund"})
    assert table["unattended"] == _expected(made, lambda a: a <= 300)
    assert table["asked"] == _expected(made, lambda a: a > 300)


@pytest.mark.parametrize(
    "body, field, says",
    [
        ({}, "when", "Missing data"),
        ({"when": "params.amount <="}, "when", "does not compile"),
        ({"when": "secret > 3"}, "when", "unknown name(s) secret"),
        ({"when": "true", "limit": 0}, "limit", ""),
        ({"when": "true", "limit": 5000}, "limit", ""),
        ({"when": "'a' * 10**7 == 'b'"}, "when", "exceeds the evaluation budget"),
        ({"when": "range(100000)" + "|map('string')|map('length')" * 6 + "|sum > 0"}, "when", "exceeds the evaluation"),
    ],
)
def test_a_bad_or_too_costly_condition_is_a_422_naming_it(api, one_call, body, field, says):
    wf_id = one_call
    code, answer = api.call("POST", f"/api/workflows/{wf_id}/steps/refund/replay", body)
    assert code == 422, answer
    details = answer["error"]["details"]
    assert field in details and says in str(details[field]), answer


@pytest.mark.parametrize(
    "rule, field",
    [
        ({"name": "x", "effect": "maybe"}, "effect"),
        ({"name": "x", "effect": "deny", "match": {"params": "params.amount >"}}, "rule.match.params"),
        ({"name": "x", "effect": "deny", "match": {"colour": "red"}}, "rule.match.colour"),
        ({"name": "x", "effect": "deny", "match": {"params": "'a' * 10**7 == 'b'"}}, "rule.match.params"),
    ],
)
def test_a_bad_rule_is_a_422_naming_its_field(api, one_call, rule, field):
    wf_id = one_call
    code, answer = api.call("POST", "/api/policies/replay", {"rule": rule, "workflow_id": wf_id})
    assert code == 422, answer
    assert field in str(answer["error"]["details"]), answer


def test_an_unknown_step_or_tool_is_a_404(api):
    wf_id = api.workflow(STEPS, variables=VARIABLES)["id"]
    assert api.call("POST", f"/api/workflows/{wf_id}/steps/nope/replay", {"when": "true"})[0] == 404
    assert api.call("GET", f"/api/workflows/{wf_id}/steps/nope/proposals")[0] == 404
    assert api.call("POST", "/api/gateway/tools/crm.refund/replay", {"when": "true"})[0] == 404
    assert (
        api.call("POST", "/api/policies/replay", {"rule": {"name": "x", "effect": "deny"}, "tool": "crm.refund"})[0]
        == 404
    )
    # too few decisions: nothing proposed yet
    assert api.ok("GET", f"/api/workflows/{wf_id}/steps/refund/proposals")["items"] == []


def test_another_workspace_sees_none_of_it_and_operators_are_refused(api, services, one_call):
    wf_id = one_call
    client = api.client.application.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, 'lead@other.test', 'lead', 'other')}"
    for method, path, body in [
        ("POST", f"/api/workflows/{wf_id}/steps/refund/replay", {"when": "true"}),
        ("GET", f"/api/workflows/{wf_id}/steps/refund/proposals", None),
        ("POST", "/api/policies/replay", {"rule": {"name": "x", "effect": "deny"}, "workflow_id": wf_id}),
    ]:
        assert client.open(path, method=method, json=body).status_code == 404, path
    # a workspace-wide replay there sees none of this workspace's calls
    other = client.open("/api/policies/replay", method="POST", json={"rule": {"name": "x", "effect": "deny"}})
    assert other.status_code == 200 and other.get_json()["calls"] == 0
    operator = api.client.application.test_client()
    operator.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, 'op@test.local', 'operator')}"
    for method, path in [
        ("POST", f"/api/workflows/{wf_id}/steps/refund/replay"),
        ("GET", f"/api/workflows/{wf_id}/steps/refund/proposals"),
        ("POST", "/api/policies/replay"),
        ("POST", "/api/gateway/tools/crm.refund/replay"),
    ]:
        assert operator.open(path, method=method, json={"when": "true"}).status_code == 403, path


# -- a gateway tool's reviewed calls ---------------------------------------------------------------------------------


@pytest.fixture
def reviewed_writes(api, services):
    """An agent's `coach.file.write` calls held for review (the workspace default asks for writes here) and
    decided through the REST API: under summaries/ approved (one edited), elsewhere mostly rejected."""
    from services.gateway import calls
    from services.gateway.identities import Agent

    api.ok("PUT", "/api/workspace/gateway", {"builtin_tools": ["file.write"]})
    api.ok("PUT", "/api/policies/default", {"write": "require_review"})
    made = api.ok("POST", "/api/agents", {"name": "writer"}, status=201)
    agent = Agent(made["id"], "writer", services.default_workspace_id())
    script = [
        ("summaries/a.txt", "approve"),
        ("summaries/b.txt", "edit"),
        ("etc/passwd", "reject"),
        ("summaries/c.txt", "approve"),
        ("etc/hosts", "reject"),
        ("tmp/x", "approve"),
    ]
    done = []
    for path, kind in script:
        held = calls.begin(services, agent, "coach.file.write", {"path": path, "content": "x"}, None)
        assert held.approval_id is not None, held
        body = {"decision": kind, **({"params": {"path": path, "content": "y"}} if kind == "edit" else {})}
        api.ok("POST", f"/api/approvals/{held.approval_id}", body)
        done.append({"path": path, "decision": kind, "approval_id": held.approval_id, "call_id": held.held})
    yield done[::-1]
    api.ok("PUT", "/api/workspace/gateway", {"builtin_tools": []})


def test_a_gateway_tool_replay_counts_its_reviews_and_links_the_bad_ones(api, reviewed_writes):
    table = api.ok("POST", "/api/gateway/tools/coach.file.write/replay", {"when": "not params.path.startswith('tmp/')"})
    assert table["calls"] == 6
    assert table["unattended"] == {"calls": 5, "accepted": 2, "corrected": 1, "rejected": 2, "manual": 0, "skipped": 0}
    assert table["asked"]["calls"] == 1 and table["asked"]["accepted"] == 1
    bad = [(w["approval_id"], w["call_id"]) for w in reviewed_writes if w["decision"] in ("edit", "reject")]
    assert [(link["approval_id"], link["call_id"]) for link in table["links"]] == bad
    # one identity's calls only; another identity has none
    assert (
        api.ok("POST", "/api/gateway/tools/coach.file.write/replay", {"when": "true", "identity": "writer"})["calls"]
        == 6
    )
    assert (
        api.ok("POST", "/api/gateway/tools/coach.file.write/replay", {"when": "true", "identity": "other"})["calls"]
        == 0
    )
    # a rule that denies writes outside summaries/, replayed over the tool's calls
    rule = {"name": "only summaries", "effect": "deny", "match": {"path_outside": "summaries/"}}
    table = api.ok("POST", "/api/policies/replay", {"rule": rule, "tool": "coach.file.write"})
    assert (table["matched"], table["denied"]["calls"], table["denied"]["rejected"]) == (3, 3, 2)
