"""The metered Jinja2 sandbox that params templates and conditions run in (core/templating.py): every call, lookup,
loop iteration and arithmetic operator counts against the evaluation's budget (core/budget.py), and what would build
a huge value is refused before it is built. Only Jinja's public extension points: a sandboxed environment subclass, a
code generator, a node transformer, filters and tests."""

from __future__ import annotations

import functools
import re
import string
import weakref
from typing import Any

from jinja2 import StrictUndefined, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace, generate_lorem_ipsum
from jinja2.visitor import NodeTransformer

from core import budget

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
        self.generic_visit(node)  # transforms the node's children in place (and returns the node)
        if not (isinstance(node.iter, nodes.Filter) and node.iter.name == _LOOP_FILTER):
            node.iter = nodes.Filter(node.iter, _LOOP_FILTER, [], [], None, None, lineno=node.iter.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Filter(node, _CHECKED_FILTER, [], [], None, None, lineno=node.lineno)


class _MeteredCodeGenerator(CodeGenerator):
    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        # before code generation starts: it collects the filters a template uses first
        if node not in _METERED:
            _Meter().visit(node)
            _METERED.add(node)
        super().visit_Template(node, frame)


# the templates' trees already metered (a tree compiled again is not transformed twice)
_METERED: weakref.WeakSet[nodes.Template] = weakref.WeakSet()


def size_of(value: Any) -> int:
    """The length of a string or a collection (what the budget's size limit counts), 0 for anything else."""
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


def _check_args(args: tuple[Any, ...], kwargs: dict[str, Any], what: str) -> None:
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
            _check_args(args[skip + 1 :], kwargs, f"the {name} filter's argument")
        if ordering and size_of(value):
            budget.check_sorted(size_of(value), f"the {name} filter")
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


ENV = _DataFirstEnvironment(undefined=StrictUndefined, autoescape=False)
