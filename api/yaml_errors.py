"""A YAML syntax error in words, with the line it is on: what PyYAML says, without its `in "<byte string>"`
locations and parser terms, for the person who wrote the text (the workflow editor marks the line)."""

from __future__ import annotations

import yaml

# the parser's problem -> what it means for the person writing the text
_PROBLEMS = (
    (
        "mapping values are not allowed here",
        "a ':' where a value was expected (put quotes around a value that holds ': ', "
        "or start the key on its own line)",
    ),
    ("expected <block end>, but found", "this line is not indented like the lines before it"),
    ("did not find expected key", "this line is not indented like the lines before it"),
    ("did not find expected '-' indicator", "this list item is not indented like the items before it"),
    ("found character '\\t' that cannot start any token", "a tab: YAML indents with spaces"),
    ("found unexpected end of stream", "the text ends before it is closed"),
    ("expected ',' or '}'", "a ',' or the closing '}' is missing"),
    ("expected ',' or ']'", "a ',' or the closing ']' is missing"),
    ("found duplicate anchor", "an anchor (&name) is defined twice"),
    ("found undefined alias", "an alias (*name) names no anchor"),
)
_CONTEXTS = {
    "while parsing a flow mapping": "the { … } that starts",
    "while parsing a flow sequence": "the [ … ] that starts",
    "while scanning a quoted scalar": "the quoted text that starts",
    "while parsing a block mapping": "the block that starts",
    "while parsing a block collection": "the list that starts",
    "while scanning a simple key": "the key that starts",
}


def describe(exc: yaml.YAMLError) -> tuple[str, int | None]:
    """(the problem in words, the 1-based line it is on, when the parser says)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).split("\n", 1)[0]
    words = next((said for start, said in _PROBLEMS if problem.startswith(start)), problem)
    line = mark.line + 1 if mark is not None else None
    where = f"line {line}, column {mark.column + 1}: " if mark is not None else ""
    context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    about = ""
    if context and context_mark is not None:
        opened = _CONTEXTS.get(context, context.removeprefix("while ").replace("parsing", "reading"))
        about = f" ({opened} on line {context_mark.line + 1})"
    return f"YAML syntax error on {where}{words}{about}", line
