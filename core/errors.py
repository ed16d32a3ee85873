"""Domain errors. The API maps each class to an HTTP status in one place (api/errors.py)."""
from __future__ import annotations

from typing import Any


class CoachError(Exception):
    code = "error"
    # where the fields of `details` are written in the submitted source ({path: 1-based line}), when known
    lines: dict[str, int] | None = None

    def __init__(self, message: str, details: dict[str, Any] | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code:
            self.code = code


class BadRequest(CoachError):
    code = "bad_request"


class NotFound(CoachError):
    code = "not_found"


class Gone(CoachError):
    """It existed and was withdrawn for good (a revoked webhook): 410."""

    code = "gone"


class Conflict(CoachError):
    code = "conflict"


class ValidationFailed(CoachError):
    """Input is well formed but wrong; `details` maps field paths to lists of messages."""

    code = "validation_failed"


class Forbidden(CoachError):
    code = "forbidden"


class Unauthorized(CoachError):
    code = "unauthorized"


class PayloadTooLarge(CoachError):
    code = "payload_too_large"
