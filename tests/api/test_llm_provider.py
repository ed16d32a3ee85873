"""A workspace's own LLM provider (/api/workspace/llm): admins only, the key stored encrypted and never returned,
422s naming the field, the outbound rules, the Test button against a scripted OpenAI-compatible server, agent steps
using it, and starting an agent workflow without any provider refused with what to set (issue 31, item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from services.models.agents import WorkspaceLLM
from tests.conftest import authed_client

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

KEY = "sk-test-0123456789abcdef"
AGENT_DEMO = Path(__file__).resolve().parents[2] / "demo" / "invoice_agent.yaml"


def provider(llm, **more) -> dict:
    return {"base_url": llm.base_url, "model": "workspace-model", "api_key": KEY, **more}


def test_only_admins_read_set_test_and_remove_the_provider(app, api, llm):
    for role in ("operator", "lead"):
        client = authed_client(app, role)
        for method, path, body in (
            ("GET", "/api/workspace/llm", None),
            ("PUT", "/api/workspace/llm", provider(llm)),
            ("DELETE", "/api/workspace/llm", None),
            ("POST", "/api/workspace/llm/test", None),
        ):
            response = client.open(path, method=method, json=body)
            assert response.status_code == 403, (role, method, path)
    assert api.ok("GET", "/api/workspace/llm")["in_use"] == "none"  # the test settings set no COACH_LLM_*


def test_the_key_is_stored_encrypted_and_never_returned_and_the_change_is_audited(api, services, llm):
    saved = api.ok("PUT", "/api/workspace/llm", provider(llm))
    assert saved["api_key_set"] is True and saved["in_use"] == "workspace"
    assert (saved["base_url"], saved["model"]) == (llm.base_url, "workspace-model")
    got = api.client.get("/api/workspace/llm").get_data(as_text=True)
    audit = api.client.get("/api/audit?per_page=100").get_data(as_text=True)
    assert KEY not in got and KEY not in audit and 'api_key"' not in got.replace("api_key_set", "")
    with services.db.read() as session:
        row = session.query(WorkspaceLLM).one()
        assert row.api_key and KEY not in row.api_key
    events = [e for e in api.ok("GET", "/api/audit?per_page=100")["items"] if e["action"] == "llm_provider_change"]
    assert len(events) == 1
    assert events[0]["before"] is None
    assert events[0]["after"] == {"base_url": llm.base_url, "model": "workspace-model", "api_key_set": True}
    # a change of model keeps the key (an empty or absent key keeps it); clearing it says so
    assert api.ok("PUT", "/api/workspace/llm", {**provider(llm), "api_key": "", "model": "other"})["api_key_set"]
    cleared = api.ok("PUT", "/api/workspace/llm", {**provider(llm), "api_key": None, "clear_api_key": True})
    assert cleared["api_key_set"] is False
    api.ok("DELETE", "/api/workspace/llm", status=204)
    assert api.ok("GET", "/api/workspace/llm")["in_use"] == "none"
    changes = [e for e in api.ok("GET", "/api/audit?per_page=100")["items"] if e["action"] == "llm_provider_change"]
    assert len(changes) == 4 and KEY not in str(changes)


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"base_url": "", "model": "m"}, "base_url", "is required"),
        ({"base_url": "ftp://example.com/v1", "model": "m"}, "base_url", "http:// or https://"),
        ({"base_url": "http:///v1", "model": "m"}, "base_url", "no host"),
        ({"base_url": "https://user:pw@example.com/v1", "model": "m"}, "base_url", "user name or password"),
        ({"base_url": "https://example.com/v1?x=1", "model": "m"}, "base_url", "query"),
        ({"base_url": 5, "model": "m"}, "base_url", "is required"),
        ({"base_url": "https://example.com/v1", "model": " "}, "model", "is required"),
        ({"base_url": "https://example.com/v1", "model": "x" * 201}, "model", "longer than 200"),
        ({"base_url": "https://example.com/v1", "model": "m", "api_key": "two words"}, "api_key", "spaces"),
    ],
)
def test_a_bad_url_model_or_key_is_422_naming_the_field(api, body, field, words):
    code, answer = api.call("PUT", "/api/workspace/llm", body)
    assert code == 422, answer
    assert words in " ".join(answer["error"]["details"][field])
    assert api.ok("GET", "/api/workspace/llm")["base_url"] is None  # nothing was saved


def test_the_base_url_is_held_to_the_workspace_outbound_rules(api, llm):
    code, answer = api.call("PUT", "/api/workspace/llm", {"base_url": "http://10.20.30.40/v1", "model": "m"})
    assert code == 422 and "refused" in answer["error"]["details"]["base_url"][0]  # a private address
    api.ok("PUT", "/api/workspace/outbound", {"allow": [], "deny": ["127.0.0.1"]})
    code, answer = api.call("PUT", "/api/workspace/llm", provider(llm))
    assert code == 422 and "127.0.0.1" in answer["error"]["details"]["base_url"][0]
    api.ok("PUT", "/api/workspace/outbound", {"allow": [], "deny": []})
    api.ok("PUT", "/api/workspace/llm", provider(llm))
    # a rule added later applies to the next request: the Test button says it was refused, nothing reached it
    api.ok("PUT", "/api/workspace/outbound", {"allow": [], "deny": ["127.0.0.1"]})
    tested = api.ok("POST", "/api/workspace/llm/test")
    assert tested["ok"] is False and "refused" in tested["failure"] and llm.requests == []


def test_a_new_base_url_needs_the_key_again(api, llm):
    api.ok("PUT", "/api/workspace/llm", provider(llm))
    moved = {"base_url": llm.base_url.replace("/v1", "/v2"), "model": "workspace-model"}
    code, answer = api.call("PUT", "/api/workspace/llm", moved)
    assert code == 422 and "api_key" in answer["error"]["details"]
    assert api.ok("PUT", "/api/workspace/llm", {**moved, "clear_api_key": True})["api_key_set"] is False


def test_the_test_button_asks_the_provider_and_shows_its_answer(api, llm):
    assert api.ok("POST", "/api/workspace/llm/test")["ok"] is False  # nothing configured: said in words
    llm.script("connection test", [{"content": "Hello from the scripted model."}])
    api.ok("PUT", "/api/workspace/llm", provider(llm))
    tested = api.ok("POST", "/api/workspace/llm/test")
    assert tested["ok"] is True and tested["answer"] == "Hello from the scripted model."
    assert tested["source"] == "workspace" and tested["model"] == "workspace-model"
    (request,) = llm.requests
    assert request["body"]["model"] == "workspace-model"
    assert request["headers"]["authorization"] == f"Bearer {KEY}"


def test_the_test_button_shows_the_provider_error_in_words(api, llm):
    llm.script("connection test", [{"status": 401, "body": {"error": {"message": "Incorrect API key provided"}}}])
    api.ok("PUT", "/api/workspace/llm", provider(llm))
    tested = api.ok("POST", "/api/workspace/llm/test")
    assert tested["ok"] is False
    assert "answered 401: Incorrect API key provided" in tested["failure"]
    assert len(llm.requests) == 1  # no retry for a test


def test_an_agent_step_uses_the_workspace_provider(api, llm):
    llm.script("Say hello", [{"content": "Hello! STAGE_COMPLETE"}])
    api.ok("PUT", "/api/workspace/llm", provider(llm))
    ex = api.run([{"id": "agent", "type": "agent", "goal": "Say hello", "tools": ["echo"]}])
    assert ex["status"] == "completed", ex
    (request,) = llm.for_goal("Say hello")
    assert request["body"]["model"] == "workspace-model"
    assert request["headers"]["authorization"] == f"Bearer {KEY}"


def test_starting_the_agent_demo_without_a_provider_is_409_saying_what_to_do(api, llm):
    wf = api.ok("POST", "/api/workflows", yaml.safe_load(AGENT_DEMO.read_text()), status=201)
    for mode in ("normal", "coaching"):
        code, answer = api.call("POST", "/api/executions/", {"workflow_id": wf["id"], "variables": {}, "mode": mode})
        assert code == 409, answer
        assert answer["error"]["code"] == "llm_provider_missing"
        assert "set an LLM provider in Settings → LLM provider" in answer["error"]["message"]
    assert api.ok("GET", "/api/executions/")["items"] == []  # no run was made, none failed
    llm.script("Summarise the invoices", [{"content": "Reading."}])
    api.ok("PUT", "/api/workspace/llm", provider(llm))
    assert api.start(wf["id"], mode="normal")["status"] in ("pending", "running")
    api.services.runner.wait_idle(10)
    assert llm.for_goal("Summarise the invoices")


def test_a_workflow_without_agent_steps_starts_without_a_provider(api):
    wf = api.workflow([{"id": "greet", "tool": "echo", "params": {"message": "hi"}}])
    assert api.start(wf["id"], mode="normal")["execution_id"]


def test_a_rerun_of_an_agent_run_after_the_provider_is_removed_is_409_too(api, llm):
    llm.script("Say hello", [{"content": "Hello! STAGE_COMPLETE"}])
    api.ok("PUT", "/api/workspace/llm", provider(llm))
    ex = api.run([{"id": "agent", "type": "agent", "goal": "Say hello", "tools": ["echo"]}])
    assert ex["status"] == "completed", ex
    api.ok("DELETE", "/api/workspace/llm", status=204)
    code, answer = api.call("POST", f"/api/executions/{ex['execution_id']}/rerun", {})
    assert code == 409 and answer["error"]["code"] == "llm_provider_missing"
    assert len(api.ok("GET", "/api/executions/")["items"]) == 1
