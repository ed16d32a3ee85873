"""A workspace's own LLM provider, as an admin enters it: checks of the base URL, the model and the API key (pure;
no DNS, no sockets; the outbound rules are checked by services/agents/llm_provider.py).

Which provider an agent step uses: the workspace's (base URL, model and key together) when one is set, else the
server's COACH_LLM_* settings. The two are never mixed: the server's key is never sent to a workspace's URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MAX_URL = 2000
MAX_MODEL = 200
MAX_KEY = 4000

# what starting a workflow with an agent step, or a step that finds no provider, tells people to do
WHERE = "set an LLM provider in Settings → LLM provider"


@dataclass(frozen=True)
class ProviderSettings:
    base_url: str
    model: str


def _control(text: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in text)


def check_base_url(value: Any) -> tuple[str, list[str]]:
    """The base URL normalised (no trailing slash), or the problems with it."""
    if not isinstance(value, str) or not value.strip():
        return "", ["is required: the OpenAI-compatible API's base URL, e.g. https://api.openai.com/v1"]
    url = value.strip()
    if len(url) > MAX_URL:
        return "", [f"is longer than {MAX_URL} characters"]
    if _control(url) or " " in url:
        return "", ["must not contain spaces or control characters"]
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return "", [f"is not a URL: {exc}"]
    problems = []
    if parts.scheme.lower() not in ("http", "https"):
        problems.append("must start with http:// or https://")
    if not parts.hostname:
        problems.append("has no host")
    if parts.username or parts.password:
        problems.append("must not carry a user name or password (put the key in API key)")
    if parts.query or parts.fragment:
        problems.append("must not have a query (?…) or fragment (#…)")
    if port == 0:
        problems.append("has port 0")
    return (url.rstrip("/"), problems) if not problems else ("", problems)


def check_model(value: Any) -> tuple[str, list[str]]:
    if not isinstance(value, str) or not value.strip():
        return "", ["is required: the model's name on that server, e.g. gpt-4o-mini or llama3.1"]
    model = value.strip()
    if len(model) > MAX_MODEL:
        return "", [f"is longer than {MAX_MODEL} characters"]
    if _control(model):
        return "", ["must not contain control characters"]
    return model, []


def check(body: dict[str, Any]) -> tuple[ProviderSettings | None, str | None, dict[str, list[str]]]:
    """(settings, the new API key or None to keep the stored one ('' removes it), problems by field)."""
    errors: dict[str, list[str]] = {}
    base_url, problems = check_base_url(body.get("base_url"))
    if problems:
        errors["base_url"] = problems
    model, problems = check_model(body.get("model"))
    if problems:
        errors["model"] = problems
    key = body.get("api_key")
    if key is not None:
        if not isinstance(key, str):
            errors["api_key"] = ["must be a string"]
        elif len(key) > MAX_KEY:
            errors["api_key"] = [f"is longer than {MAX_KEY} characters"]
        elif _control(key.strip()) or " " in key.strip():
            errors["api_key"] = ["must not contain spaces or control characters"]
        else:
            key = key.strip() or None  # an empty field keeps the stored key
    if body.get("clear_api_key"):
        if key:
            errors.setdefault("api_key", []).append("give a new key or clear_api_key, not both")
        key = ""
    if errors:
        return None, None, errors
    return ProviderSettings(base_url, model), key, {}
