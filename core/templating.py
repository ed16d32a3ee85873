"""Params templates and conditions, rendered in Jinja2's sandbox (no `eval`).

`{{ vars.x }}` and `{{ steps.<id>.output.<field> }}`. A string that is exactly one `{{ expression }}`
keeps the expression's native type (a number stays a number, an object stays an object); any other
string is rendered as text. Conditions are bare expressions (`steps.a.output.n > 3`), optionally
wrapped in `{{ }}`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from jinja2 import Template, TemplateError, Undefined, UndefinedError, nodes
from jinja2.environment import TemplateModule
from jinja2.parser import Parser

from core import budget
from core.budget import BudgetExceeded
from core.sandbox import ENV, size_of

# a compiled template and its globals
_Compiled = tuple[Template, dict[str, Any]]


# Compiling is most of a render's cost, and a workflow renders the same few strings again and again. Each compiled
# template is kept with its globals as a plain dict and run by `_module`.
@lru_cache(maxsize=4096)
def _expression(source: str) -> _Compiled:
    """One expression as a template that assigns it to `result`, as Environment.compile_expression builds it (which
    checks it first and raises its errors: exactly one expression, nothing after it). Not its TemplateExpression,
    whose call merges the globals into a copy of the context every time."""
    ENV.compile_expression(source, undefined_to_none=False)
    parser = Parser(ENV, source, state="variable")
    expression = parser.parse_expression()
    expression.set_environment(ENV)
    return _with_globals(
        ENV.from_string(nodes.Template([nodes.Assign(nodes.Name("result", "store"), expression, lineno=1)], lineno=1))
    )


@lru_cache(maxsize=4096)
def _template(source: str) -> _Compiled:
    return _with_globals(ENV.from_string(source))


def _with_globals(compiled: Template) -> _Compiled:
    return compiled, dict(compiled.globals)


def _module(compiled_source: Callable[[str], _Compiled], source: str, context: dict[str, Any]) -> TemplateModule:
    """The template `compiled_source(source)` (compiled once, outside the budget) run on `context`, through Jinja's
    public make_module with a shared context that already holds its globals: render() and TemplateExpression merge
    the globals (a ChainMap, walked in Python) into a copy of the context on every call, most of a short template's
    cost. The module's text is what render() returns; an expression's value is its `result`."""
    with budget.excluded():
        compiled, globals_ = compiled_source(source)
    return compiled.make_module({**globals_, **context}, shared=True)


_SINGLE_EXPR = re.compile(r"^\s*\{\{(.*)\}\}\s*$", re.S)


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
    # the module's exports are attributes it sets on itself (its __dict__), which its class does not declare
    result = vars(_module(_expression, expression, context))["result"]
    _fail_on_undefined(result)
    return result


def _fail_on_undefined(value: Any) -> None:
    # `{{ [vars.missing] }}` builds a list holding an Undefined without raising; find it here instead
    if isinstance(value, Undefined):
        str(value)  # a StrictUndefined (the environment's) raises UndefinedError naming what was missing
        raise UndefinedError("a value of the expression is undefined")
    elif isinstance(value, (list, tuple)):
        for v in value:
            _fail_on_undefined(v)
    elif isinstance(value, dict):
        for v in value.values():
            _fail_on_undefined(v)


def _failure(path: str, exc: BaseException) -> TemplateFailure:
    if isinstance(exc, BudgetExceeded):
        return TemplateFailure(path, exc.message)
    if isinstance(exc, TemplateError):
        return TemplateFailure(path, str(exc))
    if isinstance(exc, RecursionError):
        return TemplateFailure(path, "recursion too deep (a macro or loop that calls itself without end?)")
    if isinstance(exc, MemoryError):
        return TemplateFailure(path, "ran out of memory")
    return TemplateFailure(path, f"{type(exc).__name__}: {exc}")


# What rendering may raise on bad input or a runaway template; anything else is a bug of ours.
_EVALUATION_ERRORS = (
    TemplateError,
    BudgetExceeded,
    RecursionError,
    MemoryError,
    TypeError,
    ValueError,
    ArithmeticError,
    LookupError,
    AttributeError,
)


def render_value(value: Any, context: dict[str, Any], path: str = "params") -> Any:
    """Render every template inside a params structure; non-template values are returned as they are.
    All of it within one budget (core.budget): the time, the operations and the size of what is built,
    the rendered strings of the whole structure together at most `max_chars`."""
    if not has_template(value):
        return value
    with budget.metered(f"rendering {path}"):
        total = [0]
        return _render(value, context, path, total)


def _render(value: Any, context: dict[str, Any], path: str, total: list[int]) -> Any:
    if isinstance(value, dict):
        return {k: _render(v, context, f"{path}.{k}", total) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, context, f"{path}[{i}]", total) for i, v in enumerate(value)]
    if not isinstance(value, str) or not has_template(value):
        return value
    try:
        match = _SINGLE_EXPR.match(value)
        if match and "{{" not in match.group(1) and "}}" not in match.group(1):
            rendered = _native(match.group(1), context)
        else:
            rendered = str(_module(_template, value, context))
        total[0] += size_of(rendered)
        budget.check_size(total[0], "the rendered params")
    except _EVALUATION_ERRORS as exc:
        raise _failure(path, exc) from None
    return rendered


def evaluate_condition(expression: str, context: dict[str, Any], path: str = "condition") -> bool:
    return bool(evaluate_expression(expression, context, path))


def evaluate_expression(expression: str, context: dict[str, Any], path: str = "expression") -> Any:
    try:
        with budget.metered(f"evaluating {path}"):
            return _native(_strip_braces(expression), context)
    except _EVALUATION_ERRORS as exc:
        raise _failure(path, exc) from None


def _parse(source: str, *, expression: bool) -> nodes.Template:
    return _parsed(source, expression)


# Validating a definition parses each template twice (syntax, then the steps it reads), and a definition is
# validated again when an execution first loads it: parse once. The trees are only read, never changed.
@lru_cache(maxsize=4096)
def _parsed(source: str, expression: bool) -> nodes.Template:
    # An expression is parsed as a one-expression template so that one AST walk serves both.
    return ENV.parse("{{ " + _strip_braces(source) + " }}" if expression else source)


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
        if not isinstance(node, (nodes.Getattr, nodes.Getitem)):
            continue  # find_all yields only these; the test tells the type checker which
        target = node.node
        if isinstance(target, nodes.Name) and target.name == "steps":
            if isinstance(node, nodes.Getattr):
                found.add(node.attr)
            elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
                found.add(node.arg.value)
    return found


def expression_names(source: str) -> set[str]:
    """The top-level names an expression reads (`params`, `tool` …), for checking them when it is written;
    TemplateError when it does not parse."""
    from jinja2 import meta

    return set(meta.find_undeclared_variables(_parse(source, expression=True)))
