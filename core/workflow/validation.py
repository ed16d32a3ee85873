"""Turn a submitted definition (parsed JSON or YAML) into a WorkflowDef, or say every field that is wrong."""
from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import replace
from graphlib import CycleError, TopologicalSorter
from typing import Any

import jsonschema

from core.agent.spec import KEYS as AGENT_KEYS, parse_spec as parse_agent
from core.approvals import SPEC_KEYS as APPROVAL_KEYS, parse_spec as parse_approval
from core import gates
from core.errors import ValidationFailed
from core.schema import errors as errors_of, user_schema_problems
from core.templating import has_template, referenced_steps, syntax_error
from core.tools import ToolRegistry
from core.workflow.model import DEFAULT_TIMEOUT_S, STEP_TYPES, VARIABLE_TYPES, StepDef, VariableDef, WorkflowDef

_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
_KNOWN_STEP_KEYS = {
    "id", "name", "type", "tool", "params", "depends_on", "timeout_s", "retries", "retry_backoff_s", "when",
    "requires_clarification", "clarification_question", "on_reject", "condition", "then", "else",
    "schema", "target", "question", "description", *APPROVAL_KEYS, *gates.KEYS, *AGENT_KEYS,
}
MAX_STEPS = 500
MAX_TEMPLATE_SOURCE = 65_536  # all templates and conditions of one definition together
MAX_TEXT = 10_000  # a description or a question: text people read, not a place to store data
_TEXT_FIELDS = {"name": 200, "description": MAX_TEXT, "question": MAX_TEXT, "clarification_question": MAX_TEXT}
SUPPORTED_STEP_TYPES = ("action", "decision", "validation", "human_input", "approval", "agent")


class _Errors:
    def __init__(self) -> None:
        self.by_field: dict[str, list[str]] = defaultdict(list)
        self.template_chars = 0

    def add(self, path: str, message: str) -> None:
        self.by_field[path].append(message)

    def raise_if_any(self, what: str) -> None:
        if self.by_field:
            raise ValidationFailed(f"{what} is invalid", details=dict(self.by_field))


def _str_list(value: Any, path: str, errors: _Errors) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    errors.add(path, "must be a step id or a list of step ids")
    return ()


def _number(raw: dict, key: str, default: float, path: str, errors: _Errors, *, minimum: float, integer=False):
    value = raw.get(key, default)
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or not math.isfinite(value) or value < minimum:
        errors.add(f"{path}.{key}", f"must be {'an integer' if integer else 'a number'} >= {minimum}")
        return default
    return value


def _parse_variables(raw: Any, errors: _Errors) -> dict[str, VariableDef]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        errors.add("variables", "must be an object of variable name to {type, default, required}")
        return {}
    out: dict[str, VariableDef] = {}
    for name, spec in raw.items():
        path = f"variables.{name}"
        if not _ID.match(str(name)):
            errors.add(path, "variable names are letters, digits, _ and -, starting with a letter or _")
        if not isinstance(spec, dict):  # shorthand: `who: world` means a string with that default
            spec = {"default": spec}
        vtype = spec.get("type", "any")
        if vtype not in VARIABLE_TYPES:
            errors.add(f"{path}.type", f"must be one of {sorted(VARIABLE_TYPES)}")
            vtype = "any"
        json_type = VARIABLE_TYPES[vtype]
        if len(str(spec.get("description", ""))) > MAX_TEXT:
            errors.add(f"{path}.description", f"must be at most {MAX_TEXT:,} characters")
        if json_type and spec.get("default") is not None:
            for err in jsonschema.Draft202012Validator({"type": json_type}).iter_errors(spec["default"]):
                errors.add(f"{path}.default", err.message)
        out[name] = VariableDef(
            name=name, type=vtype, default=spec.get("default"), has_default="default" in spec,
            required=bool(spec.get("required", False)), description=str(spec.get("description", "")),
        )
    return out


