"""What an agent loop does next, read from its conversation alone (`next_move`), and what the LLM's text says
(`markers`, `final_output`). Pure functions: core/agent/loop.py acts on them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from core import schema
from core.agent.conversation import ASSISTANT, DONE, PENDING, READY, REPAIR, REVIEW, TOOL, USER, Message
from core.agent.spec import AgentSpec

REPEAT_LIMIT = 3  # the same call with the same arguments this many times ends the loop
MAX_REPAIRS = 2  # final answers that do not fit output_schema sent back before the step fails
STAGE_COMPLETE, CONFIRM_DATA, REQUEST_APPROVAL = "STAGE_COMPLETE", "CONFIRM_DATA", "REQUEST_APPROVAL"
_MARKER = re.compile(r"\b(CONFIRM_DATA|REQUEST_APPROVAL)\b\s*:?\s*(.*)", re.S)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode

# moves
ASK, JUDGE, RUN, WAIT, QUESTION, APPROVAL, REPAIR_MOVE, FINISH, FAIL = (
    "ask",
    "judge",
    "run",
    "wait",
    "question",
    "approval",
    "repair",
    "finish",
    "fail",
)


@dataclass(frozen=True)
class Move:
    kind: str
    message: Message | None = None
    text: str = ""
    output: Any = None

    @property
    def subject(self) -> Message:
        """The message the move is about, for the kinds that have one (all but ASK)."""
        if self.message is None:
            raise ValueError(f"a {self.kind} move has no message")
        return self.message


def markers(text: str | None) -> tuple[str | None, str]:
    """(CONFIRM_DATA | REQUEST_APPROVAL | STAGE_COMPLETE | None, the text that goes with it)."""
    text = text or ""
    found = _MARKER.search(text)
    if found:
        rest = found.group(2).replace(STAGE_COMPLETE, "").strip()
        return found.group(1), rest or text[: found.start()].strip()
    if STAGE_COMPLETE in text:
        return STAGE_COMPLETE, text.replace(STAGE_COMPLETE, "").strip()
    return None, text.strip()


def final_output(text: str, output_schema: dict[str, Any] | None) -> tuple[Any, list[str]]:
    """The step's output from the final answer: {"answer": text}, or with `output_schema` the JSON value the text
    holds (bare or in a ``` fence), checked against it. Returns (output, problems)."""
    if output_schema is None:
        return {"answer": text}, []
    value, parsed = None, False
    for candidate in [text, *_FENCE.findall(text)]:
        try:
            value, parsed = json.loads(candidate.strip()), True
            break
        except ValueError:
            continue
    if not parsed:
        return None, ["the final answer is not JSON: answer with the JSON value only"]
    problems = [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(value)'}: {e.message}"
        for e in schema.errors(output_schema, value, limit=20)
    ]
    return value, problems


def call_key(message: Message) -> str:
    args = _canonical(message.arguments) if message.arguments is not None else "raw:" + (message.raw or "")
    return f"{message.tool or message.name}\x00{args}"


def repeats(messages: list[Message], message: Message) -> int:
    """How many times the LLM has made this call (same tool, same arguments), this one included."""
    key = call_key(message)
    return sum(1 for m in messages if m.role == TOOL and m.seq <= message.seq and call_key(m) == key)


def tool_turns(messages: list[Message]) -> int:
    return sum(1 for m in messages if m.role == ASSISTANT and m.tool_calls)


def next_move(messages: list[Message], spec: AgentSpec) -> Move:
    """The one thing to do next, from the conversation alone."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == ASSISTANT), None)
    if last is None:
        return Move(ASK)
    reply, after = messages[last], messages[last + 1 :]
    if reply.tool_calls:
        turns = tool_turns(messages)
        if turns > spec.max_tool_iterations:
            return Move(
                FAIL,
                reply,
                f"stopped: the LLM still asked for tools after max_tool_iterations "
                f"({spec.max_tool_iterations}) rounds of tool calls, with no final answer",
            )
        for m in after:
            if m.role == TOOL and m.status != DONE:
                return Move({PENDING: JUDGE, READY: RUN, REVIEW: WAIT}[m.status], m)
    if any(m.role == USER for m in after):
        return Move(ASK)
    kind, text = markers(reply.content)
    if kind in (CONFIRM_DATA, REQUEST_APPROVAL):
        if reply.asked:
            return Move(WAIT, reply)
        if kind == CONFIRM_DATA:
            return Move(QUESTION, reply, text or "The agent asks you to confirm the data before it goes on.")
        return Move(APPROVAL, reply, text or "The agent asks for approval before it goes on.")
    if reply.tool_calls and kind != STAGE_COMPLETE:
        return Move(ASK)
    output, problems = final_output(text, spec.output_schema)
    if problems:
        repairs = sum(1 for m in messages if m.role == USER and m.kind == REPAIR)
        listed = "; ".join(problems)
        if repairs >= MAX_REPAIRS:
            return Move(FAIL, reply, f"the final answer does not fit output_schema after {repairs + 1} tries: {listed}")
        return Move(
            REPAIR_MOVE,
            reply,
            "Your final answer does not fit the required output schema: "
            f"{listed}. Answer again with only the JSON value, matching the schema.",
        )
    return Move(FINISH, reply, output=output)
