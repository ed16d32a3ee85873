"""/healthz, /readyz, the OpenAPI document and the API docs page."""

import pytest

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


def test_healthz_answers_ok(api):
    assert api.ok("GET", "/healthz") == {"status": "ok"}


def test_readyz_reports_the_database_reachable(api):
    assert api.ok("GET", "/readyz") == {"status": "ready", "database": "ok"}


def test_openapi_document_lists_the_resources(api):
    doc = api.ok("GET", "/api/openapi.json")
    assert doc["info"]["title"] == "Coach"
    for path in (
        "/api/workflows",
        "/api/workflows/{workflow_id}",
        "/api/executions/",
        "/api/executions/{execution_id}",
        "/api/executions/{execution_id}/cancel",
    ):
        assert path in doc["paths"], path


def test_openapi_declares_the_bearer_token_and_the_cookie_with_its_csrf_header(api):
    doc = api.ok("GET", "/api/openapi.json")
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schemes["bearerAuth"]["description"],
    }
    assert (schemes["cookieAuth"]["in"], schemes["cookieAuth"]["name"]) == ("cookie", "coach_session")
    assert (schemes["csrfToken"]["in"], schemes["csrfToken"]["name"]) == ("header", "X-CSRF-Token")
    assert doc["security"] == [{"bearerAuth": []}, {"cookieAuth": [], "csrfToken": []}]
    assert doc["paths"]["/api/auth/login"]["post"]["security"] == []


def test_the_docs_page_sends_the_csrf_header_and_its_script_is_allowed_by_the_csp(api):
    page = api.client.get("/api/docs")
    assert b"requestInterceptor" in page.data and b"X-CSRF-Token" in page.data
    csp = page.headers["Content-Security-Policy"]
    assert "'sha256-" in csp  # the inline initializer, by hash


def test_swagger_ui_is_served_without_a_cdn(api):
    page = api.client.get("/api/docs")
    assert page.status_code == 200
    assert b"/api/docs/assets/swagger-ui-bundle.js" in page.data
    assert api.client.get("/api/docs/assets/swagger-ui-bundle.js").status_code == 200


def test_unknown_api_route_is_a_json_404(api):
    code, body = api.call("GET", "/api/nothing-here")
    assert code == 404
    assert body["error"]["code"] == "not_found"


def _samples(text: str) -> dict[str, float]:
    return {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }


def test_metrics_is_prometheus_text_with_the_decision_counters(api):
    wf_id = api.workflow([{"id": "a", "tool": "echo", "params": {}}, {"id": "b", "tool": "echo", "params": {}}])["id"]
    ex_id = api.start(wf_id, mode="coaching")["execution_id"]
    for decision in ("accept", "skip"):
        api.settle(ex_id)
        sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
        api.ok(
            "POST",
            f"/api/executions/{ex_id}/coaching/decision",
            {"suggestion_id": sug["suggestion_id"], "decision": decision},
        )
    page = api.client.get("/metrics")
    assert page.status_code == 200 and page.content_type.startswith("text/plain; version=0.0.4")
    samples = _samples(page.get_data(as_text=True))
    assert samples["coach_database_up"] == 1 and samples["coach_suggestions_total"] == 2
    assert {
        kind: samples[f'coach_decisions_total{{decision="{kind}"}}']
        for kind in ("accept", "reject", "correct", "manual", "skip")
    } == {"accept": 1, "reject": 0, "correct": 0, "manual": 0, "skip": 1}
    assert samples['coach_decision_latency_ms{quantile="0.5"}'] >= 0
    text = page.get_data(as_text=True)
    assert "# TYPE coach_decisions_total counter" in text and "# TYPE coach_database_up gauge" in text
    assert "python_gc" not in text and "process_" not in text  # Coach's values only, no interpreter metrics


def test_metrics_speaks_openmetrics_to_a_scraper_that_asks_for_it(api):
    page = api.client.get(
        "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5"}
    )
    assert page.status_code == 200 and page.content_type.startswith("application/openmetrics-text; version=1.0.0")
    text = page.get_data(as_text=True)
    assert text.endswith("# EOF\n") and "# TYPE coach_decisions counter" in text
    samples = _samples(text.replace("# EOF", ""))
    assert samples["coach_database_up"] == 1 and samples['coach_decisions_total{decision="accept"}'] == 0


def test_metrics_answers_with_database_down_when_the_database_does_not(api, services, monkeypatch):
    def unreachable():
        raise OSError("connection refused")

    monkeypatch.setattr(services.db, "read", unreachable)
    page = api.client.get("/metrics")
    assert page.status_code == 200
    assert _samples(page.get_data(as_text=True)) == {"coach_database_up": 0}
