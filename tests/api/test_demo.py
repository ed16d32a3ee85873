"""`make run`'s demo: workflows, a real coaching history (AUTO-ready, a learned pack) and a queue to work."""

from __future__ import annotations

import pytest

from services import demo

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


def test_demo_history_makes_refund_review_auto_ready_with_a_learned_pack_and_fills_the_queue(app, api, services):
    workspace = app.extensions["coach_default_workspace"]
    assert demo.load(services, workspace) == [
        "Invoice summary (agent)",
        "Invoice intake",
        "Refund review",
        "Service check",
        "Supplier payment",
    ]

    workflows = {w["name"]: w for w in api.ok("GET", "/api/metrics/workflows")["items"]}
    refund = workflows["Refund review"]
    assert (refund["decisions"], refund["accepted"], refund["corrected"]) == (69, 66, 3)
    # 66 of 69 is evidence of >= 85% at level 0.05 under the sequential test (docs/autonomy.md): honestly ready
    assert refund["level"] == "AUTO" and refund["auto_ready"] is True, refund
    assert refund["evidence"]["decisions_needed_if_all_accepted"] == 0
    assert refund["evidence"]["statistic"] >= refund["evidence"]["log_threshold"]
    # people took seconds to decide, not milliseconds
    assert 4_000 <= refund["decision_latency_ms"]["p50"] <= 40_000 < refund["decision_latency_ms"]["p90"] + 10_000
    assert workflows["Invoice intake"]["decisions"] == 0

    packs = api.ok("GET", f"/api/correction-packs?workflow_id={refund['workflow_id']}")["items"]
    assert len(packs) == 1 and packs[0]["step_id"] == "refund"

    queue = api.ok("GET", "/api/coaching/queue")
    assert queue["total"] == 4
    assert sorted(i["workflow_name"] for i in queue["items"]) == [
        "Invoice intake",
        "Refund review",
        "Refund review",
        "Service check",
    ]
    # a payment waits for two leads' sign-off
    [approval] = api.ok("GET", "/api/approvals?status=pending")["items"]
    assert (approval["kind"], approval["quorum"], approval["separate_duties"]) == ("step", 2, True)
    assert approval["message"] == "Pay 1840 to Acme Paper Ltd for INV-7731?"
    # a rule per workflow where one makes sense; the large refund in the queue shows that it needs review
    rules = {r["name"]: r for r in api.ok("GET", "/api/policies")["items"]}
    assert set(rules) == {
        "Summaries stay in summaries/",
        "Large refunds are reviewed",
        "Only this server is checked",
        "Agent writes are reviewed",
    }
    operators = {o["operator"] for o in api.ok("GET", "/api/metrics/operators")["items"]}
    assert operators == set(demo.OPERATORS)

    # loading again adds nothing: no second history, no more queued executions
    assert demo.load(services, workspace) == []
    assert api.ok("GET", "/api/coaching/queue")["total"] == 4
    assert api.ok("GET", "/api/approvals?status=pending")["total"] == 1
    assert len(api.ok("GET", "/api/policies")["items"]) == 4
    again = {w["name"]: w for w in api.ok("GET", "/api/metrics/workflows")["items"]}
    assert again["Refund review"]["decisions"] == 69


def test_demo_files_live_in_the_demo_workspaces_folder_and_its_workflows_run(app, api, services):
    from pathlib import Path

    workspace = app.extensions["coach_default_workspace"]
    demo.load(services, workspace)
    data = Path(services.settings.resolved_data_dir)
    assert (data / workspace / "invoices.csv").is_file() and not (data / "invoices.csv").exists()
    queue = api.ok("GET", "/api/coaching/queue")["items"]
    verdicts = {}
    for name in ("Invoice intake", "Refund review", "Refund review", "Service check"):
        item = next(i for i in queue if i["workflow_name"] == name and i["execution_id"] not in verdicts)
        ex_id = item["execution_id"]
        verdicts[ex_id] = None
        for _ in range(5):  # accept every suggestion until the execution is done
            pending = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
            if pending is None:
                break
            if pending["step_id"] == "refund":  # the demo's rule: a refund over 200 is reviewed
                verdicts[ex_id] = (pending["params"]["amount"], pending["policy"]["effect"])
            api.ok(
                "POST",
                f"/api/executions/{ex_id}/coaching/decision",
                {"suggestion_id": pending["suggestion_id"], "decision": "accept"},
            )
            api.settle(ex_id)
        ex = api.settle(ex_id)
        if name == "Service check":  # it calls this app's own address, where no server listens under the test client
            ping = next(s for s in ex["steps"] if s["step_id"] == "ping")
            assert "outbound request" not in (ping["error"] or ""), ping  # not refused by the outbound rules
            continue
        assert ex["status"] == "completed", (name, ex)
    assert sorted(v for v in verdicts.values() if v) == [(19.99, "allow"), (250, "require_review")]
    assert (data / workspace / "summaries" / "invoices-summary.json").is_file()
    assert list((data / workspace / "notices").iterdir())
