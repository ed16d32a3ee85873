"""Domain errors. The API maps each class to an HTTP status in one place (api/errors.py)."""

from __future__ import annotations

from typing import Any


class CoachError(Exception):
    """A subclass names its `code` (the error body's `code`, part of the API contract) in its class line."""

    code = "error"
    # where the fields of `details` are written in the submitted source ({path: 1-based line}), when known
    lines: dict[str, int] | None = None

    def __init_subclass__(cls, code: str | None = None, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if code:
            cls.code = code

    def __init__(self, message: str, details: dict[str, Any] | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code:
            self.code = code


class BadRequest(CoachError, code="bad_request"):
    """The request is malformed."""


class NotFound(CoachError, code="not_found"):
    """No such thing, or not in the caller's workspace."""


class Gone(CoachError, code="gone"):
    """It existed and was withdrawn for good (a revoked webhook): 410."""


class Conflict(CoachError, code="conflict"):
    """The present state forbids it (a second decision, an illegal transition)."""


class ValidationFailed(CoachError, code="validation_failed"):
    """Input is well formed but wrong; `details` maps field paths to lists of messages."""


class Forbidden(CoachError, code="forbidden"):
    """The caller is known, and not allowed to do this."""


class Unauthorized(CoachError, code="unauthorized"):
    """The caller is not known (no credential, or a bad one)."""


class PayloadTooLarge(CoachError, code="payload_too_large"):
    """The body is larger than allowed."""
