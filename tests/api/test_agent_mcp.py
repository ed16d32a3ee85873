"""An agent step calling a tool of an MCP server (issues #15 and #18 together): the call goes through the policy
like any other, a review turns it into a tool-call suggestion, and a correction runs the MCP tool with the
corrected arguments (checked against the server's own JSON Schema). The LLM is the scripted OpenAI-compatible
server on loopback, the MCP server is the project's own FastMCP server over stdio: nothing of Coach's is mocked."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Api
from tests.support.mcp_servers import stdio_command

SHOP = stdio_command("shop")


@pytest.fixture
def app(settings, llm):
    from tests.conftest import _close_app, _new_app

    app = _new_app(
        settings.with_overrides(
            mcp_stdio_allow=(" ".join(SHOP),),
            mcp_call_timeout_s=10.0,
            mcp_connect_timeout_s=20.0,
            llm_base_url=llm.base_url,
            llm_model="scripted",
            llm_max_retries=2,
            llm_timeout_s=10,
        ),
        mcp=True,
    )
    yield app
    _close_app(app)


def test_an_agents_mcp_call_is_reviewed_corrected_and_run_with_the_correction(api: Api, llm):
    server = api.ok(
        "POST",
        "/api/tool-servers",
        {"name": "shop", "transport": "stdio", "command": SHOP, "trusted": True},
        status=201,
    )
    api.ok("POST", f"/api/tool-servers/{server['id']}/refresh")
    api.ok(
        "POST",
        "/api/policies",
        {"name": "shop calls are reviewed", "effect": "require_review", "order": 0, "match": {"tool": "shop.*"}},
        status=201,
    )
    llm.script(
        "Check the order",
        [
            {
                "content": "Looking the order up.",
                "tool_calls": [{"name": "shop_lookup", "arguments": {"order_id": "A-1001"}}],
            },
            {"content": "The order is lost. STAGE_COMPLETE"},
        ],
    )
    wf = api.workflow(
        [{"id": "agent", "type": "agent", "goal": "Check the order of the complaint", "tools": ["shop.*"]}]
    )
    execution_id = api.start(wf["id"], mode="normal")["execution_id"]

    ex = api.settle(execution_id)
    assert ex["status"] == "waiting_decision", ex
    sug = api.ok("GET", f"/api/executions/{execution_id}/coaching/suggestion")["suggestion"]
    assert sug["kind"] == "tool_call" and sug["tool"] == "shop.lookup" and sug["params"] == {"order_id": "A-1001"}
    assert sug["policy"]["rule"]["name"] == "shop calls are reviewed"
    assert sug["params_schema"]["properties"]["order_id"]["type"] == "string"  # the MCP server's schema

    # a correction the server's schema refuses is a 422; the right one runs the MCP tool with it
    code, body = api.call(
        "POST",
        f"/api/executions/{execution_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "correct", "correction": {"order_id": 7}},
    )
    assert code == 422 and "order_id" in json.dumps(body), body
    api.ok(
        "POST",
        f"/api/executions/{execution_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "correct", "correction": {"order_id": "A-1002"}},
    )
    done = api.settle(execution_id, timeout=30)
    assert done["status"] == "completed", done
    messages = api.ok("GET", f"/api/executions/{execution_id}/steps/agent/transcript")["messages"]
    (call,) = [m for m in messages if m["role"] == "tool"]
    assert call["decision"] == "correct"
    # what the LLM was given back: the MCP tool's result for the corrected order
    tool_messages = [m for m in llm.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert (
        len(tool_messages) == 1 and "A-1002" in tool_messages[0]["content"] and "Grace" in tool_messages[0]["content"]
    )
    # the result once: the server's structured content, not also its text and its content blocks (#32)
    sent = json.loads(tool_messages[0]["content"])
    assert sent["order_id"] == "A-1002" and tool_messages[0]["content"].count("Grace") == 1, sent
    # the transcript shows the whole output, as before
    assert call["content"].count("Grace") == 3 and set(json.loads(call["content"])) == {"text", "content", "structured"}
    assert json.dumps(done["steps"][0]["output"]).count("lost") >= 1
