"""JSON as text, for what Coach stores (every JSON column) and compares: orjson, which encodes the decision
path's rows several times faster than the standard library, with the standard library where orjson declines a
value, so that nothing that was stored before is refused now:

- `dumps`: an integer beyond 64 bits, or a type orjson does not know, goes to `json.dumps`, which writes the
  integer or raises the TypeError callers know. Non-string keys become strings as `json.dumps` makes them.
  orjson writes non-ASCII characters as UTF-8 (not as escapes) and NaN or infinities as null (the standard
  library writes NaN, which is not JSON and which PostgreSQL refuses). A dataclass (an execution's step states,
  services.models.StepStates) is written as an object of all its fields and a datetime in ISO 8601, both ways.
- `loads`: text orjson refuses (NaN, Infinity, written by `json.dumps` in rows stored earlier) is read by `json.loads`,
  and so is text with a run of 19 or more digits: orjson reads an integer beyond 64 bits as a float, the standard
  library as the integer it was (the audit chain hashes values as they were written).
"""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import date, datetime, time
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS
_SORTED = orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, option=_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value, default=_as_orjson)


def dumps_sorted(value: Any) -> str:
    """Compact, with keys sorted: the same value always gives the same text (a cache key)."""
    try:
        return orjson.dumps(value, option=_SORTED).decode()
    except TypeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_as_orjson)


def _as_orjson(value: Any) -> Any:
    """What orjson writes for the types it knows beyond JSON's (a dataclass: an object of its fields; a datetime,
    date or time: ISO 8601), for the standard library's way: the same value, whichever way it is written."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# an integer token of 19 or more digits: a number starts the text or follows `:`, `,` or `[` (with the standard
# library's or PostgreSQL's spaces, and a sign); anchored on those characters, the search skips ahead to them
# instead of trying a run of digits at every position (ids are full of digits)
_LONG_TOKEN = r"[:,\[][\s-]*\d{19}"
_LONG_FIRST = r"[\s-]*\d{19}"
_LONG = re.compile(_LONG_TOKEN.encode()), re.compile(_LONG_FIRST.encode())
_LONG_TEXT = re.compile(_LONG_TOKEN), re.compile(_LONG_FIRST)


def loads(text: str | bytes) -> Any:
    if isinstance(text, (bytes, bytearray)):
        long_number = bool(_LONG[0].search(text) or _LONG[1].match(text))
    else:
        long_number = bool(_LONG_TEXT[0].search(text) or _LONG_TEXT[1].match(text))
    if long_number:
        return json.loads(text)  # maybe an integer orjson would read as a float
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # a ValueError, as json.loads raises for text that is not JSON at all
        return json.loads(text)
