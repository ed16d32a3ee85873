"""flask-smorest pieces shared by every blueprint: the Api with Coach's error body, and a parser that
also reads YAML bodies (workflow definitions may be sent as application/yaml).

Every body, JSON or YAML, must hold plain JSON data that both databases can store: no NaN/Infinity, no NUL
characters, string keys only, at most MAX_DEPTH levels deep, and (YAML anchors can repeat a node many
times) no bigger once expanded than the body limit, nor than YAML_EXPANSION times the YAML text.
"""
from __future__ import annotations

import json
import math

import flask_smorest
import yaml
from flask import current_app, request
from webargs import core
from webargs.flaskparser import FlaskParser, abort

from api.errors import error_response
from api.schemas import ErrorSchema

YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")
MAX_DEPTH = 64
YAML_EXPANSION = 10  # a YAML body may hold at most this many times its own size in data


class _JsonYamlLoader(yaml.SafeLoader):
    """SafeLoader without implicit timestamps: `2024-01-01` stays the string it looks like."""


_JsonYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


LONE_SURROGATE = "contains a lone surrogate (an escape such as \\ud800 that is half of a character): not text"


def _utf8(text: str) -> bool:
    """Whether the text is made of characters (no half of a surrogate pair): what UTF-8, the databases and
    every client can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lone_surrogate_at(data, path: str = "(body)") -> str | None:
    """The path of the first string (or key) in `data` holding a lone surrogate, for bodies that do not come
    through the parser (Socket.IO events)."""
    stack = [(data, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            if not _utf8(value):
                return where
        elif isinstance(value, dict):
            for key, item in value.items():
                sub = f"{where}.{key}" if isinstance(key, str) and _utf8(key) else where
                if isinstance(key, str) and not _utf8(key):
                    return where
                stack.append((item, sub))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
    return None


def _check_body(data, limit: int | None):
    """Walk the parsed body without recursion; abort on anything JSON or the databases cannot hold."""
    budget = 0
    stack = [(data, "(body)", 0)]
    while stack:
        value, path, depth = stack.pop()
        budget += 1
        if depth > MAX_DEPTH:
            abort(400, messages={"json": {path: [f"nested more than {MAX_DEPTH} levels deep"]}},
                  message="body is nested too deeply")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    abort(400, messages={"json": {path: [f"key {key!r} is not a string"]}},
                          message="body holds a non-string key")
                sub = key if path == "(body)" else f"{path}.{key}"
                if "\x00" in key:
                    abort(400, messages={"json": {sub: ["key contains a NUL character"]}},
                          message="body holds a NUL character")
                if not _utf8(key):
                    abort(400, messages={"json": {sub: [LONE_SURROGATE]}}, message="body holds a lone surrogate")
                budget += len(key)
                stack.append((item, sub, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))
        elif isinstance(value, str):
            if "\x00" in value:
                abort(400, messages={"json": {path: ["contains a NUL character"]}},
                      message="body holds a NUL character")
            if not _utf8(value):
                abort(400, messages={"json": {path: [LONE_SURROGATE]}}, message="body holds a lone surrogate")
            budget += len(value)
        elif isinstance(value, float) and not math.isfinite(value):
            abort(400, messages={"json": {path: ["NaN and Infinity are not JSON numbers"]}},
                  message="body holds a non-finite number")
        elif value is not None and not isinstance(value, (bool, int, float)):
            abort(400, messages={"json": {path: [f"a {type(value).__name__} is not a JSON value"]}},
                  message="body holds a value JSON cannot represent")
        if limit is not None and budget > limit:
            abort(413, messages={"json": {"(body)": [f"the data in the body is larger than {limit} bytes"]}})
    return data


class CoachParser(FlaskParser):
    def _raw_load_json(self, req):
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        if req.mimetype in YAML_TYPES:
            raw = req.get_data(cache=True)
            if not raw.strip():
                return core.missing
            try:
                data = yaml.load(raw, Loader=_JsonYamlLoader)  # noqa: S506 - a SafeLoader subclass
            except yaml.YAMLError as exc:
                abort(400, messages={"yaml": [f"Invalid YAML body: {exc}"]}, message="malformed YAML body")
            except RecursionError:
                abort(400, messages={"yaml": ["Invalid YAML body: nested too deeply"]}, message="malformed YAML body")
            except ValueError as exc:  # an integer of more digits than Python converts (4300)
                abort(400, messages={"yaml": [f"Invalid YAML body: {exc}"]}, message="malformed YAML body")
            # anchors and aliases let a few bytes stand for a huge document: bound the expansion
            return _check_body(data, min(limit or YAML_EXPANSION * len(raw), YAML_EXPANSION * len(raw) + 65536))
        if not core.is_json(req.mimetype):
            return core.missing
        raw = req.get_data(cache=True)
        try:
            text = raw.decode("utf-8")
            data = json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            if exc.doc == "":
                return core.missing
            return self._handle_invalid_json_error(exc, req)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            return self._handle_invalid_json_error(exc, req)
        return _check_body(data, limit)

    def _handle_invalid_json_error(self, error, req, *args, **kwargs):
        if isinstance(error, RecursionError):
            error = "nested too deeply"
        abort(400, messages={"json": [f"Invalid JSON body: {error}"]}, message="malformed JSON body")


def _reject_nul_in_url():
    # PostgreSQL cannot compare a text column with a string holding NUL; such an id or filter matches nothing
    # anywhere, and is refused here instead of failing deep in the database driver.
    if "\x00" in request.path or any("\x00" in k or "\x00" in v for k, v in request.args.items(multi=True)):
        abort(400, messages={"url": ["the URL contains a NUL character"]}, message="malformed URL")


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = CoachParser()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.before_request(_reject_nul_in_url)


class Api(flask_smorest.Api):
    ERROR_SCHEMA = ErrorSchema  # documents the real error body for every status (the "default" response)

    def handle_http_exception(self, error):
        return error_response(error)
