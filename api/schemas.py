"""Marshmallow schemas shared by several resources."""

from __future__ import annotations

from flask import current_app, has_app_context
from marshmallow import Schema, fields, post_dump, validate


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

    id = fields.String()
    name = fields.String()
    active = StrictBoolean()  # not revoked
    created_by = fields.String()
    created_at = fields.DateTime()
    last_used_at = fields.DateTime(allow_none=True)
    revoked_at = fields.DateTime(allow_none=True)


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
    lines = fields.Dict(
        keys=fields.String(),
        values=fields.Integer(),
        metadata={
            "description": "for a definition sent as YAML or JSON text: the 1-based line where each field of `details` "
            "is written (the nearest written parent for a missing field); `yaml`/`json` for a syntax "
            "error"
        },
    )


class ErrorSchema(Schema):
    """Every error body (docs/api.md): {"error": {"code", "message", "details"}}."""

    error = fields.Nested(ErrorDetailSchema, required=True)
