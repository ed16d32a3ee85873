"""What every check of a workflow definition shares: the problems found so far, by field (all of them are reported
at once), and the limits on names and text.
"""
from __future__ import annotations

import re
from collections import defaultdict

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
