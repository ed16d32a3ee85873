"""Dotted field paths into a step's params, and the marker of an absent field.

Nested dicts are flattened (`{"a": {"b": 1}}` -> `a.b`); lists and empty dicts are compared as whole values. A dot
or backslash inside a key is escaped with a backslash (`{"x.y": 1}` -> `x\\.y`), so every path names exactly one
place.

A field that is absent is `MISSING` in Python and `{"$missing": true}` in JSON (`MISSING_JSON`).
That marker cannot collide with a real value: a flattened value is never a non-empty dict.

Values are compared by their canonical JSON, so `1`, `1.0` and `true` are different values, as
they are to the tool that receives them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


class _Missing:
    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"  # pickling and deepcopy keep the singleton, so `is MISSING` stays true


MISSING: Any = _Missing()
MISSING_JSON: dict[str, bool] = {"$missing": True}


def encode_value(v: Any) -> Any:
    """The JSON form of a before/after value."""
    return dict(MISSING_JSON) if v is MISSING else v


def decode_value(v: Any) -> Any:
    return MISSING if isinstance(v, dict) and v == MISSING_JSON else v


def canonical(v: Any) -> str:
    """A value's canonical JSON: how before/after values are compared (`1`, `1.0` and `true` differ)."""
    return json.dumps(encode_value(v), sort_keys=True, separators=(",", ":"), default=repr)


def join_path(parts: Iterable[str]) -> str:
    """The dotted field path of these parts, a dot or backslash in a key escaped (the inverse of split_path)."""
    return ".".join(p.replace("\\", "\\\\").replace(".", "\\.") for p in parts)


def _split(dotted: str) -> list[str]:
    if not dotted:
        raise ValueError("empty field path")
    parts, cur, escaped = [], [], False
    for ch in dotted:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ".":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def split_path(dotted: str) -> list[str]:
    """A dotted field path's parts (a backslash escapes a dot or a backslash in a key)."""
    return _split(dotted)


def walk_path(d: Any, parts: list[str]) -> tuple[Any, bool]:
    """(value or MISSING, blocked) where blocked means a parent exists but is not a dict."""
    cur = d
    for i, p in enumerate(parts):
        if not isinstance(cur, dict):
            return MISSING, i > 0
        if p not in cur:
            return MISSING, False
        cur = cur[p]
    return cur, False


def get_path(d: dict[str, Any], dotted: str, default: Any = MISSING) -> Any:
    value, _ = walk_path(d, _split(dotted))
    return default if value is MISSING else value


def set_path(d: dict[str, Any], dotted: str, value: Any) -> None:
    """Set in place, creating intermediate dicts; a non-dict parent is a TypeError, not lost."""
    parts = _split(dotted)
    cur = d
    for p in parts[:-1]:
        nxt = cur.setdefault(p, {})
        if not isinstance(nxt, dict):
            raise TypeError(f"cannot set {dotted!r}: {p!r} holds a {type(nxt).__name__}")
        cur = nxt
    cur[parts[-1]] = value


def delete_path(d: dict[str, Any], dotted: str) -> bool:
    """Remove in place; parents left empty by the removal go too: they only existed to hold it."""
    parts = _split(dotted)
    chain = [d]
    for p in parts[:-1]:
        nxt = chain[-1].get(p)
        if not isinstance(nxt, dict):
            return False
        chain.append(nxt)
    if parts[-1] not in chain[-1]:
        return False
    del chain[-1][parts[-1]]
    for depth in range(len(chain) - 1, 0, -1):
        if chain[depth]:
            break
        del chain[depth - 1][parts[depth - 1]]
    return True


def flatten(d: dict[str, Any], _prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        parts = _prefix + (str(k),)
        if isinstance(v, dict) and v:
            out.update(flatten(v, parts))
        else:
            out[join_path(parts)] = v
    return out
