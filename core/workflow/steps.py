"""One step of a definition, as loaded by its schema (core.workflow.format), checked against what the schemas cannot
know, and turned into a StepDef: its tool and literal params against the workspace's tools, an agent's tools, the
syntax of its templates within the definition's budget, and the steps it reads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from core import gates
from core.agent.spec import AgentSpec, is_glob, resolve_tools
from core.approvals import ApprovalSpec
from core.schema import errors as errors_of
from core.templating import has_template, referenced_steps, syntax_error
from core.tools import ToolRegistry
from core.workflow.format import STEP_SCHEMAS, StepBase, approval_roles, declared_keys, field_names, step_type
from core.workflow.model import DEFAULT_TIMEOUT_S, StepDef
from core.workflow.problems import FieldErrors, unknown_name

MAX_TEMPLATE_SOURCE = 65_536  # all templates and conditions of one definition together


def human_timeout(
    raw: dict[str, Any], loaded: dict[str, Any], kind: str, default: gates.HumanTimeout | None
) -> gates.HumanTimeout | None:
    """A step's deadline for a person (its fields checked by its schema): its own, else the workflow's default; a step
    that sets human_timeout_s alone takes the default's action when it fits the step (else fail);
    `human_timeout_s: null` opts out of the default."""
    if kind not in gates.STEP_TYPES:
        return None
    allowed = gates.STEP_ACTIONS[kind]
    if not any(k in raw for k in gates.KEYS):
        if default is not None and default.on_timeout not in allowed:
            return gates.HumanTimeout(default.timeout_s, gates.DEFAULT_ACTION)
        return default
    if "human_timeout_s" in raw and raw["human_timeout_s"] is None:
        return None
    timeout_s = loaded.get("human_timeout_s", default.timeout_s if default else None)
    action = loaded.get("on_human_timeout")
    if action is None:
        inherited = default.on_timeout if default else gates.DEFAULT_ACTION
        action = inherited if inherited in allowed else gates.DEFAULT_ACTION
    if timeout_s is None:
        return None
    return gates.HumanTimeout(float(timeout_s), action, raw.get("timeout_answer"))


def build_step(
    raw: Any,
    loaded: dict[str, Any] | None,
    index: int,
    previous: str | None,
    tools: ToolRegistry,
    errors: FieldErrors,
    default_timeout: gates.HumanTimeout | None = None,
) -> StepDef | None:
    """steps[index] as a StepDef (None when it is not an object), from what its schema loaded (the fields that had
    no problem); each problem the schema cannot see added to `errors`. Without depends_on it follows `previous`."""
    if not isinstance(raw, dict):
        return None
    path = f"steps[{index}]"
    kind = step_type(raw)
    schema = STEP_SCHEMAS.get(kind) if isinstance(kind, str) else None
    declared = field_names(schema or StepBase)
    loaded = {k: v for k, v in (loaded or {}).items() if k in declared}  # a step's other fields are its extra
    step_id = loaded.get("id") or f"#{index}"
    params = loaded.get("params", {})
    tool = loaded.get("tool")
    if kind == "action" and isinstance(tool, str):  # (a tool that is not a string: its schema said so)
        found = tools.get(tool) if tool in tools else None
        if tool not in tools:
            errors.add(f"{path}.tool", unknown_name("tool", tool, tools.names()))
        elif found is not None:
            _check_literal_params(found.params_schema, params, f"{path}.params", errors)
    approval = _approval(loaded) if kind == "approval" else None
    agent = _agent(loaded, path, None if tools.accept_unknown else tools.names(), errors) if kind == "agent" else None
    for key, value in _template_fields(loaded, params, kind):
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
    depends_on = loaded.get("depends_on", ()) if "depends_on" in raw else ((previous,) if previous else ())
    when = loaded.get("when")
    reads = referenced_steps(params) | referenced_steps(when if isinstance(when, str) else "", expression=True)
    if approval is not None and approval.message:
        reads |= referenced_steps(approval.message)
    if agent is not None:
        reads |= referenced_steps(agent.goal)
    for key in ("condition", "target"):
        if isinstance(loaded.get(key), str):
            reads |= referenced_steps(loaded[key], expression=True)
    known = declared_keys(schema or StepBase) | set(gates.KEYS)
    return StepDef(
        id=step_id,
        type=kind or "action",
        name=str(raw.get("name") or step_id),
        tool=tool,
        params=params,
        depends_on=depends_on,
        requires=tuple(dict.fromkeys(depends_on + tuple(sorted(reads)))),
        reads=tuple(sorted(reads)),
        # an approval's timeout_s is its deadline (approval.timeout_s), not a tool's
        timeout_s=loaded.get("timeout_s", DEFAULT_TIMEOUT_S) if kind != "approval" else DEFAULT_TIMEOUT_S,
        retries=loaded.get("retries", 0),
        retry_backoff_s=loaded.get("retry_backoff_s", 1.0),
        when=when,
        requires_clarification=bool(loaded.get("requires_clarification")),
        clarification_question=loaded.get("clarification_question"),
        on_reject=loaded.get("on_reject", "ask"),
        condition=loaded.get("condition"),
        then=loaded.get("then", ()),
        otherwise=loaded.get("otherwise", ()),
        schema=loaded.get("schema"),
        target=loaded.get("target"),
        question=loaded.get("question"),
        approval=approval,
        human_timeout=human_timeout(raw, loaded, kind, default_timeout),
        agent=agent,
        extra={k: v for k, v in raw.items() if k not in known},
    )


def _approval(loaded: dict[str, Any]) -> ApprovalSpec:
    timeout_s = loaded.get("timeout_s")
    return ApprovalSpec(
        roles=approval_roles(loaded),
        users=(loaded.get("approvers") or {}).get("users", ()),
        quorum=loaded.get("quorum", 1),
        separate_duties=loaded.get("separate_duties", False),
        timeout_s=float(timeout_s) if timeout_s is not None else None,
        on_timeout=loaded.get("on_timeout", "reject"),
        message=loaded.get("message") or "",
    )


def _agent(loaded: dict[str, Any], path: str, tool_names: list[str] | None, errors: FieldErrors) -> AgentSpec:
    """The agent step's spec; each of its tools must match a registered tool (`tool_names` None: not checked, a
    stored definition read again, whose tools were checked when it was saved; a workspace's MCP tools come and go)."""
    tools = loaded.get("tools", ())
    for i, pattern in enumerate(tools):
        if tool_names is not None and not resolve_tools([pattern], tool_names):
            what = "matches no registered tool" if is_glob(pattern) else "is not a registered tool"
            errors.add(f"{path}.tools[{i}]", f"{pattern!r} {what}; known tools: {tool_names}")
    return AgentSpec(
        goal=loaded.get("goal", ""),
        tools=tuple(tools),
        max_tool_iterations=loaded.get("max_tool_iterations", 10),
        context_budget_kb=float(loaded.get("context_budget_kb", 50.0)),
        model=loaded.get("model"),
        output_schema=loaded.get("output_schema"),
        instructions=loaded.get("instructions"),
    )


def _template_fields(
    loaded: dict[str, Any], params: dict[str, Any], kind: str | None = None
) -> Iterator[tuple[str, str]]:
    for key in ("when", "condition", "target"):
        if isinstance(loaded.get(key), str):
            yield key, loaded[key]
    if kind == "approval" and isinstance(loaded.get("message"), str) and has_template(loaded["message"]):
        yield "message", loaded["message"]
    if kind == "agent" and isinstance(loaded.get("goal"), str) and has_template(loaded["goal"]):
        yield "goal", loaded["goal"]

    def walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
        if isinstance(value, dict):
            for k, v in value.items():
                yield from walk(v, f"{path}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from walk(v, f"{path}[{i}]")
        elif isinstance(value, str) and has_template(value):
            yield path, value

    yield from walk(params, "params")


def _check_literal_params(schema: dict[str, Any], params: dict[str, Any], path: str, errors: FieldErrors) -> None:
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
