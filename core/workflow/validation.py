"""Turn a submitted definition (parsed JSON or YAML) into a WorkflowDef, or say every field that is wrong. The format
is core.workflow.format's schemas; core.workflow.steps checks a step against the workspace's tools and builds it;
here, the definition as a whole and the order of its steps."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from graphlib import CycleError, TopologicalSorter
from typing import Any

from marshmallow import ValidationError

from core import gates
from core.errors import ValidationFailed
from core.tools import ToolRegistry
from core.workflow.format import MAX_STEPS, WorkflowDefinition, flatten
from core.workflow.model import StepDef, WorkflowDef
from core.workflow.problems import FieldErrors, listed
from core.workflow.steps import build_step


def _with_branch_owners(steps: list[StepDef]) -> list[StepDef]:
    """A step named in a decision's then/else waits for that decision."""
    owners: dict[str, list[str]] = defaultdict(list)
    for s in steps:
        if s.type == "decision":
            for target in s.then + s.otherwise:
                owners[target].append(s.id)
    return [
        replace(s, requires=tuple(dict.fromkeys(s.requires + tuple(owners[s.id])))) if owners.get(s.id) else s
        for s in steps
    ]


def _order(steps: list[StepDef], errors: FieldErrors, index: dict[str, int]) -> tuple[str, ...]:
    """The order the steps run in; every unknown reference and a cycle added to `errors` (nothing when the
    definition had problems before: its problems are reported together, and there is no order to give). `index`:
    each step id's place in the submitted list (its `steps[i]`)."""
    ids = [s.id for s in steps]
    known = set(ids)
    for s in steps:
        i = index[s.id]
        for dep in s.depends_on:
            if dep not in known:
                errors.add(f"steps[{i}].depends_on", f"unknown step {dep!r}; the steps are {listed(ids)}")
            elif dep == s.id:
                errors.add(f"steps[{i}].depends_on", "a step cannot depend on itself")
        for read in s.reads:
            if read not in known:
                errors.add(
                    f"steps[{i}]", f"reads steps.{read} but there is no step {read!r}; the steps are {listed(ids)}"
                )
            elif read == s.id:
                errors.add(f"steps[{i}]", "a step cannot read its own output")
        for key, branch in (("then", s.then), ("else", s.otherwise)):
            for target in branch:
                if target not in known:
                    errors.add(f"steps[{i}].{key}", f"unknown step {target!r}; the steps are {listed(ids)}")
    if errors.by_field:
        return ()
    # graphlib hands out the steps whose requirements are done, a batch at a time; each batch is taken in
    # definition order, so that the order is stable and readable
    position = {sid: i for i, sid in enumerate(ids)}
    sorter = TopologicalSorter({s.id: [d for d in s.requires if d != s.id] for s in steps})
    try:
        sorter.prepare()
    except CycleError as exc:
        cycle = list(dict.fromkeys(exc.args[1]))
        for s in steps:
            if s.id in cycle:
                errors.add(
                    f"steps[{index[s.id]}].depends_on",
                    f"a dependency cycle: the steps wait for each other in a circle, {' → '.join([*cycle, cycle[0]])}",
                )
        return ()
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=position.__getitem__)
        order.extend(ready)
        sorter.done(*ready)
    return tuple(order)


def parse_definition(data: Any, tools: ToolRegistry) -> WorkflowDef:
    """`data` (parsed JSON or YAML) loaded by the definition's schema (core.workflow.format), checked against the
    workspace's tools and between its steps; every problem at once, by field path (ValidationFailed)."""
    if not isinstance(data, dict):
        raise ValidationFailed("a workflow definition must be an object", details={"(body)": ["must be an object"]})
    errors = FieldErrors()
    try:
        loaded = WorkflowDefinition().load(data)
    except ValidationError as exc:
        loaded = exc.valid_data or {}
        for path, message in flatten(exc.messages):
            errors.add(path, message)
    default_timeout = _default_timeout(data, loaded, errors)
    raw_steps = data.get("steps")
    steps: list[StepDef] = []
    seen: dict[str, int] = {}  # step id -> its place in the list
    if isinstance(raw_steps, list) and 0 < len(raw_steps) <= MAX_STEPS:
        previous = None
        loaded_steps = loaded.get("steps") or [None] * len(raw_steps)
        for i, (raw, step_data) in enumerate(zip(raw_steps, loaded_steps, strict=True)):
            step = build_step(raw, step_data, i, previous, tools, errors, default_timeout)
            if step is None:
                continue
            if step.id in seen:
                errors.add(f"steps[{i}].id", f"duplicate step id {step.id!r} (also steps[{seen[step.id]}])")
            seen.setdefault(step.id, i)
            steps.append(step)
            previous = step.id
    # the references between steps are checked too, whatever else is wrong: every problem is reported at once
    steps = _with_branch_owners(steps)
    order = _order(steps, errors, seen)
    errors.raise_if_any("workflow definition")
    name, description = loaded["name"], loaded.get("description") or ""
    source = {
        "name": name,
        "description": description,
        "variables": data.get("variables") or {},
        "steps": raw_steps,
        **{k: data[k] for k in gates.KEYS if k in data},
    }
    return WorkflowDef(
        name=name.strip(),
        description=description,
        variables=loaded.get("variables") or {},
        steps=tuple(steps),
        order=order,
        source=source,
    )


def _default_timeout(data: dict[str, Any], loaded: dict[str, Any], errors: FieldErrors) -> gates.HumanTimeout | None:
    """The workflow's default deadline on human gates (its fields checked by the schema), when it has a valid one."""
    if errors.by_field.keys() & set(gates.KEYS) or loaded.get("human_timeout_s") is None:
        return None
    return gates.HumanTimeout(
        float(loaded["human_timeout_s"]),
        loaded.get("on_human_timeout") or gates.DEFAULT_ACTION,
        data.get("timeout_answer"),
    )
