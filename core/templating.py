"""Params templates and conditions, rendered in Jinja2's sandbox (no `eval`).

`{{ vars.x }}` and `{{ steps.<id>.output.<field> }}`. A string that is exactly one `{{ expression }}`
keeps the expression's native type (a number stays a number, an object stays an object); any other
string is rendered as text. Conditions are bare expressions (`steps.a.output.n > 3`), optionally
wrapped in `{{ }}`.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, TemplateError, Undefined, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

class _DataFirstEnvironment(ImmutableSandboxedEnvironment):
    """`steps.fetch.output.items` is the output's `items` field, not the dict's `items` method."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, dict):
            try:
                return obj[attribute]
            except (KeyError, TypeError):
                pass
        return super().getattr(obj, attribute)


_ENV = _DataFirstEnvironment(undefined=StrictUndefined, autoescape=False)


# Compiling is most of a render's cost, and a workflow renders the same few strings again and again.
@lru_cache(maxsize=4096)
def _expression(source: str):
    return _ENV.compile_expression(source, undefined_to_none=False)


@lru_cache(maxsize=4096)
def _template(source: str):
    return _ENV.from_string(source)
_SINGLE_EXPR = re.compile(r"^\s*\{\{(.*)\}\}\s*$", re.S)
_MAX_OUTPUT = 1_000_000


class TemplateFailure(Exception):
    """A template or condition could not be parsed or rendered; `path` names the field."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def has_template(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value or "{%" in value
    if isinstance(value, dict):
        return any(has_template(v) for v in value.values())
    if isinstance(value, list):
        return any(has_template(v) for v in value)
    return False


def _strip_braces(expression: str) -> str:
    match = _SINGLE_EXPR.match(expression)
    return match.group(1) if match else expression


def _native(expression: str, context: dict[str, Any]) -> Any:
    result = _expression(expression)(**context)
    _fail_on_undefined(result)
    return result


def _fail_on_undefined(value: Any) -> None:
    # `{{ [vars.missing] }}` builds a list holding an Undefined without raising; find it here instead
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()  # raises UndefinedError naming what was missing
    elif isinstance(value, (list, tuple)):
        for v in value:
            _fail_on_undefined(v)
    elif isinstance(value, dict):
        for v in value.values():
            _fail_on_undefined(v)


def render_value(value: Any, context: dict[str, Any], path: str = "params") -> Any:
    """Render every template inside a params structure; non-template values are returned as they are."""
    if isinstance(value, dict):
        return {k: render_value(v, context, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [render_value(v, context, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or not has_template(value):
        return value
    try:
        match = _SINGLE_EXPR.match(value)
        if match and "{{" not in match.group(1) and "}}" not in match.group(1):
            return _native(match.group(1), context)
        rendered = _template(value).render(**context)
    except TemplateError as exc:
        raise TemplateFailure(path, str(exc)) from None
    except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError) as exc:
        raise TemplateFailure(path, f"{type(exc).__name__}: {exc}") from None
    if len(rendered) > _MAX_OUTPUT:
        raise TemplateFailure(path, "rendered value is larger than 1 MB")
    return rendered


def evaluate_condition(expression: str, context: dict[str, Any], path: str = "condition") -> bool:
    return bool(evaluate_expression(expression, context, path))


def evaluate_expression(expression: str, context: dict[str, Any], path: str = "expression") -> Any:
    try:
        return _native(_strip_braces(expression), context)
    except TemplateError as exc:
        raise TemplateFailure(path, str(exc)) from None
    except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError) as exc:
        raise TemplateFailure(path, f"{type(exc).__name__}: {exc}") from None


def _parse(source: str, *, expression: bool) -> nodes.Node:
    # An expression is parsed as a one-expression template so that one AST walk serves both.
    return _ENV.parse("{{ " + _strip_braces(source) + " }}" if expression else source)


def syntax_error(source: str, *, expression: bool = False) -> str | None:
    try:
        _parse(source, expression=expression)
    except TemplateError as exc:
        return str(exc)
    return None


def referenced_steps(source: Any, *, expression: bool = False) -> set[str]:
    """The step ids a template (or any params structure of templates) reads through `steps.<id>`."""
    found: set[str] = set()
    if isinstance(source, dict):
        for v in source.values():
            found |= referenced_steps(v, expression=expression)
        return found
    if isinstance(source, list):
        for v in source:
            found |= referenced_steps(v, expression=expression)
        return found
    if not isinstance(source, str) or (not expression and not has_template(source)):
        return found
    try:
        tree = _parse(source, expression=expression)
    except TemplateError:
        return found
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        target = node.node
        if isinstance(target, nodes.Name) and target.name == "steps":
            if isinstance(node, nodes.Getattr):
                found.add(node.attr)
            elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
                found.add(node.arg.value)
    return found
