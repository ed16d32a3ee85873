"""flask-smorest pieces shared by every blueprint: the Api with Coach's error body, and a parser that
also reads YAML bodies (workflow definitions may be sent as application/yaml).

Every body, JSON or YAML, must hold plain JSON data that both databases can store: no NaN/Infinity, no NUL
characters, integers of at most 64 bits, string keys only, at most MAX_DEPTH levels deep, and (YAML anchors can
repeat a node many times) no bigger once expanded than the body limit, nor than YAML_EXPANSION times the YAML text.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import flask_smorest
import yaml
from apispec.ext.marshmallow import MarshmallowPlugin, OpenAPIConverter
from flask import current_app, request
from webargs import core
from webargs.flaskparser import FlaskParser, abort
from werkzeug.routing import BaseConverter

from api import yaml_errors
from api.errors import error_response
from api.schemas import ErrorSchema
from services.offload import off_loop

YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")
MAX_DEPTH = 64
YAML_EXPANSION = 10  # a YAML body may hold at most this many times its own size in data
MAX_VALUES = 200_000  # values (objects, arrays, strings, numbers …) in one body
MAX_YAML_BYTES = 256 * 1024  # PyYAML parses ~1 MB per second
OFF_LOOP_BYTES = 64 * 1024  # bodies larger than this are parsed in a real thread (services.offload)
# A signed 64-bit integer: what every client's JSON library, orjson (services.jsontext) and the databases' integer
# columns hold. Python's 4,300-digit limit bounds only decimal text: YAML's `0x…` (or `!!int 0x…`) built
# 16,000-bit integers that the body check took and the save could not write (a 500).
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
OUT_OF_RANGE = f"an integer out of range: integers are from {INT_MIN} to {INT_MAX} (send larger numbers as strings)"
# An integer scalar longer than this is refused before it is converted: `-0b` and 64 binary digits fit, and YAML
# 1.1's base-60 integers (`1:30:00`) convert in time quadratic in their length.
MAX_YAML_INT_CHARS = 100


class _JsonYamlLoader(yaml.SafeLoader):
    """SafeLoader without implicit timestamps (`2024-01-01` stays the string it looks like), and without integer
    literals too long to be in range."""

    def construct_yaml_int(self, node):
        if len(node.value) > MAX_YAML_INT_CHARS:
            raise yaml.constructor.ConstructorError(None, None, OUT_OF_RANGE, node.start_mark)
        return super().construct_yaml_int(node)


_JsonYamlLoader.add_constructor("tag:yaml.org,2002:int", _JsonYamlLoader.construct_yaml_int)


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


def unstorable_at(data, path: str = "(body)") -> tuple[str, str] | None:
    """(path, problem) of the first string (or key) in `data` holding a lone surrogate or integer out of range, for
    bodies that do not come through the parser (Socket.IO events), so both channels refuse the same values."""
    stack = [(data, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            if not _utf8(value):
                return where, LONE_SURROGATE
        elif isinstance(value, int) and not isinstance(value, bool):
            if not INT_MIN <= value <= INT_MAX:
                return where, OUT_OF_RANGE
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and not _utf8(key):
                    return where, LONE_SURROGATE
                stack.append((item, f"{where}.{key}"))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
    return None


def _path(entry) -> str:
    """The field path of a node of `_check_body`'s walk, built only when there is something to report."""
    parts = []
    while entry is not None:
        entry, key = entry
        parts.append(key)
    path = ""
    for key in reversed(parts):
        path = f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key)
    return path or "(body)"


