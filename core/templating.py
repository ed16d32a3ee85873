"""Params templates and conditions, rendered in Jinja2's sandbox (no `eval`).

`{{ vars.x }}` and `{{ steps.<id>.output.<field> }}`. A string that is exactly one `{{ expression }}`
keeps the expression's native type (a number stays a number, an object stays an object); any other
string is rendered as text. Conditions are bare expressions (`steps.a.output.n > 3`), optionally
wrapped in `{{ }}`.
"""
from __future__ import annotations

import functools
import re
import string
from functools import lru_cache
from typing import Any, Callable

from jinja2 import StrictUndefined, TemplateError, Undefined, UndefinedError, nodes
from jinja2.compiler import CodeGenerator
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace, generate_lorem_ipsum
from jinja2.visitor import NodeTransformer

from core import budget
from core.budget import BudgetExceeded

_LOOP_FILTER = "coach_metered_loop"
_CHECKED_FILTER = "coach_checked"
# filters whose integer arguments are widths or counts of what they build
_WIDTH_FILTERS = {"center", "indent", "wordwrap", "truncate", "batch", "slice", "wordcount"}
# filters that order or group their input with Python work per item (a key function), in one call
_ORDERING_FILTERS = {"sort", "unique", "groupby", "dictsort", "min", "max"}
# `%5d`, `%-*s`, `%.3f`: the numbers of a printf-style conversion
_PRINTF = re.compile(r"%[#0\- +]*(\d*)(?:\.(\d*))?")


def _metered(iterable: Any) -> Any:
    """Every loop of a template goes through here, so each iteration counts against the budget."""
    for item in iterable:
        budget.tick()
        yield item


