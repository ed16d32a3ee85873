"""core.workflow.source_lines: the line of each field a validation error names, in YAML and JSON sources."""

from __future__ import annotations

import json

from core.workflow.source_lines import lines_of, path_parts

YAML = """name: Demo
variables:
  who:
    type: strin
steps:
  - id: greet
    tool: echo
    params:
      message: hi
  - id: second
    type: action
"""


def test_path_parts_split_keys_and_indexes():
    assert path_parts("steps[2].params.url") == ["steps", 2, "params", "url"]
    assert path_parts("name") == ["name"]


def test_yaml_paths_map_to_their_lines_and_missing_fields_to_their_parent():
    lines = lines_of(
        YAML, ["name", "variables.who.type", "steps[0].params.message", "steps[1].tool", "steps", "(body)"]
    )
    assert lines == {
        "name": 1,
        "variables.who.type": 4,
        "steps[0].params.message": 9,
        "steps[1].tool": 10,
        "steps": 5,
        "(body)": 1,
    }


def test_json_sources_are_mapped_too():
    source = json.dumps({"name": "x", "steps": [{"id": "a", "tool": "nope"}]}, indent=2)
    assert lines_of(source, ["steps[0].tool"]) == {
        "steps[0].tool": source.splitlines().index('      "tool": "nope"') + 1
    }


def test_unreadable_or_empty_sources_give_no_lines():
    assert lines_of("name: [unclosed", ["name"]) == {}
    assert lines_of("", ["name"]) == {}
