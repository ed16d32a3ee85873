"""Marshmallow schemas shared by several resources."""

from __future__ import annotations

from flask import current_app, has_app_context
from marshmallow import Schema, fields, post_dump, validate


def always_sent(*names: str):
    """For an answer's schema that extends a body's (`class PolicyOut(PolicyIn)`, `class SettingsOut(SettingsIn)`):
    the fields `names` (all of them, without names), optional in the body (they have defaults), are in every answer,
    so the document marks them required there (and only there: marshmallow's `on_bind_field` hook changes a schema
    instance's own copy of each field)."""

    def decorate(cls: type[Schema]) -> type[Schema]:
        inherited = cls.on_bind_field

        def on_bind_field(self: Schema, field_name: str, field_obj: fields.Field) -> None:
            inherited(self, field_name, field_obj)
            if not names or field_name in names:
                field_obj.required = True

        cls.on_bind_field = on_bind_field  # type: ignore[method-assign]  # the hook, replaced on this class only
        return cls

    return decorate


class StrictBoolean(fields.Boolean):
    """JSON's true or false, nothing else: marshmallow's Boolean also takes 0, 1, "yes", "off" … where the
    OpenAPI document says boolean (`"enabled": 0` disabled a policy). Serialises as Boolean does."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class StrictFloat(fields.Float):
    """A JSON number, nothing else: marshmallow's Float also takes the string "0.1"."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


def map_of(values: fields.Field, keys: fields.Field | None = None, **kwargs) -> fields.Dict:
    """An object of names to values of one type (`additionalProperties` of that type): a typed map."""
    return fields.Dict(keys=keys or fields.String(), values=values, **kwargs)


class ToolParams(fields.Dict):
    """A tool's params, or the arguments of an agent's call: an object whose fields the tool's own JSON Schema types
    (the tools differ by workspace), so free-form here."""


class ToolOutput(fields.Raw):
    """What a tool returned, or what a person gave in its place: any JSON value."""


class RunVariables(fields.Dict):
    """A run's variables: the values of the inputs its workflow declares, checked by core.workflow (free-form here)."""


class ToolSchema(fields.Dict):
    """A JSON Schema of a tool's params or of an MCP tool's input, as the tool or its server declares it."""


class OneOrMany(fields.Field):
    """A string or a list of strings, documented so; taken as sent: the core checks it and names the field (a
    policy's `match.tool`), with every other problem of the body at once."""

    def __init__(self, **kwargs):
        metadata = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
        super().__init__(metadata={**metadata, **kwargs.pop("metadata", {})}, **kwargs)


class Checked(fields.Field):
    """A value of the JSON type `json_type`, documented so; taken as sent: the core checks it and names the field
    in its 422 (with the body's other problems, in its words)."""

    def __init__(self, json_type: str, **kwargs):
        super().__init__(metadata={"type": json_type, **kwargs.pop("metadata", {})}, **kwargs)


class ValueChange(Schema):
    """A field of a tool's params changed: its value before and after (any JSON value, as params hold;
    `{"$missing": true}` where the field was absent)."""

    before = fields.Raw(allow_none=True, metadata={"description": '{"$missing": true}: the field was absent'})
    after = fields.Raw(allow_none=True, metadata={"description": '{"$missing": true}: the field is removed'})


class SentValueChange(Schema):
    """ValueChange in an answer that always has both."""

    before = fields.Raw(
        allow_none=True, required=True, metadata={"description": '{"$missing": true}: the field was absent'}
    )
    after = fields.Raw(allow_none=True, required=True, metadata={"description": '{"$missing": true}: removed'})


def one_of(values, **kwargs) -> fields.String:
    """A string field whose values are listed in the OpenAPI document as its `enum` (and checked on input)."""
    return fields.String(validate=validate.OneOf(tuple(values)), **kwargs)


class Shape(Schema):
    """An answer's object of a known shape: what the server sends passes through the schema, which keeps only the
    fields it declares. In tests (the app's TESTING), a key the server sends that the schema does not declare fails
    the answer, so that a field added to a view without a field in its schema (and so in the web app's generated
    types) is found by the test that reads it, not dropped without a word."""

    @post_dump(pass_original=True)
    def _no_undeclared_keys(self, data, original, **kwargs):
        if isinstance(original, dict) and has_app_context() and current_app.testing:
            undeclared = set(original) - set(self.fields)
            if undeclared:
                raise AssertionError(f"{type(self).__name__} does not declare {sorted(undeclared)}: add them")
        return data


class CredentialOut(Schema):
    """What an answer says of a credential that is revoked rather than deleted (an agent identity, an incoming
    webhook): its secret is shown once, at creation, by the resource's own `...Created` schema."""

    id = fields.String(required=True)
    name = fields.String(required=True)
    active = StrictBoolean(required=True)  # not revoked
    created_by = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    last_used_at = fields.DateTime(allow_none=True, required=True)
    revoked_at = fields.DateTime(allow_none=True, required=True)


# OFFSET is (page - 1) * per_page; past a 64-bit integer the databases refuse the query
MAX_PAGE = 2**31 - 1


class PageArgs(Schema):
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=MAX_PAGE))
    per_page = fields.Integer(load_default=20, validate=validate.Range(min=1, max=200))


class PageSchema(Schema):
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)


def page_of(item_schema: type[Schema], name: str) -> type[Schema]:
    return type(name, (PageSchema,), {"items": fields.List(fields.Nested(item_schema), required=True)})


def page_body(items, total: int, args: dict) -> dict:
    return {"items": items, "total": total, "page": args["page"], "per_page": args["per_page"]}


class ErrorDetailSchema(Schema):
    code = fields.String(required=True, metadata={"description": "machine-readable, e.g. not_found, validation_failed"})
    message = fields.String(required=True)
    details = fields.Dict(required=True, metadata={"description": "e.g. the invalid fields and their messages"})
    lines = map_of(
        fields.Integer(),
        metadata={
            "description": "for a definition sent as YAML or JSON text: the 1-based line where each field of `details` "
            "is written (the nearest written parent for a missing field); `yaml`/`json` for a syntax "
            "error"
        },
    )


class ErrorSchema(Schema):
    """Every error body (docs/api.md): {"error": {"code", "message", "details"}}."""

    error = fields.Nested(ErrorDetailSchema, required=True)
