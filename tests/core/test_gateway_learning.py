"""Learning per MCP gateway tool: the pure rules (core/gateway_learning.py)."""

from __future__ import annotations

import pytest

from core import gateway_learning as L
from core.coaching.metrics import MetricsState, should_demote
from core.errors import Conflict, ValidationFailed


def never() -> bool:
    raise AssertionError("no spot check is drawn for this call")


def test_deny_and_allow_are_the_policys_whatever_the_mode():
    for mode in L.MODES:
        assert L.gate("deny", False, mode, never) == L.DENY
        assert L.gate("deny", True, mode, never) == L.DENY
        assert L.gate("allow", True, mode, never) == L.FORWARD


def test_an_explicit_require_review_rule_holds_an_auto_tool():
    assert L.gate("require_review", False, L.AUTO, never) == L.HOLD


def test_the_default_hold_is_lifted_in_auto_except_for_the_spot_check_sample():
    assert L.gate("require_review", True, L.AUTO, lambda: False) == L.FORWARD
    assert L.gate("require_review", True, L.AUTO, lambda: True) == L.SPOT_CHECK
    assert L.gate("require_review", True, L.COACHING, never) == L.HOLD
    assert L.gate("require_review", True, L.ALWAYS_REVIEW, never) == L.HOLD


def test_which_mode_applies_a_pin_first_then_auto_the_tools_first():
    assert L.mode_for(None, None) == (L.COACHING, None)
    assert L.mode_for(L.COACHING, L.COACHING) == (L.COACHING, None)
    assert L.mode_for(L.AUTO, None) == (L.AUTO, L.UNIT_TOOL)
    assert L.mode_for(None, L.AUTO) == (L.AUTO, L.UNIT_AGENT)
    assert L.mode_for(L.AUTO, L.AUTO) == (L.AUTO, L.UNIT_TOOL)
    assert L.mode_for(L.AUTO, L.ALWAYS_REVIEW) == (L.ALWAYS_REVIEW, L.UNIT_AGENT)  # one identity kept under review
    assert L.mode_for(L.ALWAYS_REVIEW, L.AUTO) == (L.ALWAYS_REVIEW, L.UNIT_TOOL)  # a pinned tool stays pinned


def test_a_decision_counts_per_tool_per_identity_and_as_a_spot_check_of_the_unit_in_auto():
    base = [(L.TOOL, "shop.add"), (L.AGENT_TOOL, "bot-1/shop.add"), (L.IDENTITY, "bot-1")]
    assert L.decision_scopes("shop.add", "bot-1", None) == base
    assert L.decision_scopes("shop.add", "bot-1", L.UNIT_TOOL) == base + [(L.TOOL_SPOT, "shop.add")]
    assert L.decision_scopes("shop.add", "bot-1", L.UNIT_AGENT) == base + [(L.AGENT_TOOL_SPOT, "bot-1/shop.add")]
    assert all(len(scope) <= 24 for scope, _ in base + [(L.TOOL_SPOT, ""), (L.AGENT_TOOL_SPOT, "")])
    assert L.split_agent_tool_key("bot-1/srv.a/b") == ("bot-1", "srv.a/b")
    assert L.unit_scopes("shop.add", None) == ((L.TOOL, "shop.add"), (L.TOOL_SPOT, "shop.add"))
    assert L.unit_scopes("shop.add", "bot-1") == (
        (L.AGENT_TOOL, "bot-1/shop.add"),
        (L.AGENT_TOOL_SPOT, "bot-1/shop.add"),
    )


def test_promotion_follows_the_steps_rules():
    with pytest.raises(Conflict):
        L.check_mode(L.COACHING, L.AUTO, auto_ready=False, force=False)
    L.check_mode(L.COACHING, L.AUTO, auto_ready=False, force=True)
    L.check_mode(L.COACHING, L.AUTO, auto_ready=True, force=False)
    with pytest.raises(Conflict):  # a pin is undone before a promotion
        L.check_mode(L.ALWAYS_REVIEW, L.AUTO, auto_ready=True, force=False)
    L.check_mode(L.AUTO, L.COACHING, auto_ready=False, force=False)
    with pytest.raises(ValidationFailed):
        L.check_force(True, " ")
    assert L.check_force(True, " the tool is read-only ") == "the tool is read-only"


def test_spot_check_rate_is_a_share():
    assert L.check_rate(None) is None
    assert L.check_rate(0) == 0.0 and L.check_rate(1) == 1.0
    for bad in (-0.1, 1.5, True, "0.5"):
        with pytest.raises(ValidationFailed):
            L.check_rate(bad)


def test_decisions_mapped_as_steps_count_them_make_a_tool_ready_and_spot_rejects_demote():
    state = MetricsState()
    for _ in range(27):
        state.record_decision(L.DECISION_KIND["approve"])
    assert not state.assess().auto_ready
    state.record_decision(L.DECISION_KIND["approve"])  # 28 accepts in a row at the defaults
    assert state.assess().auto_ready
    spot = MetricsState()
    spot.record_decision(L.DECISION_KIND["reject"])
    assert not should_demote(spot)  # one reject is not evidence
    for _ in range(3):
        spot.record_decision(L.DECISION_KIND["reject"])
    assert should_demote(spot)
    edited = MetricsState()
    edited.record_decision(L.DECISION_KIND["edit"])
    assert edited.snapshot()["corrected"] == 1 and edited.snapshot()["acceptance_rate"] == 0.0


def test_learned_corrections_are_stated_in_the_result_the_agent_receives():
    learned = {
        "params": {"reason": "lost", "note": "x"},
        "rules": [
            {"field": "reason", "before": "late", "after": "lost", "count": 3, "share": 1.0},
            {"field": "note", "before": {"$missing": True}, "after": "x", "count": 4, "share": 0.8},
        ],
    }
    assert L.changes_text(learned["rules"]) == "reason: 'late' → 'lost'; note: (absent) → 'x'"
    upstream = {
        "content": [{"type": "text", "text": "refunded"}],
        "isError": False,
        "_meta": {"io.coach/gateway": {"decision": "auto"}, "other": 1},
    }
    out = L.stated(upstream, learned, "io.coach/gateway")
    assert out["content"][0]["text"].startswith("Coach corrected the arguments before the call")
    assert "reason: 'late' → 'lost'" in out["content"][0]["text"] and out["content"][1]["text"] == "refunded"
    assert out["_meta"]["io.coach/gateway"] == {
        "decision": "auto",
        "corrected_arguments": learned["params"],
        "applied_corrections": learned["rules"],
    }
    assert out["_meta"]["other"] == 1 and upstream["content"] == [{"type": "text", "text": "refunded"}]


def test_the_status_is_merged_into_the_results_meta():
    out = L.with_status({"content": [], "_meta": {"k": {"a": 1}, "x": 2}}, "k", {"decision": "auto"})
    assert out["_meta"] == {"k": {"a": 1, "decision": "auto"}, "x": 2}
