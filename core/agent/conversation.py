"""An agent step's conversation: the messages as stored (one per LLM turn, tool result, question, answer), and
the request the LLM is sent from them, fitted to the context budget.

A tool message exists from the moment the LLM asked for the call (status `pending`), so every `tool_call_id` the
LLM sends has exactly one tool message, whatever becomes of the call:

    pending -> ready (allowed or accepted: runs with `params`) -> done
    pending -> review (a person decides, services.decisions.coaching) -> ready | done
    pending -> done (invalid arguments, denied by policy)

The chat completions API refuses a conversation in which a tool call has no answer, so the next request waits
until every tool message of the last turn is `done`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PENDING, REVIEW, READY, DONE = "pending", "review", "ready", "done"
SYSTEM, USER, ASSISTANT, TOOL = "system", "user", "assistant", "tool"
# why a user message was added: the goal, a person's answer to CONFIRM_DATA, an approval of REQUEST_APPROVAL,
# Coach asking again for a final answer that did not fit output_schema
GOAL, ANSWER, APPROVED, REPAIR = "goal", "answer", "approved", "repair"
TRIM_MARKER = "[… trimmed by Coach to fit the context budget: {left_out:,} of {total:,} characters left out …]"
TRIM_KEEP = 200  # the fewest characters of a trimmed result kept before the marker
MAX_TOOL_CONTENT = 1_000_000  # characters of one tool result kept at all (the rest is cut, with a marker)
_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


@dataclass
class ToolCall:
    """One call as the LLM sent it."""

    id: str
    name: str
    arguments: str  # raw JSON text, as sent

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass
class Message:
    seq: int
    role: str
    content: str | None = None
    kind: str | None = None  # user messages: GOAL, ANSWER, APPROVED, REPAIR
    turn: int = 0  # the LLM turn that made it (assistant), or that asked for it (tool)
    tool_calls: list[ToolCall] = field(default_factory=list)  # assistant
    reasoning: str | None = None  # assistant: a reasoning text the server sent besides the content
    asked: bool = False  # assistant: its CONFIRM_DATA / REQUEST_APPROVAL was put to a person
    # tool messages
    tool_call_id: str | None = None
    name: str | None = None  # as the LLM wrote it
    tool: str | None = None  # the registered tool it names (None: none of the step's tools)
    arguments: Any = None  # parsed arguments (None when they were not valid JSON)
    raw: str | None = None  # the arguments as sent, when they were not valid JSON
    status: str = DONE
    params: Any = None  # what runs (a learned rule or a correction may change the arguments)
    policy: dict[str, Any] | None = None
    decision: str | None = None  # the person's decision, or allow / deny / invalid
    suggestion_id: str | None = None
    source: str | None = None  # llm | correction_pack:<id>
    error: bool = False
    trimmed: bool = False  # sent shortened at least once (the budget)
    id: str | None = None  # storage's
    dirty: bool = field(default=True, compare=False)  # changed since storage last wrote it
    stored: bool = field(default=False, compare=False)  # storage has a row for it

    def to_api(self, content: str | None = None) -> dict[str, Any]:
        text = self.content if content is None else content
        if self.role == TOOL:
            return {"role": TOOL, "tool_call_id": self.tool_call_id, "content": text or ""}
        if self.role == ASSISTANT:
            out: dict[str, Any] = {"role": ASSISTANT, "content": text}
            if self.tool_calls:
                out["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in self.tool_calls
                ]
            return out
        return {"role": self.role, "content": text or ""}


def tool_content(output: Any) -> str:
    """A tool's output as the LLM reads it: text as is, anything else as compact JSON; at most MAX_TOOL_CONTENT."""
    text = output if isinstance(output, str) else _compact(output)
    if len(text) > MAX_TOOL_CONTENT:
        text = text[:MAX_TOOL_CONTENT] + f"\n[… cut by Coach: {len(text) - MAX_TOOL_CONTENT:,} more characters …]"
    return text


