"""The budget every evaluation of user-written code runs within: time, operations and sizes.

Templates, conditions, schema checks and (later) policy predicates are written by users and evaluated by
the server. Under gevent or eventlet one evaluation that does not end stops every connection, so each runs
metered: the sandbox calls `tick()` at every loop iteration, call, attribute lookup and intercepted operator,
and `check_size()` before it builds something big. An evaluation that runs out raises `BudgetExceeded`,
which the caller turns into a failed step with the reason.

The meter of the current evaluation is thread-local (greenlet-local where gevent or eventlet patched
threading): evaluations never yield, so one meter is never shared. An evaluation started inside another
shares the outer one's budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Limits:
    time_s: float = 0.01  # CPU time of one evaluation (COACH_EVAL_TIME_MS)
    max_ops: int = 1_000_000  # loop iterations, calls, lookups and operators of one evaluation
    max_chars: int = 1_000_000  # any one string, list or number built (characters, items, digits)
    max_int_bits: int = 64_000  # an integer built by ** or * (about 19,000 digits)
    max_width: int = 100_000  # a width, count or length handed to a formatting filter or method
    max_sorted: int = 10_000  # items a sorting or grouping filter orders (each costs Python per item)


class BudgetExceeded(Exception):
    """The evaluation ran out of its budget; `message` says which limit and where to look."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


# The budget is CPU time of the evaluating thread: what the evaluation itself costs. Wall time would also count
# the time the machine gave to other processes, and fail ordinary conditions on a busy machine. But reading the
# thread's CPU clock is a system call (3 µs here, far more on a loaded VM), while the wall clock is read in
# ~0.1 µs. So an evaluation reads only the wall clock while it has run for less than _CPU_FROM (CPU time can only
# be less); at the first check past that, it marks the thread's CPU clock and counts CPU time from there, charged
# with the wall time of the check before (at most _CPU_FROM). What ran between those two checks (64 operations,
# or one filter) goes uncounted, as what runs between two checks always could. Most evaluations (a condition, a
# policy predicate) end before _CPU_FROM without one system call.
_wall = time.perf_counter
_cpu = time.thread_time
_CPU_FROM = 0.001

_limits = Limits()
_local = threading.local()
_CHECK_EVERY = 64  # operations between clock reads


def configure(**changes: Any) -> Limits:
    """Set the limits (the app does this from its settings); returns the limits now in force."""
    global _limits
    _limits = replace(_limits, **changes)
    return _limits


def limits() -> Limits:
    return _limits


class Meter:
    __slots__ = ("ops", "limits", "what", "started", "cpu_mark", "charged")

    def __init__(self, what: str, lim: Limits):
        self.ops = 0
        self.limits = lim
        self.what = what
        self.started = _wall()  # shifted later by the time excluded()
        self.cpu_mark: float | None = None  # the thread's CPU clock once the evaluation ran _CPU_FROM
        self.charged = 0.0  # the wall time at the last check before the mark, counted as CPU time

    def spent(self) -> float:
        """The CPU time this evaluation has used, as far as the checks so far tell (see _CPU_FROM)."""
        if self.cpu_mark is not None:
            return self.charged + (_cpu() - self.cpu_mark)
        elapsed = _wall() - self.started
        if elapsed <= _CPU_FROM:
            self.charged = elapsed  # an upper bound of the CPU time used up to this check
            return elapsed
        self.cpu_mark = _cpu()
        return self.charged

    def out_of_time(self) -> bool:
        return self.spent() > self.limits.time_s


@contextmanager
def metered(what: str) -> Iterator[Meter]:
    """Run the block within one budget; nested blocks share the outermost one."""
    outer = getattr(_local, "meter", None)
    if outer is not None:
        yield outer
        return
    meter = _local.meter = Meter(what, _limits)
    try:
        yield meter
    finally:
        _local.meter = None


@contextmanager
def excluded() -> Iterator[None]:
    """Time that does not count against the budget: compiling a template (once per process) is the server's
    work, not the evaluation's, and a cold compile on a busy machine must not fail a step."""
    meter = getattr(_local, "meter", None)
    if meter is None:
        yield
        return
    marked = meter.cpu_mark is not None
    wall, cpu = _wall(), (_cpu() if marked else 0.0)
    try:
        yield
    finally:
        if marked:
            meter.cpu_mark += _cpu() - cpu
        else:
            meter.started += _wall() - wall


def tick(n: int = 1) -> None:
    meter = getattr(_local, "meter", None)
    if meter is None:
        return
    before = meter.ops
    meter.ops = after = before + n
    if after > meter.limits.max_ops:
        raise BudgetExceeded(f"{meter.what} ran out of its budget of {meter.limits.max_ops:,} operations")
    if after // _CHECK_EVERY != before // _CHECK_EVERY and meter.out_of_time():
        raise BudgetExceeded(f"{meter.what} ran out of its time budget of {meter.limits.time_s * 1000:g} ms")


def check_time() -> None:
    """After one operation that may have taken long by itself (a filter over many items)."""
    meter = getattr(_local, "meter", None)
    if meter is not None and meter.out_of_time():
        raise BudgetExceeded(f"{meter.what} ran out of its time budget of {meter.limits.time_s * 1000:g} ms")


def check_sorted(size: int, what: str) -> None:
    if size > _limits.max_sorted:
        raise BudgetExceeded(
            f"{what} would order {size:,} items, more than the {_limits.max_sorted:,} allowed "
            "in a template (narrow them in a step first)"
        )


def check_size(size: int, what: str = "a value") -> None:
    """Refuse to build `what` of `size` characters or items beyond the budget."""
    if size > _limits.max_chars:
        raise BudgetExceeded(
            f"{what} would have {size:,} characters or items, more than the {_limits.max_chars:,} allowed"
        )


def check_width(value: int, what: str = "a width") -> None:
    if value > _limits.max_width:
        raise BudgetExceeded(f"{what} of {value:,} is more than the {_limits.max_width:,} allowed")


def check_int_bits(bits: int, what: str = "an integer") -> None:
    if bits > _limits.max_int_bits:
        raise BudgetExceeded(f"{what} would have about {bits:,} bits, more than the {_limits.max_int_bits:,} allowed")