def _human_timeout(raw: dict, path: str, step_type: str | None, default: gates.HumanTimeout | None,
                   errors: _Errors) -> gates.HumanTimeout | None:
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


def _parse_step(raw: Any, index: int, previous: str | None, tools: ToolRegistry, errors: _Errors,
                human_timeout: gates.HumanTimeout | None = None) -> StepDef | None:
    path = f"steps[{index}]"
    if not isinstance(raw, dict):
        errors.add(path, "must be an object")
        return None
    step_id = raw.get("id")
    if not isinstance(step_id, str) or not _ID.match(step_id):
        errors.add(f"{path}.id", "is required: letters, digits, _ and -, starting with a letter or _, at most 64")
        step_id = f"#{index}"
    step_type = raw.get("type", "action" if "tool" in raw else None)
    if step_type not in STEP_TYPES:
        errors.add(f"{path}.type", f"unknown step type {step_type!r}; one of {list(STEP_TYPES)}")
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
            errors.add(f"{path}.tool", f"unknown tool {tool!r}; known tools: {tools.names()}")
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
            errors.add(f"{path}.{key}", f"the templates and conditions of a definition are at most "
                                        f"{MAX_TEMPLATE_SOURCE:,} characters together; this one crosses it")
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
        id=step_id, type=step_type or "action", name=str(raw.get("name") or step_id), tool=tool, params=params,
        depends_on=depends_on, requires=tuple(dict.fromkeys(depends_on + tuple(sorted(reads)))),
        reads=tuple(sorted(reads)),
        # an approval's timeout_s is its deadline (approval.timeout_s, checked by parse_approval), not a tool's
        timeout_s=(_number(raw, "timeout_s", DEFAULT_TIMEOUT_S, path, errors, minimum=0.001)
                   if step_type != "approval" else DEFAULT_TIMEOUT_S),
        retries=_number(raw, "retries", 0, path, errors, minimum=0, integer=True),
        retry_backoff_s=_number(raw, "retry_backoff_s", 1.0, path, errors, minimum=0),
        when=raw.get("when"), requires_clarification=bool(raw.get("requires_clarification", False)),
        clarification_question=raw.get("clarification_question"), on_reject=on_reject,
        condition=condition, then=_str_list(raw.get("then", []), f"{path}.then", errors),
        otherwise=_str_list(raw.get("else", []), f"{path}.else", errors),
        schema=schema, target=raw.get("target"), question=raw.get("question"), approval=approval,
        human_timeout=_human_timeout(raw, path, step_type, human_timeout, errors), agent=agent,
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


def _check_literal_params(schema: dict, params: dict, path: str, errors: _Errors) -> None:
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


def _with_branch_owners(steps: list[StepDef]) -> list[StepDef]:
    """A step named in a decision's then/else waits for that decision."""
    owners: dict[str, list[str]] = defaultdict(list)
    for s in steps:
        if s.type == "decision":
            for target in s.then + s.otherwise:
                owners[target].append(s.id)
    return [replace(s, requires=tuple(dict.fromkeys(s.requires + tuple(owners[s.id])))) if owners.get(s.id) else s
            for s in steps]


