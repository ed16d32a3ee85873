"""A definition's input variables: their declarations checked, and the values an execution is started with."""

from __future__ import annotations

from typing import Any

import jsonschema

from core.errors import ValidationFailed
from core.workflow.model import VARIABLE_TYPES, VariableDef, WorkflowDef
from core.workflow.problems import IDENTIFIER, MAX_TEXT, FieldErrors


def parse_variables(raw: Any, errors: FieldErrors) -> dict[str, VariableDef]:
    """The declared variables by name, each problem added to `errors`."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        errors.add("variables", "must be an object of variable name to {type, default, required}")
        return {}
    out: dict[str, VariableDef] = {}
    for name, spec in raw.items():
        path = f"variables.{name}"
        if not IDENTIFIER.match(str(name)):
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
            name=name,
            type=vtype,
            default=spec.get("default"),
            has_default="default" in spec,
            required=bool(spec.get("required", False)),
            description=str(spec.get("description", "")),
        )
    return out


def validate_variables(defn: WorkflowDef, given: Any) -> dict[str, Any]:
    """The variables an execution runs with: defaults filled in, types checked, unknown names refused."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise ValidationFailed("variables must be an object", details={"variables": ["must be an object"]})
    errors = FieldErrors()
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
