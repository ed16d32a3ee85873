"""/api/executions through the Flask test client: start, variables, human input, cancel, list, demo, SQL."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

DEMO = Path(__file__).resolve().parents[2] / "demo"

ECHO_STEPS = [
    {"id": "greet", "tool": "echo", "params": {"message": "hi {{ vars.who }}", "n": "{{ vars.n }}"}},
    {
        "id": "again",
        "tool": "echo",
        "params": {"said": "{{ steps.greet.output.message }}!", "twice": "{{ steps.greet.output.n * 2 }}"},
    },
]
ECHO_VARS = {"who": {"type": "string", "default": "world"}, "n": {"type": "integer", "default": 2}}
ASK_STEPS = [
    {"id": "ask", "type": "human_input", "question": "Proceed?"},
    {"id": "after", "tool": "echo", "params": {"got": "{{ steps.ask.output.answer }}"}},
]


def _total(api, query: str = "") -> int:
    return api.ok("GET", f"/api/executions/{query}")["total"]


def _steps(execution: dict) -> dict:
    return {s["step_id"]: s for s in execution["steps"]}


def _waiting(api, steps=ASK_STEPS) -> dict:
    wf = api.workflow(steps)
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_clarification", ex
    return ex


def test_start_returns_201_with_ids_mode_and_status(api):
    wf = api.workflow(ECHO_STEPS, variables=ECHO_VARS)
    body = api.start(wf["id"], mode="normal")
    assert body["execution_id"] and body["workflow_id"] == wf["id"]
    assert body["mode"] == "normal"
    assert body["status"] in ("pending", "running", "completed")


def test_start_without_a_mode_uses_the_workflows_mode_and_reaches_the_queue(api):
    wf = api.workflow(ECHO_STEPS, variables=ECHO_VARS)
    assert wf["mode"] == "coaching"
    body = api.ok("POST", "/api/executions/", {"workflow_id": wf["id"]}, status=201)
    assert body["mode"] == "coaching" and body["is_coaching"]
    ex = api.settle(body["execution_id"])
    assert ex["status"] == "waiting_decision"
    pending = api.ok("GET", f"/api/executions/{ex['execution_id']}/coaching/suggestion")
    assert pending["suggestion"]["step_id"] == "greet"


@pytest.mark.parametrize(
    "path, mode", [("/api/executions/", None), ("/api/executions/", "normal"), ("/api/executions/coaching", None)]
)
def test_every_start_is_audited_with_who_mode_and_variables(api, path, mode):
    wf = api.workflow(ECHO_STEPS, variables=ECHO_VARS)
    body = {"workflow_id": wf["id"], "variables": {"who": "Ada"}, **({"mode": mode} if mode else {})}
    started = api.ok("POST", path, body, status=201)
    events = api.ok("GET", f"/api/audit?execution_id={started['execution_id']}")["items"]
    starts = [e for e in events if e["action"] == "execution_start"]
    assert len(starts) == 1, events
    assert starts[0]["actor"] == "admin@test.local"
    assert starts[0]["after"]["mode"] == started["mode"] == (mode or "coaching")
    assert starts[0]["after"]["variables"] == {"who": "Ada", "n": 2}
    assert starts[0]["after"]["workflow_id"] == wf["id"]


def test_a_normal_run_needs_a_lead_and_an_operator_starts_in_the_workflows_mode(app, api):
    from tests.conftest import authed_client

    wf = api.workflow(ECHO_STEPS, variables=ECHO_VARS)
    operator = authed_client(app, "operator")
    refused = operator.post("/api/executions/", json={"workflow_id": wf["id"], "mode": "normal"})
    assert refused.status_code == 403 and refused.get_json()["error"]["code"] == "forbidden"
    started = operator.post("/api/executions/", json={"workflow_id": wf["id"]})
    assert started.status_code == 201 and started.get_json()["mode"] == "coaching"
    lead = authed_client(app, "lead")
    assert lead.post("/api/executions/", json={"workflow_id": wf["id"], "mode": "normal"}).status_code == 201
    assert _total(api) == 2


def test_echo_workflow_completes_with_rendered_outputs(api):
    wf = api.workflow(ECHO_STEPS, variables=ECHO_VARS)
    ex = api.settle(api.start(wf["id"], {"who": "Ada", "n": 4})["execution_id"])
    assert ex["status"] == "completed"
    assert ex["progress"]["percent"] == 100 and ex["progress"]["done"] == ex["progress"]["total"] == 2
    steps = _steps(ex)
    assert all(s["status"] == "succeeded" for s in steps.values())
    assert steps["greet"]["output"] == {"message": "hi Ada", "n": 4} == steps["greet"]["params"]
    assert steps["again"]["output"] == {"said": "hi Ada!", "twice": 8}


def test_variable_defaults_are_applied(api):
    wf = api.workflow(ECHO_STEPS, variables=ECHO_VARS)
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["variables"] == {"who": "world", "n": 2}
    assert _steps(ex)["greet"]["output"] == {"message": "hi world", "n": 2}


@pytest.mark.parametrize("variables, field", [({"nope": 1}, "variables.nope"), ({"n": "four"}, "variables.n")])
def test_bad_variables_are_422_naming_the_variable_and_create_nothing(api, variables, field):
    wf = api.workflow(ECHO_STEPS, variables=ECHO_VARS)
    code, body = api.call(
        "POST", "/api/executions/", {"workflow_id": wf["id"], "variables": variables, "mode": "normal"}
    )
    assert code == 422
    assert body["error"]["code"] == "validation_failed" and field in body["error"]["details"]
    assert _total(api) == 0


def test_unknown_workflow_is_404_and_creates_nothing(api):
    code, body = api.call("POST", "/api/executions/", {"workflow_id": "missing", "variables": {}})
    assert code == 404 and body["error"]["code"] == "not_found"
    assert _total(api) == 0


def test_bad_mode_is_422_and_creates_nothing(api):
    wf = api.workflow(ECHO_STEPS, variables=ECHO_VARS)
    code, body = api.call("POST", "/api/executions/", {"workflow_id": wf["id"], "mode": "turbo"})
    assert code == 422 and "mode" in body["error"]["details"]
    assert _total(api) == 0


def test_human_input_waits_with_the_question(api):
    ex = _waiting(api)
    assert ex["gate"]["question"] == "Proceed?" and ex["gate"]["step_id"] == "ask"
    assert _steps(ex)["after"]["status"] == "pending"


def test_answer_continues_to_completed_with_the_answer_as_output(api):
    ex = _waiting(api)
    api.ok("POST", f"/api/executions/{ex['execution_id']}/steps/ask/answer", {"answer": "ok"})
    done = api.settle(ex["execution_id"])
    assert done["status"] == "completed"
    assert _steps(done)["ask"]["output"] == {"answer": "ok"}
    assert _steps(done)["after"]["output"] == {"got": "ok"}


def test_second_answer_to_the_same_step_is_409(api):
    ex = _waiting(api)
    api.ok("POST", f"/api/executions/{ex['execution_id']}/steps/ask/answer", {"answer": "ok"})
    api.settle(ex["execution_id"])
    code, body = api.call("POST", f"/api/executions/{ex['execution_id']}/steps/ask/answer", {"answer": "again"})
    assert code == 409 and body["error"]["code"] == "conflict"
    assert _steps(api.ok("GET", f"/api/executions/{ex['execution_id']}"))["ask"]["output"] == {"answer": "ok"}


def test_answer_to_a_step_that_is_not_waiting_is_409(api):
    ex = _waiting(api)
    code, body = api.call("POST", f"/api/executions/{ex['execution_id']}/steps/after/answer", {"answer": "x"})
    assert code == 409 and body["error"]["code"] == "conflict"
    assert api.settle(ex["execution_id"])["status"] == "waiting_clarification"


def test_cancel_a_waiting_execution_cancels_unfinished_steps(api):
    ex = _waiting(api, [{"id": "first", "tool": "noop"}] + ASK_STEPS)
    body = api.ok("POST", f"/api/executions/{ex['execution_id']}/cancel")
    assert body["status"] == "cancelled"
    steps = _steps(body)
    assert steps["first"]["status"] == "succeeded"
    assert steps["ask"]["status"] == steps["after"]["status"] == "cancelled"
    assert api.settle(ex["execution_id"])["status"] == "cancelled"


def test_cancel_an_already_finished_execution_is_400(api):
    ex = _waiting(api)
    api.ok("POST", f"/api/executions/{ex['execution_id']}/cancel")
    code, body = api.call("POST", f"/api/executions/{ex['execution_id']}/cancel")
    assert code == 400 and body["error"]["code"] == "bad_request"


def test_cancel_unknown_execution_is_404(api):
    code, body = api.call("POST", "/api/executions/missing/cancel")
    assert code == 404 and body["error"]["code"] == "not_found"


def test_list_filters_paginates_and_shows_newest_first(api):
    quick = api.workflow([{"id": "a", "tool": "noop"}], name="quick")
    ask = api.workflow(ASK_STEPS, name="ask")
    started = []
    for wf_id in (quick["id"], ask["id"], quick["id"]):
        started.append(api.start(wf_id)["execution_id"])
        api.settle(started[-1])
    everything = api.ok("GET", "/api/executions/")
    assert everything["total"] == 3
    assert [e["execution_id"] for e in everything["items"]] == started[::-1]
    assert [e["workflow_name"] for e in everything["items"]] == ["quick", "ask", "quick"]
    by_wf = api.ok("GET", f"/api/executions/?workflow_id={quick['id']}")
    assert by_wf["total"] == 2 and {e["workflow_id"] for e in by_wf["items"]} == {quick["id"]}
    assert api.ok("GET", "/api/executions/?status=waiting_clarification")["items"][0]["execution_id"] == started[1]
    assert _total(api, "?status=completed") == 2
    assert _total(api, "?mode=normal") == 3 and _total(api, "?mode=coaching") == 0
    page = api.ok("GET", "/api/executions/?page=2&per_page=2")
    assert (page["page"], page["per_page"], page["total"]) == (2, 2, 3)
    assert [e["execution_id"] for e in page["items"]] == [started[0]]


def test_invalid_status_filter_is_422(api):
    code, body = api.call("GET", "/api/executions/?status=sleeping")
    assert code == 422 and "status" in body["error"]["details"]


def _demo_workflow(api) -> dict:
    definition = yaml.safe_load((DEMO / "invoice_intake.yaml").read_text())
    shutil.copy(DEMO / "data" / "invoices.csv", api.data_dir() / "invoices.csv")
    return api.ok("POST", "/api/workflows", definition, status=201)


def test_demo_invoice_intake_writes_the_summary(api):
    wf = _demo_workflow(api)
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "completed", ex["error"]
    assert _steps(ex)["confirm_large"]["status"] == "skipped"
    summary = api.data_dir() / "summaries" / "invoices-summary.json"
    written = json.loads(summary.read_text())
    assert written["total"] == pytest.approx(5440.74)
    assert written["file"] == "invoices.csv"


def test_demo_invoice_intake_stops_for_a_human_on_a_large_batch(api):
    wf = _demo_workflow(api)
    ex = api.settle(api.start(wf["id"], {"large_batch_total": 1000})["execution_id"])
    assert ex["status"] == "waiting_clarification"
    assert ex["gate"]["step_id"] == "confirm_large"
    assert _steps(ex)["summary"]["status"] == "pending"
    assert not (api.data_dir() / "summaries").exists()


@pytest.mark.parametrize("answer,written", [(" OK ", True), ("no", False), ("", False)])
def test_demo_invoice_intake_writes_a_large_batchs_summary_only_when_the_answer_is_ok(api, answer, written):
    wf = _demo_workflow(api)
    ex_id = api.start(wf["id"], {"large_batch_total": 1000})["execution_id"]
    assert api.settle(ex_id)["status"] == "waiting_clarification"
    api.ok("POST", f"/api/executions/{ex_id}/steps/confirm_large/answer", {"answer": answer})
    ex = api.settle(ex_id)
    summary = api.data_dir() / "summaries" / "invoices-summary.json"
    assert summary.exists() is written
    assert ex["status"] == ("completed" if written else "failed"), ex
    if not written:
        assert _steps(ex)["confirmed"]["status"] == "failed" and _steps(ex)["summary"]["status"] != "succeeded"


def test_sql_query_reads_rows_from_a_configured_sqlite_file(settings, tmp_path):
    from api.app import create_app
    from tests.conftest import Api, authed_client

    db_file = tmp_path / "shop.db"
    with sqlite3.connect(db_file) as conn:
        conn.execute("CREATE TABLE items (id INTEGER, name TEXT)")
        conn.executemany("INSERT INTO items VALUES (?, ?)", [(1, "apple"), (2, "pear")])
    app = create_app(
        settings.with_overrides(sql_connections={"shop": {"url": f"sqlite:///{db_file}", "workspaces": ["default"]}}),
        migrate=False,
    )
    try:
        api = Api(authed_client(app), app.extensions["coach"])
        ex = api.run(
            [
                {
                    "id": "q",
                    "tool": "sql.query",
                    "params": {"connection": "shop", "query": "SELECT id, name FROM items ORDER BY id"},
                }
            ]
        )
        assert ex["status"] == "completed", ex["error"]
        output = _steps(ex)["q"]["output"]
        assert output["rows"] == [{"id": 1, "name": "apple"}, {"id": 2, "name": "pear"}]
        assert output["columns"] == ["id", "name"]
    finally:
        app.extensions["coach"].runner.wait_idle(5)
        app.extensions["coach"].close()
