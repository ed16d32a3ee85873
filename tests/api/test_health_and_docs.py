def test_healthz_answers_ok(api):
    assert api.ok("GET", "/healthz") == {"status": "ok"}


def test_readyz_reports_the_database_reachable(api):
    assert api.ok("GET", "/readyz") == {"status": "ready", "database": "ok"}


def test_openapi_document_lists_the_resources(api):
    doc = api.ok("GET", "/api/openapi.json")
    assert doc["info"]["title"] == "Coach"
    for path in ("/api/workflows", "/api/workflows/{workflow_id}", "/api/executions/",
                 "/api/executions/{execution_id}", "/api/executions/{execution_id}/cancel"):
        assert path in doc["paths"], path


def test_swagger_ui_is_served_without_a_cdn(api):
    page = api.client.get("/api/docs")
    assert page.status_code == 200
    assert b"/api/docs/assets/swagger-ui-bundle.js" in page.data
    assert api.client.get("/api/docs/assets/swagger-ui-bundle.js").status_code == 200


def test_unknown_api_route_is_a_json_404(api):
    code, body = api.call("GET", "/api/nothing-here")
    assert code == 404
    assert body["error"]["code"] == "not_found"