def _check_body(data, limit: int | None):
    """Walk the parsed body without recursion; abort on anything JSON or the databases cannot hold, and on more
    than MAX_VALUES values (walking ~4 million of them took seconds). Paths are built only for an error."""
    budget = 0
    values = 0
    # (a node, its entry for _path: None at the top, else (parent entry, key or index), its depth)
    stack: list[tuple[Any, tuple[Any, str | int] | None, int]] = [(data, None, 0)]
    while stack:
        value, where, depth = stack.pop()
        budget += 1
        values += 1
        if values > MAX_VALUES:
            abort(
                413,
                messages={"json": {"(body)": [f"the body holds more than {MAX_VALUES:,} values"]}},
                message="request body is too large",
            )
        if depth > MAX_DEPTH:
            abort(
                400,
                messages={"json": {_path(where): [f"nested more than {MAX_DEPTH} levels deep"]}},
                message="body is nested too deeply",
            )
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    abort(
                        400,
                        messages={"json": {_path(where): [f"key {key!r} is not a string"]}},
                        message="body holds a non-string key",
                    )
                if "\x00" in key:
                    abort(
                        400,
                        messages={"json": {_path((where, key)): ["key contains a NUL character"]}},
                        message="body holds a NUL character",
                    )
                if not _utf8(key):
                    abort(
                        400, messages={"json": {_path(where): [LONE_SURROGATE]}}, message="body holds a lone surrogate"
                    )
                budget += len(key)
                stack.append((item, (where, key), depth + 1))
        elif isinstance(value, list):
            stack.extend((item, (where, i), depth + 1) for i, item in enumerate(value))
        elif isinstance(value, str):
            if "\x00" in value:
                abort(
                    400,
                    messages={"json": {_path(where): ["contains a NUL character"]}},
                    message="body holds a NUL character",
                )
            if not _utf8(value):
                abort(400, messages={"json": {_path(where): [LONE_SURROGATE]}}, message="body holds a lone surrogate")
            budget += len(value)
        elif isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
            abort(400, messages={"json": {_path(where): [OUT_OF_RANGE]}}, message="body holds an integer out of range")
        elif isinstance(value, float) and not math.isfinite(value):
            abort(
                400,
                messages={"json": {_path(where): ["NaN and Infinity are not JSON numbers"]}},
                message="body holds a non-finite number",
            )
        elif value is not None and not isinstance(value, (bool, int, float)):
            abort(
                400,
                messages={"json": {_path(where): [f"a {type(value).__name__} is not a JSON value"]}},
                message="body holds a value JSON cannot represent",
            )
        if limit is not None and budget > limit:
            abort(413, messages={"json": {"(body)": [f"the data in the body is larger than {limit} bytes"]}})
    return data


