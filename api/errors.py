"""Every error becomes docs/api.md's body: {"error": {"code", "message", "details"}}. One place."""

from __future__ import annotations

import logging

from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException

from core import errors as E

log = logging.getLogger(__name__)

STATUS = {
    E.BadRequest: 400,
    E.Unauthorized: 401,
    E.Forbidden: 403,
    E.NotFound: 404,
    E.Gone: 410,
    E.Conflict: 409,
    E.PayloadTooLarge: 413,
    E.ValidationFailed: 422,
}
HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    410: "gone",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_failed",
    429: "too_many_requests",
}


def body(status: int, code: str, message: str, details: dict | None = None, lines: dict | None = None):
    error = {"code": code, "message": message, "details": details or {}}
    if lines:  # where the fields are written in the body's YAML or JSON text (the web app's editor marks them)
        error["lines"] = lines
    response = jsonify({"error": error})
    response.status_code = status
    return response


def _flatten(messages) -> dict:
    """webargs nests messages by location ({"json": {"field": [...]}}); clients want field paths."""
    out: dict = {}
    if not isinstance(messages, dict):
        return {"(body)": messages if isinstance(messages, list) else [str(messages)]}
    for location, fields in messages.items():
        if isinstance(fields, dict):
            for name, msgs in fields.items():
                out[str(name)] = msgs if isinstance(msgs, list) else [msgs]
        else:
            out[location] = fields if isinstance(fields, list) else [fields]
    return out


def error_response(error: HTTPException):
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    details = _flatten(data["messages"]) if "messages" in data else {}
    message = data.get("message") or (error.description if status != 500 else "internal server error") or ""
    if status == 422 and "messages" in data:
        message = "request is invalid"
    if status == 413:
        message = "request body is too large"
    response = body(
        status, HTTP_CODES.get(status, "error" if status >= 500 else "http_error"), message, details, data.get("lines")
    )
    for key, value in (data.get("headers") or {}).items():
        response.headers[key] = value
    for key, value in error.get_headers():
        if key.lower() == "allow":  # a 405 says which methods the resource has (RFC 9110 §15.5.6)
            response.headers["Allow"] = value
    return response


def register(app: Flask) -> None:
    @app.errorhandler(E.CoachError)
    def coach_error(error: E.CoachError):
        status = next((s for cls, s in STATUS.items() if isinstance(error, cls)), 400)
        return body(status, error.code, error.message, error.details, error.lines)

    @app.errorhandler(Exception)
    def unexpected(error: Exception):
        if isinstance(error, HTTPException):
            return error_response(error)
        # never leak a stack trace or SQL to the client; the log has it
        log.exception("unhandled error")
        return body(500, "internal_error", "internal server error")
