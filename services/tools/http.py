"""http.request: one HTTP call with httpx, bounded by the step's deadline."""
from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from config import Settings
from core.tools import ToolContext, ToolError

from .basic import budget, seconds_text, truncate_text

# JSON is parsed from the whole body, so the body needs its own (larger) cap than `text`.
MAX_BODY_BYTES = 10 * 1024 * 1024


def _is_json(content_type: str) -> bool:
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime == "application/json" or mime.endswith("+json")


class HttpRequestTool:
    # it stops by itself at ctx.deadline, so the engine runs it without a watchdog thread
    honours_deadline = True

    name = "http.request"
    description = (
        "Makes an HTTP request and returns status, headers, text and parsed JSON. "
        "A non-2xx status is reported with ok=false, not as a failure."
    )
    risk = "external"
    params_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "method": {"enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"], "default": "GET"},
            "url": {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "params": {
                "type": "object",
                "additionalProperties": {"type": ["string", "number", "boolean", "null", "array"]},
            },
            "json": {},
            "body": {"type": "string"},
            "timeout_s": {"type": "number", "exclusiveMinimum": 0},
        },
        "required": ["url"],
        "additionalProperties": False,
        # Both would be sent as the body; refusing early beats silently dropping one.
        "not": {"required": ["json", "body"]},
    }

    def __init__(self, settings: Settings):
        self.settings = settings

    def run(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        method = str(params.get("method") or "GET").upper()
        url = params.get("url")
        if not isinstance(url, str) or urlsplit(url).scheme.lower() not in ("http", "https"):
            raise ToolError(f"url must be an http:// or https:// address, got {url!r}")
        if "json" in params and "body" in params:
            raise ToolError("give either json or body, not both")
        timeout = budget(ctx, params.get("timeout_s") or self.settings.http_timeout_s)
        deadline = time.monotonic() + timeout

        request: dict[str, Any] = {"headers": params.get("headers") or None, "params": params.get("params") or None}
        if "json" in params:
            request["json"] = params["json"]
        elif "body" in params:
            request["content"] = params["body"].encode("utf-8")

        started = time.monotonic()
        try:
            with httpx.Client(timeout=timeout, follow_redirects=True) as client:
                with client.stream(method, url, **request) as resp:
                    body, complete = self._read_body(resp, deadline, method, url, timeout)
        except httpx.TimeoutException:
            raise ToolError(f"{method} {url} timed out after {seconds_text(timeout)}") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"{method} {url} failed: {exc or type(exc).__name__}") from None
        elapsed_ms = (time.monotonic() - started) * 1000

        encoding = resp.encoding or "utf-8"
        parsed = None
        if complete and body and _is_json(resp.headers.get("content-type", "")):
            try:
                parsed = json.loads(body.decode(encoding, errors="replace"))
            except ValueError:
                parsed = None
        return {
            "status": resp.status_code,
            "headers": {k.lower(): v for k, v in resp.headers.items()},
            "json": parsed,
            "text": truncate_text(body, encoding),
            "ok": resp.is_success,
            "elapsed_ms": round(elapsed_ms, 3),
        }

    @staticmethod
    def _read_body(resp: httpx.Response, deadline: float, method: str, url: str, timeout: float) -> tuple[bytes, bool]:
        # httpx timeouts apply per network operation; a server trickling bytes could
        # outlive the step, so the whole read is also checked against one deadline.
        chunks: list[bytes] = []
        size = 0
        for chunk in resp.iter_bytes():
            if time.monotonic() > deadline:
                raise ToolError(f"{method} {url} timed out after {seconds_text(timeout)}")
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                return b"".join(chunks), False
        return b"".join(chunks), True
