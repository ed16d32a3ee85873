"""Regions through the API (docs/autonomy.md#regions): a step's region has its own evidence (counted only from the
decisions of calls that fell in it, after its condition was fixed), becomes AUTO-ready while its step does not, then
its calls run unattended (or as its spot checks) while the step's other calls are asked; a require_review rule still
wins; its spot checks demote it alone; every change is audited; bad input is a 4xx naming the problem; another
workspace sees none of it."""

from __future__ import annotations

import math

import pytest

from tests.api.test_coaching_metrics import _metrics
from tests.conftest import make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEPS = [{"id": "refund", "tool": "echo", "params": {"amount": "{{ vars.amount }}", "currency": "GBP"}}]
VARIABLES = {"amount": {"type": "integer"}}
# at level 0.2 the first condition version's share is 0.2 * 6 / pi^2 = 0.12: a handful of accepts in a row
QUICK = {"auto_alpha": 0.2, "coaching_after": 2, "auto_min_window": 3, "window": 5}
SMALL = {"name": "small refunds", "when": "params.amount <= 200"}


def _refunds(api) -> str:
    wf_id = api.workflow(STEPS, variables=VARIABLES)["id"]
    api.ok("PUT", f"/api/workflows/{wf_id}/thresholds", QUICK)
    return wf_id


def _run(api, wf_id: str, amount: int, kind: str | None) -> dict:
    """A coaching run of one refund; `kind` decides its suggestion (None: there must be none). Returns the
    suggestion (or None) and the settled execution."""
    ex_id = api.ok(
        "POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {"amount": amount}}, status=201
    )["execution_id"]
    ex = api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    if kind is None:
        assert sug is None, sug
        return {"suggestion": None, "execution": ex}
    assert sug is not None, ex
    api.ok(
        "POST", f"/api/executions/{ex_id}/coaching/decision", {"suggestion_id": sug["suggestion_id"], "decision": kind}
    )
    return {"suggestion": sug, "execution": api.settle(ex_id)}


def _audit(api, action: str) -> list[dict]:
    return api.ok("GET", f"/api/audit?action={action}")["items"]


def _region(api, wf_id: str, body=SMALL) -> dict:
    return api.ok("POST", f"/api/workflows/{wf_id}/steps/refund/regions", body, status=201)


def _ready_small_region(api) -> tuple[str, dict]:
    """A step whose small refunds are all accepted and whose big ones are rejected: its region of small refunds
    becomes AUTO-ready while the step as a whole does not."""
    wf_id = _refunds(api)
    region = _region(api, wf_id)
    for i in range(40):
        _run(api, wf_id, 20 + i, "accept")
        _run(api, wf_id, 900 + i, "reject")
        if api.ok("GET", f"/api/regions/{region['id']}")["auto_ready"]:
            break
    region = api.ok("GET", f"/api/regions/{region['id']}")
    assert region["auto_ready"] is True, region
    assert _metrics(api, wf_id)["steps"]["refund"]["auto_ready"] is False
    return wf_id, region


def test_a_region_is_created_listed_and_counts_only_its_own_calls(api):
    wf_id = _refunds(api)
    region = _region(api, wf_id)
    assert (region["name"], region["when"], region["mode"], region["order"]) == (
        "small refunds",
        "params.amount <= 200",
        "coaching",
        0,
    )
    assert region["condition_version"] == 1 and region["decisions"] == 0 and region["auto_ready"] is False
    assert region["alpha_share"] == pytest.approx(0.2 * 6 / math.pi**2) and region["scope_alpha"] == 0.2
    assert region["threshold"] == pytest.approx(1 / region["alpha_share"], rel=1e-3)
    listed = api.ok("GET", f"/api/workflows/{wf_id}/steps/refund/regions")
    assert [r["id"] for r in listed["items"]] == [region["id"]] and listed["max_regions"] == 8
    assert listed["proposals"] == [] and listed["min_decisions"] == 30

    inside = _run(api, wf_id, 40, "accept")["suggestion"]
    assert inside["region"] == {"id": region["id"], "name": "small refunds", "mode": "coaching", "current": True}
    outside = _run(api, wf_id, 4000, "reject")["suggestion"]
    assert outside["region"] is None
    _run(api, wf_id, 50, "reject")
    seen = api.ok("GET", f"/api/regions/{region['id']}")
    assert (seen["decisions"], seen["acceptance"]) == (2, 0.5)  # the two small refunds, not the big one
    assert _metrics(api, wf_id)["steps"]["refund"]["decisions"] == 3


