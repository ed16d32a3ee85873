"""parse_definition: each bad input is refused with details on the right field path."""

import pytest

from core.errors import ValidationFailed
from core.workflow.validation import parse_definition
from tests.core.test_workflow_validation import echo, errors_of, wf


def only_field(details: dict) -> str:
    assert len(details) == 1, details
    return next(iter(details))


# --- the body -----------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [None, [], "name: x", 3])
def test_a_body_that_is_not_an_object_is_refused(body, tools):
    assert errors_of(body, tools) == {"(body)": ["must be an object"]}


def test_missing_name_and_steps_are_both_reported(tools):
    details = errors_of({}, tools)
    assert set(details) == {"name", "steps"}


@pytest.mark.parametrize("name", ["", "   ", 5, None, "x" * 201])
def test_bad_names_are_refused(name, tools):
    assert only_field(errors_of({"name": name, "steps": [echo("a")]}, tools)) == "name"


@pytest.mark.parametrize("steps", [[], {}, "a", None])
def test_steps_must_be_a_non_empty_list(steps, tools):
    assert only_field(errors_of({"name": "wf", "steps": steps}, tools)) == "steps"


def test_a_step_that_is_not_an_object_is_refused(tools):
    assert only_field(errors_of(wf(echo("a"), "b"), tools)) == "steps[1]"


def test_errors_in_several_steps_are_all_reported(tools):
    details = errors_of(wf(echo("a", retries=-1), {"id": "b", "tool": "nope"}), tools)
    assert {"steps[0].retries", "steps[1].tool"} <= set(details)


# --- types and tools ----------------------------------------------------------------------------


def test_unknown_step_type_is_refused(tools):
    details = errors_of(wf({"id": "a", "type": "teleport"}), tools)
    assert "teleport" in details["steps[0].type"][0]


def test_a_step_without_type_or_tool_is_refused(tools):
    assert "steps[0].type" in errors_of(wf({"id": "a"}), tools)


def test_an_agent_step_needs_a_goal_and_registered_tools(tools):
    details = errors_of(wf({"id": "a", "type": "agent", "tools": ["echo", "nope.*"]}), tools)
    assert set(details) == {"steps[0].goal", "steps[0].tools[1]"}
    assert "matches no registered tool" in details["steps[0].tools[1]"][0]


def test_an_agent_step_reads_the_steps_its_goal_names(tools):
    from core.workflow import parse_definition

    defn = parse_definition(
        {
            "name": "w",
            "steps": [
                {"id": "a", "tool": "echo", "params": {"n": 1}},
                {"id": "b", "type": "agent", "goal": "Sum {{ steps.a.output.n }}", "tools": ["echo"], "depends_on": []},
            ],
        },
        tools,
    )
    assert defn.step("b").reads == ("a",) and defn.step("b").agent.tools == ("echo",)


def test_unknown_tool_is_refused_listing_the_known_ones(tools):
    message = errors_of(wf({"id": "a", "type": "action", "tool": "nope"}), tools)["steps[0].tool"][0]
    assert "nope" in message and "echo" in message


def test_action_without_tool_is_refused(tools):
    assert only_field(errors_of(wf({"id": "a", "type": "action"}), tools)) == "steps[0].tool"


def test_params_must_be_an_object(tools):
    assert only_field(errors_of(wf(echo("a", params=["x"])), tools)) == "steps[0].params"


def test_literal_params_failing_the_tool_schema_are_reported_at_the_field(tools):
    details = errors_of(wf({"id": "a", "tool": "math.add", "params": {"a": "one", "b": -1}}), tools)
    assert set(details) == {"steps[0].params.a", "steps[0].params.b"}
    assert "integer" in details["steps[0].params.a"][0]


def test_a_missing_required_param_is_reported_naming_it(tools):
    details = errors_of(wf({"id": "a", "tool": "math.add", "params": {"b": 1}}), tools)
    assert "'a' is a required property" in details["steps[0].params"]


