"""file.read / file.write, confined to the workspace's own folder under the data folder (COACH_DATA_DIR).

Each workspace has `<data>/<workspace_id>/`; a tool called without a workspace refuses instead of falling back
to a shared folder. Writes count against the workspace's quota (COACH_DATA_QUOTA_MB).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
import threading
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from config import Settings
from core.tools import ToolContext, ToolError, require_workspace

# the most file.read returns when the server's settings say nothing else (COACH_FILE_READ_MAX_MB)
MAX_READ_BYTES = 10 * 1024 * 1024
_WORKSPACE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def data_root(settings: Settings, create: bool = False) -> Path:
    """The server's data folder, which holds one folder per workspace (never used by a tool directly)."""
    root = Path(settings.resolved_data_dir)
    if create:
        root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


def workspace_root(settings: Settings, workspace_id: str, create: bool = False) -> Path:
    """`<data>/<workspace_id>/`: the only folder the workspace's tools may touch."""
    if not isinstance(workspace_id, str) or not _WORKSPACE_ID.match(workspace_id):
        raise ToolError(f"not a usable workspace id: {workspace_id!r}")
    root = data_root(settings, create=create) / workspace_id
    if create:
        root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


def tool_root(settings: Settings, ctx: ToolContext, tool: str, create: bool = False) -> Path:
    return workspace_root(settings, require_workspace(ctx, tool), create=create)


def confine(root: Path, rel: Any) -> tuple[Path, str]:
    """Map a user-given relative path to a real path inside `root` (a workspace's folder), or refuse.

    Checked both lexically (absolute, `..`) and after resolving symlinks, because a link
    planted inside the folder could otherwise point anywhere on the machine.
    """
    if not isinstance(rel, str) or not rel.strip():
        raise ToolError("path must be a non-empty relative path")
    if "\x00" in rel:
        raise ToolError("path must not contain NUL characters")
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or re.match(r"^[A-Za-z]:|^[\\/]", rel):
        raise ToolError(f"path must be relative to the workspace's data folder, got absolute path {rel!r}")
    parts = [p for p in re.split(r"[\\/]+", rel) if p not in ("", ".")]
    if ".." in parts:
        raise ToolError(f"path must not contain '..': {rel!r}")
    if not parts:
        raise ToolError("path must name something inside the workspace's data folder")
    real = root.joinpath(*parts).resolve()
    if real != root and not real.is_relative_to(root):
        raise ToolError(f"path {rel!r} leads outside the workspace's data folder")
    return real, "/".join(parts)


def folder_usage(root: Path) -> int:
    """Bytes held by the regular files under `root` (links are not followed, so none is counted twice)."""
    total = 0
    stack = [str(root)]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
                except OSError:
                    continue
    return total


# one writer per workspace folder at a time in this process, so two writes cannot both pass the quota
_QUOTA_LOCKS: dict[str, threading.Lock] = {}
_QUOTA_LOCKS_GUARD = threading.Lock()


def _quota_lock(root: Path) -> threading.Lock:
    with _QUOTA_LOCKS_GUARD:
        return _QUOTA_LOCKS.setdefault(str(root), threading.Lock())


def _mb(n: float) -> str:
    if n < 1024 * 1024:
        return f"{int(n)} bytes"
    return f"{n / (1024 * 1024):.2f}".rstrip("0").rstrip(".") + " MB"


