"""The one thing the agent loop needs from an LLM: a chat completion with native tool calls.

services/agents/llm.py implements it over the OpenAI-compatible API (the `openai` client); tests pass fakes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from core.agent.conversation import ToolCall


@dataclass(frozen=True)
class Request:
    model: str
    messages: list[dict[str, Any]]  # chat completions messages
    tools: list[dict[str, Any]]  # chat completions `tools`
    key: str  # the same for a retry of this very turn (sent as Idempotency-Key)

    def body(self) -> dict[str, Any]:
        """The JSON body the provider posts: what the context budget is measured on (core.agent.conversation.fit)."""
        out: dict[str, Any] = {"model": self.model, "messages": self.messages}
        if self.tools:
            out["tools"] = self.tools
        return out


@dataclass(frozen=True)
class Reply:
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None  # a reasoning text some servers send beside the content


class ProviderError(Exception):
    """The LLM could not answer (not configured, unreachable, refused the request): the step fails with it."""


class Provider(Protocol):
    def complete(self, request: Request) -> Reply: ...