def llm_content(content: str) -> str:
    """A tool result as the LLM is sent it: the result once. An MCP tool's output (core.toolservers.step_output:
    `text`, `content` and, when the server gave one, `structured`, each the same result) is sent as its structured
    content when there is one, else as its text (its other blocks, images named, when it has no text); anything
    else as stored. The stored message keeps the whole output: the transcript shows it as before."""
    if not content.startswith('{"text":'):  # how tool_content writes a step_output (compact, `text` first)
        return content
    try:
        output = json.loads(content)
    except ValueError:  # cut at MAX_TOOL_CONTENT: sent as stored
        return content
    if (
        not isinstance(output, dict)
        or set(output) not in ({"text", "content"}, {"text", "content", "structured"})
        or not isinstance(output["text"], str)
        or not isinstance(output["content"], list)
    ):
        return content
    if "structured" in output:
        return _compact(output["structured"])
    others = [b for b in output["content"] if not (isinstance(b, dict) and b.get("type") == "text")]
    return output["text"] if output["text"] or not others else _compact(others)


def sent_content(message: Message) -> str | None:
    """A message's content as the LLM is sent it (before any shortening for the budget)."""
    if message.role == TOOL and message.content:
        return llm_content(message.content)
    return message.content


def _size(message: dict[str, Any]) -> int:
    return len(_compact(message).encode("utf-8"))


def trimmed(content: str, keep: int = TRIM_KEEP) -> str:
    """`content` cut to its first `keep` characters, with the marker saying how much was left out."""
    keep = max(0, min(keep, len(content)))
    marker = TRIM_MARKER.format(left_out=len(content) - keep, total=len(content))
    return content[:keep] + "\n" + marker


def fit(
    messages: list[Message], budget_bytes: int, around: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], list[Message]]:
    """The messages as the API takes them, so that the request body (`around`, the rest of the body the provider
    posts: the model and the tool definitions, with these messages) is within `budget_bytes` if shortening tool
    results can make it: the oldest tool result is shortened first, by what the request is over (down to its first
    TRIM_KEEP characters and a marker saying how much was left out), then the next, until the request fits. When it
    cannot fit whatever is shortened, the latest turn's results stay whole. Returns (messages, the tool messages
    it shortened)."""
    texts = [sent_content(m) for m in messages]
    sent = [m.to_api(t) for m, t in zip(messages, texts, strict=False)]
    sizes = [_size(m) for m in sent]
    # the body's size: the rest of it, then the messages and the commas between them (compact JSON, as posted)
    total = _size({**(around or {}), "messages": []}) + sum(sizes) + max(0, len(sent) - 1)
    shortened: list[Message] = []
    if total <= budget_bytes:
        return sent, shortened
    trimmable = [
        i for i, m in enumerate(messages) if m.role == TOOL and len(texts[i] or "") > TRIM_KEEP + len(TRIM_MARKER) + 20
    ]
    # what the LLM itself wrote is never cut: when even every result shortened cannot make the request fit, the
    # results of its latest turn (what it must act on now) are left whole, and the older ones shortened
    least = total - sum(sizes[i] - _size(messages[i].to_api(trimmed(texts[i] or ""))) for i in trimmable)
    latest = max((messages[i].turn for i in trimmable), default=None)
    for i in trimmable:
        message = messages[i]
        if total <= budget_bytes:
            break
        if least > budget_bytes and message.turn == latest:
            continue
        text = texts[i] or ""
        keep = len(text)
        for _ in range(4):  # characters are not bytes (UTF-8, JSON escapes): shorten again if still over
            over = total - budget_bytes
            if over <= 0 or keep <= TRIM_KEEP:
                break
            keep = max(TRIM_KEEP, keep - over - len(TRIM_MARKER) - 16)
            sent[i] = message.to_api(trimmed(text, keep))
            new_size = _size(sent[i])
            total += new_size - sizes[i]
            sizes[i] = new_size
        shortened.append(message)
    return sent, shortened
