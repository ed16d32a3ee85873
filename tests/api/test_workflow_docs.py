"""docs/workflow-definitions.md: every complete definition in it is accepted as written (YAML and as JSON)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

DOC = Path(__file__).resolve().parents[2] / "docs" / "workflow-definitions.md"


def _complete_definitions() -> list[str]:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S)
    return [b for b in blocks if re.search(r"^name:", b, re.M) and re.search(r"^steps:", b, re.M)]


def test_the_documented_definitions_are_accepted_as_yaml_and_as_json(api):
    definitions = _complete_definitions()
    assert len(definitions) >= 2
    for source in definitions:
        response = api.client.post("/api/workflows", data=source, content_type="application/yaml")
        assert response.status_code == 201, (source, response.get_json())
        response = api.client.post(
            "/api/workflows", data=json.dumps(yaml.safe_load(source)), content_type="application/json"
        )
        assert response.status_code == 201, response.get_json()


def test_the_deadline_example_is_valid_in_a_whole_definition(api):
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S) if "timeout_answer" in b)
    definition = {"name": "Deadlines", **yaml.safe_load(block)}
    api.ok("POST", "/api/workflows", definition, status=201)
