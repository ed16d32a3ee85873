"""Whether a correction is sound (issue 31, item 1): what it may not do to the suggested params, and which
corrections a failed step puts the blame on (they then do not count towards a learned rule).

A tool's JSON Schema is judged by core.tools.schema_errors. A loose schema (`echo` takes any object) says
nothing about the params the step's definition sets, yet later steps read them (`steps.total.output.total`),
so two more rules hold for the params the tool's schema does not describe:

- a param the step's definition sets may not be dropped (the tool's schema may still list it as optional:
  then dropping it is the tool's business, and allowed);
- a param keeps the JSON type it was suggested with (a number stays a number).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from core.coaching.corrections import Change
from core.coaching.paths import MISSING, flatten, split_path

FAILED_STEP = "step_failed"  # a decision's outcome: its correction's step (or a step reading it) then failed


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _untyped(schema: Any) -> bool:
    """A schema that says nothing of the value (`{}`, `true`, only a description): `json: {}` takes anything."""
    if schema is True:
        return True
    return isinstance(schema, dict) and not any(
        k in schema
        for k in (
            "type",
            "enum",
            "const",
            "anyOf",
            "oneOf",
            "allOf",
            "$ref",
            "properties",
            "items",
            "additionalProperties",
        )
    )


def _described(tool_schema: dict[str, Any] | None) -> set[str]:
    """The params the tool's schema says something about: their drops and types are the tool's business."""
    props = tool_schema.get("properties") if isinstance(tool_schema, dict) else None
    return {k for k, v in props.items() if not _untyped(v)} if isinstance(props, dict) else set()


def _top(path: str) -> str:
    return split_path(path)[0]


def correction_problems(
    suggested: Any, corrected: dict[str, Any], tool_schema: dict[str, Any] | None, defined: Any = None
) -> dict[str, list[str]]:
    """{param path: [messages]} of what the correction breaks beyond the tool's schema (empty: sound). `defined`:
    the step's params as its definition writes them (a nested field it sets counts too: `json.total`)."""
    if not isinstance(suggested, dict):
        return {}
    described = _described(tool_schema)
    before, after = flatten(suggested), flatten(corrected)
    written = flatten(defined) if isinstance(defined, dict) else {}
    problems: dict[str, list[str]] = {}
    for path in sorted(set(written) & set(before)):
        if path not in after and _top(path) not in described:
            problems.setdefault(path, []).append(
                "is required: the step's definition sets it and later steps may read it"
            )
    for path, was in before.items():
        if _top(path) in described or path not in after or was is None:
            continue
        old, new = json_type(was), json_type(after[path])
        if old != new:
            problems.setdefault(path, []).append(f"must stay a {old}, as suggested (got a {new})")
    return problems


_QUOTED = re.compile(r"'([^']+)'")


def blamed(failed_step: str, failure: str, reads: Iterable[str], corrected: dict[str, list[Change]]) -> list[str]:
    """The corrected steps a failure is put down to: the failed step itself when it ran with a correction, and a
    corrected step it reads whose correction changed or dropped a field the failure names (`'dict object' has no
    attribute 'total'` after `total` was dropped). `corrected`: per corrected step of the run, its changes."""
    found = [failed_step] if failed_step in corrected else []
    named = set(_QUOTED.findall(failure or ""))
    for step_id in sorted(set(reads) & set(corrected)):
        if step_id == failed_step:
            continue
        for change in corrected[step_id]:
            leaf = change.field.split(".")[-1]
            if leaf in named or (change.after is MISSING and change.field in (failure or "")):
                found.append(step_id)
                break
    return found


_REQUIRED = re.compile(r"^'([^']+)' is a required property$")


def name_missing_fields(problems: dict[str, list[str]]) -> dict[str, list[str]]:
    """A schema's `required` is reported on the object that lacks the field (`(params)`, or `headers`): report it
    on the missing field itself (`total: is required`), so that a form can show it there."""
    out: dict[str, list[str]] = {}
    for path, messages in problems.items():
        for message in messages:
            missing = _REQUIRED.match(message)
            if missing:
                where = missing.group(1) if path == "(params)" else f"{path}.{missing.group(1)}"
                out.setdefault(where, []).append("is required")
            else:
                out.setdefault(path, []).append(message)
    return out
