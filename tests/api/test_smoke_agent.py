import pytest
from tests.support.llm_server import ScriptedLLM

@pytest.fixture
def llm():
    with ScriptedLLM() as server:
        yield server

@pytest.fixture
def settings(settings, llm):
    return settings.with_overrides(llm_base_url=llm.base_url, llm_model="scripted", llm_max_retries=2)

def test_chain(api, llm):
    llm.script("Say", [
        {"content": "let me echo", "tool_calls": [{"name": "echo", "arguments": {"message": "a"}}]},
        {"tool_calls": [{"name": "echo", "arguments": {"message": "b"}}, {"name": "noop", "arguments": {}}]},
        {"content": "All done. STAGE_COMPLETE"},
    ])
    wf = api.workflow([{"id": "agent", "type": "agent", "goal": "Say {{ vars.who }}", "tools": ["echo", "noop"]}],
                      variables={"who": {"default": "hi"}})
    ex = api.settle(api.start(wf["id"])["execution_id"])
    print(ex)
    t = api.ok("GET", f"/api/executions/{ex['execution_id']}/steps/agent/transcript")
    for m in t["messages"]: print(m)
    print([ (r["turn"], len(r["body"]["messages"])) for r in llm.requests])
    assert ex["status"] == "completed"

def test_coaching(api, llm):
    llm.script("Go", [
        {"content": "echo first", "tool_calls": [{"name": "echo", "arguments": {"message": "a"}}]},
        {"tool_calls": [{"name": "echo", "arguments": {"message": "b"}}]},
        {"tool_calls": [{"name": "echo", "arguments": {"message": "c"}}]},
        {"tool_calls": [{"name": "echo", "arguments": {"message": "d"}}]},
        {"tool_calls": [{"name": "echo", "arguments": {"message": "e"}}]},
        {"content": "done"},
    ])
    wf = api.workflow([{"id": "agent", "type": "agent", "goal": "Go", "tools": ["echo"]}])
    ex_id = api.start(wf["id"], mode="coaching")["execution_id"]
    for decision, extra in [("accept", {}), ("correct", {"correction": {"message": "B"}}), ("manual", {"manual_output": {"x": 1}}),
                            ("skip", {}), ("reject", {"feedback": "no"})]:
        ex = api.settle(ex_id)
        assert ex["status"] == "waiting_decision", ex
        pend = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")
        sug = pend["suggestion"]
        print(sug)
        assert sug["kind"] == "tool_call"
        r = api.ok("POST", f"/api/executions/{ex_id}/coaching/decision", {"suggestion_id": sug["suggestion_id"], "decision": decision, **extra})
    ex = api.settle(ex_id)
    assert ex["status"] == "completed", ex
    t = api.ok("GET", f"/api/executions/{ex_id}/steps/agent/transcript")
    for m in t["messages"]:
        if m["role"] == "tool": print(m["decision"], m["content"])
    print(api.ok("GET", f"/api/executions/{ex_id}/coaching/stats"))
    print(api.ok("GET", f"/api/metrics/workflows/{wf['id']}")["steps"])
