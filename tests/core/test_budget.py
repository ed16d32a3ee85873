"""Every evaluation of user-written code runs within a budget (core.budget): templates, conditions and
JSON Schema checks end quickly with a clear error however they are written (issue #11, item 1)."""

from __future__ import annotations

import time

import pytest

from core import budget
from core.schema import errors, user_schema_problems
from core.templating import TemplateFailure, evaluate_condition, render_value

CONTEXT = {"vars": {"who": "a" * 26, "n": 5}, "steps": {"fetch": {"output": {"rows": [1, 2, 3]}}}, "execution": {}}

# (template, words the failure must contain)
BOMBS = [
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "time budget"),
    ("{% set l = range(100000)|list %}{% for a in l %}{% for b in l %}{{ b }}{% endfor %}{% endfor %}", "budget"),
    ("{{ 10 ** 4000000 }}", "a power"),
    ("{{ lipsum(20000) }}", "lipsum"),
    ("{{ 'a' * 1000000000 }}", "repeated string"),
    ("{{ (2 ** 30) * (2 ** 30) * (2 ** 30) * (2 ** 30000) * (2 ** 30000) * (2 ** 30000) }}", "product"),
    ("x{{ '%0999999999d' % 1 }}", "format width"),
    ("{{ '{:>999999999}'.format(1) }}", "format width"),
    ("{{ 'a'|center(1000000000) }}", "center filter"),
    ("{{ '%-999999999s'|format('x') }}", "format width"),
    ("{{ 'x'.ljust(999999999) }}", "string method"),
    (
        "{% set ns = namespace(s='a') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
        "1,000,000",
    ),
    ("{% macro f(s, n) %}{% if n %}{{ f(s ~ s, n - 1) }}{% endif %}{% endmacro %}{{ f('a', 40) }}", "1,000,000"),
    ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "recursion|time budget"),
    ("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}", "budget"),
]


@pytest.mark.parametrize("template,words", BOMBS, ids=[b[1] + str(i) for i, b in enumerate(BOMBS)])
def test_a_runaway_template_fails_quickly_naming_the_field_and_the_limit(template, words):
    started = time.thread_time()
    with pytest.raises(TemplateFailure) as failure:
        render_value({"message": template}, CONTEXT)
    spent = time.thread_time() - started
    assert failure.value.path == "params.message"
    assert any(w in failure.value.message for w in words.split("|")), failure.value.message
    # the budget is 20 ms of this thread's CPU time (what a loaded machine does not inflate): a bomb that got past
    # it would spend seconds to minutes
    assert spent < 0.25, f"{template!r} spent {spent * 1000:.0f} ms of CPU"


def test_the_rendered_params_together_stay_within_the_size_budget():
    # each string is under the limit; the five together are not (they would be a 5 MB suggestion)
    params = {f"p{i}": "{{ 'x' * 400000 }}" for i in range(5)}
    with pytest.raises(TemplateFailure) as failure:
        render_value(params, CONTEXT)
    assert "the rendered params" in failure.value.message


def test_a_runaway_condition_fails_the_same_way():
    with pytest.raises(TemplateFailure) as failure:
        evaluate_condition("(range(100000) | list | length) ** 10000000 > 1", CONTEXT, "when")
    assert failure.value.path == "when" and "a power" in failure.value.message


def test_ordinary_templates_are_untouched_by_the_budget():
    params = {
        "greeting": "hi {{ vars.who|upper }} {{ '%5d' % vars.n }} {{ 'ab' * 3 }} {{ 2 ** 64 }}",
        "rows": "{{ steps.fetch.output.rows }}",
        "joined": "{% for r in steps.fetch.output.rows %}{{ loop.index }}:{{ r }}{{ ',' if not loop.last }}"
        "{% endfor %}",
        "ns": "{% set ns = namespace(t=0) %}{% for r in steps.fetch.output.rows %}{% set ns.t = ns.t + r %}"
        "{% endfor %}{{ ns.t }}",
        "centered": "{{ 'x'|center(5) }}|{{ '{:>4}'.format(7) }}|{{ vars.who ~ '!' }}",
    }
    assert render_value(params, CONTEXT) == {
        "greeting": f"hi {'A' * 26}     5 ababab 18446744073709551616",
        "rows": [1, 2, 3],
        "joined": "1:1,2:2,3:3",
        "ns": "6",
        "centered": "  x  |   7|" + "a" * 26 + "!",
    }


def test_the_time_budget_is_a_setting():
    loop = "{% for i in range(100000) %}{% for j in range(100) %}{% endfor %}{% endfor %}"
    before = budget.limits()
    try:
        budget.configure(time_s=5.0, max_ops=200_000)
        with pytest.raises(TemplateFailure) as failure:
            render_value({"p": loop}, CONTEXT)
        assert "200,000 operations" in failure.value.message
    finally:
        budget.configure(time_s=before.time_s, max_ops=before.max_ops)


def test_a_backtracking_pattern_is_matched_in_linear_time():
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "pattern": "^(a|a)*$"}},
        "patternProperties": {"^(b|b)*$": {"type": "string"}},
        "additionalProperties": False,
    }
    value = {"name": "a" * 5000 + "!", "b" * 5000 + "!": 1}
    started = time.thread_time()
    found = [e.message for e in errors(schema, value)]
    # CPU time, not wall time: a backtracking engine would need about 2**5000 steps, RE2 a few microseconds
    assert time.thread_time() - started < 0.1
    assert any("does not match '^(a|a)*$'" in m for m in found)
    assert any("does not match any of the regexes" in m for m in found)


def test_user_schemas_may_not_fetch_refer_nowhere_or_use_patterns_re2_lacks():
    assert (
        user_schema_problems(
            {
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/a"}},
                "$defs": {"a": {"type": "string", "pattern": "^x+$"}},
            }
        )
        == []
    )
    remote = user_schema_problems({"$ref": "http://127.0.0.1:9/schema.json"})
    assert remote and "outside the schema" in remote[0]
    dangling = user_schema_problems({"$ref": "#/$defs/missing"})
    assert dangling and "does not resolve" in dangling[0]
    backref = user_schema_problems({"type": "string", "pattern": "(a)\\1"})
    assert backref and "RE2" in backref[0]
    assert user_schema_problems({"type": 5}) and "not a valid JSON Schema" in user_schema_problems({"type": 5})[0]


def test_the_time_budget_counts_the_evaluations_cpu_time_not_the_time_it_waited():
    """A busy machine (here: the evaluation's thread sleeping, as when other processes hold the CPU) does not
    fail an evaluation that itself costs little; one that really computes past the budget fails."""
    with budget.metered("waiting") as meter:
        time.sleep(0.05)  # five budgets of wall time, next to no CPU time
        for _ in range(200):
            budget.tick()
        assert meter.spent() < 0.01
    with pytest.raises(budget.BudgetExceeded, match="time budget of 10 ms"):
        with budget.metered("computing"):
            started = time.thread_time()
            while time.thread_time() - started < 0.05:
                budget.tick()
