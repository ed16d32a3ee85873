"""Taking back an approval's decision (issue #31 item 4) through the test client, on SQLite and PostgreSQL: the
decision that settles an approval is held for the workspace's undo window; its author takes it back and the
approval is pending again in the queue; the scanner settles it after the window; after that, 409."""

from __future__ import annotations

from datetime import timedelta

import pytest

from services.orm import utcnow
from tests.api.test_approvals_api import as_user, decide, steps_of, waiting
from tests.api.test_undo import WINDOW_S, undo_window  # noqa: F401 (undo_window: an autouse fixture)

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


@pytest.fixture
def lead(app, services):
    return as_user(app, services, "lead@test.local", "lead")


def _undo(api, approval_id: str, status: int = 200) -> dict:
    code, body = api.call("POST", f"/api/approvals/{approval_id}/undo")
    assert code == status, body
    return body


def _release(services) -> int:
    return services.runner.scans.fire_due(utcnow() + timedelta(seconds=WINDOW_S + 1))


def _pending_ids(api) -> list[str]:
    return [a["approval_id"] for a in api.ok("GET", "/api/approvals?status=pending")["items"]]


def test_an_approval_taken_back_in_the_window_is_pending_again_and_nothing_ran(api, lead, services):
    ex, approval = waiting(api)
    answer = decide(lead, approval["approval_id"], "approve", comment="ok")
    assert answer["execution"]["gate"]["kind"] == "held" and answer["approval"]["status"] == "approved"
    assert approval["approval_id"] not in _pending_ids(api)
    held = api.settle(ex["execution_id"])
    assert held["status"] == "waiting_approval" and steps_of(held)["after"]["status"] == "pending"

    _undo(api, approval["approval_id"], status=403)  # only who decided takes it back
    again = _undo(lead, approval["approval_id"])["approval"]
    assert again["status"] == "pending" and again["decisions"] == []
    assert approval["approval_id"] in _pending_ids(api)
    assert _release(services) == 0
    assert api.settle(ex["execution_id"])["gate"]["kind"] == "approval"
    audit = api.ok("GET", f"/api/audit?execution_id={ex['execution_id']}&action=decision_undo")["items"]
    assert [(e["actor"], e["result"]) for e in audit] == [("lead@test.local", "undone")]

    decide(lead, approval["approval_id"], "reject", comment="no after all")
    assert _release(services) == 1
    done = api.settle(ex["execution_id"])
    assert done["status"] == "failed" and steps_of(done)["sign_off"]["status"] == "rejected"


def test_a_held_approval_settles_after_the_window_and_then_cannot_be_taken_back(api, lead, services):
    ex, approval = waiting(api)
    decide(lead, approval["approval_id"], "approve")
    assert _release(services) == 1
    done = api.settle(ex["execution_id"])
    assert done["status"] == "completed" and steps_of(done)["after"]["output"] == {"paid": 42}
    body = _undo(lead, approval["approval_id"], status=409)
    assert body["error"]["code"] == "step_started" and "the step already started" in body["error"]["message"]


def test_undo_of_a_pending_approval_is_409(api, lead):
    _, approval = waiting(api)
    assert _undo(lead, approval["approval_id"], status=409)["error"]["code"] == "nothing_to_undo"
