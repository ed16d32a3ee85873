"""Where a field of a definition is written in its source text: the line of each path a validation error names.

The web app's editor places the server's errors on their lines. Paths are the validator's (`name`,
`variables.who.default`, `steps[2].params.url`); the source is the YAML or JSON text that was sent (JSON is read as
YAML, which it nearly always is). A path whose last parts are missing (a required field left out) gets the line of
the deepest part that is there: the step's own line for a step without `tool`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import yaml

_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
MAX_SOURCE = 256 * 1024  # the YAML body limit (api/base.py): larger sources are not mapped


def path_parts(path: str) -> list[str | int]:
    """`steps[2].params.url` -> ["steps", 2, "params", "url"]."""
    return [
        int(index) if index is not None else key
        for key, index in ((m.group(1), m.group(2)) for m in _PART.finditer(path))
    ]


def _line_of(root: yaml.Node, parts: list[str | int]) -> int:
    node, line = root, root.start_mark.line + 1
    for part in parts:
        if isinstance(node, yaml.MappingNode):
            found = next(
                ((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(part)), None
            )
            if found is None:
                break
            node, line = found[1], found[0].start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def lines_of(source: str, paths: Iterable[str]) -> dict[str, int]:
    """The 1-based line of each path in `source`; empty when the source cannot be read as YAML or JSON."""
    if not source or len(source) > MAX_SOURCE:
        return {}
    try:
        root = yaml.compose(source, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return {}
    if root is None:
        return {}
    return {path: _line_of(root, path_parts(path)) for path in paths}
