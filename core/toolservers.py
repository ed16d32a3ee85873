"""Tools from MCP servers, as the domain sees them: names, risk, results. No I/O here (services/toolservers).

* A server's tools join the registry as `<server>.<tool>`; a server name is a slug so that the dot is unambiguous
  and a policy glob (`github.*`) means one server.
* Risk follows the Model Context Protocol's annotations and their defaults (readOnlyHint false,
  destructiveHint true, openWorldHint true: an unannotated tool is destructive and open-world). The protocol
  says annotations from an untrusted server are hints only: for a server an admin has not marked `trusted`
  every tool is `destructive` (the workspace's policy default for destructive applies), whatever it claims.
  An admin's per-tool override wins over both.
* A call's result (content blocks, structuredContent, isError) becomes the step's output or its error.
"""

from __future__ import annotations

import re
from typing import Any

from core import schema
from core.tools import RISKS

SERVER_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
SERVER_NAME_RULE = "lower-case letters, digits, _ and -, starting with a letter, at most 40"
# names Coach's own tools use: a server named `http` would shadow http.request's namespace in policies
RESERVED_NAMES = frozenset({"http", "sql", "file", "shell", "noop", "echo", "coach"})
MAX_TEXT_OUTPUT = 64 * 1024


def full_name(server: str, tool: str) -> str:
    return f"{server}.{tool}"


def check_server_name(name: Any) -> str | None:
    """The problem with a server name, or None."""
    if not isinstance(name, str) or not SERVER_NAME.match(name):
        return f"must be {SERVER_NAME_RULE}"
    if name in RESERVED_NAMES:
        return f"{name!r} is the namespace of Coach's own tools"
    return None


def annotated_risk(annotations: dict[str, Any] | None) -> str:
    """The risk the annotations claim, with the protocol's defaults for what they leave out."""
    hints = annotations or {}
    if hints.get("readOnlyHint") is True:
        return "read"
    if hints.get("destructiveHint", True) is not False:
        return "destructive"
    if hints.get("openWorldHint", True) is not False:
        return "external"
    return "write"


def risk_annotations(risk: str) -> dict[str, bool]:
    """The MCP annotations that say `risk` (the inverse of annotated_risk: annotated_risk(risk_annotations(r)) == r),
    for the tools Coach itself offers through its gateway: read is readOnlyHint, write neither destructive nor
    open-world, external open-world but not destructive, destructive destructiveHint."""
    if risk == "read":
        return {"readOnlyHint": True}
    if risk == "write":
        return {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
    if risk == "external":
        return {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True}
    return {"readOnlyHint": False, "destructiveHint": True}


def effective_risk(annotations: dict[str, Any] | None, *, trusted: bool, override: str | None = None) -> str:
    if override in RISKS:
        return override
    if not trusted:
        return "destructive"
    return annotated_risk(annotations)


def check_input_schema(input_schema: Any) -> str | None:
    """Why a tool's inputSchema cannot be used as its params schema, or None."""
    if not isinstance(input_schema, dict):
        return "inputSchema is not an object"
    if input_schema.get("type", "object") != "object":
        return "inputSchema must describe an object (the tool's arguments)"
    try:
        schema.check_schema(input_schema)
    except Exception as exc:  # the validator's own error: named in the message
        return f"inputSchema is not a valid JSON Schema: {getattr(exc, 'message', exc)}"
    return None


def _text(blocks: list[dict[str, Any]]) -> str:
    parts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
    text = "\n".join(p for p in parts if p)
    return text[:MAX_TEXT_OUTPUT]


def step_output(result: dict[str, Any]) -> dict[str, Any]:
    """What a successful call gives the step: `structured` (structuredContent, when the tool gave one), `text`
    (its text blocks joined) and `content` (every block but binary data, which is only named)."""
    blocks = [b for b in (result.get("content") or []) if isinstance(b, dict)]
    content = []
    for block in blocks:
        if "data" in block:  # images and audio: too large for a step's output, named instead
            content.append({k: v for k, v in block.items() if k != "data"} | {"bytes": len(block["data"]) * 3 // 4})
        else:
            content.append(block)
    output: dict[str, Any] = {"text": _text(blocks), "content": content}
    if isinstance(result.get("structuredContent"), dict):
        output["structured"] = result["structuredContent"]
    return output


def error_message(result: dict[str, Any]) -> str:
    """The server's own words for a call that came back with isError."""
    blocks = [b for b in (result.get("content") or []) if isinstance(b, dict)]
    return _text(blocks) or "the tool reported an error without a message"