def test_a_ready_region_is_promoted_alone_its_calls_run_unattended_and_the_rest_is_asked(make_api):
    api = make_api(spot_check_rate=0.0)
    wf_id, region = _ready_small_region(api)
    # the step is not ready: its own promotion is refused, the region's is not
    assert api.call("POST", f"/api/workflows/{wf_id}/steps/refund/mode", {"mode": "auto"})[0] == 409
    promoted = api.ok("POST", f"/api/regions/{region['id']}/mode", {"mode": "auto"})
    assert promoted["mode"] == "auto"
    ran = _run(api, wf_id, 60, None)["execution"]
    assert ran["status"] == "completed"
    step = next(s for s in api.ok("GET", f"/api/executions/{ran['execution_id']}")["steps"])
    assert step["status"] == "succeeded" and step["output"]["amount"] == 60
    assert _run(api, wf_id, 3000, "reject")["suggestion"]["region"] is None  # outside: asked
    # a require_review rule still wins over the region's mode
    rule = api.ok(
        "POST",
        "/api/policies",
        {
            "name": "big-ish refunds",
            "effect": "require_review",
            "order": 0,
            "reason": "tests",
            "match": {"tool": "echo", "params": "params.amount >= 150"},
        },
        status=201,
    )
    held = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {"amount": 180}}, status=201)[
        "execution_id"
    ]
    assert api.settle(held)["status"] != "completed"
    api.ok("DELETE", f"/api/policies/{rule['id']}", status=204)
    promo = _audit(api, "region_mode")[0]
    assert promo["target_id"] == region["id"] and promo["after"] == {
        "mode": "auto",
        "auto_ready": True,
        "forced": False,
    }
    assert _audit(api, "region_create")[0]["after"]["when"] == "params.amount <= 200"


def test_spot_checks_demote_the_region_alone(make_api):
    api = make_api(spot_check_rate=1.0)
    wf_id, region = _ready_small_region(api)
    api.ok("POST", f"/api/regions/{region['id']}/mode", {"mode": "auto"})
    for amount in range(30, 36):
        sug = _run(api, wf_id, amount, "reject")["suggestion"]
        assert sug["purpose"] in ("spot_check", "coaching")
        if api.ok("GET", f"/api/regions/{region['id']}")["mode"] == "coaching":
            break
    demoted = api.ok("GET", f"/api/regions/{region['id']}")
    assert demoted["mode"] == "coaching" and demoted["auto_ready"] is False
    assert api.ok("GET", f"/api/workflows/{wf_id}")["step_modes"] == {}  # the step was never promoted
    event = _audit(api, "region_demotion")[0]
    assert event["actor"] == "system" and "spot checks" in event["after"]["reason"]
    assert api.call("POST", f"/api/regions/{region['id']}/mode", {"mode": "auto"})[0] == 409
    # asked again
    assert _run(api, wf_id, 40, "accept")["suggestion"]["purpose"] == "coaching"


def test_a_changed_condition_restarts_the_evidence_and_a_removed_region_frees_its_calls(api):
    wf_id = _refunds(api)
    region = _region(api, wf_id)
    _run(api, wf_id, 40, "accept")
    old = _run(api, wf_id, 41, "accept")["suggestion"]
    changed = api.ok("PATCH", f"/api/regions/{region['id']}", {"when": "params.amount <= 100", "name": "tiny"})
    assert (changed["condition_version"], changed["decisions"], changed["name"]) == (2, 0, "tiny")
    assert changed["alpha_share"] == pytest.approx(region["alpha_share"] / 4)
    # same condition again: nothing restarts
    same = api.ok("PATCH", f"/api/regions/{region['id']}", {"when": "params.amount <= 100", "order": 3})
    assert (same["condition_version"], same["order"]) == (2, 3)
    suggestion = api.ok("GET", f"/api/executions/{old['execution_id']}/coaching/suggestion")
    assert suggestion["suggestion"] is None  # decided; its region is no longer the same version
    api.ok("DELETE", f"/api/regions/{region['id']}", status=204)
    assert api.call("GET", f"/api/regions/{region['id']}")[0] == 404
    assert _run(api, wf_id, 40, "accept")["suggestion"]["region"] is None
    # a new region after a removal gets the next version: a removed one's are never reused
    assert _region(api, wf_id)["condition_version"] == 3
    assert _audit(api, "region_update")[-1]["before"]["when"] == "params.amount <= 200"
    assert _audit(api, "region_delete")[0]["target_id"] == region["id"]


@pytest.mark.parametrize(
    "body, field, words",
    [
        ({"name": "x", "when": "params.amount <="}, "when", "does not compile"),
        ({"name": "x", "when": "vars.amount > 1"}, "when", "unknown name(s) vars"),
        ({"name": "x", "when": "1 > 0"}, "when", "must read the call's params"),
        ({"name": "x", "when": "params.a > 1 or " * 40 + "true"}, "when", "at most 500 characters"),
        ({"name": "x", "when": "params.a > 1", "mode": "auto"}, "mode", "Must be one of"),
        ({"name": "x", "when": "params.a > 1", "order": "first"}, "order", "integer"),
        ({"name": "x", "when": "params.a > 1", "colour": "red"}, "colour", "Unknown field"),
        ({"when": "params.a > 1"}, "name", "required"),
    ],
)
def test_a_bad_region_is_a_422_naming_the_field(api, body, field, words):
    wf_id = _refunds(api)
    code, answer = api.call("POST", f"/api/workflows/{wf_id}/steps/refund/regions", body)
    assert code == 422, answer
    details = answer["error"]["details"]
    assert any(words in m for m in details[field]), details