def _order(steps: list[StepDef], errors: _Errors) -> tuple[str, ...]:
    ids = [s.id for s in steps]
    known = set(ids)
    for i, s in enumerate(steps):
        for dep in s.depends_on:
            if dep not in known:
                errors.add(f"steps[{i}].depends_on", f"unknown step {dep!r}")
            elif dep == s.id:
                errors.add(f"steps[{i}].depends_on", "a step cannot depend on itself")
        for read in s.reads:
            if read not in known:
                errors.add(f"steps[{i}]", f"reads steps.{read} but there is no step {read!r}")
            elif read == s.id:
                errors.add(f"steps[{i}]", "a step cannot read its own output")
        for key, branch in (("then", s.then), ("else", s.otherwise)):
            for target in branch:
                if target not in known:
                    errors.add(f"steps[{i}].{key}", f"unknown step {target!r}")
    if errors.by_field:
        return ()
    # graphlib hands out the steps whose requirements are done, a batch at a time; each batch is taken in
    # definition order, so that the order is stable and readable
    position = {sid: i for i, sid in enumerate(ids)}
    sorter = TopologicalSorter({s.id: [d for d in s.requires if d != s.id] for s in steps})
    try:
        sorter.prepare()
    except CycleError as exc:
        cycle = sorted(set(exc.args[1]))
        for i, s in enumerate(steps):
            if s.id in cycle:
                errors.add(f"steps[{i}].depends_on", f"dependency cycle among steps {cycle}")
        return ()
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=position.__getitem__)
        order.extend(ready)
        sorter.done(*ready)
    return tuple(order)


def parse_definition(data: Any, tools: ToolRegistry) -> WorkflowDef:
    errors = _Errors()
    if not isinstance(data, dict):
        raise ValidationFailed("a workflow definition must be an object", details={"(body)": ["must be an object"]})
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.add("name", "is required: a non-empty string")
    elif len(name) > 200:
        errors.add("name", "must be at most 200 characters")
    description = data.get("description") or ""
    if not isinstance(description, str):
        errors.add("description", "must be a string")
    elif len(description) > MAX_TEXT:
        errors.add("description", f"must be at most {MAX_TEXT:,} characters")
    variables = _parse_variables(data.get("variables"), errors)
    human_timeout, problems = gates.parse_timeout(data, "", gates.WORKFLOW_ACTIONS)
    for where, messages in problems.items():
        for message in messages:
            errors.add(where, message)
    raw_steps = data.get("steps")
    steps: list[StepDef] = []
    if not isinstance(raw_steps, list) or not raw_steps:
        errors.add("steps", "is required: a non-empty list of steps")
    elif len(raw_steps) > MAX_STEPS:
        errors.add("steps", f"at most {MAX_STEPS} steps")
    else:
        seen: dict[str, int] = {}
        previous = None
        for i, raw in enumerate(raw_steps):
            step = _parse_step(raw, i, previous, tools, errors, human_timeout)
            if step is None:
                continue
            if step.id in seen:
                errors.add(f"steps[{i}].id", f"duplicate step id {step.id!r} (also steps[{seen[step.id]}])")
            seen.setdefault(step.id, i)
            steps.append(step)
            previous = step.id
    errors.raise_if_any("workflow definition")
    steps = _with_branch_owners(steps)
    order = _order(steps, errors)
    errors.raise_if_any("workflow definition")
    source = {"name": name, "description": description, "variables": data.get("variables") or {}, "steps": raw_steps,
              **{k: data[k] for k in gates.KEYS if k in data}}
    return WorkflowDef(name=name.strip(), description=description, variables=variables, steps=tuple(steps),
                       order=order, source=source)


def validate_variables(defn: WorkflowDef, given: Any) -> dict[str, Any]:
    """The variables an execution runs with: defaults filled in, types checked, unknown names refused."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise ValidationFailed("variables must be an object", details={"variables": ["must be an object"]})
    errors = _Errors()
    for name in given:
        if name not in defn.variables:
            errors.add(f"variables.{name}", f"unknown variable; this workflow takes {sorted(defn.variables)}")
    values: dict[str, Any] = {}
    for name, spec in defn.variables.items():
        if name in given and (given[name] is not None or not spec.required):
            value = given[name]
        elif spec.has_default:
            value = spec.default
        elif spec.required:
            errors.add(f"variables.{name}", "is required")
            continue
        else:
            value = None
        json_type = VARIABLE_TYPES[spec.type]
        if json_type and value is not None:
            for err in jsonschema.Draft202012Validator({"type": json_type}).iter_errors(value):
                errors.add(f"variables.{name}", err.message)
        values[name] = value
    errors.raise_if_any("variables")
    return values