def test_a_literal_param_is_checked_even_when_another_param_is_templated(tools):
    details = errors_of(wf({"id": "a", "tool": "math.add", "params": {"a": "{{ vars.n }}", "b": "two"}}), tools)
    assert only_field(details) == "steps[0].params.b"


def test_an_unknown_param_is_refused_even_when_another_param_is_templated(tools):
    details = errors_of(wf({"id": "a", "tool": "math.add", "params": {"a": "{{ vars.n }}", "typo": 1}}), tools)
    assert "typo" in details["steps[0].params"][0]


# --- ids and dependencies -----------------------------------------------------------------------


@pytest.mark.parametrize("step_id", [None, "", "1abc", "has space", "x" * 65, 7])
def test_bad_step_ids_are_refused(step_id, tools):
    assert "steps[0].id" in errors_of(wf(echo(step_id)), tools)


def test_duplicate_ids_are_refused_naming_both_positions(tools):
    details = errors_of(wf(echo("a"), echo("b"), echo("a")), tools)
    assert only_field(details) == "steps[2].id"
    assert "steps[0]" in details["steps[2].id"][0]


def test_unknown_depends_on_is_refused(tools):
    details = errors_of(wf(echo("a"), echo("b", depends_on=["a", "ghost"])), tools)
    assert only_field(details) == "steps[1].depends_on"
    assert "ghost" in details["steps[1].depends_on"][0]


@pytest.mark.parametrize("bad", [3, [1], {"a": 1}])
def test_depends_on_must_be_ids(bad, tools):
    assert "steps[1].depends_on" in errors_of(wf(echo("a"), echo("b", depends_on=bad)), tools)


def test_a_step_cannot_depend_on_itself(tools):
    details = errors_of(wf(echo("a", depends_on=["a"])), tools)
    assert "itself" in details["steps[0].depends_on"][0]


def test_a_two_step_cycle_is_refused_on_both_steps(tools):
    details = errors_of(wf(echo("a", depends_on=["b"]), echo("b", depends_on=["a"])), tools)
    assert set(details) == {"steps[0].depends_on", "steps[1].depends_on"}
    assert "cycle" in details["steps[0].depends_on"][0]


def test_a_three_step_cycle_is_refused_and_steps_outside_it_are_not_blamed(tools):
    details = errors_of(
        wf(
            echo("root", depends_on=[]),
            echo("a", depends_on=["c"]),
            echo("b", depends_on=["a"]),
            echo("c", depends_on=["b"]),
        ),
        tools,
    )
    assert set(details) == {"steps[1].depends_on", "steps[2].depends_on", "steps[3].depends_on"}


def test_a_cycle_names_its_steps_and_not_those_waiting_behind_it(tools):
    details = errors_of(
        wf(echo("a", depends_on=["b"]), echo("b", depends_on=["a"]), echo("after", depends_on=["b"])), tools
    )
    cycle = "a dependency cycle: the steps wait for each other in a circle, a → b → a"
    assert details == {"steps[0].depends_on": [cycle], "steps[1].depends_on": [cycle]}


def test_a_cycle_through_a_default_dependency_is_refused(tools):
    # b waits for c explicitly; c waits for b by default (the previous step)
    details = errors_of(wf(echo("a"), echo("b", depends_on=["c"]), echo("c")), tools)
    assert set(details) == {"steps[1].depends_on", "steps[2].depends_on"}


def test_a_cycle_through_a_read_is_refused(tools):
    details = errors_of(wf(echo("a", depends_on=[], params={"x": "{{ steps.b.output }}"}), echo("b")), tools)
    assert any("cycle" in m for msgs in details.values() for m in msgs)


def test_reading_a_step_that_does_not_exist_is_refused(tools):
    details = errors_of(wf(echo("a"), echo("b", params={"deep": ["{{ steps.ghost.output.x }}"]})), tools)
    assert "steps.ghost" in details["steps[1]"][0]


def test_a_when_reading_a_step_that_does_not_exist_is_refused(tools):
    assert "steps[0]" in errors_of(wf(echo("a", when="steps['ghost'].output")), tools)


