import copy
import json

import pytest

from core.coaching.corrections import Change, PackStats, diff_params
from core.coaching.paths import MISSING, MISSING_JSON, delete_path, get_path, set_path
from core.coaching.rules import LearnedRule, apply_rules, learned_rules, rule_transitions, track_rules


def stats_from(*corrections: list[Change]) -> PackStats:
    stats = PackStats()
    for changes in corrections:
        stats.record(changes)
    return stats


LIMIT = Change("limit", 10, 100)
TIMEOUT = Change("timeout", 30, 60)


# --- diff -----------------------------------------------------------------------------------


def test_diff_of_nested_params_uses_dotted_fields_in_sorted_order():
    before = {"url": "http://a", "headers": {"accept": "json", "auth": {"kind": "basic"}}}
    after = {"url": "http://b", "headers": {"accept": "json", "auth": {"kind": "bearer"}}}
    assert diff_params(before, after) == [
        Change("headers.auth.kind", "basic", "bearer"),
        Change("url", "http://a", "http://b"),
    ]


def test_diff_of_added_and_removed_fields_uses_missing():
    changes = diff_params({"a": 1, "gone": {"x": 1}}, {"a": 1, "new": None})
    assert changes == [Change("gone.x", 1, MISSING), Change("new", MISSING, None)]
    assert changes[0].to_dict() == {"field": "gone.x", "before": 1, "after": MISSING_JSON}


def test_diff_of_equal_params_is_empty_and_lists_compare_as_whole_values():
    assert diff_params({"a": [1, 2], "b": {"c": 1}}, {"b": {"c": 1}, "a": [1, 2]}) == []
    assert diff_params({"a": [1, 2]}, {"a": [2, 1]}) == [Change("a", [1, 2], [2, 1])]


def test_diff_tells_apart_values_python_considers_equal():
    assert diff_params({"a": 1}, {"a": True}) == [Change("a", 1, True)]
    assert diff_params({"a": 1}, {"a": 1.0}) == [Change("a", 1, 1.0)]


def test_diff_escapes_dots_inside_keys():
    changes = diff_params({"file.name": "a"}, {"file.name": "b"})
    assert changes == [Change("file\\.name", "a", "b")]
    assert get_path({"file.name": "b"}, changes[0].field) == "b"


def test_diff_of_a_dict_replaced_by_a_scalar():
    assert diff_params({"a": {"b": 1}}, {"a": 5}) == [Change("a", MISSING, 5), Change("a.b", 1, MISSING)]


def test_change_key_is_stable_hashable_json_and_distinguishes_missing_from_none():
    a, b = Change("x", {"k": 1, "j": 2}, [1]), Change("x", {"j": 2, "k": 1}, [1])
    assert a.key() == b.key() and hash(a) == hash(b) and len({a, b}) == 1
    assert json.loads(a.key())
    assert Change("x", None, 1).key() != Change("x", MISSING, 1).key()


def test_change_round_trips_through_json():
    c = Change("n", MISSING, {"deep": [1, None]})
    again = Change.from_dict(json.loads(json.dumps(c.to_dict())))
    assert again == c and again.before is MISSING


# --- packs and rules ------------------------------------------------------------------------


def test_a_change_made_3_of_3_times_becomes_a_rule():
    rules = learned_rules(stats_from([LIMIT], [LIMIT], [LIMIT]))
    assert rules == [LearnedRule("limit", 10, 100, 3, 1.0)]


def test_a_change_made_only_2_times_is_not_a_rule():
    assert learned_rules(stats_from([LIMIT], [LIMIT])) == []


LIMIT_50 = Change("limit", 10, 50)


def test_a_change_in_3_of_5_corrections_of_its_field_is_not_a_rule():
    assert learned_rules(stats_from([LIMIT], [LIMIT], [LIMIT], [LIMIT_50], [LIMIT_50])) == []


def test_a_change_in_4_of_5_corrections_of_its_field_is_a_rule_at_exactly_80_percent():
    rules = learned_rules(stats_from([LIMIT], [LIMIT], [LIMIT], [LIMIT, TIMEOUT], [LIMIT_50]))
    assert [(r.field, r.count, r.share) for r in rules] == [("limit", 4, 0.8)]


def test_an_unrelated_correction_of_another_field_does_not_undo_a_rule():
    # the demo: currency EUR -> GBP learned from 3 of 3 corrections, then one correction of the amount
    currency = Change("currency", "EUR", "GBP")
    stats = stats_from([currency], [currency], [currency])
    assert learned_rules(stats) == [LearnedRule("currency", "EUR", "GBP", 3, 1.0)]
    stats.record([Change("amount", 40, 45)])
    assert stats.corrections == 4 and stats.field_corrections() == {"currency": 3, "amount": 1}
    assert learned_rules(stats) == [LearnedRule("currency", "EUR", "GBP", 3, 1.0)]
    for _ in range(10):
        stats.record([Change("amount", 40, 45)])
    # each field judged by its own corrections: the amount is a rule now too, the currency still one
    assert [(r.field, r.share) for r in learned_rules(stats)] == [("amount", 1.0), ("currency", 1.0)]