class _Meter(NodeTransformer):
    """Every `{% for %}` iterates through the metering filter (an empty loop body costs operations too), and
    every `~` concatenation is size-checked (it is no operator the sandbox can intercept)."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        node = self.generic_visit(node)
        if not (isinstance(node.iter, nodes.Filter) and node.iter.name == _LOOP_FILTER):
            node.iter = nodes.Filter(node.iter, _LOOP_FILTER, [], [], None, None, lineno=node.iter.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        node = self.generic_visit(node)
        return nodes.Filter(node, _CHECKED_FILTER, [], [], None, None, lineno=node.lineno)


class _MeteredCodeGenerator(CodeGenerator):
    def visit_Template(self, node: nodes.Template, frame=None) -> None:
        # before code generation starts: it collects the filters a template uses first
        if not getattr(node, "coach_metered", False):
            _Meter().visit(node)
            node.coach_metered = True
        super().visit_Template(node, frame)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)) else 0


def _checked(value: Any, what: str) -> Any:
    if isinstance(value, (str, bytes, list, tuple, dict)):
        budget.check_size(len(value), what)
    return value


def _check_format(fmt: str, what: str) -> None:
    """Widths and precisions written into a format string (`%099999999d`, `{:>99999999}`)."""
    if "%" in fmt:
        for width, precision in _PRINTF.findall(fmt):
            for number in (width, precision):
                if number:
                    budget.check_width(int(number), f"{what}: a format width")
    if "{" in fmt:
        try:
            parsed = list(string.Formatter().parse(fmt))
        except ValueError:
            return  # the format call itself reports the mistake
        for _text, _field, spec, _conv in parsed:
            for number in re.findall(r"\d+", spec or ""):
                budget.check_width(int(number), f"{what}: a format width")


def _check_args(args: tuple, kwargs: dict, what: str) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool):
            budget.check_width(value, what)


def _metered_filter(name: str, func: Any) -> Any:
    widths = name in _WIDTH_FILTERS
    ordering = name in _ORDERING_FILTERS
    # with pass_context / pass_environment the value is the second argument
    skip = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0

    @functools.wraps(func)  # keeps jinja_pass_arg (pass_context, pass_environment …)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        budget.tick()
        value = args[skip] if len(args) > skip else None
        if widths:
            _check_args(args[skip + 1:], kwargs, f"the {name} filter's argument")
        if ordering and _size(value):
            budget.check_sorted(_size(value), f"the {name} filter")
        if name == "format" and isinstance(value, str):
            _check_format(value, "the format filter")
        result = _checked(func(*args, **kwargs), f"the result of the {name} filter")
        budget.check_time()  # one filter over many items can take long by itself
        return result

    return wrapper


def _metered_test(func: Any) -> Any:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        budget.tick()  # select / reject call a test per item
        return func(*args, **kwargs)

    return wrapper


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    budget.check_width(n * max, "lipsum's words")
    return generate_lorem_ipsum(n, html, min, max)


class _MeteredNamespace(Namespace):
    def __setitem__(self, name: str, value: Any) -> None:
        budget.tick()
        _checked(value, f"namespace attribute {name!r}")
        super().__setitem__(name, value)


def _product_size(left: Any, right: Any) -> None:
    seq, count = (left, right) if isinstance(right, int) else (right, left)
    if isinstance(seq, (str, bytes, list, tuple)) and isinstance(count, int):
        budget.check_size(len(seq) * max(count, 0), "a repeated string or list")
    elif isinstance(left, int) and isinstance(right, int):
        budget.check_int_bits(left.bit_length() + right.bit_length(), "a product")


def _power_size(left: Any, right: Any) -> None:
    if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
        budget.check_int_bits(left.bit_length() * right, "a power")


class _DataFirstEnvironment(ImmutableSandboxedEnvironment):
    """`steps.fetch.output.items` is the output's `items` field, not the dict's `items` method.

    Metered: every call, lookup, loop iteration and arithmetic operator counts against the evaluation's
    budget (core.budget), and what would build a huge value (`10 ** 4000000`, `'a' * 10**9`,
    `'%099999999d' % 1`, `center(10**9)`) is refused before it is built."""

    code_generator_class = _MeteredCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+", "//", "/", "-"})

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.filters = {name: _metered_filter(name, f) for name, f in self.filters.items()}
        self.tests = {name: _metered_test(t) for name, t in self.tests.items()}
        self.filters[_LOOP_FILTER] = _metered
        self.filters[_CHECKED_FILTER] = lambda value: _checked(value, "a concatenation")
        self.globals["lipsum"] = _lipsum
        self.globals["namespace"] = _MeteredNamespace

    def getattr(self, obj: Any, attribute: str) -> Any:
        budget.tick()
        if isinstance(obj, dict):
            try:
                return obj[attribute]
            except (KeyError, TypeError):
                pass
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        budget.tick()
        return super().getitem(obj, argument)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        budget.tick()
        if operator == "*":
            _product_size(left, right)
        elif operator == "**":
            _power_size(left, right)
        elif operator == "%" and isinstance(left, str):
            _check_format(left, "a % format")
        elif operator == "+" and isinstance(left, (str, list, tuple)) and isinstance(right, type(left)):
            budget.check_size(len(left) + len(right), "a concatenation")
        return _checked(super().call_binop(context, operator, left, right), "a computed value")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's names)
        budget.tick()
        for value in (*args, *kwargs.values()):
            _checked(value, "a call's argument")
        owner = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)
        if isinstance(owner, (str, bytes)):  # 'x'.ljust(10**9), '{:>99999999}'.format(1)
            _check_args(args, kwargs, "a string method's argument")
            if getattr(__obj, "__name__", "") in ("format", "format_map"):
                _check_format(owner if isinstance(owner, str) else "", "a format string")
        return _checked(super().call(__context, __obj, *args, **kwargs), "a call's result")


_ENV = _DataFirstEnvironment(undefined=StrictUndefined, autoescape=False)


# Compiling is most of a render's cost, and a workflow renders the same few strings again and again. Each compiled
# template is kept with its globals as a plain dict and run by `_module`.
@lru_cache(maxsize=4096)
def _expression(source: str):
    """One expression as a template that assigns it to `result`, as Environment.compile_expression builds it (which
    checks it first and raises its errors: exactly one expression, nothing after it). Not its TemplateExpression,
    whose call merges the globals into a copy of the context every time."""
    _ENV.compile_expression(source, undefined_to_none=False)
    parser = Parser(_ENV, source, state="variable")
    expression = parser.parse_expression()
    expression.set_environment(_ENV)
    return _with_globals(_ENV.from_string(
        nodes.Template([nodes.Assign(nodes.Name("result", "store"), expression, lineno=1)], lineno=1)))


@lru_cache(maxsize=4096)
def _template(source: str):
    return _with_globals(_ENV.from_string(source))


def _with_globals(compiled):
    return compiled, dict(compiled.globals)


def _module(compiled_source: Callable[[str], tuple], source: str, context: dict[str, Any]):
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
    result = _module(_expression, expression, context).result
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
_EVALUATION_ERRORS = (TemplateError, BudgetExceeded, RecursionError, MemoryError, TypeError, ValueError,
                      ArithmeticError, LookupError, AttributeError)


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
        total[0] += _size(rendered)
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


def _parse(source: str, *, expression: bool) -> nodes.Node:
    return _parsed(source, expression)


# Validating a definition parses each template twice (syntax, then the steps it reads), and a definition is
# validated again when an execution first loads it: parse once. The trees are only read, never changed.
@lru_cache(maxsize=4096)
def _parsed(source: str, expression: bool) -> nodes.Node:
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


def expression_names(source: str) -> set[str]:
    """The top-level names an expression reads (`params`, `tool` …), for checking them when it is written;
    TemplateError when it does not parse."""
    from jinja2 import meta

    return set(meta.find_undeclared_variables(_parse(source, expression=True)))
