"""The question a confirm rule puts to the person at the agent, and what an answer means (core/gateway_confirm.py)."""

from __future__ import annotations

import pytest

from core import gateway_confirm as C
from core import gateway_learning as L

SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "number", "minimum": 0},
        "count": {"type": "integer"},
        "reason": {"type": "string", "enum": ["damaged", "lost"]},
        "notify": {"type": "boolean"},
        "items": {"type": "array", "items": {"type": "string"}},
    },
}
ARGS = {"amount": 5.5, "count": 2, "reason": "lost", "notify": False, "items": ["a"]}


def test_the_form_asks_run_or_not_and_offers_the_primitive_arguments_prefilled():
    form = C.form("bot", "shop.refund", ARGS, SCHEMA, {"name": "ask refunds", "reason": "money"})
    props = form.schema["properties"]
    assert props[C.DECISION_FIELD]["enum"] == [C.RUN, C.DONT] and form.schema["required"] == [C.DECISION_FIELD]
    assert props["amount"]["default"] == 5.5 and props["amount"]["minimum"] == 0
    assert props["reason"]["enum"] == ["damaged", "lost"] and props["notify"]["type"] == "boolean"
    assert "items" not in props  # an array cannot be edited in a flat form: shown in the message only
    assert set(form.editable) == {"amount", "count", "reason", "notify"}
    assert "bot wants to call shop.refund" in form.message and '"items"' in form.message
    assert "ask refunds" in form.message and "money" in form.message


def test_an_answer_is_accept_edit_decline_or_cancel():
    editable = C.form("bot", "t", ARGS, SCHEMA, None).editable
    assert C.read_answer("accept", {C.DECISION_FIELD: C.RUN}, ARGS, editable).kind == C.ACCEPT
    # the client sends the prefilled values back: unchanged is no edit (2.0 for an integer 2 too)
    same = C.read_answer("accept", {**ARGS, "count": 2.0, C.DECISION_FIELD: C.RUN}, ARGS, editable)
    assert same.kind == C.ACCEPT and same.arguments == ARGS
    edit = C.read_answer("accept", {C.DECISION_FIELD: C.RUN, "count": 3, C.REASON_FIELD: " ok "}, ARGS, editable)
    assert edit.kind == C.EDIT and edit.arguments["count"] == 3 and edit.reason == "ok"
    assert edit.changes == [{"field": "count", "before": 2, "after": 3}]
    no = C.read_answer("accept", {C.DECISION_FIELD: C.DONT, C.REASON_FIELD: "not now"}, ARGS, editable)
    assert (no.kind, no.reason, no.arguments) == (C.DECLINE, "not now", ARGS)
    assert C.read_answer("decline", None, ARGS, editable).kind == C.DECLINE
    assert C.read_answer("cancel", None, ARGS, editable).kind == C.CANCEL
    assert (C.AS_REVIEW[C.ACCEPT], C.AS_REVIEW[C.EDIT], C.AS_REVIEW[C.DECLINE]) == ("approve", "edit", "reject")
    assert C.CANCEL not in C.AS_REVIEW  # no decision


@pytest.mark.parametrize(
    "action, content",
    [
        ("accept", {C.DECISION_FIELD: "maybe"}),
        ("accept", {C.DECISION_FIELD: C.RUN, "count": "three"}),
        ("accept", {C.DECISION_FIELD: C.RUN, "notify": 1}),
        ("accept", {C.DECISION_FIELD: C.RUN, "count": 2.5}),
        ("accept", {C.REASON_FIELD: 7}),
        ("shrug", None),
    ],
)
def test_an_answer_the_form_did_not_ask_for_is_refused(action, content):
    with pytest.raises(C.BadAnswer):
        C.read_answer(action, content, ARGS, C.form("bot", "t", ARGS, SCHEMA, None).editable)


def test_a_confirm_is_learned_like_the_defaults_holds_and_counts_apart_at_the_agent():
    never = lambda: False  # noqa: E731
    assert L.gate("confirm", False, L.COACHING, never) == L.HOLD  # asked
    assert L.gate("confirm", False, L.AUTO, never) == L.FORWARD  # this tool (for this agent) earned AUTO
    assert L.gate("confirm", False, L.AUTO, lambda: True) == L.SPOT_CHECK
    assert L.gate("confirm", False, L.ALWAYS_REVIEW, never) == L.HOLD
    assert L.gate("require_review", False, L.AUTO, never) == L.HOLD  # a require_review rule still holds
    scopes = L.decision_scopes("shop.add", "bot", L.UNIT_AGENT, at_agent=True)
    assert (L.AGENT_CONFIRM, "bot/shop.add") in scopes and scopes[-1] == (L.AGENT_TOOL_SPOT, "bot/shop.add")
