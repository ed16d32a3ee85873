"""parse_definition: what a good definition becomes, and where each mistake is reported."""

import pytest

from core.errors import ValidationFailed
from core.workflow.validation import parse_definition
from core.workflow.variables import validate_variables


class Echo:
    name, description, risk = "echo", "returns its params", "read"
    params_schema = {"type": "object"}

    def run(self, params, ctx):
        return params


class Add:
    name, description, risk = "math.add", "adds two integers", "read"
    params_schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "minimum": 0}},
        "required": ["a"],
        "additionalProperties": False,
    }

    def run(self, params, ctx):
        return {"sum": params["a"] + params.get("b", 0)}


def wf(*steps, **extra):
    return {"name": "wf", **extra, "steps": list(steps)}


def echo(step_id, **kw):
    return {"id": step_id, "type": "action", "tool": "echo", **kw}


def errors_of(data, tools) -> dict:
    with pytest.raises(ValidationFailed) as info:
        parse_definition(data, tools)
    assert info.value.code == "validation_failed"
    return info.value.details


SHAPES_EXAMPLE = {
    "name": "Invoice intake",
    "description": "...",
    "variables": {"who": {"type": "string", "default": "world"}},
    "steps": [
        {"id": "greet", "type": "action", "tool": "echo", "params": {"message": "hi {{ vars.who }}"}},
        {"id": "check", "type": "validation", "depends_on": ["greet"], "condition": "steps.greet.output.message != ''"},
    ],
}


# --- definitions that parse ---------------------------------------------------------------------


def test_the_design_shapes_example_parses(tools):
    defn = parse_definition(SHAPES_EXAMPLE, tools)
    assert defn.name == "Invoice intake"
    assert defn.order == ("greet", "check")
    assert defn.variables["who"].default == "world" and defn.variables["who"].type == "string"
    greet, check = defn.steps
    assert (greet.type, greet.tool, greet.params) == ("action", "echo", {"message": "hi {{ vars.who }}"})
    assert check.requires == ("greet",) and check.reads == ("greet",)
    assert greet.timeout_s == 300 and greet.retries == 0 and greet.on_reject == "ask"
    assert defn.source["steps"] == SHAPES_EXAMPLE["steps"]


def test_depends_on_defaults_to_the_previous_step(tools):
    defn = parse_definition(wf(echo("a"), echo("b"), echo("c")), tools)
    assert [s.depends_on for s in defn.steps] == [(), ("a",), ("b",)]
    assert defn.order == ("a", "b", "c")


def test_explicit_empty_depends_on_makes_an_independent_branch(tools):
    defn = parse_definition(wf(echo("a"), echo("b", depends_on=[]), echo("c", depends_on=["a", "b"])), tools)
    assert defn.step("b").depends_on == ()
    assert defn.step("b").requires == ()
    assert defn.step("c").depends_on == ("a", "b")


def test_depends_on_may_be_a_single_id(tools):
    assert parse_definition(wf(echo("a"), echo("b"), echo("c", depends_on="a")), tools).step("c").depends_on == ("a",)


def test_reading_a_steps_output_adds_it_to_requires(tools):
    defn = parse_definition(
        wf(
            echo("a"),
            echo("b", depends_on=[]),
            echo("c", depends_on=[], params={"x": {"y": ["{{ steps.a.output }}"]}}, when="steps['b'].output.ok"),
        ),
        tools,
    )
    c = defn.step("c")
    assert set(c.requires) == {"a", "b"} and c.reads == ("a", "b")
    assert defn.order.index("c") > max(defn.order.index("a"), defn.order.index("b"))


def test_order_follows_dependencies_not_definition_order(tools):
    defn = parse_definition(wf(echo("late", depends_on=["early"]), echo("early", depends_on=[])), tools)
    assert defn.order == ("early", "late")


def test_steps_ready_together_are_ordered_as_defined(tools):
    # r1 and r2 are done together; b (after r2) is defined before a (after r1), so b comes first
    defn = parse_definition(
        wf(
            echo("r1", depends_on=[]),
            echo("r2", depends_on=[]),
            echo("b", depends_on=["r2"]),
            echo("a", depends_on=["r1"]),
            echo("z", depends_on=["a", "b"]),
        ),
        tools,
    )
    assert defn.order == ("r1", "r2", "b", "a", "z")


def test_type_defaults_to_action_when_a_tool_is_given(tools):
    assert parse_definition(wf({"id": "a", "tool": "echo"}), tools).steps[0].type == "action"


def test_templated_params_are_not_checked_against_the_tool_schema(tools):
    defn = parse_definition(
        wf({"id": "a", "tool": "math.add", "params": {"a": "{{ vars.n }}", "b": "{{ vars.m }}"}}), tools
    )
    assert defn.steps[0].params == {"a": "{{ vars.n }}", "b": "{{ vars.m }}"}


def test_timeout_and_retries_are_read(tools):
    s = parse_definition(wf(echo("a", timeout_s=0.5, retries=3, retry_backoff_s=0)), tools).steps[0]
    assert (s.timeout_s, s.retries, s.retry_backoff_s) == (0.5, 3, 0)


def test_unknown_step_fields_are_kept_in_extra(tools):
    assert parse_definition(wf(echo("a", color="blue")), tools).steps[0].extra == {"color": "blue"}


