"""Policies applied to every tool call (issue #13 item 2), in every mode, on the params the call really runs with,
judged when it is about to run: deny fails the step, require_review opens an approval (normal, auto) or shows in
the suggestion (coaching). With tests for failures known from other systems."""

from __future__ import annotations

import pytest

from tests.conftest import make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

OUTSIDE = {
    "name": "only summaries/",
    "effect": "require_review",
    "order": 10,
    "reason": "writing outside summaries/ is checked by a person",
    "match": {"tool": "file.write", "path_outside": "summaries/"},
}
NO_SECRETS = {
    "name": "no secrets",
    "effect": "deny",
    "order": 5,
    "reason": "nothing is written to secrets/",
    "match": {"tool": "file.*", "params": "params.path.startswith('secrets/')"},
}


def _write(path: str) -> list[dict]:
    return [
        {"id": "write", "tool": "file.write", "params": {"path": path, "content": "hello"}},
        {"id": "after", "tool": "echo", "params": {"done": True}},
    ]


def _rules(api, *rules):
    return [api.ok("POST", "/api/policies", r, status=201) for r in rules]


def _actions(api) -> list[str]:
    return [e["action"] for e in api.ok("GET", "/api/audit?per_page=200")["items"]]


def _approval(api, ex_id: str) -> dict:
    items = api.ok("GET", f"/api/approvals?status=pending&execution_id={ex_id}")["items"]
    assert len(items) == 1, items
    return items[0]


def test_a_denied_call_fails_its_step_with_the_rules_reason_and_never_runs(api):
    _rules(api, OUTSIDE, NO_SECRETS)
    ex = api.run(_write("secrets/key.txt"))
    assert ex["status"] == "failed", ex
    step = ex["steps"][0]
    assert (
        step["status"] == "failed" and "denied by policy 'no secrets': nothing is written to secrets/" in step["error"]
    )
    assert step["policy"]["effect"] == "deny" and step["policy"]["rule"]["name"] == "no secrets"
    # the rule that matched too but lost is in the explanation
    assert [m["name"] for m in step["policy"]["matched"]] == ["only summaries/"]
    assert not (api.data_dir() / "secrets").exists()
    assert "policy_deny" in _actions(api)


def test_an_allowed_call_runs_and_keeps_its_verdict(api):
    _rules(api, OUTSIDE, NO_SECRETS)
    ex = api.run(_write("summaries/today.txt"))
    assert ex["status"] == "completed", ex
    assert ex["steps"][0]["policy"]["effect"] == "allow" and ex["steps"][0]["policy"]["default"] is True
    assert (api.data_dir() / "summaries" / "today.txt").read_text() == "hello"


@pytest.mark.parametrize("decision, runs", [("approve", True), ("reject", False)])
def test_require_review_in_normal_mode_waits_for_an_approval_and_a_rejected_call_never_runs(api, decision, runs):
    # LangChain #37093: a rejected tool call was still executed
    _rules(api, OUTSIDE)
    ex_id = api.start(api.workflow(_write("report.txt"))["id"])["execution_id"]
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_approval"
    approval = _approval(api, ex_id)
    assert (approval["kind"], approval["tool"], approval["params"]["path"]) == ("tool_call", "file.write", "report.txt")
    assert approval["policy"]["rule"]["name"] == "only summaries/"
    assert "writing outside summaries/ is checked by a person" in approval["message"]
    api.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": decision, "comment": "checked"})
    ex = api.settle(ex_id)
    assert ex["status"] == ("completed" if runs else "failed"), ex
    assert (api.data_dir() / "report.txt").exists() is runs
    assert "policy_review" in _actions(api)


