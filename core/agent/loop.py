"""The agent loop (docs/agent-steps.md): LLM -> tool call(s) -> results -> LLM … until a final answer.

Plain Python over two interfaces: a Provider (the LLM) and a Host (storage, policy, people, tools:
services/agents/service.py; tests use in-memory ones). What to do next is always derived from the conversation alone
(`next_move`), so a loop
that stopped anywhere (a person to ask, a killed server) goes on from the stored conversation: an LLM turn that is
stored is never requested again, a tool result that is stored is never produced again.

The Host persists: `save` marks messages to write, `flush` writes them (one transaction) and says whether the step
is still this loop's to run. The loop flushes before every request to the LLM and before every tool that takes
time, so nothing the LLM said or a tool returned is lost by a crash after it.

What the LLM may say besides tool calls (anywhere in its text):
- `STAGE_COMPLETE`: the step is done (after the calls of that turn, if any); the rest of the text is the answer;
- `CONFIRM_DATA: <question>`: a person answers the question; the answer comes back as a user message;
- `REQUEST_APPROVAL: <what>`: an approval (services.approvals.service); approved, the loop goes on, told so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Protocol

from core import schema
from core.agent.conversation import (
    ANSWER,
    APPROVED,
    ASSISTANT,
    DONE,
    GOAL,
    PENDING,
    READY,
    REPAIR,
    REVIEW,
    SYSTEM,
    TOOL,
    USER,
    Message,
    fit,
    tool_content,
)
from core.agent.moves import (
    APPROVAL,
    ASK,
    FINISH,
    JUDGE,
    QUESTION,
    REPAIR_MOVE,
    REPEAT_LIMIT,
    RUN,
    WAIT,
    Move,
    final_output,
    markers,
    next_move,
    repeats,
)
from core.agent.provider import Provider, ProviderError, Reply, Request
from core.agent.spec import AgentSpec, api_names

_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode


@dataclass(frozen=True)
class Ruling:
    """What the host says about a valid call: `allow` (runs with `params`), `deny` (`reason` goes back to the LLM)
    or `review` (a person decides; `purpose` is the suggestion's: coaching or spot_check)."""

    effect: str
    params: Any = None
    policy: dict[str, Any] | None = None
    reason: str = ""
    purpose: str = "coaching"
    source: str = "llm"


@dataclass(frozen=True)
class Result:
    ok: bool
    output: Any = None
    error: str | None = None


@dataclass(frozen=True)
class Stop:
    kind: str  # done | failed | waiting | gone (the step is no longer this loop's: cancelled, paused)
    output: Any = None
    error: str | None = None


class Host(Protocol):
    def save(self, messages: list[Message]) -> None: ...
    def flush(self) -> bool: ...
    def judge(self, message: Message) -> Ruling: ...
    def open_review(self, message: Message, ruling: Ruling) -> None: ...
    def inline(self, tool: str) -> bool: ...
    def run_tool(self, message: Message) -> Result: ...
    def ask(self, message: Message, question: str) -> None: ...
    def request_approval(self, message: Message, text: str) -> None: ...


# -- the loop ---------------------------------------------------------------------------------------------------


def system_prompt(spec: AgentSpec) -> str:
    parts = [
        "You are the agent of one step of a workflow run by Coach. Reach the goal the user gives you, calling the "
        "tools offered when you need them. Each tool call may be checked by a policy or reviewed by a person, who "
        "can change its arguments, do it by hand, skip it or reject it; a rejected call must not be repeated.",
        "When you are done, answer without a tool call; you may end your answer with STAGE_COMPLETE.",
        "If a person must confirm some data before you go on, answer `CONFIRM_DATA: <your question>`; their answer "
        "comes back as the next message.",
        "If what you are about to do needs a person's approval, answer `REQUEST_APPROVAL: <what is to be approved>`.",
    ]
    if spec.output_schema is not None:
        parts.append(
            "Your final answer must be only a JSON value that matches this JSON Schema:\n"
            + json.dumps(spec.output_schema, indent=1, ensure_ascii=False)
        )
    if spec.instructions:
        parts.append(spec.instructions)
    return "\n\n".join(parts)


def opening(spec: AgentSpec, goal: str) -> list[Message]:
    """The first two messages of a conversation: the system prompt and the goal."""
    return [
        Message(seq=0, role=SYSTEM, content=system_prompt(spec)),
        Message(seq=1, role=USER, content=goal, kind=GOAL),
    ]


def parameters_of(tool: Any) -> str:
    """`path (string, required), max_bytes (integer)`: what an error tells the LLM about a tool's parameters."""
    props = (tool.params_schema or {}).get("properties") or {}
    required = set((tool.params_schema or {}).get("required") or ())
    parts = []
    for name, prop in props.items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        kind = "/".join(kind) if isinstance(kind, list) else kind
        bits = [b for b in (kind, "required" if name in required else None) if b]
        parts.append(f"{name} ({', '.join(bits)})" if bits else name)
    return ", ".join(parts) or "none"


def tools_param(names: dict[str, str], tools: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat completions `tools` for the step's tools (API-safe name -> registered name)."""
    return [
        {
            "type": "function",
            "function": {
                "name": api,
                "description": (getattr(tools[name], "description", "") or name)[:1024],
                "parameters": tools[name].params_schema or {"type": "object", "properties": {}},
            },
        }
        for api, name in names.items()
    ]


class AgentLoop:
    """Runs one agent step's loop until it finishes, fails or waits for a person (no thread waits: `run` returns).

    `tools`: registered name -> tool (name, description, params_schema) of the tools the step may call."""

    def __init__(
        self, spec: AgentSpec, provider: Provider, host: Host, tools: dict[str, Any], *, model: str, key: str = ""
    ):
        self.spec, self.provider, self.host, self.model, self.key = spec, provider, host, model, key
        self.tools = tools
        self.names = api_names(tools)  # API-safe -> registered
        self._tools_param = tools_param(self.names, tools)

    def resolve(self, name: str) -> str | None:
        """The registered tool a call names: its API-safe name or its own."""
        found = self.names.get(name)
        if found is None and name in self.tools:
            found = name
        return found

    def reply_messages(self, messages: list[Message], reply: Reply) -> list[Message]:
        """The assistant message of `reply` and one pending tool message per call, numbered after `messages`."""
        seq = (messages[-1].seq + 1) if messages else 0
        turn = sum(1 for m in messages if m.role == ASSISTANT) + 1
        made = [
            Message(
                seq=seq,
                role=ASSISTANT,
                content=reply.content,
                turn=turn,
                tool_calls=list(reply.tool_calls),
                reasoning=reply.reasoning,
            )
        ]
        for i, call in enumerate(reply.tool_calls, start=1):
            try:
                arguments = json.loads(call.arguments) if (call.arguments or "").strip() else {}
            except ValueError:
                arguments = None
            made.append(
                Message(
                    seq=seq + i,
                    role=TOOL,
                    turn=turn,
                    tool_call_id=call.id,
                    name=call.name,
                    tool=self.resolve(call.name),
                    arguments=arguments,
                    status=PENDING,
                    raw=call.arguments if arguments is None else None,
                )
            )
        return made

    def run(self, messages: list[Message]) -> Stop:
        """Go on from `messages` (the stored conversation, in order; changed in place) until a stop."""
        host = self.host
        while True:
            move = next_move(messages, self.spec)
            if move.kind == ASK:
                if not host.flush():
                    return Stop("gone")
                turn = sum(1 for m in messages if m.role == ASSISTANT) + 1
                request = Request(model=self.model, messages=[], tools=self._tools_param, key=f"{self.key}/turn-{turn}")
                # the budget holds for the whole body posted: the tool definitions count as the messages do
                sent, shortened = fit(messages, self.spec.budget_bytes, request.body())
                request = replace(request, messages=sent)
                try:
                    reply = self.provider.complete(request)
                except ProviderError as exc:
                    return Stop("failed", error=str(exc))
                changed = [m for m in shortened if not m.trimmed]
                for m in changed:
                    m.trimmed = True
                made = self.reply_messages(messages, reply)
                messages.extend(made)
                host.save(changed + made)
            elif move.kind == JUDGE:
                stop = self._judge(messages, move.message)
                if stop is not None:
                    return stop
            elif move.kind == RUN:
                m = move.message
                if not host.inline(m.tool) and not host.flush():
                    return Stop("gone")
                result = host.run_tool(m)
                self.finish(
                    m, tool_content(result.output) if result.ok else f"error: {result.error}", error=not result.ok
                )
                host.save([m])
            elif move.kind in (QUESTION, APPROVAL):
                move.message.asked = True
                if move.kind == QUESTION:
                    host.ask(move.message, move.text)
                else:
                    host.request_approval(move.message, move.text)
                host.save([move.message])
                return Stop("waiting") if host.flush() else Stop("gone")
            elif move.kind == REPAIR_MOVE:
                note = Message(seq=messages[-1].seq + 1, role=USER, content=move.text, kind=REPAIR)
                messages.append(note)
                host.save([note])
            elif move.kind == WAIT:
                return Stop("waiting") if host.flush() else Stop("gone")
            elif move.kind == FINISH:
                return Stop("done", output=move.output) if host.flush() else Stop("gone")
            else:  # FAIL
                return Stop("failed", error=move.text) if host.flush() else Stop("gone")

    @staticmethod
    def finish(m: Message, content: str, *, error: bool = False, decision: str | None = None) -> None:
        m.content, m.error, m.status = content, error, DONE
        if decision is not None:
            m.decision = decision

    def problem(self, m: Message) -> str | None:
        """Why a call cannot be made as written (the LLM is told, and may try again), or None."""
        if m.tool is None:
            offered = ", ".join(self.names) or "none"
            return f"there is no tool {m.name!r} in this step; the tools you may call are: {offered}"
        tool = self.tools[m.tool]
        shown = next((api for api, name in self.names.items() if name == m.tool), m.tool)
        if m.arguments is None:
            try:
                json.loads(m.raw or "")
            except ValueError as exc:
                why = str(exc)
            else:
                why = "not a JSON object"
            return (
                f"the arguments of {shown} are not valid JSON ({why}); its parameters: {parameters_of(tool)}. "
                "Call it again with a JSON object of those parameters."
            )
        if not isinstance(m.arguments, dict):
            return f"the arguments of {shown} must be a JSON object; its parameters: {parameters_of(tool)}"
        found = [
            f"{'.'.join(str(p) for p in e.absolute_path) or '(arguments)'}: {e.message}"
            for e in schema.errors(tool.params_schema, m.arguments, limit=10)
        ]
        if found:
            return (
                f"the arguments of {shown} do not fit its parameters: {'; '.join(found)}. Its parameters: "
                f"{parameters_of(tool)}."
            )
        return None

    def _judge(self, messages: list[Message], m: Message) -> Stop | None:
        if repeats(messages, m) >= REPEAT_LIMIT:
            shown = m.arguments if m.arguments is not None else m.raw
            return (
                Stop(
                    "failed",
                    error=f"stopped: the LLM made the same call {REPEAT_LIMIT} times "
                    f"({m.tool or m.name} with {_canonical(shown)})",
                )
                if self.host.flush()
                else Stop("gone")
            )
        problem = self.problem(m)
        if problem is not None:
            self.finish(m, f"error: {problem}", error=True, decision="invalid")
            self.host.save([m])
            return None
        ruling = self.host.judge(m)
        m.params = ruling.params if ruling.params is not None else m.arguments
        m.policy, m.source = ruling.policy, ruling.source
        if ruling.effect == "allow":
            m.status, m.decision = READY, "allow"
        elif ruling.effect == "deny":
            self.finish(
                m, f"error: {ruling.reason}. The call was not run; do not repeat it.", error=True, decision="deny"
            )
        else:
            m.status = REVIEW
            self.host.open_review(m, ruling)
        self.host.save([m])
        return None


def answered(messages: list[Message], text: str, kind: str = ANSWER) -> Message:
    """A person's answer to CONFIRM_DATA (or the note of an approval: kind APPROVED), as the next user message."""
    note = Message(seq=messages[-1].seq + 1 if messages else 0, role=USER, content=text, kind=kind)
    messages.append(note)
    return note


__all__ = [
    "ANSWER",
    "APPROVED",
    "AgentLoop",
    "Host",
    "Move",
    "Result",
    "Ruling",
    "Stop",
    "answered",
    "final_output",
    "markers",
    "next_move",
    "opening",
]