def test_a_step_reading_its_own_output_is_refused(tools):
    details = errors_of(wf(echo("a", params={"x": "{{ steps.a.output }}"})), tools)
    assert "own output" in details["steps[0]"][0]


# --- numbers and enums --------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, -1, "10", True, None, float("inf"), float("nan")])
def test_bad_timeouts_are_refused(value, tools):
    assert only_field(errors_of(wf(echo("a", timeout_s=value)), tools)) == "steps[0].timeout_s"


@pytest.mark.parametrize("value", [-1, 1.5, "2", True, float("inf")])
def test_bad_retries_are_refused(value, tools):
    assert only_field(errors_of(wf(echo("a", retries=value)), tools)) == "steps[0].retries"


def test_negative_backoff_is_refused(tools):
    assert only_field(errors_of(wf(echo("a", retry_backoff_s=-0.1)), tools)) == "steps[0].retry_backoff_s"


def test_on_reject_must_be_ask_or_stop(tools):
    assert only_field(errors_of(wf(echo("a", on_reject="retry")), tools)) == "steps[0].on_reject"


# --- templates ----------------------------------------------------------------------------------


def test_a_template_syntax_error_in_params_is_reported_at_the_param(tools):
    details = errors_of(wf(echo("a", params={"body": {"list": ["ok", "{{ vars.x + }}"]}})), tools)
    assert only_field(details) == "steps[0].params.body.list[1]"
    assert "syntax" in details["steps[0].params.body.list[1]"][0]


@pytest.mark.parametrize("key", ["when", "condition"])
def test_a_syntax_error_in_a_condition_is_reported_at_its_key(key, tools):
    step = {"id": "a", "type": "validation", "condition": "true", key: "vars.x >"}
    assert f"steps[0].{key}" in errors_of(wf(step), tools)


# --- human_input and validation steps -----------------------------------------------------------


def test_human_input_without_question_is_refused(tools):
    assert only_field(errors_of(wf({"id": "ask", "type": "human_input"}), tools)) == "steps[0].question"


def test_validation_without_condition_or_schema_is_refused(tools):
    assert only_field(errors_of(wf({"id": "v", "type": "validation"}), tools)) == "steps[0].condition"


def test_validation_condition_must_be_a_string(tools):
    assert "steps[0].condition" in errors_of(wf({"id": "v", "type": "validation", "condition": True}), tools)


def test_validation_with_an_invalid_json_schema_is_refused(tools):
    details = errors_of(wf({"id": "v", "type": "validation", "schema": {"type": "thing"}, "target": "vars"}), tools)
    assert only_field(details) == "steps[0].schema"
    assert "JSON Schema" in details["steps[0].schema"][0]


def test_validation_with_a_schema_needs_a_target(tools):
    details = errors_of(wf({"id": "v", "type": "validation", "schema": {"type": "object"}}), tools)
    assert only_field(details) == "steps[0].target"


def test_validation_with_schema_and_target_parses(tools):
    defn = parse_definition(
        wf(echo("a"), {"id": "v", "type": "validation", "schema": {"type": "object"}, "target": "steps.a.output"}),
        tools,
    )
    assert defn.step("v").requires == ("a",)


# --- variables in definitions -------------------------------------------------------------------


def test_an_unknown_variable_type_is_refused(tools):
    assert only_field(errors_of(wf(echo("a"), variables={"n": {"type": "int"}}), tools)) == "variables.n.type"


def test_a_default_of_the_wrong_type_is_refused(tools):
    details = errors_of(wf(echo("a"), variables={"n": {"type": "integer", "default": "x"}}), tools)
    assert only_field(details) == "variables.n.default"


def test_variables_must_be_an_object(tools):
    assert only_field(errors_of(wf(echo("a"), variables=["n"]), tools)) == "variables"


def test_a_bad_variable_name_is_refused(tools):
    assert "variables.1bad" in errors_of(wf(echo("a"), variables={"1bad": 1}), tools)


def test_the_error_is_a_validation_failed_with_a_message(tools):
    with pytest.raises(ValidationFailed, match="workflow definition is invalid"):
        parse_definition(wf(echo("a", retries=-1)), tools)
