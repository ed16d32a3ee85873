"""JSON Schema validation, one place for tools' params and users' validation steps.

Two things differ from jsonschema's defaults, both because schemas can be written by users:
- Patterns (`pattern`, `patternProperties`, and through them `additionalProperties`) are matched by RE2,
  whose run time is linear in the input: `^(a|a)*$` on a long string cannot stall the server as a
  backtracking engine would. A pattern RE2 cannot compile (backreferences, lookaround) is refused when
  the definition is saved.
- References never leave the document: a remote `$ref` is not fetched (the server would otherwise make
  requests on a user's behalf, with no timeout), and every local one must resolve when the definition is
  saved.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import jsonschema
import re2
from jsonschema import ValidationError
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

if TYPE_CHECKING:
    # what jsonschema.validators.extend() makes, as its stubs describe it (the class exists only there)
    from jsonschema.protocols import Validator
    from jsonschema.validators import _Validator as KeywordValidator

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_RE2_OPTIONS.max_mem = 8 << 20  # a pattern's compiled program; the default would allow a pattern bomb more


class PatternError(ValueError):
    """A pattern RE2 cannot compile."""


@lru_cache(maxsize=2048)
def compile_pattern(pattern: str) -> Any:  # re2._Regexp: google-re2 ships no types
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        message = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(
            f"pattern {pattern!r} is not supported: {message} (Coach matches patterns with RE2, "
            "which has no backreferences or lookaround)"
        ) from None


def _search(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text) is not None


def _pattern(
    validator: KeywordValidator, patrn: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(
    validator: KeywordValidator, pattern_properties: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [k for k in instance if k not in properties and not any(_search(p, k) for p in patterns)]


def _additional_properties(
    validator: KeywordValidator, additional: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = _additional(instance, schema)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        listed = ", ".join(repr(e) for e in sorted(extras))
        if "patternProperties" in schema:
            patterns = ", ".join(repr(p) for p in sorted(schema["patternProperties"]))
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{listed} {verb} not match any of the regexes: {patterns}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


# types-jsonschema leaves extend() unannotated (it returns the validator class)
_Validator: type[Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    validators={
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
)


def _refuse(uri: str) -> Resource[Any]:
    # referencing's classes are attrs classes behind a decorator of its own that mypy does not read as one
    # (an old-style __dataclass_transform__), so their generated __init__ is not seen
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


# Nothing is fetched: a reference outside the document does not resolve.
_REGISTRY: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]  # as above: an attrs alias

_VALIDATORS: dict[int, tuple[dict[str, Any], Validator]] = {}


def validator(schema: dict[str, Any]) -> Validator:
    """One validator per schema object (a tool's schema lives as long as its registry): building one
    costs more than most validations. Keyed by identity, with the schema kept so the id stays its own."""
    found = _VALIDATORS.get(id(schema))
    if found is None or found[0] is not schema:
        if len(_VALIDATORS) > 1000:  # schemas made on the fly: do not grow without bound
            _VALIDATORS.clear()
        found = _VALIDATORS[id(schema)] = (schema, _Validator(schema, registry=_REGISTRY))
    return found[1]


def check_schema(schema: Any) -> None:
    """Raise jsonschema.SchemaError for a schema that is not valid JSON Schema (tools' schemas)."""
    jsonschema.Draft202012Validator.check_schema(schema)


def _walk(node: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}.{key}" if path else str(key)
            yield here, key, value
            if key in ("enum", "const", "examples", "default"):
                continue  # data, not schema
            if key == "patternProperties" and isinstance(value, dict):
                for pattern in value:
                    yield f"{here}.{pattern}", "(patternProperties key)", pattern
            yield from _walk(value, here)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}[{i}]")


def user_schema_problems(schema: Any) -> list[str]:
    """Why a schema written by a user cannot be used (empty when it can): not JSON Schema, a pattern RE2
    cannot compile, a reference outside the document or one that does not resolve."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return [f"is not a valid JSON Schema: {exc.message}"]
    if not isinstance(schema, dict):
        return []
    problems: list[str] = []
    resolver = _REGISTRY.resolver_with_root(Resource.from_contents(schema, default_specification=DRAFT202012))
    uses_patterns = uses_unevaluated = False
    for where, key, value in _walk(schema, ""):
        if key in ("pattern", "(patternProperties key)") and isinstance(value, str):
            uses_patterns = uses_patterns or key != "pattern"
            try:
                compile_pattern(value)
            except PatternError as exc:
                problems.append(f"{where}: {exc}")
        elif key == "unevaluatedProperties":
            uses_unevaluated = True
        elif key in ("$ref", "$dynamicRef") and isinstance(value, str):
            if not value.startswith("#"):
                problems.append(
                    f"{where}: {value!r} is a reference outside the schema; only references "
                    "inside it (#/...) are allowed, nothing is fetched"
                )
                continue
            try:
                resolver.lookup(value)
            except (Unresolvable, LookupError, ValueError) as exc:
                problems.append(f"{where}: reference {value!r} does not resolve inside the schema ({exc!s})")
    if uses_patterns and uses_unevaluated:
        problems.append("unevaluatedProperties together with patternProperties is not supported")
    return problems


def errors(schema: dict[str, Any], value: Any, limit: int | None = None) -> Iterator[ValidationError]:
    """The validation errors of `value` (at most `limit`)."""
    found = validator(schema).iter_errors(value)
    for i, err in enumerate(found):
        if limit is not None and i >= limit:
            return
        yield err
