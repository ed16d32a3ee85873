"""One step of a submitted definition checked and turned into a StepDef: its type, tool and literal params, templates,
branches, approval, agent and deadline fields, and the steps it reads."""

from __future__ import annotations

import math
from typing import Any

from core import gates
from core.agent.spec import KEYS as AGENT_KEYS
from core.agent.spec import parse_spec as parse_agent
from core.approvals import SPEC_KEYS as APPROVAL_KEYS
from core.approvals import parse_spec as parse_approval
from core.schema import errors as errors_of
from core.schema import user_schema_problems
from core.templating import has_template, referenced_steps, syntax_error
from core.tools import ToolRegistry
from core.workflow.model import DEFAULT_TIMEOUT_S, STEP_TYPES, StepDef
from core.workflow.problems import IDENTIFIER, MAX_TEXT, FieldErrors, unknown_name

_KNOWN_STEP_KEYS = {
    "id",
    "name",
    "type",
    "tool",
    "params",
    "depends_on",
    "timeout_s",
    "retries",
    "retry_backoff_s",
    "when",
    "requires_clarification",
    "clarification_question",
    "on_reject",
    "condition",
    "then",
    "else",
    "schema",
    "target",
    "question",
    "description",
    *APPROVAL_KEYS,
    *gates.KEYS,
    *AGENT_KEYS,
}
MAX_TEMPLATE_SOURCE = 65_536  # all templates and conditions of one definition together
_TEXT_FIELDS = {"name": 200, "description": MAX_TEXT, "question": MAX_TEXT, "clarification_question": MAX_TEXT}
SUPPORTED_STEP_TYPES = ("action", "decision", "validation", "human_input", "approval", "agent")


def _str_list(value: Any, path: str, errors: FieldErrors) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    errors.add(path, "must be a step id or a list of step ids")
    return ()


def _number(raw: dict, key: str, default: float, path: str, errors: FieldErrors, *, minimum: float, integer=False):
    value = raw.get(key, default)
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or not math.isfinite(value) or value < minimum:
        errors.add(f"{path}.{key}", f"must be {'an integer' if integer else 'a number'} >= {minimum}")
        return default
    return value


def _human_timeout(
    raw: dict, path: str, step_type: str | None, default: gates.HumanTimeout | None, errors: FieldErrors
) -> gates.HumanTimeout | None:
    """The step's deadline for a person (core.gates): its own, else the workflow's; only steps a person is asked
    about have one."""
    if step_type not in gates.STEP_TYPES:
        for key in gates.KEYS:
            if key in raw:
                hint = " (an approval's deadline is timeout_s with on_timeout)" if step_type == "approval" else ""
                errors.add(f"{path}.{key}", f"only action and human_input steps wait for a person{hint}")
        return None
    timeout, problems = gates.parse_timeout(raw, path, gates.STEP_ACTIONS[step_type], default)
    for where, messages in problems.items():
        for message in messages:
            errors.add(where, message)
    return timeout


