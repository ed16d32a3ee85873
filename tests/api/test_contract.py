"""The web app's API types are generated from the checked-in OpenAPI document (docs/api.md "The contract"): that
document must be the server's. After a change of an API schema, `make api-types` writes both again."""
from __future__ import annotations

import difflib
from pathlib import Path

from api.openapi_document import document_text

CHECKED_IN = Path(__file__).resolve().parents[2] / "frontend" / "src" / "api" / "openapi.json"


def test_the_checked_in_openapi_document_is_the_servers(app):
    served = document_text(app)
    checked_in = CHECKED_IN.read_text(encoding="utf-8")
    if served != checked_in:
        diff = "".join(list(difflib.unified_diff(checked_in.splitlines(True), served.splitlines(True),
                                                 "frontend/src/api/openapi.json", "GET /api/openapi.json"))[:60])
        raise AssertionError(f"the checked-in document differs from the server's: run `make api-types`\n{diff}")


def test_every_status_and_decision_of_an_answer_is_an_enum(app):
    """A client's type checker sees every status the server may send only when the document lists them."""
    schemas = app.test_client().get("/api/openapi.json").get_json()["components"]["schemas"]
    loose = [f"{name}.{field}" for name, schema in schemas.items()
             for field, prop in (schema.get("properties") or {}).items()
             if field in ("status", "decision", "mode", "level", "risk", "effect", "kind")
             and prop.get("type") == "string" and "enum" not in prop]
    assert loose == []