def test_a_correction_that_undoes_a_rule_on_its_field_counts_against_it():
    # an operator who puts EUR back on a suggestion the rule changed disagrees with the rule
    currency = Change("currency", "EUR", "GBP")
    stats = stats_from([currency], [currency], [currency], [Change("currency", "GBP", "EUR")])
    assert learned_rules(stats) == []  # 3 of 4 corrections of the currency


def test_a_correction_that_changed_nothing_counts_but_is_no_evidence_against_a_rule():
    stats = stats_from([LIMIT], [LIMIT], [LIMIT], [])
    assert stats.corrections == 4
    assert learned_rules(stats) == [LearnedRule("limit", 10, 100, 3, 1.0)]


def test_one_correction_cannot_change_a_field_twice():
    with pytest.raises(ValueError):
        PackStats().record([LIMIT, LIMIT_50])


def test_several_fields_changed_together_each_become_rules():
    stats = stats_from([LIMIT, TIMEOUT], [LIMIT, TIMEOUT], [LIMIT, TIMEOUT])
    assert [r.field for r in learned_rules(stats)] == ["limit", "timeout"]


def test_a_change_repeated_within_one_correction_counts_once():
    stats = stats_from([LIMIT, LIMIT])
    assert stats.corrections == 1
    assert stats.groups[LIMIT.key()].count == 1


def test_same_field_changed_to_different_values_are_separate_groups():
    stats = stats_from([LIMIT], [Change("limit", 10, 50)], [LIMIT])
    assert sorted(g.count for g in stats.groups.values()) == [1, 2]


def test_thresholds_are_configurable():
    stats = stats_from([LIMIT], [LIMIT], [LIMIT_50], [TIMEOUT])
    assert learned_rules(stats, min_count=2, min_share=0.66) == [LearnedRule("limit", 10, 100, 2, 0.6667)]
    with pytest.raises(ValueError):
        learned_rules(stats, min_share=0)


def test_operators_who_disagree_evenly_yield_no_rule():
    other = Change("limit", 10, 50)
    stats = stats_from([LIMIT], [LIMIT], [LIMIT], [other], [other], [other])
    assert learned_rules(stats, min_share=0.5) == []


def test_empty_pack_has_no_rules():
    assert learned_rules(PackStats()) == []


def test_pack_stats_round_trip_through_json():
    stats = stats_from([LIMIT], [LIMIT, Change("new", MISSING, [1])], [LIMIT])
    data = json.loads(json.dumps(stats.to_dict()))
    assert data["corrections"] == 3
    assert data["groups"][0] == {"field": "limit", "before": 10, "after": 100, "count": 3}
    again = PackStats.from_dict(data)
    assert again.to_dict() == stats.to_dict()
    assert learned_rules(again) == learned_rules(stats)


def test_pack_import_with_impossible_counts_is_refused():
    with pytest.raises(ValueError):
        PackStats.from_dict({"corrections": 1, "groups": [LIMIT.to_dict() | {"count": 2}]})
    with pytest.raises(ValueError):  # 2 corrections cannot have changed the limit 3 times
        PackStats.from_dict(
            {"corrections": 2, "groups": [LIMIT.to_dict() | {"count": 2}, LIMIT_50.to_dict() | {"count": 1}]}
        )


def test_an_export_from_before_per_field_consistency_imports_and_is_judged_per_field():
    # the format has not changed: per-field counts are derived from the groups
    old_export = {
        "corrections": 4,
        "groups": [
            {"field": "currency", "before": "EUR", "after": "GBP", "count": 3},
            {"field": "amount", "before": 40, "after": 45, "count": 1},
        ],
    }
    stats = PackStats.from_dict(old_export)
    assert stats.to_dict() == old_export
    assert learned_rules(stats) == [LearnedRule("currency", "EUR", "GBP", 3, 1.0)]


def test_rule_transitions_name_rules_that_started_and_stopped():
    a, b = LearnedRule("a", 1, 2, 3, 1.0), LearnedRule("b", 1, 2, 3, 1.0)
    assert rule_transitions([a], [a]) == ([], [])
    assert rule_transitions([a], [LearnedRule("a", 1, 2, 4, 0.8)]) == ([], [])  # still applies
    assert rule_transitions([a], [b]) == ([b], [a])
    assert rule_transitions([], [b, a]) == ([a, b], [])