def test_variable_shorthand_is_a_default(tools):
    v = parse_definition(wf(echo("a"), variables={"who": "world"}), tools).variables["who"]
    assert (v.type, v.default, v.has_default) == ("any", "world", True)


# --- decisions ----------------------------------------------------------------------------------


def test_a_decisions_branch_steps_wait_for_the_decision(tools):
    defn = parse_definition(
        wf(
            echo("yes", depends_on=[]),
            echo("no", depends_on=[]),
            {
                "id": "route",
                "type": "decision",
                "depends_on": [],
                "condition": "vars.big",
                "then": ["yes"],
                "else": "no",
            },
        ),
        tools,
    )
    assert defn.step("route").then == ("yes",) and defn.step("route").otherwise == ("no",)
    assert "route" in defn.step("yes").requires and "route" in defn.step("no").requires
    assert defn.order.index("route") < defn.order.index("yes")
    assert defn.order.index("route") < defn.order.index("no")


def test_decision_then_referencing_an_unknown_step_is_refused(tools):
    details = errors_of(wf({"id": "d", "type": "decision", "condition": "true", "then": ["ghost"]}), tools)
    assert "ghost" in " ".join(details["steps[0].then"])


def test_decision_else_referencing_an_unknown_step_is_refused(tools):
    details = errors_of(wf(echo("a"), {"id": "d", "type": "decision", "condition": "true", "else": ["ghost"]}), tools)
    assert "ghost" in " ".join(details["steps[1].else"])


def test_decision_without_condition_is_refused(tools):
    assert "steps[0].condition" in errors_of(wf({"id": "d", "type": "decision", "then": []}), tools)


def test_decision_with_only_a_schema_is_refused_because_it_needs_a_condition(tools):
    details = errors_of(wf({"id": "d", "type": "decision", "schema": {"type": "object"}, "target": "vars"}), tools)
    assert "steps[0].condition" in details


def test_a_decision_that_depends_on_its_own_branch_is_a_cycle(tools):
    details = errors_of(
        wf(
            {"id": "d", "type": "decision", "condition": "true", "then": ["a"], "depends_on": ["a"]},
            echo("a", depends_on=[]),
        ),
        tools,
    )
    assert any("cycle" in m for msgs in details.values() for m in msgs)


# --- validate_variables -------------------------------------------------------------------------

VARIABLES = {
    "who": {"type": "string", "default": "world"},
    "n": {"type": "integer", "required": True},
    "ratio": {"type": "number"},
    "opts": {"type": "object", "default": {"fast": True}},
    "anything": "shorthand default",
}


@pytest.fixture(scope="module")
def with_vars(tools):
    return parse_definition(wf(echo("a"), variables=VARIABLES), tools)


def variable_errors(defn, given) -> dict:
    with pytest.raises(ValidationFailed) as info:
        validate_variables(defn, given)
    return info.value.details


def test_defaults_are_filled_in_and_optional_variables_without_default_are_none(with_vars):
    assert validate_variables(with_vars, {"n": 2}) == {
        "who": "world",
        "n": 2,
        "ratio": None,
        "opts": {"fast": True},
        "anything": "shorthand default",
    }


def test_given_values_override_defaults(with_vars):
    values = validate_variables(with_vars, {"n": 1, "who": "you", "ratio": 2, "anything": [1]})
    assert (values["who"], values["ratio"], values["anything"]) == ("you", 2, [1])


def test_an_integer_is_a_number_but_a_float_is_not_an_integer(with_vars):
    assert validate_variables(with_vars, {"n": 1, "ratio": 0.5})["ratio"] == 0.5
    assert "variables.n" in variable_errors(with_vars, {"n": 1.5})


def test_an_unknown_variable_is_refused_listing_the_known_ones(with_vars):
    details = variable_errors(with_vars, {"n": 1, "typo": 3})
    assert list(details) == ["variables.typo"]
    assert "who" in details["variables.typo"][0]


def test_a_missing_required_variable_is_refused(with_vars):
    assert variable_errors(with_vars, {}) == {"variables.n": ["is required"]}


def test_a_required_variable_given_as_null_is_refused(with_vars):
    assert variable_errors(with_vars, {"n": None}) == {"variables.n": ["is required"]}


@pytest.mark.parametrize(
    "given, field",
    [
        ({"n": "3"}, "variables.n"),
        ({"n": True}, "variables.n"),
        ({"n": 1, "who": 5}, "variables.who"),
        ({"n": 1, "ratio": "0.5"}, "variables.ratio"),
        ({"n": 1, "opts": []}, "variables.opts"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_at_its_name(with_vars, given, field):
    assert list(variable_errors(with_vars, given)) == [field]


def test_every_bad_variable_is_reported_at_once(with_vars):
    assert set(variable_errors(with_vars, {"who": 1, "extra": 2})) == {
        "variables.who",
        "variables.extra",
        "variables.n",
    }


def test_none_given_means_no_variables(tools):
    defn = parse_definition(wf(echo("a"), variables={"who": {"default": "world"}}), tools)
    assert validate_variables(defn, None) == {"who": "world"}
    assert validate_variables(parse_definition(wf(echo("a")), tools), None) == {}


def test_variables_that_are_not_an_object_are_refused(with_vars):
    assert variable_errors(with_vars, ["n", 1]) == {"variables": ["must be an object"]}
