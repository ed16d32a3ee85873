"""The demo tools (noop, echo) and the small helpers the other built-ins share."""

from __future__ import annotations

import copy
from typing import Any

from core.tools import ToolContext, ToolError

# Outputs are stored with the step and pushed to browsers; cap free text so one chatty
# command or page cannot bloat the database or the socket.
MAX_TEXT_BYTES = 64 * 1024


def truncate_text(data: bytes | str, encoding: str = "utf-8", limit: int = MAX_TEXT_BYTES) -> str:
    """Decode and cut to `limit` bytes without splitting a character or failing on bad bytes."""
    raw = data.encode(encoding, errors="replace") if isinstance(data, str) else data
    text = raw[:limit].decode(encoding, errors="replace")
    if len(raw) > limit:
        text = text.rstrip("\ufffd")  # the cut may split a multi-byte character
    return text


def budget(ctx: ToolContext, wanted: float | None = None) -> float:
    """Seconds this call may take: what the caller asked for, never past the step's deadline."""
    remaining = ctx.remaining()
    seconds = remaining if wanted is None else min(float(wanted), remaining)
    if seconds <= 0:
        raise ToolError("no time left before the step's deadline")
    return seconds


def seconds_text(seconds: float) -> str:
    return f"{round(seconds, 2):g}s"


class DemoTool:
    """What noop and echo share: any params, nothing read or written outside, no time taken."""

    # it stops by itself at ctx.deadline, so the engine runs it without a watchdog thread
    honours_deadline = True
    # pure and instantaneous: the runner may run it inside the transaction that records its result
    inline = True
    params_schema: dict[str, Any] = {"type": "object"}
    risk = "read"


class NoopTool(DemoTool):
    name = "noop"
    description = "Does nothing and returns {}; useful as a placeholder step."

    def run(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return {}


class EchoTool(DemoTool):
    name = "echo"
    description = "Returns its params unchanged; useful for demos and for passing values between steps."

    def run(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        # A copy, so later mutation of the output cannot reach back into the step's params.
        return copy.deepcopy(dict(params))
