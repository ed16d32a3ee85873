"""Params templates and conditions: native values, text, filters, strict undefined, the sandbox."""

import pytest

from core.templating import (
    TemplateFailure,
    evaluate_condition,
    evaluate_expression,
    has_template,
    referenced_steps,
    render_value,
    syntax_error,
)

CTX = {
    "vars": {"n": 3, "price": 2.5, "flag": False, "who": "world", "cfg": {"a": 1, "b": [1, 2]}, "items": [3, 1, 2]},
    "steps": {"fetch": {"output": {"total": 42, "rows": [{"amount": "1.5"}, {"amount": "2"}]}, "status": "succeeded"}},
    "execution": {"id": "ex1", "mode": "normal"},
}


# --- native values ------------------------------------------------------------------------------


def test_single_expression_keeps_an_int_an_int():
    assert render_value("{{ vars.n }}", CTX) == 3
    assert type(render_value("{{ vars.n }}", CTX)) is int


def test_single_expression_keeps_a_dict_a_dict_and_a_list_a_list():
    assert render_value("{{ vars.cfg }}", CTX) == {"a": 1, "b": [1, 2]}
    assert render_value("{{ vars.items }}", CTX) == [3, 1, 2]


def test_single_expression_keeps_floats_booleans_and_arithmetic_results():
    assert render_value("{{ vars.price }}", CTX) == 2.5
    assert render_value("{{ vars.flag }}", CTX) is False
    assert render_value("{{ vars.n * 2 }}", CTX) == 6


def test_surrounding_whitespace_still_counts_as_a_single_expression():
    assert render_value("  {{ vars.n }}\n", CTX) == 3


def test_text_around_an_expression_renders_as_text():
    assert render_value("n={{ vars.n }}", CTX) == "n=3"
    assert render_value("hi {{ vars.who }}", CTX) == "hi world"


def test_two_expressions_render_as_text():
    assert render_value("{{ vars.n }}{{ vars.n }}", CTX) == "33"
    assert render_value("{{ vars.who }} and {{ vars.n }}", CTX) == "world and 3"


def test_statements_render_as_text():
    assert render_value("{% for i in vars.items %}{{ i }},{% endfor %}", CTX) == "3,1,2,"


def test_text_templates_see_jinjas_globals_and_leave_the_context_unchanged():
    # rendered through make_module with a shared context that holds the globals (core.templating._module):
    # the same text as Jinja's render, the globals (range, namespace, dict, cycler) there, the caller's dict unchanged
    ctx = {**CTX, "vars": dict(CTX["vars"])}
    before = {k: v for k, v in ctx.items()}
    template = (
        "{% set ns = namespace(total=0) %}{% for i in range(vars.n) %}{% set ns.total = ns.total + i %}"
        "{% endfor %}{% set c = cycler('a', 'b') %}sum={{ ns.total }} {{ c.next() }}{{ c.next() }} "
        "{{ dict(x=1).x }} {{ execution.id }}"
    )
    assert render_value(template, ctx) == "sum=3 ab 1 ex1"
    assert ctx == before and "ns" not in ctx and "c" not in ctx
    assert render_value("{% set x = 5 %}{{ x }}-{{ vars.n }}", ctx) == "5-3"
    assert render_value({"a": "{{ vars.who }}!", "b": ["n={{ vars.n }}"]}, ctx) == {"a": "world!", "b": ["n=3"]}


def test_strings_without_templates_and_non_strings_are_returned_as_they_are():
    value = {"a": "plain", "b": 7, "c": None, "d": [True, 1.5]}
    assert render_value(value, CTX) == value


def test_templates_inside_nested_params_are_rendered():
    params = {"body": {"count": "{{ vars.n }}", "tags": ["x", "{{ vars.who | upper }}"]}, "fixed": 1}
    assert render_value(params, CTX) == {"body": {"count": 3, "tags": ["x", "WORLD"]}, "fixed": 1}


def test_filters_work():
    assert render_value("{{ vars.items | sort }}", CTX) == [1, 2, 3]
    assert render_value("{{ vars.items | length }}", CTX) == 3
    assert render_value("{{ vars.missing | default('none') }}", CTX) == "none"
    total = "{{ steps.fetch.output.rows | map(attribute='amount') | map('float') | sum }}"
    assert render_value(total, CTX) == 3.5


def test_step_outputs_are_readable_by_attribute_and_by_item():
    assert render_value("{{ steps.fetch.output.total }}", CTX) == 42
    assert render_value("{{ steps['fetch']['output']['total'] }}", CTX) == 42


def test_a_field_named_like_a_dict_method_reads_the_field():
    ctx = {"steps": {"fetch": {"output": {"items": [1, 2], "keys": "k", "values": {"v": 1}}}}, "vars": {}}
    assert render_value("{{ steps.fetch.output.items }}", ctx) == [1, 2]
    assert render_value("{{ steps.fetch.output.items | length }}", ctx) == 2
    assert render_value("{{ steps.fetch.output.keys }}", ctx) == "k"
    assert evaluate_condition("steps.fetch.output.values.v == 1", ctx) is True


def test_has_template_finds_templates_in_nested_structures():
    assert has_template({"a": ["x", {"b": "{{ vars.n }}"}]})
    assert has_template("{% if true %}x{% endif %}")
    assert not has_template({"a": ["x", 1, None]})


# --- failures -----------------------------------------------------------------------------------


