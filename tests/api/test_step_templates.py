"""Editing a step that has not run judges templates as templates (issue 31, item 2), on SQLite and PostgreSQL: the
demo's HTTP step saves with only Retries changed, and a template that renders to something the tool refuses fails
the step when it is about to run, naming the param and the template it was written as."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEPS = [
    {"id": "first", "tool": "echo", "params": {"v": 1}},
    {"id": "ping", "tool": "http.request", "params": {"url": "{{ vars.base_url }}/healthz"}},
]


def _waiting(api, ex_id: str, step_id: str) -> dict:
    api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug is not None and sug["step_id"] == step_id, sug
    return sug


def test_a_pending_steps_template_is_saved_and_judged_once_rendered(api):
    wf_id = api.workflow(STEPS, variables={"base_url": {"type": "string", "default": "https://example.com"}})["id"]
    ex_id = api.ok(
        "POST",
        "/api/executions/coaching",
        {"workflow_id": wf_id, "variables": {"base_url": "ftp://example.com"}},
        status=201,
    )["execution_id"]
    first = _waiting(api, ex_id, "first")

    # what the step edit dialog sends when only Retries changed: the params as written, templates and all
    edited = api.ok(
        "POST",
        f"/api/executions/{ex_id}/apply-correction",
        {
            "step_id": "ping",
            "correction": {"updated_step": {"params": {"url": "{{ vars.base_url }}/healthz"}, "retries": 3}},
        },
    )
    assert edited["execution_id"] == ex_id
    # a literal that breaks the tool's schema is still refused at once, naming the field
    status, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/apply-correction",
        {"step_id": "ping", "correction": {"updated_step": {"params": {"url": "ftp://literal"}}}},
    )
    assert status == 422 and "correction.updated_step.params.url" in body["error"]["details"], body

    api.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": first["suggestion_id"], "decision": "accept"},
    )
    ping = _waiting(api, ex_id, "ping")
    assert ping["params"] == {"url": "ftp://example.com/healthz"}  # rendered for the person deciding
    api.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": ping["suggestion_id"], "decision": "accept"},
    )
    ex = api.settle(ex_id)
    step = next(s for s in ex["steps"] if s["step_id"] == "ping")
    assert ex["status"] == "failed" and step["status"] == "failed"
    assert (
        "url (written as the template '{{ vars.base_url }}/healthz', rendered when the step was about to run)"
        in step["error"]
    ), step["error"]
