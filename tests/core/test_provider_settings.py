"""The checks of a workspace's LLM provider as an admin enters it (core/agent/provider_settings.py)."""

from __future__ import annotations

from core.agent.provider_settings import check


def test_a_good_provider_is_normalised_and_an_empty_key_keeps_the_stored_one():
    settings, key, errors = check(
        {"base_url": " https://api.openai.com/v1/ ", "model": " gpt-4o-mini ", "api_key": "  "}
    )
    assert errors == {}
    assert (settings.base_url, settings.model, key) == ("https://api.openai.com/v1", "gpt-4o-mini", None)
    assert check({"base_url": "http://127.0.0.1:11434/v1", "model": "m", "api_key": "sk-1"})[1] == "sk-1"
    assert check({"base_url": "http://h/v1", "model": "m", "clear_api_key": True})[1] == ""


def test_each_problem_is_named_by_its_field():
    _, _, errors = check({"base_url": "file:///etc/passwd", "model": "", "api_key": 5})
    assert set(errors) == {"base_url", "model", "api_key"}
    assert check({"base_url": "http://h:99999/v1", "model": "m"})[2]["base_url"][0].startswith("is not a URL")
    assert check({"base_url": "http://h/v1#x", "model": "m"})[2]["base_url"]
    assert check({"base_url": "http://h/v1", "model": "a\nb"})[2]["model"]
    assert check({"base_url": "http://h/v1", "model": "m", "api_key": "k", "clear_api_key": True})[2]["api_key"]
