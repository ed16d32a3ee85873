"""What every check of a workflow definition shares: the problems found so far, by field (all of them are reported
at once), and the limits on names and text.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Iterable

from core.errors import ValidationFailed

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
MAX_TEXT = 10_000  # a description or a question: text people read, not a place to store data


class FieldErrors:
    """Problems by field path; `template_chars` adds up the template source checked so far."""

    def __init__(self) -> None:
        self.by_field: dict[str, list[str]] = defaultdict(list)
        self.template_chars = 0

    def add(self, path: str, message: str) -> None:
        self.by_field[path].append(message)

    def raise_if_any(self, what: str) -> None:
        if self.by_field:
            raise ValidationFailed(f"{what} is invalid", details=dict(self.by_field))


def listed(names: Iterable[str], limit: int = 30) -> str:
    """Names in words: `a, b and c` (the first `limit`, then how many more)."""
    names = list(names)
    shown, more = names[:limit], len(names) - limit
    if more > 0:
        return ", ".join(shown) + f" and {more} more"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + f" and {shown[-1]}" if shown else "none"


def unknown_name(what: str, name: object, known: Iterable[str]) -> str:
    """`unknown tool 'ech': did you mean 'echo'? Known tools: echo, noop and …`."""
    known = list(known)
    close = difflib.get_close_matches(name, known, n=1) if isinstance(name, str) else []
    hint = f": did you mean {close[0]!r}?" if close else "."
    return f"unknown {what} {name!r}{hint} Known {what}s: {listed(known)}"
