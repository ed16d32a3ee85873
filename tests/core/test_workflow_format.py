"""core.workflow.format: the definition format's schemas. Every step type loads with its own schema, and every
problem keeps the path and the words the validator has always given (the editor's line marks and the docs read
them)."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from core.workflow import format as F
from core.workflow.source_lines import lines_of
from tests.core.test_workflow_validation import echo, errors_of, wf

GOOD_STEPS = [
    ({"id": "a", "tool": "echo", "params": {"x": 1}, "retries": 2}, F.ActionStep),
    (
        {"id": "d", "type": "decision", "condition": "true", "then": "a", "else": ["a"], "depends_on": []},
        F.DecisionStep,
    ),
    ({"id": "v", "type": "validation", "schema": {"type": "object"}, "target": "vars"}, F.ValidationStep),
    ({"id": "q", "type": "human_input", "question": "ok?", "human_timeout_s": 5}, F.HumanInputStep),
    ({"id": "s", "type": "approval", "approvers": {"users": ["A@x.test"]}, "timeout_s": 60}, F.ApprovalStep),
    ({"id": "g", "type": "agent", "goal": "do it", "tools": "echo", "model": None}, F.AgentStep),
]


@pytest.mark.parametrize(("step", "schema"), GOOD_STEPS, ids=[s.TYPE for _, s in GOOD_STEPS])
def test_every_step_type_loads_with_its_own_schema(step, schema):
    loaded = F.StepField().deserialize(step)
    assert loaded == schema().load(step)
    assert F.STEP_SCHEMAS[F.step_type(step)] is schema


def test_what_a_step_type_loads():
    d = F.StepField().deserialize(GOOD_STEPS[1][0])
    assert (d["then"], d["otherwise"], d["depends_on"]) == (("a",), ("a",), ())
    s = F.StepField().deserialize(GOOD_STEPS[4][0])
    assert s["approvers"] == {"users": ("a@x.test",)} and s["quorum"] == 1 and s["on_timeout"] == "reject"
    g = F.StepField().deserialize(GOOD_STEPS[5][0])
    assert g["tools"] == ("echo",) and g["max_tool_iterations"] == 10 and g["context_budget_kb"] == 50
    a = F.StepField().deserialize({"id": "a", "tool": "echo", "timeout_s": 30})
    assert a["timeout_s"] == 30 and isinstance(a["timeout_s"], int) and a["params"] == {} and a["on_reject"] == "ask"


def test_a_step_of_an_unknown_type_is_refused_on_type_and_its_other_fields_are_still_checked():
    with pytest.raises(ValidationError) as info:
        F.StepField().deserialize({"id": "x", "type": "beam", "retries": -1})
    assert dict(F.flatten(info.value.messages)) == {
        "type": "unknown step type 'beam'. Known step types: action, decision, validation, human_input, approval "
        "and agent",
        "retries": "must be an integer >= 0",
    }
    assert info.value.valid_data["id"] == "x"


def test_flatten_names_paths_as_the_validator_does():
    messages = {"steps": {2: {"tool": ["a"], "approvers": {"_schema": ["b"], "roles": {1: ["c"]}}}}, "name": ["d"]}
    assert list(F.flatten(messages)) == [
        ("steps[2].tool", "a"),
        ("steps[2].approvers", "b"),
        ("steps[2].approvers.roles[1]", "c"),
        ("name", "d"),
    ]


SID = "is required: letters, digits, _ and -, starting with a letter or _, at most 64"
ROLES = "['operator', 'lead', 'admin']"
CASES = [
    # every step
    ({"id": "1x", "tool": "echo"}, "id", SID),
    (echo("a", name="x" * 201), "name", "must be at most 200 characters"),
    (echo("a", timeout_s=0), "timeout_s", "must be a number >= 0.001"),
    (echo("a", retries=1.5), "retries", "must be an integer >= 0"),
    (echo("a", retry_backoff_s=-1), "retry_backoff_s", "must be a number >= 0"),
    (echo("a", on_reject="later"), "on_reject", "must be 'ask' or 'stop'"),
    (echo("a", depends_on=3), "depends_on", "must be a step id or a list of step ids"),
    (echo("a", clarification_question="q" * 10_001), "clarification_question", "must be at most 10,000 characters"),
    (
        {"id": "a"},
        "type",
        "unknown step type None. Known step types: action, decision, validation, human_input, approval and agent",
    ),
    # action
    ({"id": "a", "type": "action"}, "tool", "is required for an action step"),
    ({"id": "a", "tool": ""}, "tool", "is required for an action step"),
    (echo("a", params=[1]), "params", "must be an object"),
    # decision
    ({"id": "d", "type": "decision"}, "condition", "is required for a decision step"),
    ({"id": "d", "type": "decision", "condition": 5}, "condition", "must be an expression string"),
    (
        {"id": "d", "type": "decision", "condition": "true", "else": {}},
        "else",
        "must be a step id or a list of step ids",
    ),
    # validation
    ({"id": "v", "type": "validation"}, "condition", "is required for a validation step (or schema with target)"),
    (
        {"id": "v", "type": "validation", "schema": {}},
        "target",
        "is required with schema: an expression such as steps.fetch.output",
    ),
    # human_input
    ({"id": "q", "type": "human_input"}, "question", "is required for a human_input step"),
    ({"id": "q", "type": "human_input", "question": "?" * 10_001}, "question", "must be at most 10,000 characters"),
    # approval
    (
        {"id": "s", "type": "approval", "quorum": 0},
        "quorum",
        "must be an integer >= 1 (how many distinct people must approve)",
    ),
    (
        {"id": "s", "type": "approval", "approvers": {"roles": "lead"}},
        "approvers.roles",
        f"must be a list of roles, each one of {ROLES}",
    ),
    (
        {"id": "s", "type": "approval", "approvers": {"roles": ["boss"]}},
        "approvers.roles[0]",
        f"unknown role 'boss'; one of {ROLES}",
    ),
    (
        {"id": "s", "type": "approval", "approvers": ["lead"]},
        "approvers",
        "must be an object {roles: [...], users: [...]}",
    ),
    (
        {"id": "s", "type": "approval", "approvers": {"groups": []}},
        "approvers",
        "unknown keys ['groups']; approvers take roles and users",
    ),
    (
        {"id": "s", "type": "approval", "approvers": {"roles": [], "users": []}},
        "approvers",
        "names nobody: give roles, users or both",
    ),
    (
        {"id": "s", "type": "approval", "approvers": {"users": [" "]}},
        "approvers.users",
        "must be a list of user emails or ids",
    ),
    (
        {"id": "s", "type": "approval", "approvers": {"users": [f"u{i}" for i in range(101)]}},
        "approvers.users",
        "at most 100 users",
    ),
    (
        {"id": "s", "type": "approval", "quorum": 3, "approvers": {"users": ["a", "b"]}},
        "quorum",
        "is 3 but only 2 users may approve (approvers.users, no roles)",
    ),
    ({"id": "s", "type": "approval", "separate_duties": "yes"}, "separate_duties", "must be true or false"),
    (
        {"id": "s", "type": "approval", "timeout_s": 0},
        "timeout_s",
        "must be a number of seconds > 0 (leave it out to wait without a deadline)",
    ),
    (
        {"id": "s", "type": "approval", "on_timeout": "ignore"},
        "on_timeout",
        "must be one of ['approve', 'reject', 'fail']",
    ),
    (
        {"id": "s", "type": "approval", "message": 5},
        "message",
        "must be a string (a template such as 'Pay {{ steps.total.output.sum }}?')",
    ),
    (
        {"id": "s", "type": "approval", "message": "{{ oops"},
        "message",
        "template syntax error: unexpected end of template, expected 'end of print statement'.",
    ),
    # agent
    ({"id": "g", "type": "agent", "goal": " "}, "goal", "is required for an agent step: what the LLM must do"),
    ({"id": "g", "type": "agent", "goal": "g" * 20_001}, "goal", "must be at most 20,000 characters"),
    (
        {"id": "g", "type": "agent", "goal": "g", "tools": 5},
        "tools",
        'must be a list of tool names or globs (e.g. ["file.read", "sql.*"])',
    ),
    (
        {"id": "g", "type": "agent", "goal": "g", "tools": ["nope"]},
        "tools[0]",
        "'nope' is not a registered tool; known tools: ['echo', 'math.add']",
    ),
    (
        {"id": "g", "type": "agent", "goal": "g", "max_tool_iterations": 0},
        "max_tool_iterations",
        "must be an integer from 1 to 1000",
    ),
    (
        {"id": "g", "type": "agent", "goal": "g", "context_budget_kb": "big"},
        "context_budget_kb",
        "must be a number of kilobytes from 1 to 100000",
    ),
    (
        {"id": "g", "type": "agent", "goal": "g", "model": ""},
        "model",
        "must be a model name (or null: COACH_LLM_MODEL)",
    ),
    (
        {"id": "g", "type": "agent", "goal": "g", "instructions": 5},
        "instructions",
        "must be text of at most 20,000 characters",
    ),
    # deadlines on human gates
    (
        {"id": "d", "type": "decision", "condition": "true", "human_timeout_s": 5},
        "human_timeout_s",
        "only action and human_input steps wait for a person",
    ),
    (
        {"id": "s", "type": "approval", "on_human_timeout": "skip"},
        "on_human_timeout",
        "only action and human_input steps wait for a person (an approval's deadline is timeout_s with on_timeout)",
    ),
    (echo("a", human_timeout_s=0), "human_timeout_s", "must be a number of seconds > 0 (leave it out: no deadline)"),
    (
        echo("a", human_timeout_s=5, on_human_timeout="answer", timeout_answer=1),
        "on_human_timeout",
        "must be one of ['skip', 'fail', 'accept']: answer is for human_input steps, with timeout_answer",
    ),
    (
        {"id": "q", "type": "human_input", "question": "?", "human_timeout_s": 5, "on_human_timeout": "answer"},
        "timeout_answer",
        "is required with on_human_timeout: answer (the answer it gives)",
    ),
    (echo("a", human_timeout_s=5, timeout_answer="x"), "timeout_answer", "is only read with on_human_timeout: answer"),
    (
        echo("a", human_timeout_s=None, on_human_timeout="skip"),
        "on_human_timeout",
        "has no effect with human_timeout_s: null (no deadline)",
    ),
    (
        echo("a", on_human_timeout="skip"),
        "on_human_timeout",
        "needs human_timeout_s: the seconds a person has before it applies",
    ),
]


@pytest.mark.parametrize(("step", "field", "message"), CASES, ids=[f"{i}-{c[1]}" for i, c in enumerate(CASES)])
def test_each_problem_of_a_step_keeps_its_path_and_words(step, field, message, tools):
    assert errors_of(wf(step), tools) == {f"steps[0].{field}": [message]}


@pytest.mark.parametrize(
    ("extra", "field", "message"),
    [
        ({"name": None}, "name", "is required: a non-empty string"),
        ({"name": " "}, "name", "is required: a non-empty string"),
        ({"description": 5}, "description", "must be a string"),
        ({"description": "d" * 10_001}, "description", "must be at most 10,000 characters"),
        ({"steps": []}, "steps", "is required: a non-empty list of steps"),
        ({"steps": [echo(f"s{i}") for i in range(501)]}, "steps", "at most 500 steps"),
        ({"variables": [1]}, "variables", "must be an object of variable name to {type, default, required}"),
        (
            {"variables": {"1x": 1}},
            "variables.1x",
            "variable names are letters, digits, _ and -, starting with a letter or _",
        ),
        (
            {"variables": {"n": {"type": "int"}}},
            "variables.n.type",
            "must be one of ['any', 'array', 'boolean', 'integer', 'number', 'object', 'string']",
        ),
        (
            {"variables": {"n": {"type": "integer", "default": "x"}}},
            "variables.n.default",
            "'x' is not of type 'integer'",
        ),
        ({"human_timeout_s": -1}, "human_timeout_s", "must be a number of seconds > 0 (leave it out: no deadline)"),
        (
            {"human_timeout_s": 5, "on_human_timeout": "answer", "timeout_answer": 1},
            "on_human_timeout",
            "must be one of ['skip', 'fail', 'accept']: answer is set per human_input step, with its timeout_answer",
        ),
        (
            {"on_human_timeout": "skip"},
            "on_human_timeout",
            "needs human_timeout_s: the seconds a person has before it applies",
        ),
    ],
)
def test_each_problem_of_the_definition_keeps_its_path_and_words(extra, field, message, tools):
    assert errors_of({**wf(echo("a")), **extra}, tools) == {field: [message]}


def test_a_step_with_the_workflows_default_deadline_needs_no_seconds_of_its_own(tools):
    from core.workflow.validation import parse_definition

    defn = parse_definition(wf(echo("a", on_human_timeout="skip"), human_timeout_s=30), tools)
    assert defn.step("a").human_timeout.timeout_s == 30 and defn.step("a").human_timeout.on_timeout == "skip"


def test_the_schemas_paths_are_placed_on_their_lines():
    source = "name: w\nsteps:\n  - id: s\n    type: approval\n    approvers:\n      roles: [lead, boss]\n"
    with pytest.raises(ValidationError) as info:
        F.WorkflowDefinition().load(
            {"name": "w", "steps": [{"id": "s", "type": "approval", "approvers": {"roles": ["lead", "boss"]}}]}
        )
    paths = [p for p, _ in F.flatten(info.value.messages)]
    assert paths == ["steps[0].approvers.roles[1]"]
    assert lines_of(source, paths) == {"steps[0].approvers.roles[1]": 6}
