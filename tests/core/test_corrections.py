import copy
import json

import pytest

from core.coaching.corrections import (
    MISSING, MISSING_JSON, Change, LearnedRule, PackStats, apply_rules, delete_path, diff_params,
    get_path, learned_rules, set_path,
)


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
    assert diff_params({"a": {"b": 1}}, {"a": 5}) == [Change("a", MISSING, 5),
                                                     Change("a.b", 1, MISSING)]


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


def test_a_change_in_3_of_5_corrections_is_not_a_rule():
    assert learned_rules(stats_from([LIMIT], [LIMIT], [LIMIT], [TIMEOUT], [TIMEOUT])) == []


def test_a_change_in_4_of_5_corrections_is_a_rule_at_exactly_80_percent():
    rules = learned_rules(stats_from([LIMIT], [LIMIT], [LIMIT], [LIMIT, TIMEOUT], [TIMEOUT]))
    assert [(r.field, r.count, r.share) for r in rules] == [("limit", 4, 0.8)]


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
    stats = stats_from([LIMIT], [LIMIT], [TIMEOUT])
    assert learned_rules(stats, min_count=2, min_share=0.66) == [
        LearnedRule("limit", 10, 100, 2, 0.6667)]
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
    rules = [LearnedRule("headers.auth", MISSING, "token", 3, 1.0),
             LearnedRule("debug", True, MISSING, 3, 1.0)]
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
