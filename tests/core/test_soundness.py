"""Sound corrections (issue 31, item 1): what a correction may not do beyond the tool's schema, which corrections a
failed step is put down to, and taking a correction or a change back out of a pack."""

from __future__ import annotations

from core.coaching.corrections import Change, PackStats
from core.coaching.paths import MISSING
from core.coaching.rules import learned_rules
from core.coaching.soundness import blamed, correction_problems, name_missing_fields

ECHO = {"type": "object"}  # echo takes any object
HTTP = {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}, "timeout": {"type": "number"}}}


def test_dropping_a_param_the_step_sets_is_refused_naming_it():
    problems = correction_problems({"rows": 3, "total": 12.5}, {"rows": 3}, ECHO, defined={"rows": 2, "total": 12.5})
    assert list(problems) == ["total"]
    assert "is required" in problems["total"][0]


def test_dropping_a_param_the_tools_schema_lists_as_optional_is_the_tools_business():
    assert correction_problems({"url": "u", "timeout": 5}, {"url": "u"}, HTTP, defined={"url": "u", "timeout": 5}) == {}


def test_dropping_a_param_the_step_does_not_set_is_allowed():
    assert correction_problems({"rows": 3, "extra": 1}, {"rows": 3}, ECHO, defined={"rows": 3}) == {}


def test_a_nested_field_the_step_sets_in_a_param_the_tool_takes_in_any_shape_is_required():
    file_write = {"type": "object", "properties": {"path": {"type": "string"}, "json": {}}}
    suggested = {"path": "s.json", "json": {"rows": 2, "total": 12.5}}
    defined = {"path": "s.json", "json": {"rows": "{{ r }}", "total": "{{ t }}"}}
    problems = correction_problems(suggested, {"path": "s.json", "json": {"rows": 2}}, file_write, defined)
    assert list(problems) == ["json.total"]
    problems = correction_problems(
        suggested, {"path": "s.json", "json": {"rows": 2, "total": "x"}}, file_write, defined
    )
    assert problems == {"json.total": ["must stay a number, as suggested (got a string)"]}


def test_a_number_stays_a_number():
    problems = correction_problems({"total": 12.5}, {"total": "abc"}, ECHO, defined={"total": 1})
    assert problems == {"total": ["must stay a number, as suggested (got a string)"]}
    assert correction_problems({"total": 12}, {"total": 12.75}, ECHO, defined={"total": 1}) == {}


def test_a_described_param_is_judged_by_the_schema_only():
    assert correction_problems({"timeout": 5}, {"timeout": "5"}, HTTP) == {}


def test_a_missing_required_field_is_reported_on_the_field():
    assert name_missing_fields(
        {
            "(params)": ["'url' is a required property"],
            "headers": ["'a' is a required property"],
            "timeout": ["'x' is not of type 'number'"],
        }
    ) == {"url": ["is required"], "headers.a": ["is required"], "timeout": ["'x' is not of type 'number'"]}


def test_the_failed_step_itself_is_blamed_when_it_ran_corrected():
    corrected = {"read": [Change("path", "in.csv", "nope.csv")]}
    assert blamed("read", "file not found", (), corrected) == ["read"]
    assert blamed("other", "file not found", (), corrected) == []


def test_a_step_reading_a_dropped_field_blames_that_correction():
    corrected = {"total": [Change("total", 12.5, MISSING)], "read": [Change("path", "a", "b")]}
    failure = "step 'summary': param json.total: 'dict object' has no attribute 'total'"
    assert blamed("summary", failure, ("total", "read"), corrected) == ["total"]
    assert blamed("summary", "disk full", ("total", "read"), corrected) == []


def test_a_discounted_correction_no_longer_counts_towards_a_rule():
    stats = PackStats()
    change = [Change("to", "a@x", "b@x")]
    for _ in range(3):
        stats.record(change)
    assert [r.count for r in learned_rules(stats)] == [3]
    assert stats.discount(change) is True
    assert stats.corrections == 2 and learned_rules(stats) == []
    assert stats.discount([Change("to", "a@x", "c@x")]) is False  # not in the pack: nothing changes
    assert stats.corrections == 2


def test_removing_one_change_keeps_the_corrections_counted():
    stats = PackStats()
    stats.record([Change("to", "a@x", "b@x"), Change("cc", "none", MISSING)])
    stats.record([Change("to", "a@x", "b@x")])
    removed = stats.remove(Change("cc", "none", MISSING))
    assert removed is not None and removed.count == 1
    assert stats.corrections == 2 and [g.field for g in stats.groups.values()] == ["to"]
    assert stats.remove(Change("cc", "none", MISSING)) is None
    assert PackStats.from_dict(stats.to_dict()).to_dict() == stats.to_dict()
