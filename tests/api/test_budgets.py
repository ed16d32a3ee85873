"""Runaway user-written code fails its step with the reason, through the API (issue #11, items 1 and 10):
no execution is left pending, no decision answers 500, and no schema makes the server fetch anything."""

from __future__ import annotations

import time

import pytest

from tests.api.test_coaching_decisions import _coach, _decide, _step

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

NESTED_LOOPS = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
RECURSIVE = "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}"


@pytest.mark.parametrize(
    "template,reason",
    [
        (NESTED_LOOPS, "time budget"),
        ("{{ 10 ** 4000000 }}", "a power"),
        ("{{ lipsum(20000) }}", "lipsum"),
        (RECURSIVE, "recursion too deep|time budget"),  # whichever it runs into first on this machine
    ],
)
def test_a_runaway_param_fails_its_step_with_the_reason(api, template, reason):
    started = time.process_time()  # CPU time of this process (the app and its runner run in it), not wall time
    ex = api.run(
        [{"id": "bomb", "tool": "echo", "params": {"message": template}}, {"id": "after", "tool": "echo", "params": {}}]
    )
    assert time.process_time() - started < 5
    assert ex["status"] == "failed"
    bomb = _step(ex, "bomb")
    assert bomb["status"] == "failed" and "params.message" in bomb["error"]
    assert any(words in bomb["error"] for words in reason.split("|")), bomb["error"]
    assert _step(ex, "after")["status"] == "pending"


def test_a_runaway_when_condition_fails_its_step(api):
    ex = api.run([{"id": "a", "tool": "echo", "params": {}, "when": "(10 ** 4000000) > 1"}])
    assert ex["status"] == "failed" and "a power" in _step(ex, "a")["error"]


def test_accepting_the_step_before_a_recursive_template_answers_and_fails_that_step(api):
    steps = [
        {"id": "a", "tool": "echo", "params": {"msg": "hi"}},
        {"id": "b", "tool": "echo", "params": {"msg": RECURSIVE}},
    ]
    _wf, ex_id, first = _coach(api, steps)
    _decide(api, ex_id, first["suggestion_id"], "accept")  # 200, not 500
    ex = api.settle(ex_id)
    assert ex["status"] == "failed"
    assert _step(ex, "a")["status"] == "succeeded"
    assert _step(ex, "b")["status"] == "failed"
    assert "recursion too deep" in _step(ex, "b")["error"] or "time budget" in _step(ex, "b")["error"]
    assert api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"] is None


def test_a_backtracking_pattern_on_an_operators_value_is_answered_at_once(api):
    wf = api.workflow(
        [
            {
                "id": "ask",
                "type": "validation",
                "target": "vars.code",
                "schema": {"type": "string", "pattern": "^(a|a)*$"},
            },
        ],
        variables={"code": {"type": "string"}},
    )
    started = time.process_time()  # CPU time: backtracking on 41 characters would take about 2**40 steps
    ex = api.settle(api.start(wf["id"], {"code": "a" * 40 + "b"})["execution_id"])
    assert time.process_time() - started < 2
    assert ex["status"] == "failed" and "does not match" in _step(ex, "ask")["error"]
    ok = api.settle(api.start(wf["id"], {"code": "a" * 40})["execution_id"])
    assert ok["status"] == "completed"


@pytest.mark.parametrize(
    "schema,words",
    [
        ({"$ref": "http://127.0.0.1:9/schema.json"}, "outside the schema"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
        ({"type": "string", "pattern": "(a)\\1"}, "RE2"),
    ],
)
def test_a_schema_that_would_fetch_refer_nowhere_or_backtrack_is_refused_when_saved(api, schema, words):
    code, body = api.call(
        "POST",
        "/api/workflows",
        {
            "name": "s",
            "steps": [
                {"id": "a", "tool": "echo", "params": {}},
                {"id": "check", "type": "validation", "target": "steps.a.output", "schema": schema},
            ],
        },
    )
    assert code == 422, body
    assert any(words in m for m in body["error"]["details"]["steps[1].schema"])
