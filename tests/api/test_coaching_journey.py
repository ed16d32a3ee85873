"""The whole learning journey through the API: OBSERVATION → COACHING → AUTO-ready → promoted → an AUTO run
that completes on its own."""

from __future__ import annotations

import pytest

from tests.conftest import Api, authed_client

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEPS = [
    {"id": "fetch", "tool": "echo", "params": {"total": "{{ vars.total }}"}},
    {"id": "report", "tool": "echo", "params": {"line": "total={{ steps.fetch.output.total }}"}},
]
VARS = {"total": {"type": "integer", "default": 3}}
# lowered so the journey is quick; the rules are docs/design.md#metrics-and-learning-levels's
# lenient (acceptance >= 50%, tested at level 0.25) so that a short journey is evidence: 6 accepts of 7
# are (e-value 4.6 >= 1/0.25), 5 of 6 are not
THRESHOLDS = {"coaching_after": 4, "auto_min_window": 6, "auto_acceptance": 0.5, "window": 10, "auto_alpha": 0.25}


@pytest.fixture
def api_without_spot_checks(settings):
    """The test's database served with spot_check_rate 0, so an AUTO run asks nobody (random is random)."""
    from api.app import create_app

    app = create_app(settings.with_overrides(spot_check_rate=0.0), migrate=False)
    app.config["TESTING"] = True
    services = app.extensions["coach"]
    yield Api(authed_client(app), services)
    services.runner.wait_idle(5)
    services.close()


class Operator:
    """Decides coaching suggestions one at a time, starting executions as they finish."""

    def __init__(self, api: Api, workflow_id: str):
        self.api, self.workflow_id, self.execution_id = api, workflow_id, None

    def decide(self, kind: str) -> dict:
        api = self.api
        if self.execution_id is None:
            started = api.ok(
                "POST",
                "/api/executions/coaching",
                {"workflow_id": self.workflow_id, "variables": {"total": 7}},
                status=201,
            )
            self.execution_id = started["execution_id"]
            api.settle(self.execution_id)
        sug = api.ok("GET", f"/api/executions/{self.execution_id}/coaching/suggestion")["suggestion"]
        assert sug is not None and sug["source"] == "definition"
        body = {"suggestion_id": sug["suggestion_id"], "decision": kind}
        if kind == "correct":
            body["correction"] = {**sug["params"], "note": "checked"}
        api.ok("POST", f"/api/executions/{self.execution_id}/coaching/decision", body)
        if api.settle(self.execution_id)["status"] == "completed":
            self.execution_id = None
        return sug


def _stage(api: Api, wf_id: str) -> tuple:
    wf = api.ok("GET", f"/api/workflows/{wf_id}")
    m = api.ok("GET", f"/api/metrics/workflows/{wf_id}")
    assert (wf["level"], wf["auto_ready"], wf["mode"]) == (m["level"], m["auto_ready"], m["mode"])
    return m["level"], m["auto_ready"], m["mode"], m["decisions"]


def test_from_observation_to_an_unattended_auto_run(api_without_spot_checks):
    api = api_without_spot_checks
    created = api.workflow(STEPS, name="journey", variables=VARS)
    wf_id = created["id"]
    assert (created["level"], created["mode"]) == ("OBSERVATION", "coaching")
    assert api.ok("PUT", f"/api/workflows/{wf_id}/thresholds", THRESHOLDS)["thresholds"] == THRESHOLDS
    assert _stage(api, wf_id) == ("OBSERVATION", False, "coaching", 0)
    code, _ = api.call("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})
    assert code == 409

    # OBSERVATION until coaching_after decisions, whatever they are
    operator = Operator(api, wf_id)
    for n, kind in enumerate(["correct", "accept", "accept"], start=1):
        operator.decide(kind)
        assert _stage(api, wf_id) == ("OBSERVATION", False, "coaching", n)

    # COACHING from the 4th; not AUTO-ready while the window is short or the evidence weak
    operator.decide("accept")
    assert _stage(api, wf_id) == ("COACHING", False, "coaching", 4)  # 3/4 accepted, 4 in the window
    operator.decide("accept")
    assert _stage(api, wf_id) == ("COACHING", False, "coaching", 5)  # 4/5 = 0.8
    operator.decide("accept")
    assert _stage(api, wf_id) == ("COACHING", False, "coaching", 6)  # 5/6, e-value 3.4 < 4
    m = api.ok("GET", f"/api/metrics/workflows/{wf_id}")
    assert m["rolling_acceptance_rate"] == round(5 / 6, 4) and m["to_auto"]["window_decisions_needed"] == 0
    assert api.call("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})[0] == 409

    # AUTO-ready: 6/7 is evidence at level 0.25 that acceptance >= 0.5; the mode stays what the lead chose
    operator.decide("accept")
    assert _stage(api, wf_id) == ("AUTO", True, "coaching", 7)
    m = api.ok("GET", f"/api/metrics/workflows/{wf_id}")
    assert m["rolling_acceptance_rate"] == round(6 / 7, 4) and m["acceptance_rate"] == round(6 / 7, 4)
    assert m["to_auto"]["acceptance_gap"] == 0 and m["to_auto"]["window_decisions_needed"] == 0
    glob = api.ok("GET", "/api/metrics/global")
    assert glob["auto_ready_workflows"] == 1 and glob["levels"] == {"AUTO": 1}

    # a coaching execution left half-way does not stop the promotion
    promoted = api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})
    assert (promoted["mode"], promoted["level"], promoted["auto_ready"]) == ("auto", "AUTO", True)
    assert _stage(api, wf_id) == ("AUTO", True, "auto", 7)
    suggestions_before = api.ok("GET", f"/api/metrics/workflows/{wf_id}")["suggestions"]

    # an AUTO run: nobody is asked, it completes with the definition's params
    started = api.ok(
        "POST", "/api/executions/", {"workflow_id": wf_id, "variables": {"total": 42}, "mode": "auto"}, status=201
    )
    assert started["mode"] == "auto"
    ex = api.settle(started["execution_id"])
    assert ex["status"] == "completed", ex
    assert [(s["step_id"], s["status"], s["decision"]) for s in ex["steps"]] == [
        ("fetch", "succeeded", None),
        ("report", "succeeded", None),
    ]
    assert ex["steps"][1]["output"] == {"line": "total=42"}
    pending = api.ok("GET", f"/api/executions/{ex['execution_id']}/coaching/suggestion")
    assert pending["suggestion"] is None and pending["suggestions"] == []
    stats = api.ok("GET", f"/api/executions/{ex['execution_id']}/coaching/stats")
    assert stats["suggestions_made"] == 0 and sum(stats.values()) == 0
    m = api.ok("GET", f"/api/metrics/workflows/{wf_id}")
    assert (m["suggestions"], m["decisions"], m["mode"], m["level"]) == (suggestions_before, 7, "auto", "AUTO")


def test_auto_runs_are_refused_before_promotion_and_after_demotion(api):
    wf_id = api.workflow(STEPS, variables=VARS)["id"]
    body = {"workflow_id": wf_id, "variables": {}, "mode": "auto"}
    assert api.call("POST", "/api/executions/", body)[0] == 409
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    assert api.ok("POST", "/api/executions/", body, status=201)["mode"] == "auto"
    assert api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "coaching"})["mode"] == "coaching"
    assert api.call("POST", "/api/executions/", body)[0] == 409
