"""services/slack/messages.py: what a review's Slack message shows and which buttons it gets (pure, no Slack)."""

from __future__ import annotations

import json

from services.slack import messages as M


def buttons(message: dict) -> list[dict]:
    return [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]


def review(**kw) -> M.Review:
    return M.Review(
        **{
            "kind": "approval",
            "id": "a1",
            "workspace_id": "w1",
            "question": "Pay 1840?",
            "tool": "http.request",
            "params": {"amount": 1840},
            "url": "https://coach/x",
            **kw,
        }
    )


def test_a_plain_review_gets_approve_reject_and_open_carrying_the_item():
    shown = buttons(M.review_message(review(execution_id="e1")))
    assert [b["action_id"] for b in shown] == [M.APPROVE, M.REJECT, M.OPEN]
    assert M.parse_value(shown[0]["value"]) == {"kind": "approval", "id": "a1", "execution_id": "e1"}
    assert shown[2]["url"] == "https://coach/x"


def test_destructive_or_flagged_by_a_named_rule_is_open_in_coach_only():
    assert M.risk_reason(review(risk="destructive")) == "destructive"
    flagged = {"effect": "require_review", "default": False, "rule": {"name": "Payments over 1000"}}
    assert M.risk_reason(review(policy=flagged)) == 'flagged by the policy "Payments over 1000"'
    for risky in (review(risk="destructive"), review(policy=flagged)):
        assert [b["action_id"] for b in buttons(M.review_message(risky))] == [M.OPEN]
    # the workspace default for a write tool, an allowing rule, or an external read: one click may do
    default = {"effect": "require_review", "default": True, "rule": {"name": "workspace default"}, "risk": "write"}
    allowed = {"effect": "allow", "default": False, "rule": {"name": "echo is fine"}}
    for plain in (review(policy=default), review(policy=allowed), review(risk="external")):
        assert M.risk_reason(plain) is None and len(buttons(M.review_message(plain))) == 3


def test_params_are_cut_short_and_cannot_forge_mentions_or_links():
    message = M.review_message(
        review(question="<!here> pay", params={"note": "<!channel> <https://evil|click> " + "<" * 5000})
    )
    text = json.dumps(message["blocks"]) + message["text"]
    assert "<!here>" not in text
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text and "<https://evil" not in text
    section = next(b for b in message["blocks"] if b["type"] == "section" and "Tool" in b["text"]["text"])
    assert len(section["text"]["text"]) < 3000


def test_links_point_at_the_item_and_decided_messages_say_who():
    assert M.link("https://coach/", "suggestion", "e1") == "https://coach/executions/e1/coach"
    assert M.link("https://coach", "approval", "e1") == "https://coach/executions/e1"
    assert M.link("https://coach", "approval", None) == "https://coach/queue"
    done = M.decided_message("Pay 1840?", "rejected", "lead@x.test", "wrong supplier")
    assert "*Rejected* by lead@x.test: wrong supplier" in json.dumps(done["blocks"])
    assert not buttons(done)
    assert M.parse_value("{not json") is None and M.parse_value('{"kind": "other", "id": "x"}') is None
