"""JSON as text, for what Coach stores (every JSON column) and compares: orjson, which encodes the decision
path's rows several times faster than the standard library, with the standard library where orjson declines a
value, so that nothing that was stored before is refused now:

- `dumps`: an integer beyond 64 bits, or a type orjson does not know, goes to `json.dumps`, which writes the
  integer or raises the TypeError callers know. Non-string keys become strings as `json.dumps` makes them.
  orjson writes non-ASCII characters as UTF-8 (not as escapes) and NaN or infinities as null (the standard
  library writes NaN, which is not JSON and which PostgreSQL refuses).
- `loads`: text orjson refuses (NaN, Infinity, written by `json.dumps` in rows stored earlier) is read by `json.loads`,
  and so is text with a run of 19 or more digits: orjson reads an integer beyond 64 bits as a float, the standard
  library as the integer it was (the audit chain hashes values as they were written).
"""
from __future__ import annotations

import json
import re
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS
_SORTED = orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, option=_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value)


def dumps_sorted(value: Any) -> str:
    """Compact, with keys sorted: the same value always gives the same text (a cache key)."""
    try:
        return orjson.dumps(value, option=_SORTED).decode()
    except TypeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))


# an integer token of 19 or more digits: a number starts the text or follows `:`, `,` or `[` (with the standard
# library's or PostgreSQL's spaces, and a sign); anchored on those characters, the search skips ahead to them
# instead of trying a run of digits at every position (ids are full of digits)
_LONG_TOKEN = r"[:,\[][\s-]*\d{19}"
_LONG_FIRST = r"[\s-]*\d{19}"
_LONG = re.compile(_LONG_TOKEN.encode()), re.compile(_LONG_FIRST.encode())
_LONG_TEXT = re.compile(_LONG_TOKEN), re.compile(_LONG_FIRST)


def loads(text: str | bytes) -> Any:
    inside, first = _LONG if isinstance(text, (bytes, bytearray)) else _LONG_TEXT
    if inside.search(text) or first.match(text):
        return json.loads(text)  # maybe an integer orjson would read as a float
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # a ValueError, as json.loads raises for text that is not JSON at all
        return json.loads(text)
