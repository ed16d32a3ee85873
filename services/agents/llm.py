"""The LLM provider of agent steps: the OpenAI-compatible chat completions API with native tool calls, through the
official `openai` client, so that OpenAI, vLLM, Ollama and llama.cpp's server all work (COACH_LLM_BASE_URL).

Retries are the client's: a request answered 408, 409, 429 or 5xx, or not answered, is sent again (at most
COACH_LLM_MAX_RETRIES times) after an exponential backoff with jitter, or after the server's Retry-After when it sends
one (up to a minute). Every request carries an Idempotency-Key that is the same for a retry of the same turn, also
one made by a restarted server.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING

from config import Settings
from core.agent.conversation import ToolCall
from core.agent.provider import ProviderError, Reply, Request
from core.agent.provider_settings import WHERE
from core.tools import ToolError

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

SETUP = (
    f"{WHERE} (an admin of the workspace can), or on the server set COACH_LLM_BASE_URL to an "
    "OpenAI-compatible server (e.g. http://127.0.0.1:11434/v1 for Ollama, https://api.openai.com/v1 for "
    "OpenAI), COACH_LLM_MODEL (or the step's `model`), and COACH_LLM_API_KEY if the server asks for one"
)


class OpenAIProvider:
    """One `openai.OpenAI` client per provider (it pools connections), made on first use: the server's
    (COACH_LLM_*), or a workspace's (`base_url`, `api_key`, and `transport`: an httpx transport that holds every
    request to the workspace's outbound rules, services/agents/llm_provider.py)."""

    def __init__(
        self,
        settings: Settings,
        base_url: str | None = None,
        api_key: str | None = None,
        transport=None,
        max_retries: int | None = None,
        timeout_s: float | None = None,
    ):
        self.settings = settings
        self.base_url = (settings.llm_base_url if base_url is None else base_url).rstrip("/")
        self.api_key = settings.llm_api_key if api_key is None else api_key
        self.transport = transport
        self.max_retries = max(0, settings.llm_max_retries if max_retries is None else max_retries)
        self.timeout_s = settings.llm_timeout_s if timeout_s is None else timeout_s
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()

    @property
    def configured(self) -> bool:
        return bool(self.base_url)

    def client(self) -> openai.OpenAI:
        import openai  # here, not at the top: a second or more of imports that only agent steps need

        with self._lock:
            if self._client is None:
                http_client = None
                if self.transport is not None:
                    import httpx

                    http_client = httpx.Client(
                        transport=self.transport, timeout=self.timeout_s, trust_env=False, follow_redirects=False
                    )
                self._client = openai.OpenAI(
                    base_url=self.base_url,
                    api_key=self.api_key or "not-needed",
                    timeout=self.timeout_s,
                    max_retries=self.max_retries,
                    # openai takes an httpx.Client as well as an httpx2 one (is_legacy_httpx_sync_client), though
                    # its annotation names only httpx2's
                    http_client=http_client,  # type: ignore[arg-type]
                )
            return self._client

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def complete(self, request: Request) -> Reply:
        if not self.configured:
            raise ProviderError(f"no LLM provider is configured: {SETUP}")
        import openai

        try:  # the body as Request.body() says, which the context budget was measured on
            answer = self.client().chat.completions.create(
                **request.body(), extra_headers={"Idempotency-Key": request.key}
            )
        except ToolError as exc:  # a workspace's provider: its outbound rules refused the host (services.tools.http)
            raise ProviderError(f"the LLM server at {self.base_url} was not asked: {exc}") from None
        except openai.APITimeoutError:
            raise ProviderError(
                f"the LLM server at {self.base_url} did not answer within "
                f"{self.timeout_s:g}s (COACH_LLM_TIMEOUT_S), "
                f"{self.max_retries} retries included"
            ) from None
        except openai.APIConnectionError as exc:
            raise ProviderError(
                f"the LLM server at {self.base_url} could not be reached "
                f"({self.max_retries} retries): {exc.__cause__ or exc}"
            ) from None
        except openai.APIStatusError as exc:
            raise ProviderError(f"the LLM server at {self.base_url} answered {exc.status_code}: {_said(exc)}") from None
        except openai.OpenAIError as exc:
            raise ProviderError(f"the LLM request failed: {type(exc).__name__}: {exc}") from None
        if not answer.choices:
            raise ProviderError(f"the LLM server at {self.base_url} answered with no choice")
        message = answer.choices[0].message
        calls = []
        for i, call in enumerate(message.tool_calls or (), start=1):
            function = getattr(call, "function", None)
            if function is None:  # a custom (non-function) tool call: none are offered
                continue
            arguments = function.arguments
            if arguments is not None and not isinstance(arguments, str):  # a server that sends an object
                arguments = json.dumps(arguments)
            calls.append(ToolCall(id=call.id or f"call_{i}", name=function.name or "", arguments=arguments or ""))
        extra = message.model_extra or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        return Reply(
            content=message.content,
            tool_calls=tuple(calls),
            reasoning=reasoning if isinstance(reasoning, str) else None,
        )


def _said(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:500]
        return str(error)[:500]
    return (exc.message or "")[:500]
