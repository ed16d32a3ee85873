"""The web app's API types are generated from the checked-in OpenAPI document (docs/api.md "The contract"): that
document must be the server's. After a change of an API schema, `make api-types` writes both again."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from api.openapi_document import document_text

pytestmark = pytest.mark.shared_app

CHECKED_IN = Path(__file__).resolve().parents[2] / "frontend" / "src" / "api" / "openapi.json"


def test_the_checked_in_openapi_document_is_the_servers(app):
    served = document_text(app)
    checked_in = CHECKED_IN.read_text(encoding="utf-8")
    if served != checked_in:
        diff = "".join(
            list(
                difflib.unified_diff(
                    checked_in.splitlines(True),
                    served.splitlines(True),
                    "frontend/src/api/openapi.json",
                    "GET /api/openapi.json",
                )
            )[:60]
        )
        raise AssertionError(f"the checked-in document differs from the server's: run `make api-types`\n{diff}")


def test_every_status_and_decision_of_an_answer_is_an_enum(app):
    """A client's type checker sees every status the server may send only when the document lists them."""
    schemas = app.test_client().get("/api/openapi.json").get_json()["components"]["schemas"]
    loose = [
        f"{name}.{field}"
        for name, schema in schemas.items()
        for field, prop in (schema.get("properties") or {}).items()
        if field in ("status", "decision", "mode", "level", "risk", "effect", "kind")
        and prop.get("type") == "string"
        and "enum" not in prop
    ]
    assert loose == []


def test_in_tests_an_answer_holding_a_key_its_schema_does_not_declare_fails(app):
    """A field added to a view but not to its schema would be dropped from the answer (and from the generated
    types) without a word: under test it fails the answer instead."""
    from api.execution_schemas import ProgressSchema

    with app.app_context():
        assert ProgressSchema().dump({"done": 1, "total": 2, "percent": 50.0}) == {
            "done": 1,
            "total": 2,
            "percent": 50.0,
        }
        with pytest.raises(AssertionError, match="eta_s"):
            ProgressSchema().dump({"done": 1, "total": 2, "percent": 50.0, "eta_s": 3})
