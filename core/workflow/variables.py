"""The values an execution is started with, checked against its definition's variables (their declarations are
checked by core.workflow.format's VariableDeclaration)."""

from __future__ import annotations

from typing import Any

import jsonschema

from core.errors import ValidationFailed
from core.workflow.model import VARIABLE_TYPES, WorkflowDef
from core.workflow.problems import FieldErrors


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
