"""The named helpers a rule's `match` may use, and tool globs: small pure functions, compiled once per rule.

- `tool` globs: `*` any run of characters (dots included: `sql.*`, `*.query`, `mcp_*.*`), `?` one character,
  `[abc]` / `[a-z]` / `[!abc]` one of a set. Any other character stands for itself; a name holds letters, digits
  and `_ . - : /`. An unclosed `[`, an empty glob or other characters are refused (422 naming the field).
- `host_not_in: [hosts]`: the call's `url` param has a host that no entry names; an entry is a host name
  (`api.example.com`), `*.suffix` (names under the suffix, not the suffix itself) or `*`. A `url` that does not
  parse or has no host counts as "not in the list" (fail closed); a call without a `url` param does not match.
- `path_outside: "folder/"`: the call's `path` param, normalised (`a/./b`, `a//b`, `a/../b`), is not inside the
  folder (relative to the workspace's data folder). An absolute path, a `~` path, a path that climbs out with `..`
  or holds a NUL is outside; a call without a `path` param does not match.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import urlsplit

_NAME_CHARS = re.compile(r"^[A-Za-z0-9_.\-:/*?\[\]!]+$")
_HOST_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")


class HelperError(ValueError):
    """A glob, host list or folder that cannot be used; the message says why."""


# -- tool globs -----------------------------------------------------------------------------------------------


def compile_glob(pattern: str) -> tuple[str | None, re.Pattern[str] | None]:
    """(the exact name, None) for a glob without wildcards, else (None, its regular expression)."""
    if not isinstance(pattern, str) or not pattern:
        raise HelperError("a glob must be a non-empty string")
    if len(pattern) > 200 or not _NAME_CHARS.match(pattern):
        raise HelperError(f"{pattern!r} is not a glob of tool names (letters, digits, _ . - : / and * ? [...])")
    if not any(c in pattern for c in "*?["):
        if "]" in pattern or "!" in pattern:
            raise HelperError(f"{pattern!r}: `]` and `!` only belong inside a `[...]` set")
        return pattern, None
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] == "!" else i + 1)
            if end < 0:
                raise HelperError(f"{pattern!r}: a `[` set is not closed")
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            if not body or "[" in body:
                raise HelperError(f"{pattern!r}: an empty or nested `[...]` set")
            out.append("[" + ("^" if negate else "") + re.escape(body).replace("\\-", "-") + "]")
            i = end
        elif c in "]!":
            raise HelperError(f"{pattern!r}: `]` and `!` only belong inside a `[...]` set")
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return None, re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as exc:
        raise HelperError(f"{pattern!r}: {exc}") from None


def glob_prefix(pattern: str) -> str:
    """The literal text before the first wildcard (an index key)."""
    return re.split(r"[*?\[]", pattern, maxsplit=1)[0]


# -- hosts ----------------------------------------------------------------------------------------------------


def normalise_host_entry(entry: str) -> str:
    if not isinstance(entry, str) or not entry.strip():
        raise HelperError("a host entry must be a non-empty string")
    text = entry.strip().rstrip(".").lower()
    if text == "*":
        return text
    name = text[2:] if text.startswith("*.") else text
    try:
        name = name.encode("idna").decode("ascii")
    except UnicodeError:
        raise HelperError(f"{entry!r} is not a host name") from None
    if not name or len(name) > 253 or not all(_HOST_LABEL.match(label) for label in name.split(".")):
        if not _ip_like(name):
            raise HelperError(f"{entry!r} is not a host name, `*.suffix` or `*`")
    return ("*." + name) if text.startswith("*.") else name


def _ip_like(name: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(name.strip("[]"))
        return True
    except ValueError:
        return False


def url_host(url: str) -> str | None:
    """The URL's host, lower case, IDNA, without a trailing dot; None when it has none or does not parse."""
    if not isinstance(url, str):
        return None
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    if not host:
        return None
    host = host.rstrip(".")
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None


def host_listed(host: str | None, entries: tuple[str, ...]) -> bool:
    if host is None:
        return False
    for entry in entries:
        if entry == "*" or entry == host or (entry.startswith("*.") and host.endswith(entry[1:])):
            return True
    return False


# -- paths ----------------------------------------------------------------------------------------------------


def normalise_folder(folder: str) -> str:
    if not isinstance(folder, str) or not folder.strip():
        raise HelperError("a folder must be a non-empty relative path such as `summaries/`")
    if "\x00" in folder or folder.startswith(("/", "~", "\\")) or re.match(r"^[A-Za-z]:", folder):
        raise HelperError(f"{folder!r}: the folder is relative to the workspace's data folder")
    norm = posixpath.normpath(folder.replace("\\", "/"))
    if norm == ".." or norm.startswith("../"):
        raise HelperError(f"{folder!r} climbs out of the workspace's data folder")
    return "" if norm == "." else norm


def path_outside(path: object, folder: str) -> bool:
    """Whether `path` (as a file tool would take it) lies outside `folder` (normalised by normalise_folder)."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return True
    text = path.replace("\\", "/")
    if text.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", text):
        return True
    norm = posixpath.normpath(text)
    if norm == ".." or norm.startswith("../"):
        return True
    if not folder:
        return False
    return not (norm == folder or norm.startswith(folder + "/"))
