"""file.read / file.write, confined to the data folder (COACH_DATA_DIR)."""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from config import Settings
from core.tools import ToolContext, ToolError

MAX_READ_BYTES = 10 * 1024 * 1024


def data_root(settings: Settings, create: bool = False) -> Path:
    root = Path(settings.resolved_data_dir)
    if create:
        root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


def confine(settings: Settings, rel: Any, create_root: bool = False) -> tuple[Path, str]:
    """Map a user-given relative path to a real path inside the data folder, or refuse.

    Checked both lexically (absolute, `..`) and after resolving symlinks, because a link
    planted inside the folder could otherwise point anywhere on the machine.
    """
    if not isinstance(rel, str) or not rel.strip():
        raise ToolError("path must be a non-empty relative path")
    if "\x00" in rel:
        raise ToolError("path must not contain NUL characters")
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or re.match(r"^[A-Za-z]:|^[\\/]", rel):
        raise ToolError(f"path must be relative to the data folder, got absolute path {rel!r}")
    parts = [p for p in re.split(r"[\\/]+", rel) if p not in ("", ".")]
    if ".." in parts:
        raise ToolError(f"path must not contain '..': {rel!r}")
    if not parts:
        raise ToolError("path must name something inside the data folder")
    root = data_root(settings, create=create_root)
    real = root.joinpath(*parts).resolve()
    if real != root and not real.is_relative_to(root):
        raise ToolError(f"path {rel!r} leads outside the data folder")
    return real, "/".join(parts)


class FileReadTool:
    name = "file.read"
    description = (
        "Reads a text file from the data folder. CSV files also come back as rows, JSON files as parsed JSON."
    )
    risk = "read"
    params_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "encoding": {"type": "string", "minLength": 1, "default": "utf-8"},
            "max_bytes": {"type": "integer", "minimum": 1, "default": MAX_READ_BYTES},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def __init__(self, settings: Settings):
        self.settings = settings

    def run(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        real, rel = confine(self.settings, params.get("path"))
        encoding = params.get("encoding") or "utf-8"
        max_bytes = int(params.get("max_bytes") or MAX_READ_BYTES)
        if not real.exists():
            raise ToolError(f"no such file in the data folder: {rel}")
        if not real.is_file():
            raise ToolError(f"not a regular file: {rel}")
        size = real.stat().st_size
        if size > max_bytes:
            raise ToolError(f"{rel} is {size} bytes, more than max_bytes ({max_bytes})")
        try:
            raw = real.read_bytes()
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


class FileWriteTool:
    name = "file.write"
    description = "Writes text (content) or pretty-printed JSON (json) to a file in the data folder."
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

        real, rel = confine(self.settings, params.get("path"), create_root=True)
        if real.is_dir():
            raise ToolError(f"{rel} is a folder, not a file")
        if not real.parent.is_dir():
            if not params.get("make_dirs", True):
                raise ToolError(f"folder for {rel} does not exist (make_dirs is false)")
            try:
                real.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ToolError(f"cannot create the folder for {rel}: {exc.strerror or exc}") from None
        try:
            with open(real, "ab" if mode == "append" else "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise ToolError(f"cannot write {rel}: {exc.strerror or exc}") from None
        return {"path": rel, "bytes_written": len(data)}