class FileReadTool:
    name = "file.read"
    description = (
        "Reads a text file from the workspace's data folder. "
        "CSV files also come back as rows, JSON files as parsed JSON."
    )
    risk = "read"

    def __init__(self, settings: Settings):
        self.settings = settings
        # the server's cap; the schema says it, so a correction asking for more is a 422 naming max_bytes
        self.limit = settings.file_read_max_bytes
        self.params_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "encoding": {"type": "string", "minLength": 1, "default": "utf-8"},
                "max_bytes": {"type": "integer", "minimum": 1, "maximum": self.limit, "default": self.limit},
            },
            "required": ["path"],
            "additionalProperties": False,
        }

    def run(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        real, rel = confine(tool_root(self.settings, ctx, self.name), params.get("path"))
        encoding = params.get("encoding") or "utf-8"
        # the schema caps it, but a caller that skips the schema must not get past the server's limit either
        max_bytes = min(int(params.get("max_bytes") or self.limit), self.limit)
        if not real.exists():
            raise ToolError(f"no such file in the workspace's data folder: {rel}")
        if not real.is_file():
            raise ToolError(f"not a regular file: {rel}")
        size = real.stat().st_size
        if size > max_bytes:
            raise ToolError(f"{rel} is {size} bytes, more than max_bytes ({max_bytes})")
        try:
            with open(real, "rb") as fh:
                raw = fh.read(max_bytes + 1)  # the file may have grown since stat()
            if len(raw) > max_bytes:
                raise ToolError(f"{rel} is more than max_bytes ({max_bytes})")
            content = raw.decode(encoding)
        except LookupError:
            raise ToolError(f"unknown encoding {encoding!r}") from None
        except UnicodeDecodeError as exc:
            raise ToolError(f"{rel} is not valid {encoding} text: {exc.reason} at byte {exc.start}") from None
        except OSError as exc:
            raise ToolError(f"cannot read {rel}: {exc.strerror or exc}") from None

        out: dict[str, Any] = {"path": rel, "content": content, "size": len(raw)}
        suffix = real.suffix.lower()
        if suffix == ".csv":
            try:
                out["rows"] = list(csv.DictReader(io.StringIO(content, newline="")))
            except csv.Error as exc:
                raise ToolError(f"{rel} is not valid CSV: {exc}") from None
        elif suffix == ".json":
            try:
                out["json"] = json.loads(content)
            except ValueError as exc:
                raise ToolError(f"{rel} is not valid JSON: {exc}") from None
        return out


def replace_atomically(path: Path, data: bytes) -> None:
    """Write `data` as the whole content of `path`: into a temporary file of the same folder, synced, then renamed
    over `path` (os.replace, atomic): a reader, or a crash at any moment, finds the old content or the new one,
    never a part, and writing the same content again (a re-run after a crash) leaves the same one file. The new
    file keeps the old one's permissions (else the usual ones for a new file)."""
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0o022)  # read once, at import (os.umask can only be read by setting it)
    os.umask(mask)
    return mask


_UMASK = _umask()


class FileWriteTool:
    name = "file.write"
    description = (
        "Writes text (content) or pretty-printed JSON (json) to a file in the workspace's data folder; "
        "an overwrite replaces the file atomically (never half-written), an append adds to its end."
    )
    risk = "write"
    params_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "content": {"type": "string"},
            "json": {},
            "mode": {"enum": ["overwrite", "append"], "default": "overwrite"},
            "make_dirs": {"type": "boolean", "default": True},
        },
        "required": ["path"],
        "oneOf": [{"required": ["content"]}, {"required": ["json"]}],
        "additionalProperties": False,
    }

    def __init__(self, settings: Settings):
        self.settings = settings

    def run(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        if ("content" in params) == ("json" in params):
            raise ToolError("give exactly one of content or json")
        if "content" in params:
            if not isinstance(params["content"], str):
                raise ToolError("content must be a string")
            data = params["content"].encode("utf-8")
        else:
            try:
                data = (json.dumps(params["json"], indent=2, ensure_ascii=False) + "\n").encode("utf-8")
            except (TypeError, ValueError) as exc:
                raise ToolError(f"json is not serialisable: {exc}") from None
        mode = params.get("mode") or "overwrite"
        if mode not in ("overwrite", "append"):
            raise ToolError(f"mode must be overwrite or append, got {mode!r}")

        root = tool_root(self.settings, ctx, self.name, create=True)
        real, rel = confine(root, params.get("path"))
        if real.is_dir():
            raise ToolError(f"{rel} is a folder, not a file")
        with _quota_lock(root):
            self._check_quota(root, real, rel, mode, len(data))
            if not real.parent.is_dir():
                if not params.get("make_dirs", True):
                    raise ToolError(f"folder for {rel} does not exist (make_dirs is false)")
                try:
                    real.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise ToolError(f"cannot create the folder for {rel}: {exc.strerror or exc}") from None
            try:
                if mode == "append":
                    with open(real, "ab") as fh:
                        fh.write(data)
                else:
                    replace_atomically(real, data)
            except OSError as exc:
                raise ToolError(f"cannot write {rel}: {exc.strerror or exc}") from None
        return {"path": rel, "bytes_written": len(data)}

    def _check_quota(self, root: Path, real: Path, rel: str, mode: str, size: int) -> None:
        quota = self.settings.data_quota_bytes
        if quota is None:
            return
        used = folder_usage(root)
        replaced = 0
        if mode == "overwrite":
            try:
                replaced = real.lstat().st_size if real.is_file() else 0
            except OSError:
                replaced = 0
        after = used - replaced + size
        if after > quota:
            raise ToolError(
                f"writing {rel} ({size} bytes) would bring this workspace's data folder to {_mb(after)}, "
                f"over its quota of {_mb(quota)} (COACH_DATA_QUOTA_MB); {_mb(used)} in use"
            )