def _load_yaml(raw: bytes, limit: int | None):
    if len(raw) > MAX_YAML_BYTES:  # PyYAML parses in Python: ~1 s per MB
        abort(413, messages={"yaml": [f"a YAML body is at most {MAX_YAML_BYTES:,} bytes; send larger ones as JSON"]})
    try:
        data = yaml.load(raw, Loader=_JsonYamlLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        words, line = yaml_errors.describe(exc)
        abort(
            400,
            messages={"yaml": [words]},
            message="malformed YAML body",
            lines={"yaml": line} if line is not None else None,
        )
    except RecursionError:
        abort(400, messages={"yaml": ["Invalid YAML body: nested too deeply"]}, message="malformed YAML body")
    except ValueError as exc:  # an integer of more digits than Python converts (4300)
        abort(400, messages={"yaml": [f"Invalid YAML body: {exc}"]}, message="malformed YAML body")
    # anchors and aliases let a few bytes stand for a huge document: bound the expansion
    return _check_body(data, min(limit or YAML_EXPANSION * len(raw), YAML_EXPANSION * len(raw) + 65536))


def _load_json(raw: bytes, limit: int | None):
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        if exc.doc == "":
            return core.missing
        _invalid_json(exc)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        _invalid_json(exc)
    return _check_body(data, limit)


def _invalid_json(error) -> None:
    line = getattr(error, "lineno", None)
    if isinstance(error, RecursionError):
        error = "nested too deeply"
    abort(
        400,
        messages={"json": [f"Invalid JSON body: {error}"]},
        message="malformed JSON body",
        lines={"json": line} if line else None,
    )


def _load(loader, raw: bytes, limit: int | None):
    """Parse and check a body without holding the event loop for long. json.loads is C that keeps the GIL
    however it is called (8 MB of small values: ~0.3 s during which nothing else runs, in any thread), so what
    bounds it is the number of values, estimated before parsing from the separators (a value follows each
    `,`; strings holding commas count too, which errs on the side of refusing). PyYAML is Python: a large
    YAML body is parsed in a real thread, where the event loop still gets its turns."""
    if raw.count(b",") > MAX_VALUES:
        abort(
            413,
            messages={"(body)": [f"the body holds more than {MAX_VALUES:,} values"]},
            message="request body is too large",
        )
    return off_loop(loader, raw, limit) if len(raw) > OFF_LOOP_BYTES else loader(raw, limit)


class CoachParser(FlaskParser):
    """webargs' documented hook for the JSON location: `load_json` (its own loader raises and reports nothing we
    did not check ourselves). YAML bodies are read by the same hook, so every JSON-located schema takes both."""

    def load_json(self, req, schema):
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        if req.mimetype in YAML_TYPES:
            raw = req.get_data(cache=True)
            if not raw.strip():
                return core.missing
            return _load(_load_yaml, raw, limit)
        if not core.is_json(req.mimetype):
            return core.missing
        return _load(_load_json, req.get_data(cache=True), limit)


def _reject_nul_in_url():
    # PostgreSQL cannot compare a text column with a string holding NUL; such an id or filter matches nothing
    # anywhere, and is refused here instead of failing deep in the database driver.
    if "\x00" in request.path or any("\x00" in k or "\x00" in v for k, v in request.args.items(multi=True)):
        abort(400, messages={"url": ["the URL contains a NUL character"]}, message="malformed URL")


def _require_body() -> None:
    """webargs reads a missing body (or one of a type it does not parse) as {}, so every field takes its default:
    an empty PUT /api/workspace/outbound replaced both lists with nothing."""
    if not request.get_data(cache=True).strip():
        abort(422, messages={"json": {"(body)": ["a request body is required"]}})
    if not (core.is_json(request.mimetype) or request.mimetype in YAML_TYPES):
        abort(415, message=f"the body must be JSON (application/json), not {request.mimetype or 'untyped'}")


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = CoachParser()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.before_request(_reject_nul_in_url)

    def arguments(self, schema, *, location="json", required=True, **kwargs):
        """flask-smorest's, and a body the OpenAPI document marks required (the default) is required: without one
        the answer is a 422 and nothing runs. A route whose fields are all optional passes required=False."""
        parse = super().arguments(schema, location=location, required=required, **kwargs)
        if location != "json" or not required:
            return parse

        def decorator(func):
            parsed = parse(func)

            @functools.wraps(parsed)
            def with_body(*f_args, **f_kwargs):
                _require_body()
                return parsed(*f_args, **f_kwargs)

            return with_body

        return decorator

    def yaml_text(self, description: str):
        """Documents what every JSON-located body also takes (CoachParser.load_json): the same object written as
        YAML text, sent with `Content-Type: application/yaml`. Said on the routes people send YAML to (a
        definition, a plan), so the web app's typed client may send the editor's text there and nowhere else."""
        return self.doc(
            requestBody={"content": {"application/yaml": {"schema": {"type": "string", "description": description}}}}
        )


class RowId(BaseConverter):
    """`<id:policy_id>`: a row id (services.models.new_id, 32 hex digits). Where a route's fixed sibling shares its
    prefix (`/api/policies/default` beside `/api/policies/<policy_id>`), the document then says that `default` is
    not an id, as the router does."""

    regex = "[0-9a-f]{32}"


class _Converter(OpenAPIConverter):
    def init_attribute_functions(self):
        super().init_attribute_functions()
        self.add_attribute_function(one_of2properties)

    def field2nullable(self, field, ret) -> dict:
        """A nullable nested object as OpenAPI 3.0 says it, `{allOf: [X], nullable: true}`, which the web app's
        generated types read as `X | null`. apispec writes `anyOf: [X, {type: object, nullable: true}]`: X, or any
        object at all, so an answer's nested objects lost their fields in the generated types."""
        if field.allow_none and "$ref" in ret:
            return {"allOf": [{"$ref": ret.pop("$ref")}], "nullable": True}
        if field.allow_none and "allOf" in ret:
            return {"nullable": True}
        return super().field2nullable(field, ret)


def one_of2properties(self, field, ret, **kwargs) -> dict:
    """A field that loads one of several schemas (core.workflow.format.StepField: a step, by its type) is their
    `oneOf` in the document, each schema a component of its own (apispec's attribute-function hook)."""
    schemas = getattr(field, "one_of", None)
    if schemas:
        ret.pop("type", None)
        return {"oneOf": [self.resolve_nested_schema(schema) for schema in schemas]}
    declarations = getattr(field, "one_of_values", None)  # core.workflow.format.Variables: a declaration or a value
    if declarations:
        values = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "array", "items": {}}]
        return {"additionalProperties": {"anyOf": [*(self.resolve_nested_schema(s) for s in declarations), *values]}}
    return {}


class _Plugin(MarshmallowPlugin):
    Converter = _Converter


class Api(flask_smorest.Api):
    ERROR_SCHEMA = ErrorSchema  # documents the real error body for every status (the "default" response)

    def init_app(self, app, *, spec_kwargs=None):
        app.url_map.converters["id"] = RowId
        super().init_app(app, spec_kwargs={"marshmallow_plugin": _Plugin(), **(spec_kwargs or {})})
        self.register_converter(RowId, lambda _: {"type": "string", "pattern": f"^{RowId.regex}$"})

    def handle_http_exception(self, error):
        return error_response(error)
