"""`make run`'s demo: workflows, a real coaching history (AUTO-ready, a learned pack) and a queue to work."""
from __future__ import annotations

from services import demo


def test_demo_history_makes_refund_review_auto_ready_with_a_learned_pack_and_fills_the_queue(app, api, services):
    workspace = app.extensions["coach_default_workspace"]
    assert demo.load(services, workspace) == ["Invoice intake", "Refund review", "Service check"]

    workflows = {w["name"]: w for w in api.ok("GET", "/api/metrics/workflows")["items"]}
    refund = workflows["Refund review"]
    assert (refund["decisions"], refund["accepted"], refund["corrected"]) == (30, 27, 3)
    assert refund["level"] == "AUTO" and refund["auto_ready"] is True, refund
    assert workflows["Invoice intake"]["decisions"] == 0

    packs = api.ok("GET", f"/api/correction-packs?workflow_id={refund['workflow_id']}")["items"]
    assert len(packs) == 1 and packs[0]["step_id"] == "refund"

    queue = api.ok("GET", "/api/coaching/queue")
    assert queue["total"] == 4
    assert sorted(i["workflow_name"] for i in queue["items"]) == [
        "Invoice intake", "Refund review", "Refund review", "Service check"]
    operators = {o["operator"] for o in api.ok("GET", "/api/metrics/operators")["items"]}
    assert operators == set(demo.OPERATORS)

    # loading again adds nothing: no second history, no more queued executions
    assert demo.load(services, workspace) == []
    assert api.ok("GET", "/api/coaching/queue")["total"] == 4
    again = {w["name"]: w for w in api.ok("GET", "/api/metrics/workflows")["items"]}
    assert again["Refund review"]["decisions"] == 30