def test_an_edit_is_judged_again_and_cannot_turn_a_reviewed_call_into_a_denied_one(api):
    # LangChain #40166: an edit that changes the call skipped the policy
    _rules(api, OUTSIDE, NO_SECRETS)
    ex_id = api.start(api.workflow(_write("report.txt"))["id"])["execution_id"]
    api.settle(ex_id)
    approval = _approval(api, ex_id)
    code, body = api.call(
        "POST",
        f"/api/approvals/{approval['approval_id']}",
        {"decision": "edit", "params": {"path": "secrets/x.txt", "content": "x"}},
    )
    assert code == 422 and "params" in body["error"]["details"], body
    # an edit names params only: the tool stays the approval's
    code, body = api.call(
        "POST",
        f"/api/approvals/{approval['approval_id']}",
        {"decision": "edit", "params": {"path": "summaries/r.txt", "content": "edited"}},
    )
    assert code == 200, body
    assert api.settle(ex_id)["status"] == "completed"
    assert (api.data_dir() / "summaries" / "r.txt").read_text() == "edited"
    assert not (api.data_dir() / "secrets").exists()


def test_a_rule_changed_while_the_execution_waits_applies_when_the_call_is_about_to_run(api):
    [review] = _rules(api, OUTSIDE)
    ex_id = api.start(api.workflow(_write("report.txt"))["id"])["execution_id"]
    api.settle(ex_id)
    approval = _approval(api, ex_id)
    # while it waits, a lead makes the rule a deny: the approved call is judged again before it runs
    api.ok("PUT", f"/api/policies/{review['id']}", {**OUTSIDE, "effect": "deny"})
    api.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "approve"})
    ex = api.settle(ex_id)
    assert ex["status"] == "failed" and "denied by policy 'only summaries/'" in ex["steps"][0]["error"], ex
    assert not (api.data_dir() / "report.txt").exists()


def test_coaching_shows_the_verdict_and_refuses_to_accept_or_correct_into_a_denied_call(api):
    _rules(api, NO_SECRETS)
    wf = api.workflow(_write("secrets/a.txt"))
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf["id"]}, status=201)["execution_id"]
    api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug["policy"]["effect"] == "deny" and sug["policy"]["rule"]["name"] == "no secrets"
    code, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert code == 409 and body["error"]["code"] == "policy_denied", body
    assert "no secrets" in body["error"]["message"] and body["error"]["details"]["policy"]["effect"] == "deny"
    code, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {
            "suggestion_id": sug["suggestion_id"],
            "decision": "correct",
            "correction": {"path": "secrets/b.txt", "content": "x"},
        },
    )
    assert code == 409, body
    # nothing changed: still pending, and a correction out of the denied folder runs
    assert api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]["status"] == "pending"
    api.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {
            "suggestion_id": sug["suggestion_id"],
            "decision": "correct",
            "correction": {"path": "public/b.txt", "content": "x"},
        },
    )
    assert api.settle(ex_id)["status"] == "waiting_decision"
    assert (api.data_dir() / "public" / "b.txt").exists() and not (api.data_dir() / "secrets").exists()


def test_a_coaching_decision_is_the_review_a_rule_asks_for(api):
    _rules(api, OUTSIDE)
    wf = api.workflow(_write("report.txt")[:1])
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf["id"]}, status=201)["execution_id"]
    api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug["policy"]["effect"] == "require_review"
    api.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert api.settle(ex_id)["status"] == "completed"
    assert api.ok("GET", "/api/approvals?status=pending")["total"] == 0


def test_auto_runs_ask_for_the_reviews_a_rule_forces(make_api):
    api = make_api(spot_check_rate=0.0)
    _rules(api, OUTSIDE)
    wf = api.workflow(_write("report.txt"))
    api.ok("POST", f"/api/workflows/{wf['id']}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    ex_id = api.start(wf["id"], mode="auto")["execution_id"]
    assert api.settle(ex_id)["status"] == "waiting_approval"
    approval = _approval(api, ex_id)
    api.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "approve"})
    assert api.settle(ex_id)["status"] == "completed"


