"""Many people deciding at once (issue #16): on PostgreSQL, where writers really run concurrently, and on SQLite.

Every decision is answered 200 (no deadlock shown as a 500, no valid decision refused as "decided by a concurrent
request"), and every one of them is counted: the metric rows and the correction packs hold exact totals."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from tests.conftest import make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

N = 50
# echo runs inside the decision's transaction; test.work is a tool that takes time, run by the runner, which then
# opens the next suggestion in a transaction of its own, beside the decisions
STEPS = [
    {"id": f"s{i}", "tool": "echo" if i % 2 == 0 else "test.work", "params": {"n": i, "who": "{{ execution.id }}"}}
    for i in range(4)
]


class WorkTool:
    """A read-only tool that takes a little time (not inline: the runner runs it outside any transaction)."""

    name, description, risk = "test.work", "sleeps a little, returns its params", "read"
    params_schema = {"type": "object"}
    honours_deadline = True

    def __init__(self):
        self.calls: list[tuple[dict, str]] = []

    def run(self, params, ctx):
        time.sleep(0.005)
        self.calls.append((params, ctx.execution_id))
        return dict(params)


@pytest.fixture(autouse=True)
def work_tool(services):
    tool = WorkTool()
    services.tools.register(tool)
    return tool


def _client(app, token: str):
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client


def _pending(client, ex_id: str, timeout: float = 120.0) -> dict | None:
    """The execution's open suggestion, asked for every 0.1 s as a client would (not faster: fifty pollers would then
    be most of the load, and starve the runner that opens the suggestions) until one opens or the execution ends."""
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(f"/api/executions/{ex_id}/coaching/suggestion").get_json()
        if (
            body["suggestion"] is not None
            or body["status"] in ("completed", "failed", "cancelled")
            or time.monotonic() > deadline
        ):
            return body["suggestion"]
        time.sleep(0.1)


def _start(api, wf_id: str, count: int) -> list[str]:
    ids = [
        api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id}, status=201)["execution_id"]
        for _ in range(count)
    ]
    api.services.runner.wait_idle(30)
    return ids


def _together(count: int, work) -> list[BaseException]:
    """Run work(i) in `count` threads released at the same moment; the exceptions they raised."""
    barrier, errors = threading.Barrier(count), []

    def run(i):
        try:
            barrier.wait(30)
            work(i)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert not any(t.is_alive() for t in threads), "a decision-maker is stuck"
    return errors


def kind_of(i: int, step: int) -> str:
    return ("accept", "accept", "skip", "manual")[(i + step) % 4]


def test_fifty_concurrent_decision_makers_on_one_workflow(api, app, services):
    wf = api.workflow(STEPS, name="busy")
    tokens = [make_user(services, f"op{i}@test.local", "operator") for i in range(N)]
    ex_ids = _start(api, wf["id"], N)
    codes: Counter = Counter()
    refused: list = []

    def operator(i):
        client = _client(app, tokens[i])
        for step in range(len(STEPS)):
            sug = _pending(client, ex_ids[i])
            assert sug is not None and sug["step_id"] == f"s{step}", (i, step, sug)
            body = {"suggestion_id": sug["suggestion_id"], "decision": kind_of(i, step)}
            if body["decision"] == "manual":
                body["manual_output"] = {"by": i}
            r = client.post(f"/api/executions/{ex_ids[i]}/coaching/decision", json=body)
            codes[r.status_code] += 1
            if r.status_code != 200:
                refused.append((i, step, r.status_code, r.get_json()))

    errors = _together(N, operator)
    assert not refused and not errors, (codes, refused[:5], errors[:5])
    assert codes == {200: N * len(STEPS)}

    for ex_id in ex_ids:
        assert api.settle(ex_id)["status"] == "completed"
    expected = Counter(kind_of(i, s) for i in range(N) for s in range(len(STEPS)))
    body = api.ok("GET", f"/api/metrics/workflows/{wf['id']}")
    assert (body["decisions"], body["accepted"], body["skipped"], body["manual"]) == (
        N * len(STEPS),
        expected["accept"],
        expected["skip"],
        expected["manual"],
    ), body
    assert body["suggestions"] == N * len(STEPS), body
    for step in range(len(STEPS)):
        per_step = body["steps"][f"s{step}"]
        assert per_step["decisions"] == N, (step, per_step)
    operators = {o["operator"]: o for o in api.ok("GET", "/api/metrics/operators")["items"]}
    assert all(operators[f"op{i}@test.local"]["decisions"] == len(STEPS) for i in range(N)), operators
    assert api.ok("GET", "/api/metrics/global")["decisions"] == N * len(STEPS)


def test_first_corrections_of_a_step_arriving_together_are_all_counted(api, app, services):
    count = 30
    wf = api.workflow(
        [
            {"id": "pay", "tool": "echo", "params": {"currency": "EUR", "amount": 1}},
            {"id": "after", "tool": "echo", "params": {}},
        ],
        name="refunds",
    )
    tokens = [make_user(services, f"fix{i}@test.local", "operator") for i in range(count)]
    ex_ids = _start(api, wf["id"], count)
    suggestions = [_pending(api.client, ex_id) for ex_id in ex_ids]
    answers: list = []

    def correct(i):
        r = _client(app, tokens[i]).post(
            f"/api/executions/{ex_ids[i]}/coaching/decision",
            json={
                "suggestion_id": suggestions[i]["suggestion_id"],
                "decision": "correct",
                "correction": {"currency": "GBP", "amount": 1},
            },
        )
        answers.append((r.status_code, r.get_json()))

    errors = _together(count, correct)
    assert not errors, errors[:3]
    assert sorted(code for code, _ in answers) == [200] * count, [a for a in answers if a[0] != 200][:3]
    packs = api.ok("GET", "/api/correction-packs", query_string={"workflow_id": wf["id"]})["items"]
    assert len(packs) == 1 and packs[0]["step_id"] == "pay"
    assert packs[0]["corrections"] == count, packs[0]
    assert api.ok("GET", f"/api/metrics/workflows/{wf['id']}")["corrected"] == count
    # what was learned applies to the next suggestion
    nxt = _start(api, wf["id"], 1)[0]
    assert _pending(api.client, nxt)["params"]["currency"] == "GBP"