def test_a_scope_holds_at_most_eight_regions_and_bad_targets_are_4xx(api):
    wf_id = _refunds(api)
    for i in range(8):
        _region(api, wf_id, {"name": f"r{i}", "when": f"params.amount <= {i}"})
    code, answer = api.call("POST", f"/api/workflows/{wf_id}/steps/refund/regions", SMALL)
    assert code == 422 and "at most 8" in answer["error"]["details"]["(body)"][0]
    assert api.call("GET", f"/api/workflows/{wf_id}/steps/nope/regions")[0] == 404
    assert api.call("GET", "/api/workflows/nope/steps/refund/regions")[0] == 404
    assert api.call("PATCH", "/api/regions/nope", {"name": "x"})[0] == 404
    assert api.call("POST", "/api/regions/nope/mode", {"mode": "auto"})[0] == 404
    region = api.ok("GET", f"/api/workflows/{wf_id}/steps/refund/regions")["items"][0]
    assert api.call("POST", f"/api/regions/{region['id']}/mode", {"mode": "auto"})[0] == 409  # no evidence
    code, answer = api.call("POST", f"/api/regions/{region['id']}/mode", {"mode": "auto", "force": True})
    assert code == 422 and "reason" in answer["error"]["details"]
    forced = api.ok("POST", f"/api/regions/{region['id']}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    assert forced["mode"] == "auto"
    assert api.call("PATCH", f"/api/regions/{region['id']}", {"mode": "auto"})[0] == 422


def test_operators_are_refused_and_another_workspace_sees_none_of_it(api, client, services):
    wf_id = _refunds(api)
    region = _region(api, wf_id)
    operator = make_user(services, "op@regions.test", "operator")
    for method, path in (
        ("GET", f"/api/workflows/{wf_id}/steps/refund/regions"),
        ("POST", f"/api/workflows/{wf_id}/steps/refund/regions"),
        ("PATCH", f"/api/regions/{region['id']}"),
        ("POST", f"/api/regions/{region['id']}/mode"),
    ):
        code = client.open(
            path,
            method=method,
            json=SMALL if method != "PATCH" else {"name": "x"},
            headers={"Authorization": f"Bearer {operator}"},
        ).status_code
        assert code == 403, (method, path)
    other = make_user(services, "lead@elsewhere.test", "admin", "elsewhere")
    headers = {"Authorization": f"Bearer {other}"}
    for method, path, body in (
        ("GET", f"/api/regions/{region['id']}", None),
        ("PATCH", f"/api/regions/{region['id']}", {"name": "mine"}),
        ("DELETE", f"/api/regions/{region['id']}", None),
        ("POST", f"/api/regions/{region['id']}/mode", {"mode": "coaching"}),
        ("GET", f"/api/workflows/{wf_id}/steps/refund/regions", None),
    ):
        assert client.open(path, method=method, json=body, headers=headers).status_code == 404, (method, path)
    assert api.ok("GET", f"/api/regions/{region['id']}")["name"] == "small refunds"


def test_a_gateway_tools_regions_list_the_identities_a_region_may_name(api):
    """The web app's region form offers the workspace's agent identities (not the revoked ones) or any: the listing
    names them; a step's listing names none. A region for one identity keeps it, and `null` sets it back to any."""
    api.ok("PUT", "/api/workspace/gateway", {"builtin_tools": ["echo"]})
    api.ok("POST", "/api/agents", {"name": "claude-code"}, status=201)
    gone = api.ok("POST", "/api/agents", {"name": "old-bot"}, status=201)
    api.ok("POST", "/api/agents", {"name": "cursor"}, status=201)
    api.ok("DELETE", f"/api/agents/{gone['id']}", status=204)
    listed = api.ok("GET", "/api/gateway/tools/coach.echo/regions")
    assert listed["identities"] == ["claude-code", "cursor"] and listed["items"] == []
    made = api.ok(
        "POST",
        "/api/gateway/tools/coach.echo/regions",
        {"name": "hello", "when": "params.message == 'hi'", "identity": "cursor"},
        status=201,
    )
    assert (made["scope"], made["tool"], made["identity"]) == ("gateway", "coach.echo", "cursor")
    assert [r["identity"] for r in api.ok("GET", "/api/gateway/tools/coach.echo/regions")["items"]] == ["cursor"]
    assert api.ok("PATCH", f"/api/regions/{made['id']}", {"identity": None})["identity"] is None
    wf_id = _refunds(api)
    assert api.ok("GET", f"/api/workflows/{wf_id}/steps/refund/regions")["identities"] == []