def test_undefined_variable_raises_naming_the_field_path_and_the_variable():
    with pytest.raises(TemplateFailure) as info:
        render_value({"body": {"to": ["{{ vars.missing }}"]}}, CTX)
    assert info.value.path == "params.body.to[0]"
    assert "missing" in info.value.message


def test_undefined_variable_in_text_raises():
    with pytest.raises(TemplateFailure) as info:
        render_value({"m": "hi {{ vars.nobody }}"}, CTX)
    assert info.value.path == "params.m"
    assert "nobody" in info.value.message


def test_undefined_variable_inside_a_built_list_or_dict_raises():
    with pytest.raises(TemplateFailure, match="missing"):
        render_value("{{ [vars.n, vars.missing] }}", CTX)
    with pytest.raises(TemplateFailure, match="missing"):
        render_value("{{ {'k': vars.missing} }}", CTX)


def test_output_of_a_step_that_does_not_exist_raises():
    with pytest.raises(TemplateFailure, match="nope"):
        render_value("{{ steps.nope.output }}", CTX)


def test_a_runtime_error_in_an_expression_is_a_template_failure():
    with pytest.raises(TemplateFailure, match="params.x"):
        render_value({"x": "{{ vars.n / 0 }}"}, CTX)


def test_syntax_error_in_params_is_reported_at_render_time_with_the_path():
    with pytest.raises(TemplateFailure) as info:
        render_value({"x": "{{ vars.n + }}"}, CTX)
    assert info.value.path == "params.x"


def test_syntax_error_reports_templates_and_expressions():
    assert syntax_error("{{ vars.n + }}")
    assert syntax_error("{% if %}x{% endif %}")
    assert syntax_error("steps.a.output >", expression=True)
    assert syntax_error("{{ vars.n }} and {{ x }}") is None
    assert syntax_error("steps.a.output.n > 3", expression=True) is None
    assert syntax_error("{{ steps.a.output.n > 3 }}", expression=True) is None


# --- the sandbox --------------------------------------------------------------------------------

ESCAPES = [
    "{{ vars.__class__ }}",
    "{{ vars.__class__.__mro__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "x {{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ lipsum.__globals__['os'] }}",
    "{{ vars.cfg.items.__self__ }}",
    "{{ vars.n.__class__.__base__ }}",
    "{{ vars['__class__'] }}",
]


@pytest.mark.parametrize("template", ESCAPES)
def test_sandbox_refuses_dunder_escapes_in_params(template):
    with pytest.raises(TemplateFailure):
        render_value({"p": template}, CTX)


@pytest.mark.parametrize("template", ESCAPES)
def test_sandbox_refuses_dunder_escapes_in_conditions(template):
    with pytest.raises(TemplateFailure):
        evaluate_condition(template, CTX)


def test_sandbox_refuses_mutating_context_values():
    with pytest.raises(TemplateFailure):
        render_value("{{ vars.items.append(4) }}", CTX)
    assert CTX["vars"]["items"] == [3, 1, 2]


# --- conditions and expressions -----------------------------------------------------------------


def test_conditions_are_bare_expressions():
    assert evaluate_condition("steps.fetch.output.total > 40", CTX) is True
    assert evaluate_condition("vars.n == 4", CTX) is False


def test_conditions_may_be_wrapped_in_braces():
    assert evaluate_condition("{{ steps.fetch.output.total > 40 }}", CTX) is True
    assert evaluate_condition("{{ vars.flag }}", CTX) is False


def test_conditions_return_booleans_for_truthy_values():
    assert evaluate_condition("vars.items", CTX) is True
    assert evaluate_condition("vars.who == ''", CTX) is False
    assert evaluate_condition("vars.missing is defined", CTX) is False


def test_condition_on_an_undefined_name_fails_with_the_given_path():
    with pytest.raises(TemplateFailure) as info:
        evaluate_condition("vars.nope > 1", CTX, "when")
    assert info.value.path == "when"
    assert "nope" in info.value.message


def test_condition_with_a_syntax_error_fails():
    with pytest.raises(TemplateFailure):
        evaluate_condition("vars.n >", CTX)


def test_condition_with_a_type_error_fails():
    with pytest.raises(TemplateFailure):
        evaluate_condition("vars.who > 3", CTX)


def test_evaluate_expression_returns_native_values():
    assert evaluate_expression("steps.fetch.output.rows", CTX) == CTX["steps"]["fetch"]["output"]["rows"]
    assert evaluate_expression("{{ vars.cfg.b }}", CTX) == [1, 2]


# --- referenced steps ---------------------------------------------------------------------------


def test_referenced_steps_finds_attribute_and_item_access_in_nested_params():
    params = {
        "a": "{{ steps.a.output.x }}",
        "nested": {"list": ["plain", "sum {{ steps['b'].output | length }}"], "deep": [{"k": '{{ steps["c"] }}'}]},
        "loop": "{% for r in steps.d.output.rows %}{{ r }}{% endfor %}",
        "literal": "steps.e.output is not a template",
        "number": 5,
    }
    assert referenced_steps(params) == {"a", "b", "c", "d"}


def test_referenced_steps_reads_bare_expressions():
    assert referenced_steps("steps.a.output.n > steps['b'].output.n", expression=True) == {"a", "b"}
    assert referenced_steps("{{ steps.a.output }}", expression=True) == {"a"}


def test_referenced_steps_ignores_vars_and_dynamic_keys():
    assert referenced_steps("{{ vars.steps }} {{ steps[vars.which] }}") == set()


def test_referenced_steps_of_a_broken_template_is_empty():
    assert referenced_steps("{{ steps.a.output + }}") == set()