def parse_step(
    raw: Any,
    index: int,
    previous: str | None,
    tools: ToolRegistry,
    errors: FieldErrors,
    human_timeout: gates.HumanTimeout | None = None,
) -> StepDef | None:
    """steps[index] as a StepDef, each problem added to `errors` (None when it is not an object); without depends_on
    it follows `previous`, and without its own deadline for a person it has the workflow's `human_timeout`."""
    path = f"steps[{index}]"
    if not isinstance(raw, dict):
        errors.add(path, "must be an object")
        return None
    step_id = raw.get("id")
    if not isinstance(step_id, str) or not IDENTIFIER.match(step_id):
        errors.add(f"{path}.id", "is required: letters, digits, _ and -, starting with a letter or _, at most 64")
        step_id = f"#{index}"
    step_type = raw.get("type", "action" if "tool" in raw else None)
    if step_type not in STEP_TYPES:
        errors.add(f"{path}.type", unknown_name("step type", step_type, SUPPORTED_STEP_TYPES))
    elif step_type not in SUPPORTED_STEP_TYPES:
        errors.add(f"{path}.type", f"step type {step_type!r} is not available on this server yet")
    tool = raw.get("tool")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        errors.add(f"{path}.params", "must be an object")
        params = {}
    if step_type == "action":
        if not isinstance(tool, str) or not tool:
            errors.add(f"{path}.tool", "is required for an action step")
        elif tool not in tools:
            errors.add(f"{path}.tool", unknown_name("tool", tool, tools.names()))
        elif tools.get(tool) is not None:
            _check_literal_params(tools.get(tool).params_schema, params, f"{path}.params", errors)
    approval = None
    if step_type == "approval":
        approval, problems = parse_approval(raw, path)
        for where, messages in problems.items():
            for message in messages:
                errors.add(where, message)
    agent = None
    if step_type == "agent":
        agent, problems = parse_agent(raw, path, None if tools.accept_unknown else tools.names())
        for where, messages in problems.items():
            for message in messages:
                errors.add(where, message)
    for key, value in _template_fields(raw, params, step_type):
        errors.template_chars += len(value)
        if errors.template_chars > MAX_TEMPLATE_SOURCE:
            # parsing is the costly part of a save (~5 ms per KB of dense template): stop before it
            errors.add(
                f"{path}.{key}",
                f"the templates and conditions of a definition are at most "
                f"{MAX_TEMPLATE_SOURCE:,} characters together; this one crosses it",
            )
            break
        problem = syntax_error(value, expression=key in ("when", "condition", "target"))
        if problem:
            errors.add(f"{path}.{key}", f"template syntax error: {problem}")
    if "depends_on" in raw:
        depends_on = _str_list(raw["depends_on"], f"{path}.depends_on", errors)
    else:
        depends_on = (previous,) if previous else ()
    on_reject = raw.get("on_reject", "ask")
    if on_reject not in ("ask", "stop"):
        errors.add(f"{path}.on_reject", "must be 'ask' or 'stop'")
    condition = raw.get("condition")
    if step_type == "decision" and condition is None:
        errors.add(f"{path}.condition", "is required for a decision step")
    elif step_type == "validation" and condition is None and raw.get("schema") is None:
        errors.add(f"{path}.condition", "is required for a validation step (or schema with target)")
    if condition is not None and not isinstance(condition, str):
        errors.add(f"{path}.condition", "must be an expression string")
        condition = None
    schema = raw.get("schema")
    if schema is not None:
        for problem in user_schema_problems(schema):
            errors.add(f"{path}.schema", problem)
        if not isinstance(raw.get("target"), str):
            errors.add(f"{path}.target", "is required with schema: an expression such as steps.fetch.output")
    for key, most in _TEXT_FIELDS.items():
        if isinstance(raw.get(key), str) and len(raw[key]) > most:
            errors.add(f"{path}.{key}", f"must be at most {most:,} characters")
    if step_type == "human_input" and not isinstance(raw.get("question"), str):
        errors.add(f"{path}.question", "is required for a human_input step")
    reads = referenced_steps(params) | referenced_steps(raw.get("when") or "", expression=True)
    if approval is not None and approval.message:
        reads |= referenced_steps(approval.message)
    if agent is not None:
        reads |= referenced_steps(agent.goal)
    for key in ("condition", "target"):
        if isinstance(raw.get(key), str):
            reads |= referenced_steps(raw[key], expression=True)
    return StepDef(
        id=step_id,
        type=step_type or "action",
        name=str(raw.get("name") or step_id),
        tool=tool,
        params=params,
        depends_on=depends_on,
        requires=tuple(dict.fromkeys(depends_on + tuple(sorted(reads)))),
        reads=tuple(sorted(reads)),
        # an approval's timeout_s is its deadline (approval.timeout_s, checked by parse_approval), not a tool's
        timeout_s=(
            _number(raw, "timeout_s", DEFAULT_TIMEOUT_S, path, errors, minimum=0.001)
            if step_type != "approval"
            else DEFAULT_TIMEOUT_S
        ),
        retries=_number(raw, "retries", 0, path, errors, minimum=0, integer=True),
        retry_backoff_s=_number(raw, "retry_backoff_s", 1.0, path, errors, minimum=0),
        when=raw.get("when"),
        requires_clarification=bool(raw.get("requires_clarification", False)),
        clarification_question=raw.get("clarification_question"),
        on_reject=on_reject,
        condition=condition,
        then=_str_list(raw.get("then", []), f"{path}.then", errors),
        otherwise=_str_list(raw.get("else", []), f"{path}.else", errors),
        schema=schema,
        target=raw.get("target"),
        question=raw.get("question"),
        approval=approval,
        human_timeout=_human_timeout(raw, path, step_type, human_timeout, errors),
        agent=agent,
        extra={k: v for k, v in raw.items() if k not in _KNOWN_STEP_KEYS},
    )


def _template_fields(raw: dict, params: dict, step_type: str | None = None):
    for key in ("when", "condition", "target"):
        if isinstance(raw.get(key), str):
            yield key, raw[key]
    if step_type == "approval" and isinstance(raw.get("message"), str) and has_template(raw["message"]):
        yield "message", raw["message"]
    if step_type == "agent" and isinstance(raw.get("goal"), str) and has_template(raw["goal"]):
        yield "goal", raw["goal"]

    def walk(value, path):
        if isinstance(value, dict):
            for k, v in value.items():
                yield from walk(v, f"{path}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from walk(v, f"{path}[{i}]")
        elif isinstance(value, str) and has_template(value):
            yield path, value

    yield from walk(params, "params")


def _check_literal_params(schema: dict, params: dict, path: str, errors: FieldErrors) -> None:
    """Check params against the tool's schema, except where a template decides the value at run time."""
    for err in errors_of(schema, params):
        value: Any = params
        templated = False
        for part in err.absolute_path:
            try:
                value = value[part]
            except (KeyError, IndexError, TypeError):
                break
            if has_template(value):
                templated = True
                break
        # required and additionalProperties are about the keys, which are never templated
        key_level = err.validator in ("required", "additionalProperties")
        if templated or (not key_level and has_template(err.instance)):
            continue
        where = ".".join(str(p) for p in err.absolute_path)
        errors.add(f"{path}.{where}" if where else path, err.message)
