"""core/gateway.py: what makes two agent calls the same call, what an agent receives (capped), and the words of a
denial, a reject and a held call; and `match.agent` in the policy engine."""

from __future__ import annotations

import pytest

from core import gateway as G
from core.errors import ValidationFailed
from core.policy import Call, RuleSet, compile_rule


def test_the_same_tool_and_arguments_in_any_key_order_are_the_same_call():
    one = G.call_key("shop.add", {"a": 1, "b": {"x": 1, "y": 2}}, None)
    assert one == G.call_key("shop.add", {"b": {"y": 2, "x": 1}, "a": 1}, None)
    assert one != G.call_key("shop.add", {"a": 1, "b": {"x": 1, "y": 3}}, None)
    assert one != G.call_key("shop.sub", {"a": 1, "b": {"x": 1, "y": 2}}, None)


def test_an_idempotency_key_makes_calls_the_same_whatever_their_arguments():
    meta = {"progressToken": 3, "idempotencyKey": "k-1"}
    key = G.idempotency_key(meta)
    assert key == "k-1"
    assert G.call_key("t", {"a": 1}, key) == G.call_key("t", {"a": 2}, key)
    assert G.idempotency_key({"io.coach/idempotencyKey": 42}) == "42"
    assert G.idempotency_key({"idempotencyKey": True}) is None and G.idempotency_key(None) is None
    assert G.idempotency_key({"idempotency_key": "  "}) is None


def test_a_small_result_passes_whole_and_a_large_one_is_cut_and_says_so():
    small = {"content": [{"type": "text", "text": "hi"}], "isError": False}
    assert G.cap(small, 1024) == (small, G.size(small))
    big = {
        "content": [{"type": "text", "text": "x" * 10_000}],
        "structuredContent": {"t": "x" * 10_000},
        "isError": False,
    }
    capped, full = G.cap(big, 2048)
    assert full == G.size(big) > 20_000
    assert G.size(capped) <= 2048 + 200
    # its structured content could not come: an error result (a client checks a success against the outputSchema)
    assert "structuredContent" not in capped and capped["isError"] is True
    assert "cut by Coach's gateway" in capped["content"][0]["text"]
    assert capped["_meta"][G.STATUS_META] == {"truncated": True, "bytes": full}
    text_only, _ = G.cap({"content": [{"type": "text", "text": "x" * 10_000}], "isError": False}, 2048)
    assert text_only["isError"] is False  # text cut to fit is still the tool's answer


def test_the_words_an_agent_receives():
    rule = {"effect": "deny", "default": False, "rule": {"id": "r1", "name": "no refunds", "reason": "finance only"}}
    assert (
        G.denied_text("shop.refund", rule) == "Coach denied this call of shop.refund: policy rule 'no refunds': "
        "finance only."
    )
    assert "default policy for destructive tools" in G.denied_text("x", {"default": True, "risk": "destructive"})
    assert "Their feedback: ask first" in G.rejected_text("shop.add", "lead@x", "ask first")
    assert "Send the same call again" in G.held_text("shop.add", "c1", 45)
    assert G.error_result("no", decision="denied") == {
        "content": [{"type": "text", "text": "no"}],
        "isError": True,
        "_meta": {G.STATUS_META: {"decision": "denied"}},
    }


def _rules(*rules):
    return RuleSet([compile_rule(r, rule_id=f"r{i}") for i, r in enumerate(rules)])


def test_match_agent_names_agents_and_star_means_any_agent_but_never_a_workflows_call():
    rules = _rules(
        {"name": "codex", "effect": "deny", "match": {"agent": ["codex", "cursor"]}},
        {"name": "any agent", "effect": "require_review", "order": 1, "match": {"agent": "*"}},
    )
    assert rules.evaluate(Call(tool="t", agent="codex")).rule.name == "codex"
    assert rules.evaluate(Call(tool="t", agent="claude")).rule.name == "any agent"
    assert rules.evaluate(Call(tool="t")).default is True


@pytest.mark.parametrize("value", [[], "", [1], ["x"] * 201])
def test_a_bad_match_agent_is_refused(value):
    with pytest.raises(ValidationFailed) as caught:
        compile_rule({"name": "n", "effect": "deny", "match": {"agent": value}})
    assert "match.agent" in caught.value.details
