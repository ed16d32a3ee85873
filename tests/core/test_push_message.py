"""The rules of Web Push that need no server: who wants which kind pushed, and what a push says (core/notifications)."""

from __future__ import annotations

import json

from core import notifications as N


def test_push_defaults_to_the_email_kinds_and_follows_the_persons_switches():
    assert N.wants_push(None, N.APPROVAL_REQUESTED) and not N.wants_push(None, N.SUGGESTION_WAITING)
    assert not N.wants_push({"push": False}, N.APPROVAL_REQUESTED)
    assert N.wants_push({"push": True, "push_kinds": {N.SUGGESTION_WAITING: True}}, N.SUGGESTION_WAITING)
    assert not N.wants_push({"push_kinds": {N.RUN_FAILED: False}}, N.RUN_FAILED)
    assert N.wants_push({"email": False}, N.RUN_FAILED)  # email off says nothing about push


def test_a_push_opens_the_item_and_its_tag_is_the_event_so_a_repeat_replaces_it():
    approval = N.push_message(N.APPROVAL_REQUESTED, "approval:a1", {"approval_id": "a1", "text": "Pay 42?"})
    assert approval == {
        "title": "Approval requested",
        "body": "Pay 42?",
        "url": "/queue?approval=a1",
        "tag": "approval:a1",
        "kind": "approval_requested",
    }
    failed = N.push_message(N.RUN_FAILED, "run_failed:e1:t", {"execution_id": "e1", "subject": "A run failed"})
    assert failed["url"] == "/executions/e1" and failed["body"] == "A run failed"
    waiting = N.push_message(N.SUGGESTION_WAITING, "suggestion:s1", {"execution_id": "e1", "suggestion_id": "s1"})
    assert waiting["url"] == "/executions/e1/coach"
    assert N.push_message(N.DEMOTION, "demotion:w:1", {"workflow_id": "w1"})["url"] == "/workflows/w1"


def test_a_push_stays_small_whatever_the_message():
    huge = N.push_message(N.REVIEW_HELD, "approval:" + "x" * 500, {"approval_id": "a", "text": "y" * 10_000})
    assert len(json.dumps(huge).encode()) < 1024  # far below the ~4 KB a push service carries
    assert len(huge["body"]) == 241 and huge["body"].endswith("…")