def test_track_rules_keeps_when_each_applying_rule_started():
    a, b = LearnedRule("a", 1, 2, 3, 1.0), LearnedRule("b", MISSING, 2, 3, 1.0)
    h1 = track_rules(None, [a], [], "t1")
    assert h1 == {
        "since": {a.key(): "t1"},
        "changed_at": "t1",
        "last_change": {"at": "t1", "started": [{"field": "a", "before": 1, "after": 2}], "stopped": []},
    }
    assert track_rules(h1, [], [], "t2") == h1
    h2 = track_rules(h1, [b], [], "t2")
    assert h2["since"] == {a.key(): "t1", b.key(): "t2"} and h1["since"] == {a.key(): "t1"}
    h3 = track_rules(h2, [], [a], "t3")
    assert h3["since"] == {b.key(): "t2"} and h3["changed_at"] == "t3"
    assert h3["last_change"]["stopped"] == [{"field": "a", "before": 1, "after": 2}]
    assert h2["last_change"]["started"] == [{"field": "b", "before": MISSING_JSON, "after": 2}]


def test_record_params_diffs_and_records():
    stats = PackStats()
    changes = stats.record_params({"limit": 10}, {"limit": 100})
    assert changes == [LIMIT] and stats.corrections == 1


# --- applying rules -------------------------------------------------------------------------


def test_apply_rules_changes_a_field_only_when_it_holds_the_before_value():
    rule = LearnedRule("limit", 10, 100, 3, 1.0)
    out, applied = apply_rules({"limit": 10, "q": "x"}, [rule])
    assert out == {"limit": 100, "q": "x"} and applied == [rule]
    out, applied = apply_rules({"limit": 20}, [rule])
    assert out == {"limit": 20} and applied == []
    out, applied = apply_rules({"q": "x"}, [rule])
    assert out == {"q": "x"} and applied == []


def test_apply_rules_does_not_mutate_its_input():
    params = {"opts": {"limit": 10, "tags": ["a"]}}
    snapshot = copy.deepcopy(params)
    out, _ = apply_rules(params, [LearnedRule("opts.limit", 10, 100, 3, 1.0)])
    out["opts"]["tags"].append("b")
    assert params == snapshot


def test_apply_rules_adds_missing_fields_creating_parents_and_removes_fields():
    rules = [LearnedRule("headers.auth", MISSING, "token", 3, 1.0), LearnedRule("debug", True, MISSING, 3, 1.0)]
    out, applied = apply_rules({"debug": True}, rules)
    assert out == {"headers": {"auth": "token"}}
    assert len(applied) == 2
    out, applied = apply_rules({"headers": {"auth": "other"}}, rules)
    assert out == {"headers": {"auth": "other"}} and applied == []


def test_apply_rules_compares_canonical_values():
    rule = LearnedRule("flag", 1, 2, 3, 1.0)
    assert apply_rules({"flag": True}, [rule])[1] == []
    rule = LearnedRule("cfg", [{"a": 1, "b": 2}], [], 3, 1.0)
    assert apply_rules({"cfg": [{"b": 2, "a": 1}]}, [rule])[0] == {"cfg": []}


def test_learned_rules_replay_the_correction_that_taught_them():
    before = {"a": {"b": 1}, "keep": 1, "old": "x"}
    after = {"a": 5, "keep": 1, "new": {"n": [1]}}
    changes = diff_params(before, after)
    rules = learned_rules(stats_from(changes, changes, changes))
    out, applied = apply_rules(before, rules)
    assert out == after
    assert len(applied) == len(changes)
    back = diff_params(after, before)
    assert apply_rules(after, learned_rules(stats_from(back, back, back)))[0] == before


def test_rules_do_not_chain_on_the_same_field():
    rules = [LearnedRule("n", 1, 2, 3, 1.0), LearnedRule("n", 2, 3, 3, 1.0)]
    assert apply_rules({"n": 1}, rules)[0] == {"n": 2}


def test_apply_rules_never_overwrites_a_scalar_parent():
    rule = LearnedRule("a.b", MISSING, 1, 3, 1.0)
    out, applied = apply_rules({"a": 7}, [rule])
    assert out == {"a": 7} and applied == []


def test_learned_rule_round_trips_through_json():
    rule = LearnedRule("x", MISSING, {"y": 1}, 4, 0.8)
    again = LearnedRule.from_dict(json.loads(json.dumps(rule.to_dict())))
    assert again == rule and again.before is MISSING


# --- path helpers ---------------------------------------------------------------------------


def test_path_helpers_get_set_and_delete_nested_values():
    d: dict = {}
    set_path(d, "a.b.c", 1)
    assert d == {"a": {"b": {"c": 1}}}
    assert get_path(d, "a.b.c") == 1
    assert get_path(d, "a.x") is MISSING
    assert get_path(d, "a.b.c.d", default=None) is None
    with pytest.raises(TypeError):
        set_path(d, "a.b.c.d", 2)
    set_path(d, "a.z", 2)
    assert delete_path(d, "a.b.c") is True
    assert d == {"a": {"z": 2}}
    assert delete_path(d, "a.nothing") is False
