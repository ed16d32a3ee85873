"""The demo's agent workflow (demo/invoice_agent.yaml) against a scripted OpenAI-compatible server: it reads the
invoices, asks a person to confirm the total, writes the summary once its write is reviewed, and reports."""

from __future__ import annotations

import json

import pytest

from services import demo


@pytest.fixture
def settings(settings, llm):
    return settings.with_overrides(llm_base_url=llm.base_url, llm_model="scripted")


def test_the_demo_agent_reads_confirms_and_writes_the_summary(app, api, services, llm):
    total = 1200.50 + 830.00 + 2999.99 + 410.25
    llm.script(
        "Summarise the invoices",
        [
            {
                "content": "Reading the file.",
                "tool_calls": [{"name": "file_read", "arguments": {"path": "invoices.csv"}}],
            },
            {"tool_calls": [{"name": "echo", "arguments": {"rows": 4, "total": total}}]},
            {"content": f"CONFIRM_DATA: 4 invoices totalling {total}, correct?"},
            {
                "tool_calls": [
                    {
                        "name": "file_write",
                        "arguments": {
                            "path": "summaries/invoices-agent-summary.json",
                            "json": {"file": "invoices.csv", "rows": 4, "total": total},
                        },
                    }
                ]
            },
            {"content": json.dumps({"rows": 4, "total": total}) + " STAGE_COMPLETE"},
        ],
    )
    workspace = app.extensions["coach_default_workspace"]
    demo.load(services, workspace)
    wf = next(w for w in api.ok("GET", "/api/workflows")["items"] if w["name"] == "Invoice summary (agent)")
    ex_id = api.start(wf["id"], mode="normal")["execution_id"]
    assert api.settle(ex_id)["status"] == "waiting_clarification"
    assert "4 invoices totalling" in api.ok("GET", f"/api/executions/{ex_id}/execution-state")["question"]
    api.ok("POST", f"/api/executions/{ex_id}/steps/summarise/answer", {"answer": "Yes, correct."})
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_decision"  # the demo's rule: an agent's writes are reviewed
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug["kind"] == "tool_call" and sug["tool"] == "file.write"
    assert sug["policy"]["rule"]["name"] == "Agent writes are reviewed"
    api.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    ex = api.settle(ex_id)
    assert ex["status"] == "completed", ex
    assert ex["steps"][0]["output"] == {"rows": 4, "total": total}
    assert ex["steps"][1]["output"] == {"rows": 4, "total": total}
    written = json.loads((api.data_dir() / "summaries" / "invoices-agent-summary.json").read_text())
    assert written == {"file": "invoices.csv", "rows": 4, "total": total}
    assert llm.repeats() == []
