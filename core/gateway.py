"""The MCP gateway's rules that need no storage: which calls are "the same call", what an agent receives (results
as the MCP spec's CallToolResult, capped), and the words of a denial, a reject and a held call (docs/mcp-gateway.md)."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import orjson

# the `_meta` keys an agent may send to say "this is the same call as before" (the first one found wins)
IDEMPOTENCY_META = ("io.coach/idempotencyKey", "idempotencyKey", "idempotency_key")
STATUS_META = "io.coach/gateway"


def canonical(value: Any) -> bytes:
    """JSON with sorted keys: two equal argument objects give the same bytes whatever their key order."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def idempotency_key(meta: dict[str, Any] | None) -> str | None:
    for key in IDEMPOTENCY_META:
        value = (meta or {}).get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value)[:500]
    return None


def call_key(tool: str, arguments: dict[str, Any], meta_key: str | None) -> str:
    """What makes two calls of one agent the same call: its `_meta` idempotency key when it sent one, else the tool
    and the arguments (canonical JSON)."""
    if meta_key is not None:
        return "k:" + hashlib.sha256(meta_key.encode()).hexdigest()
    return "a:" + hashlib.sha256(tool.encode() + b"\0" + canonical(arguments)).hexdigest()


def upstream_key(agent_id: str, key: str) -> str:
    """The `_meta.idempotencyKey` an allowed (or AUTO) call is forwarded with, so that only a retry of the same call
    shares one: with the agent's own idempotency key (`key` is call_key's "k:…"), one derived from it and the agent's
    identity, the same for every call the agent sends with that key (it says they are one call); without one, a new
    key for every call: Coach keeps no session, so two calls with the same arguments are two calls the agent meant.
    A held call is forwarded with `gateway:<its id>` (held.py): its retries are the same row."""
    if key.startswith("k:"):
        return "gateway:k-" + hashlib.sha256(agent_id.encode() + b"\0" + key.encode()).hexdigest()[:40]
    return "gateway:" + uuid.uuid4().hex


def size(result: dict[str, Any]) -> int:
    return len(canonical(result))


def cap(result: dict[str, Any], max_bytes: int) -> tuple[dict[str, Any], int]:
    """(the result the agent receives, the size of the upstream result). A result over `max_bytes` becomes its text
    cut to fit, and says so; its structured content is dropped (a part of it would not fit its schema), and a result
    that had some is then an error result: what the tool's outputSchema promises did not reach the agent (and a
    client checking results against that schema would refuse a success without it)."""
    full = size(result)
    if full <= max_bytes:
        return result, full
    texts = [b.get("text", "") for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"]
    text = "\n".join(texts) if texts else canonical(result.get("structuredContent", result)).decode()
    room = max(0, max_bytes - 400)
    cut = text.encode()[:room].decode(errors="ignore")
    note = f"\n[cut by Coach's gateway: the result was {full} bytes, the agent receives at most {max_bytes}]"
    lost_structure = result.get("structuredContent") is not None
    return {
        "content": [{"type": "text", "text": cut + note}],
        "isError": bool(result.get("isError")) or lost_structure,
        "_meta": {STATUS_META: {"truncated": True, "bytes": full}},
    }, full


def error_result(text: str, **status: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if status:
        out["_meta"] = {STATUS_META: status}
    return out


def denied_text(tool: str, verdict: dict[str, Any]) -> str:
    rule = verdict.get("rule") or {}
    if verdict.get("default") or not rule.get("id"):
        why = f"the workspace's default policy for {verdict.get('risk') or 'unknown'} tools"
    else:
        why = f"policy rule {rule.get('name')!r}" + (f": {rule['reason']}" if rule.get("reason") else "")
    return f"Coach denied this call of {tool}: {why}."


def held_text(tool: str, call_id: str, waited_s: float) -> str:
    return (
        f"The call of {tool} is held for a person's review in Coach (call {call_id}); it has not run. No "
        f"decision within {waited_s:g} s. Send the same call again (same tool and arguments, or the same _meta "
        f"idempotency key) to receive the decision once it is made; it runs at most once."
    )


def running_text(tool: str, call_id: str, who: str, waited_s: float) -> str:
    return (
        f"The call of {tool} was approved by {who} and is running in Coach (call {call_id}): it was sent to the "
        f"server and its result is not in yet after {waited_s:g} s. Do not send it as a new call: send the same "
        f"call again (same tool and arguments, or the same _meta idempotency key) to receive its result; it runs "
        f"once."
    )


def rejected_text(tool: str, who: str, feedback: str) -> str:
    return f"A reviewer ({who}) rejected this call of {tool}; it did not run." + (
        f" Their feedback: {feedback}" if feedback else " They gave no feedback."
    )
