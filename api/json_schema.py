"""A schema of the OpenAPI document as a JSON Schema document of its own (draft-07): the schema and every component
it reaches, under `definitions`. The document is apispec's (OpenAPI 3.0 schema objects), so the two cannot differ;
what 3.0 says its own way is said as JSON Schema does: `nullable: true` is a type that also takes null, and
`exclusiveMinimum: true` is the bound itself.

GET /api/workflows/schema serves the workflow definition format this way for the web app's editor (completion and
inline checks) and for any other editor that reads JSON Schema (docs/api.md "The contract").
"""

from __future__ import annotations

import copy
from typing import Any

DRAFT = "http://json-schema.org/draft-07/schema#"
_COMPONENT = "#/components/schemas/"


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"][len(_COMPONENT) :]} if isinstance(node.get("$ref"), str) else set()
        for value in node.values():
            found |= _refs(value)
        return found
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node)) if node else set()
    return set()


def _convert(node: Any) -> Any:
    if isinstance(node, list):
        return [_convert(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _convert(v) for k, v in node.items() if k not in ("nullable", "discriminator", "readOnly", "writeOnly")}
    if isinstance(out.get("$ref"), str) and out["$ref"].startswith(_COMPONENT):
        out["$ref"] = "#/definitions/" + out["$ref"][len(_COMPONENT) :]
    if out.get("exclusiveMinimum") is True:  # 3.0's boolean form: draft-07 takes the bound itself
        out["exclusiveMinimum"] = out.pop("minimum", 0)
    if node.get("nullable"):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        elif "allOf" in out or "$ref" in out or "oneOf" in out:
            inner = {k: out.pop(k) for k in ("allOf", "$ref", "oneOf") if k in out}
            out["anyOf"] = [inner, {"type": "null"}]
    return out


def component_as_json_schema(components: dict[str, Any], name: str, title: str) -> dict[str, Any]:
    """Component `name` of `components` (an OpenAPI document's components.schemas) as a JSON Schema document."""
    reached, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current in reached:
            continue
        reached.add(current)
        todo.extend(_refs(components[current]) - reached)
    root = _convert(copy.deepcopy(components[name]))
    return {
        "$schema": DRAFT,
        "title": title,
        **root,
        "definitions": {n: _convert(components[n]) for n in sorted(reached - {name})},
    }