def test_the_workspace_default_asks_before_destructive_tools_and_a_lead_can_change_it(make_api):
    api = make_api(shell_allow=("echo",))
    shell = [{"id": "sh", "tool": "shell.run", "params": {"command": ["echo", "hi"]}}]
    ex_id = api.start(api.workflow(shell)["id"])["execution_id"]
    assert api.settle(ex_id)["status"] == "waiting_approval"
    assert _approval(api, ex_id)["policy"]["default"] is True
    api.ok("PUT", "/api/policies/default", {"destructive": "allow"})
    assert api.run(shell)["status"] == "completed"


def test_policy_rules_are_a_workspaces_own(api, services):
    _rules(api, NO_SECRETS)
    other = make_user(services, "admin@other.test", "admin", "other")
    headers = {"Authorization": f"Bearer {other}", "X-Coach-Workspace": "other"}
    wf = api.call("POST", "/api/workflows", {"name": "w", "steps": _write("secrets/x.txt")}, headers=headers)[1]
    ex_id = api.call("POST", "/api/executions/", {"workflow_id": wf["id"], "mode": "normal"}, headers=headers)[1][
        "execution_id"
    ]
    api.services.runner.wait_idle(10)
    ex = api.call("GET", f"/api/executions/{ex_id}", headers=headers)[1]
    assert ex["status"] == "completed" and ex["steps"][0]["policy"]["default"] is True, ex
    assert [r["name"] for r in api.ok("GET", "/api/policies")["items"]] == ["no secrets"]
    assert api.call("GET", "/api/policies", headers=headers)[1]["items"] == []


def test_forced_reviews_of_an_auto_run_are_spot_check_evidence_and_rejects_demote(make_api):
    api = make_api(spot_check_rate=0.0)
    _rules(api, OUTSIDE)
    wf = api.workflow(_write("report.txt")[:1])
    api.ok("PUT", f"/api/workflows/{wf['id']}/thresholds", {"auto_alpha": 0.2})
    api.ok("POST", f"/api/workflows/{wf['id']}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    for n in (1, 2):
        ex_id = api.start(wf["id"], mode="auto")["execution_id"]
        assert api.settle(ex_id)["status"] == "waiting_approval"
        api.ok(
            "POST",
            f"/api/approvals/{_approval(api, ex_id)['approval_id']}",
            {"decision": "reject", "comment": "wrong file"},
        )
        assert api.settle(ex_id)["status"] == "failed"
        spot = api.ok("GET", f"/api/metrics/workflows/{wf['id']}")["spot_checks"]
        assert (spot["decisions"], spot["rejected"]) == (n, n)
        # one early reject is not evidence; two in a row are, at this level
        assert api.ok("GET", f"/api/workflows/{wf['id']}")["mode"] == ("auto" if n == 1 else "coaching")
    demotion = next(e for e in api.ok("GET", "/api/audit")["items"] if e["action"] == "demotion")
    assert demotion["actor"] == "system"


def test_the_first_rules_of_a_workspace_written_at_once_are_all_kept(app, services):
    # the workspace's policy revision row is made by the first change: two first changes at once must not collide
    import threading

    from tests.conftest import authed_client

    token = make_user(services, "admin@fresh.test", "admin", "fresh")
    results = []
    barrier = threading.Barrier(4)

    def create(i: int) -> None:
        client = app.test_client()
        client.environ_base.update(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_X_COACH_WORKSPACE="fresh")
        barrier.wait()
        response = client.post("/api/policies", json={**NO_SECRETS, "name": f"rule {i}"})
        results.append(response.status_code)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert results == [201] * 4, results
    client = authed_client(app)
    client.environ_base.update(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_X_COACH_WORKSPACE="fresh")
    body = client.get("/api/policies").get_json()
    assert len(body["items"]) == 4 and body["revision"] == 4, body


def test_a_rule_added_while_a_suggestion_waits_judges_its_accept(api):
    wf = api.workflow(_write("secrets/a.txt")[:1])
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf["id"]}, status=201)["execution_id"]
    api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug["policy"]["effect"] == "allow"
    _rules(api, NO_SECRETS)  # the suggestion's verdict is of an older revision: judged again
    code, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert code == 409 and body["error"]["code"] == "policy_denied", body
    assert not (api.data_dir() / "secrets").exists()
