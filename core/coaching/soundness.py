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
from typing import Any, Iterable

from core.coaching.corrections import MISSING, Change

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


def _described(tool_schema: dict[str, Any] | None) -> dict[str, Any]:
    props = (tool_schema or {}).get("properties") if isinstance(tool_schema, dict) else None
    return props if isinstance(props, dict) else {}


def correction_problems(suggested: Any, corrected: dict[str, Any], tool_schema: dict[str, Any] | None,
                        defined: Iterable[str] = ()) -> dict[str, list[str]]:
    """{param: [messages]} of what the correction breaks beyond the tool's schema (empty: sound). `defined`:
    the params the step's definition sets."""
    if not isinstance(suggested, dict):
        return {}
    described = _described(tool_schema)
    problems: dict[str, list[str]] = {}
    for name in sorted(set(defined) & set(suggested)):
        if name not in corrected and name not in described:
            problems.setdefault(name, []).append(
                "is required: the step's definition sets it and later steps may read it")
    for name, before in suggested.items():
        if name in described or name not in corrected or before is None:
            continue
        was, now = json_type(before), json_type(corrected[name])
        if was != now:
            problems.setdefault(name, []).append(f"must stay a {was}, as suggested (got a {now})")
    return problems


_QUOTED = re.compile(r"'([^']+)'")


def blamed(failed_step: str, failure: str, reads: Iterable[str],
           corrected: dict[str, list[Change]]) -> list[str]:
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
