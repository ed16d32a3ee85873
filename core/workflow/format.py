"""The workflow definition format, described once (docs/workflow-definitions.md): marshmallow schemas that check a
submitted definition and document it. core.workflow.validation loads a definition with `WorkflowDefinition`; the
API's OpenAPI document names the same schemas (the body of POST/PUT /api/workflows and the `steps` of its answers),
and `GET /api/workflows/schema` serves them as JSON Schema for the web app's editor.

A step's schema is chosen by its `type` (`action` when it has a `tool` and no type): `StepField` is a small one-of
field written with marshmallow's public API (a field's `_deserialize`/`_serialize`), so that a step's errors keep the
paths people read (`steps[2].quorum`, `steps[0].approvers.roles[1]`) and a step of an unknown type still has its
other fields checked. Every problem is reported at once; the messages are the validator's own words.

What the schemas cannot know stays with the validator: the workspace's tools (core.workflow.steps: a step's `tool`,
its literal params, an agent's `tools`), template syntax within the definition's template budget, and the
references between steps (core.workflow.validation).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import jsonschema
from marshmallow import EXCLUDE, INCLUDE, Schema, ValidationError, fields, missing, validate, validates_schema

from core import approvals, gates
from core.agent import spec as agent_spec
from core.schema import user_schema_problems
from core.workflow.model import DEFAULT_TIMEOUT_S, VARIABLE_TYPES, VariableDef
from core.workflow.problems import IDENTIFIER, MAX_TEXT, unknown_name

MAX_STEPS = 500
STEP_ID = "is required: letters, digits, _ and -, starting with a letter or _, at most 64"
SECONDS = "must be a number of seconds > 0 (leave it out: no deadline)"
# marshmallow's error_messages: a message (or a list or map of them) by error key
Messages = dict[str, str | list[Any] | dict[Any, Any]]


# --- fields ---------------------------------------------------------------------------------------------------------


def _messages(message: str) -> Messages:
    """One message for every way a value can be wrong (marshmallow formats them: braces are escaped)."""
    escaped = message.replace("{", "{{").replace("}", "}}")
    return {key: escaped for key in ("required", "null", "invalid", "type")}


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


class Number(fields.Float):
    """A JSON number (not a boolean, not a string, finite) in a range, kept as written (an integer stays one); every
    problem is one message."""

    def __init__(
        self,
        message: str,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        min_inclusive: bool = True,
        **kwargs: Any,
    ) -> None:
        if not min_inclusive:  # OpenAPI 3.0's form; GET /api/workflows/schema says it as JSON Schema does
            kwargs["metadata"] = {"exclusiveMinimum": True, **kwargs.get("metadata", {})}
        super().__init__(
            validate=validate.Range(min=minimum, max=maximum, min_inclusive=min_inclusive, error=message),
            error_messages=_messages(message),
            **kwargs,
        )

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if not _is_number(value):
            raise self.make_error("invalid")
        return value

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value  # as written: 30 stays 30


class Integer(fields.Integer):
    """A JSON integer (not a boolean, not 1.5, not "2") in a range; every problem is one message."""

    def __init__(self, message: str, *, minimum: int | None = None, maximum: int | None = None, **kwargs: Any) -> None:
        super().__init__(
            validate=validate.Range(min=minimum, max=maximum, error=message),
            error_messages=_messages(message),
            **kwargs,
        )

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.make_error("invalid")
        return value


class Text(fields.String):
    """A string of at most `most` characters. `lenient`: a value that is not a string is taken as it is (a step's
    name `2024` is read as YAML's integer; it has always been shown as text). `message`: what a value that is not a
    string (or, with `blank`, only spaces) is told; `too_long` what a longer one is told. `empty`: a false value
    (null, 0, "") is "" (a definition's description)."""

    def __init__(
        self,
        most: int,
        *,
        lenient: bool = False,
        message: str = "must be a string",
        blank: bool = False,
        too_long: str | None = None,
        empty: bool = False,
        **kwargs: Any,
    ) -> None:
        self.most, self.lenient, self.blank, self.empty = most, lenient, blank, empty
        if lenient:
            kwargs.setdefault("allow_none", True)
        self.too_long = too_long or f"must be at most {most:,} characters"
        metadata = {"maxLength": most, **kwargs.pop("metadata", {})}
        super().__init__(error_messages=_messages(message), metadata=metadata, **kwargs)

    def deserialize(
        self, value: Any, attr: str | None = None, data: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        if self.empty and value is not missing and not value:
            return ""
        return super().deserialize(value, attr, data, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if not isinstance(value, str):
            if self.lenient:
                return value
            raise self.make_error("invalid")
        if self.blank and not value.strip():
            raise self.make_error("invalid")
        if len(value) > self.most:
            raise ValidationError(self.too_long)
        return value


class Choice(fields.String):
    """One of `values` (listed as the document's enum); anything else is `message`."""

    def __init__(self, values: Iterable[str], message: str, **kwargs: Any) -> None:
        super().__init__(
            validate=validate.OneOf(tuple(values), error=message), error_messages=_messages(message), **kwargs
        )


class StrictBool(fields.Boolean):
    """JSON's true or false."""

    def __init__(self, message: str = "must be true or false", *, lenient: bool = False, **kwargs: Any) -> None:
        self.lenient = lenient
        super().__init__(error_messages=_messages(message), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if isinstance(value, bool):
            return value
        if self.lenient:  # `requires_clarification: 1` has always meant true
            return bool(value)
        raise self.make_error("invalid")


class Expression(fields.String):
    """A condition or template expression (`steps.a.output.n > 3`); its syntax is checked by the validator, within
    the definition's template budget. `lenient`: a value that is not a string is kept (`when: true`)."""

    def __init__(self, message: str = "must be an expression string", *, lenient: bool = False, **kwargs: Any) -> None:
        self.lenient = lenient
        if lenient:
            kwargs.setdefault("allow_none", True)
        messages = {**_messages(message), **kwargs.pop("error_messages", {})}
        super().__init__(error_messages=messages, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if isinstance(value, str) or self.lenient:
            return value
        raise self.make_error("invalid")


class StepIds(fields.Field[Any]):
    """A step id or a list of step ids, read as a tuple."""

    MESSAGE = "must be a step id or a list of step ids"

    def __init__(self, **kwargs: Any) -> None:
        metadata = {
            "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
            **kwargs.pop("metadata", {}),
        }
        super().__init__(error_messages=_messages(self.MESSAGE), metadata=metadata, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise self.make_error("invalid")

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


class JsonSchema(fields.Dict):
    """A JSON Schema written by a user (core.schema: RE2 patterns, references inside the document only)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_none=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        problems = user_schema_problems(value)
        if problems:
            raise ValidationError(problems)
        return value


class Params(fields.Dict):
    """An action's tool params: free-form (checked against the tool's own schema by the validator)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(keys=fields.String(), error_messages=_messages("must be an object"), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if not isinstance(value, dict):
            raise self.make_error("invalid")
        return value


# --- steps ----------------------------------------------------------------------------------------------------------


class StepBase(Schema):
    """The fields every step has. Its own unknown fields are kept with the step (`extra`)."""

    class Meta:
        unknown = INCLUDE
        ordered = True

    TYPE: str | None = None

    id = fields.String(
        required=True,
        validate=validate.Regexp(IDENTIFIER, error=STEP_ID),
        error_messages=_messages(STEP_ID),
        metadata={"description": "unique in the workflow; templates read steps.<id>.output", "maxLength": 64},
    )
    name = Text(200, lenient=True, metadata={"description": "what people see in the queue and the panel (the id)"})
    description = Text(MAX_TEXT, lenient=True, metadata={"description": "notes for people"})
    depends_on = StepIds(
        metadata={"description": "steps that must be done first (the previous step when left out; [] for none)"}
    )
    when = Expression(lenient=True, metadata={"description": "an expression: false skips the step"})
    timeout_s = Number(
        "must be a number >= 0.001",
        minimum=0.001,
        load_default=DEFAULT_TIMEOUT_S,
        metadata={"description": "seconds the tool may run"},
    )
    retries = Integer("must be an integer >= 0", minimum=0, load_default=0, metadata={"description": "more attempts"})
    retry_backoff_s = Number(
        "must be a number >= 0",
        minimum=0,
        load_default=1.0,
        metadata={"description": "seconds before the first retry, doubling for each next one"},
    )
    requires_clarification = StrictBool(
        lenient=True,
        allow_none=True,
        load_default=False,
        metadata={"description": "pause before the step with clarification_question"},
    )
    clarification_question = Text(MAX_TEXT, lenient=True, allow_none=True)
    on_reject = Choice(
        ("ask", "stop"),
        "must be 'ask' or 'stop'",
        load_default="ask",
        metadata={"description": "after a rejected suggestion: ask for a correction, or stop the run"},
    )

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _gate_keys(self, data: dict[str, Any], original: Any, **kwargs: Any) -> None:
        """Only steps that wait for a person take a deadline for one (core.gates)."""
        if not isinstance(original, dict):
            return  # a value of the wrong type is refused on its own
        if self.TYPE in gates.STEP_TYPES:
            return
        hint = " (an approval's deadline is timeout_s with on_timeout)" if self.TYPE == "approval" else ""
        errors = {
            key: [f"only action and human_input steps wait for a person{hint}"] for key in gates.KEYS if key in original
        }
        if errors:
            raise ValidationError(errors)


def gate_problems(
    raw: dict[str, Any], allowed: tuple[str, ...], *, step: bool, has_seconds: bool
) -> dict[str, list[str]]:
    """The rules between a deadline's fields (core.gates), by field. `has_seconds`: a number of seconds applies (the
    step's own or the workflow's default); without one, each field that is set needs human_timeout_s."""
    problems: dict[str, list[str]] = {}
    present = [k for k in gates.KEYS if k in raw]
    if not present:
        return problems
    if "human_timeout_s" in raw and raw["human_timeout_s"] is None:  # a step that opts out of the workflow's default
        for key in present[1:]:
            problems[key] = ["has no effect with human_timeout_s: null (no deadline)"]
        return problems
    action = raw.get("on_human_timeout")
    if "human_timeout_s" not in raw and not has_seconds:
        for key in present:
            if not (key == "on_human_timeout" and action is not None and action not in allowed):
                problems[key] = ["needs human_timeout_s: the seconds a person has before it applies"]
    if action == gates.ANSWER and "timeout_answer" not in raw:
        problems.setdefault("timeout_answer", []).append(
            "is required with on_human_timeout: answer (the answer it gives)"
        )
    if "timeout_answer" in raw and action != gates.ANSWER:
        problems.setdefault("timeout_answer", []).append("is only read with on_human_timeout: answer")
    return problems


def _gate_action_message(allowed: tuple[str, ...], step: bool) -> dict[str, str]:
    """`must be one of [...]`, and why when the value is an action of another kind of gate."""
    why = {
        gates.ACCEPT: "accept is for steps that are suggested (action steps)",
        gates.ANSWER: "answer is for human_input steps, with timeout_answer"
        if step
        else "answer is set per human_input step, with its timeout_answer",
    }
    return {a: f"must be one of {list(allowed)}: {why[a]}" for a in gates.ACTIONS if a not in allowed}


class GateChoice(Choice):
    """on_human_timeout: one of the actions that fit the gate, saying why another one does not."""

    def __init__(self, allowed: tuple[str, ...], *, step: bool, **kwargs: Any) -> None:
        self.allowed, self.why = allowed, _gate_action_message(allowed, step)
        super().__init__(allowed, f"must be one of {list(allowed)}", allow_none=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if isinstance(value, str) and value in self.why:
            raise ValidationError(self.why[value])
        return super()._deserialize(value, attr, data, **kwargs)


def _human_timeout_s(description: str) -> Number:
    return Number(SECONDS, minimum=0, min_inclusive=False, allow_none=True, metadata={"description": description})


class _GateStep(StepBase):
    """A step that waits for a person, who may have a deadline (docs "Deadlines on human gates")."""

    human_timeout_s = _human_timeout_s("seconds a person has at its gate (null: no deadline, not even the default)")

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _gate_rules(self, data: dict[str, Any], original: Any, **kwargs: Any) -> None:
        if not isinstance(original, dict):
            return  # a value of the wrong type is refused on its own
        # has_seconds: whether the workflow's default applies is for the definition to say (WorkflowDefinition)
        if self.TYPE is None:  # (every step type that waits for a person names itself)
            return
        problems = gate_problems(original, gates.STEP_ACTIONS[self.TYPE], step=True, has_seconds=True)
        if problems:
            raise ValidationError(problems)


class ActionStep(_GateStep):
    """Runs a registered tool with params (templates rendered first); in coaching mode, an operator decides its
    suggestion."""

    TYPE = "action"
    type = Choice(("action",), "must be 'action'", metadata={"description": "action (the default when tool is given)"})
    tool = fields.String(
        required=True,
        validate=validate.Length(min=1, error="is required for an action step"),
        error_messages=_messages("is required for an action step"),
        metadata={"description": "a registered tool (echo, http.request, file.read, <server>.<tool> ...)"},
    )
    params = Params(
        load_default=dict,
        metadata={"description": "the tool's params, checked against its schema except where a template decides"},
    )
    on_human_timeout = GateChoice(gates.STEP_ACTIONS["action"], step=True)
    timeout_answer = fields.Raw(allow_none=True, metadata={"description": "only with on_human_timeout: answer"})


class DecisionStep(StepBase):
    """Evaluates condition and runs one branch: the steps in `then` when it is true, in `else` when it is false."""

    TYPE = "decision"
    type = Choice(("decision",), "must be 'decision'", required=True)
    condition = Expression(
        required=True,
        error_messages={"required": "is required for a decision step", "null": "is required for a decision step"},
        metadata={"description": "e.g. steps.total.output.total >= vars.limit"},
    )
    then = StepIds(load_default=(), metadata={"description": "run when the condition is true"})
    otherwise = StepIds(data_key="else", load_default=(), metadata={"description": "run when it is false"})


class ValidationStep(StepBase):
    """Checks earlier outputs and fails the step (and the run) when they are wrong: a condition, or a JSON Schema
    applied to the value of target."""

    TYPE = "validation"
    type = Choice(("validation",), "must be 'validation'", required=True)
    condition = Expression(allow_none=True, metadata={"description": "must be true"})
    schema = JsonSchema(metadata={"description": "a JSON Schema the value of target must match"})
    target = Expression(
        allow_none=True, lenient=True, metadata={"description": "an expression such as steps.read.output.rows"}
    )

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _condition_or_schema(self, data: dict[str, Any], original: Any, **kwargs: Any) -> None:
        if not isinstance(original, dict):
            return  # a value of the wrong type is refused on its own
        errors = {}
        if original.get("condition") is None and original.get("schema") is None:
            errors["condition"] = ["is required for a validation step (or schema with target)"]
        if original.get("schema") is not None and not isinstance(original.get("target"), str):
            errors["target"] = ["is required with schema: an expression such as steps.fetch.output"]
        if errors:
            raise ValidationError(errors)


class HumanInputStep(_GateStep):
    """Asks a person a question; the answer is the step's output ({answer})."""

    TYPE = "human_input"
    type = Choice(("human_input",), "must be 'human_input'", required=True)
    question = Text(MAX_TEXT, required=True, message="is required for a human_input step")
    on_human_timeout = GateChoice(gates.STEP_ACTIONS["human_input"], step=True)
    timeout_answer = fields.Raw(allow_none=True, metadata={"description": "the answer on_human_timeout: answer gives"})


class Roles(fields.List[Any]):
    MESSAGE = f"must be a list of roles, each one of {list(approvals.ROLES)}"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Choice(approvals.ROLES, "unknown role"), error_messages=_messages(self.MESSAGE), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
            raise self.make_error("invalid")
        unknown = {
            i: [f"unknown role {role!r}; one of {list(approvals.ROLES)}"]
            for i, role in enumerate(value)
            if role not in approvals.RANK
        }
        if unknown:
            raise ValidationError(unknown)
        return tuple(dict.fromkeys(value))


class Users(fields.List[Any]):
    MESSAGE = "must be a list of user emails or ids"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(fields.String(), error_messages=_messages(self.MESSAGE), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(u, str) and u.strip() for u in value):
            raise self.make_error("invalid")
        if len(value) > approvals.MAX_USERS:
            raise ValidationError(f"at most {approvals.MAX_USERS} users")
        return tuple(dict.fromkeys(u.strip().lower() if "@" in u else u.strip() for u in value))


class Object(fields.Nested):
    """A nested object; a value that is not one is `message` (not the nested schema's own words)."""

    def __init__(self, nested: Any, message: str, **kwargs: Any) -> None:
        super().__init__(nested, error_messages=_messages(message), **kwargs)

    def _deserialize(
        self,
        value: Any,
        attr: str | None,
        data: Mapping[str, Any] | None,
        partial: bool | Sequence[str] | AbstractSet[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        if not isinstance(value, dict):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, partial, **kwargs)


class StepApprovers(Schema):
    """Who may decide an approval: roles (a higher role counts) and/or named people."""

    class Meta:
        unknown = INCLUDE  # refused below, in one message on `approvers`

    roles = Roles(metadata={"description": "operator, lead, admin (lead when neither roles nor users are given)"})
    users = Users(metadata={"description": "user emails or ids"})

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _keys(self, data: dict[str, Any], original: Any, **kwargs: Any) -> None:
        if not isinstance(original, dict):
            return  # a value of the wrong type is refused on its own
        unknown = sorted(set(original) - {"roles", "users"})
        if unknown:
            raise ValidationError(f"unknown keys {unknown}; approvers take roles and users")


class ApprovalStep(StepBase):
    """Waits for approve/reject decisions of people with the right role."""

    TYPE = "approval"
    type = Choice(("approval",), "must be 'approval'", required=True)
    message = Text(
        approvals.MAX_MESSAGE,
        allow_none=True,
        message="must be a string (a template such as 'Pay {{ steps.total.output.sum }}?')",
        metadata={"description": "what the approvers read (may hold templates)"},
    )
    approvers = Object(StepApprovers, "must be an object {roles: [...], users: [...]}")
    quorum = Integer(
        "must be an integer >= 1 (how many distinct people must approve)",
        minimum=1,
        load_default=1,
        metadata={"description": "approvals needed (one reject rejects)"},
    )
    separate_duties = StrictBool(
        load_default=False, metadata={"description": "whoever started the run may not approve"}
    )
    timeout_s = Number(
        "must be a number of seconds > 0 (leave it out to wait without a deadline)",
        minimum=0,
        min_inclusive=False,
        allow_none=True,
        metadata={"description": "the approval's deadline"},
    )
    on_timeout = Choice(
        approvals.ON_TIMEOUT,
        f"must be one of {list(approvals.ON_TIMEOUT)}",
        load_default="reject",
        metadata={"description": "what that deadline does"},
    )

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _someone_decides(self, data: dict[str, Any], original: Any, **kwargs: Any) -> None:
        if not isinstance(original, dict):
            return  # a value of the wrong type is refused on its own
        raw = original.get("approvers", {})
        loaded = data.get("approvers", {})
        if not isinstance(raw, dict) or set(raw) - {"roles", "users"} or any(k not in loaded for k in raw):
            return  # approvers' own problems are reported
        roles, users = approval_roles(data), loaded.get("users", ())
        if not roles and not users:
            raise ValidationError({"approvers": ["names nobody: give roles, users or both"]})
        quorum = data.get("quorum", 1)
        if not roles and users and quorum > len(users):
            raise ValidationError(
                {"quorum": [f"is {quorum} but only {len(users)} users may approve (approvers.users, no roles)"]}
            )


def approval_roles(data: dict[str, Any]) -> tuple[str, ...]:
    """The roles an approval step names: lead unless it names people only."""
    approvers = data.get("approvers")
    if approvers is None:
        return approvals.DEFAULT_ROLES
    roles: tuple[str, ...] = approvers.get("roles", () if "users" in approvers else approvals.DEFAULT_ROLES)
    return roles


class AgentTools(fields.List[Any]):
    MESSAGE = 'must be a list of tool names or globs (e.g. ["file.read", "sql.*"])'

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(fields.String(), error_messages=_messages(self.MESSAGE), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
            raise self.make_error("invalid")
        return tuple(value)


class AgentStep(StepBase):
    """An LLM that calls tools in a loop until it has done its goal (docs/agent-steps.md)."""

    TYPE = "agent"
    type = Choice(("agent",), "must be 'agent'", required=True)
    goal = Text(
        agent_spec.MAX_GOAL,
        required=True,
        blank=True,
        message="is required for an agent step: what the LLM must do",
        metadata={"description": "what the LLM must do (may hold templates)"},
    )
    tools = AgentTools(load_default=(), metadata={"description": 'tool names or globs ("sql.*") it may call'})
    max_tool_iterations = Integer(
        "must be an integer from 1 to 1000",
        minimum=1,
        maximum=1000,
        load_default=agent_spec.DEFAULT_MAX_TOOL_ITERATIONS,
    )
    context_budget_kb = Number(
        "must be a number of kilobytes from 1 to 100000",
        minimum=1,
        maximum=100_000,
        load_default=agent_spec.DEFAULT_CONTEXT_BUDGET_KB,
    )
    model = fields.String(
        allow_none=True,
        validate=validate.Regexp(r"^(?=.*\S).{1,200}$", error="must be a model name (or null: COACH_LLM_MODEL)"),
        error_messages=_messages("must be a model name (or null: COACH_LLM_MODEL)"),
        metadata={"description": "the model to ask (null: COACH_LLM_MODEL)"},
    )
    output_schema = JsonSchema(metadata={"description": "the final answer must be JSON of this schema"})
    instructions = Text(
        agent_spec.MAX_GOAL,
        allow_none=True,
        message=f"must be text of at most {agent_spec.MAX_GOAL:,} characters",
        too_long=f"must be text of at most {agent_spec.MAX_GOAL:,} characters",
        metadata={"description": "added to the system prompt"},
    )


STEP_SCHEMAS: dict[str, type[StepBase]] = {
    s.TYPE: s for s in (ActionStep, DecisionStep, ValidationStep, HumanInputStep, ApprovalStep, AgentStep)
}


def step_type(raw: dict[str, Any]) -> Any:
    """The type a step says, or `action` for a step with a tool and no type."""
    return raw.get("type", "action" if "tool" in raw else None)


@functools.cache
@functools.cache
def _instance(schema: type[Schema]) -> Schema:
    """One instance of each step schema: a schema keeps no state between loads, and making one costs more than a
    step's load."""
    return schema()


def declared_keys(schema: type[Schema]) -> frozenset[str]:
    """The keys a schema reads (data keys: `else`, not `otherwise`)."""
    return frozenset(f.data_key or name for name, f in _instance(schema).declared_fields.items())


def field_names(schema: type[Schema]) -> frozenset[str]:
    """The names of a schema's fields, as its loaded data has them (`otherwise`, not `else`)."""
    return frozenset(_instance(schema).declared_fields)


class StepField(fields.Field[Any]):
    """One step, loaded with the schema of its type (the document's `oneOf` of the step schemas). A step of an
    unknown type is refused on `type`, and its fields every step has are still checked. Dumped as written: a stored
    definition is its source."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            error_messages=_messages("must be an object"),
            metadata={"description": "a step: its type decides its fields (action when tool is given without type)"},
            **kwargs,
        )

    @property
    def one_of(self) -> list[type[Schema]]:  # read by the OpenAPI converter (api/base.py)
        return list(STEP_SCHEMAS.values())

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if not isinstance(value, dict):
            raise self.make_error("invalid")
        kind = step_type(value)
        schema = STEP_SCHEMAS.get(kind) if isinstance(kind, str) else None
        messages: dict[str, Any] = {}
        try:
            loaded = _instance(schema or StepBase).load(value)
        except ValidationError as exc:
            loaded, messages = exc.valid_data or {}, exc.messages_dict
        if schema is None:
            messages = {**messages, "type": [unknown_name("step type", kind, STEP_SCHEMAS)]}
        if messages:
            raise ValidationError(messages, valid_data=loaded)
        return loaded

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


class Steps(fields.List[Any]):
    """The steps, in the order they are written: every step is checked, and the list stays aligned with what was
    sent (a step that is not an object is None), for the validator's `steps[i]` paths."""

    MESSAGE = "is required: a non-empty list of steps"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(StepField(), error_messages=_messages(self.MESSAGE), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise self.make_error("invalid")
        if len(value) > MAX_STEPS:
            raise ValidationError(f"at most {MAX_STEPS} steps")
        loaded, errors = [], {}
        for i, raw in enumerate(value):
            try:
                loaded.append(self.inner.deserialize(raw, **kwargs))
            except ValidationError as exc:
                loaded.append(exc.valid_data if isinstance(raw, dict) else None)
                errors[i] = exc.messages
        if errors:
            raise ValidationError(errors, valid_data=loaded)
        return loaded


# --- variables ------------------------------------------------------------------------------------------------------


class VariableDeclaration(Schema):
    """One input variable of a run. A declaration that is not an object is shorthand for its default."""

    class Meta:
        unknown = EXCLUDE

    type = Choice(
        tuple(VARIABLE_TYPES),
        f"must be one of {sorted(VARIABLE_TYPES)}",
        load_default="any",
        metadata={"description": "checked when a run starts"},
    )
    default = fields.Raw(allow_none=True, metadata={"description": "a value of that type"})
    required = StrictBool(
        lenient=True, allow_none=True, load_default=False, metadata={"description": "a run must give it"}
    )
    description = fields.Raw(metadata={"description": "shown under the field of the start dialog", "type": "string"})

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _default_and_description(self, data: dict[str, Any], original: Any, **kwargs: Any) -> None:
        if not isinstance(original, dict):
            return  # a value of the wrong type is refused on its own
        errors: dict[str, list[str]] = {}
        if len(str(original.get("description", ""))) > MAX_TEXT:
            errors["description"] = [f"must be at most {MAX_TEXT:,} characters"]
        json_type = VARIABLE_TYPES.get(data.get("type", "any"))
        if json_type and original.get("default") is not None:
            problems = [
                e.message for e in jsonschema.Draft202012Validator({"type": json_type}).iter_errors(original["default"])
            ]
            if problems:
                errors["default"] = problems
        if errors:
            raise ValidationError(errors)


class Variables(fields.Dict):
    """The declared variables by name, read as VariableDefs; dumped as written."""

    MESSAGE = "must be an object of variable name to {type, default, required}"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            keys=fields.String(),
            values=fields.Nested(VariableDeclaration),
            error_messages=_messages(self.MESSAGE),
            **kwargs,
        )

    one_of_values = (VariableDeclaration,)  # or a value: the shorthand for its default (api/base.py documents both)

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        if not isinstance(value, dict):
            raise self.make_error("invalid")
        out: dict[str, VariableDef] = {}
        errors: dict[str, Any] = {}
        for name, declaration in value.items():
            problems: dict[str, Any] = {}
            if not IDENTIFIER.match(str(name)):
                problems["_schema"] = ["variable names are letters, digits, _ and -, starting with a letter or _"]
            declaration = declaration if isinstance(declaration, dict) else {"default": declaration}
            try:
                loaded = _instance(VariableDeclaration).load(declaration)
            except ValidationError as exc:
                loaded = exc.valid_data or {}
                problems.update(exc.messages_dict)
            if problems:
                errors[name] = problems
            vtype = loaded.get("type", "any") if loaded.get("type") in VARIABLE_TYPES else "any"
            out[name] = VariableDef(
                name=name,
                type=vtype,
                default=declaration.get("default"),
                has_default="default" in declaration,
                required=bool(declaration.get("required", False)),
                description=str(declaration.get("description", "")),
            )
        if errors:
            raise ValidationError(errors, valid_data=out)
        return out

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


# --- the definition -------------------------------------------------------------------------------------------------


def _not_blank(value: str) -> None:
    if not value.strip():
        raise ValidationError("is required: a non-empty string")


class WorkflowDefinition(Schema):
    """A workflow definition as it is written, in YAML or JSON (docs/workflow-definitions.md). Other top-level
    fields are ignored."""

    class Meta:
        unknown = EXCLUDE
        ordered = True

    name = fields.String(
        required=True,
        validate=[validate.Length(max=200, error="must be at most 200 characters"), _not_blank],
        error_messages=_messages("is required: a non-empty string"),
        metadata={"description": "shown everywhere; a new version may rename the workflow", "minLength": 1},
    )
    description = Text(MAX_TEXT, empty=True, metadata={"description": "what it does, in a sentence or two"})
    variables = Variables(allow_none=True, metadata={"description": "the inputs of a run, by name"})
    steps = Steps(required=True, metadata={"description": "what runs, in dependency order (1-500 steps)"})
    human_timeout_s = _human_timeout_s("default deadline of every human gate, in seconds")
    on_human_timeout = GateChoice(
        gates.WORKFLOW_ACTIONS, step=False, metadata={"description": "what that default deadline does (fail)"}
    )
    timeout_answer = fields.Raw(allow_none=True, metadata={"description": "only with on_human_timeout: answer"})

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _deadlines(self, data: dict[str, Any], original: Any, **kwargs: Any) -> None:
        if not isinstance(original, dict):
            return  # a value of the wrong type is refused on its own
        problems: dict[str, Any] = dict(gate_problems(original, gates.WORKFLOW_ACTIONS, step=False, has_seconds=False))
        has_default = _is_number(original.get("human_timeout_s")) and original["human_timeout_s"] > 0
        raw_steps = original.get("steps")
        if not has_default and isinstance(raw_steps, list) and len(raw_steps) <= MAX_STEPS:
            for i, raw in enumerate(raw_steps):
                if isinstance(raw, dict) and step_type(raw) in gates.STEP_TYPES:
                    allowed = gates.STEP_ACTIONS[step_type(raw)]
                    needs = {
                        k: [m for m in v if m.startswith("needs")]
                        for k, v in gate_problems(raw, allowed, step=True, has_seconds=False).items()
                        if any(m.startswith("needs") for m in v)
                    }
                    if needs:
                        problems.setdefault("steps", {})[i] = needs
        if problems:
            raise ValidationError(problems)


def flatten(messages: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """marshmallow's nested messages as (path, message): `{"steps": {2: {"tool": [m]}}}` -> ("steps[2].tool", m);
    a schema's own messages (`_schema`) are its parent's."""
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key == "_schema":
                sub = path
            elif isinstance(key, int):
                sub = f"{path}[{key}]"
            else:
                sub = f"{path}.{key}" if path else str(key)
            yield from flatten(value, sub)
    elif isinstance(messages, list):
        for message in messages:
            if isinstance(message, (dict, list)):
                yield from flatten(message, path)
            else:
                yield path, str(message)
    else:
        yield path, str(messages)
