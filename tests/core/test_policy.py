"""The policy engine without a server: precedence, scopes, globs, helpers, the SQL classifier, fail closed."""

from __future__ import annotations

import dataclasses
import time

import pytest

from core import budget
from core.errors import ValidationFailed
from core.policy import Call, RuleSet, compile_rule
from core.policy.helpers import compile_glob, path_outside
from core.policy.sql import classify, is_read


def rule(rule_id: str, effect: str = "require_review", order: int = 0, scope: dict | None = None, **match):
    return compile_rule(
        {
            "name": rule_id,
            "order": order,
            "effect": effect,
            "reason": f"because {rule_id}",
            "scope": scope or {},
            "match": match,
        },
        rule_id=rule_id,
    )


def verdict(rules, call: Call, defaults=None):
    return RuleSet(rules, defaults).evaluate(call)


SQL = Call(tool="sql.query", params={"query": "DELETE FROM t"}, risk="write", workflow_id="wf", user="ann")


# -- precedence -----------------------------------------------------------------------------------------------


def test_most_specific_scope_wins_over_order():
    rules = [
        rule("ws", "deny", order=1),
        rule("wf", "require_review", order=50, scope={"workflow_id": "wf"}),
        rule("user", "allow", order=99, scope={"user": "ann"}),
    ]
    v = verdict(rules, SQL)
    assert (v.effect, v.rule.id, v.default) == ("allow", "user", False)
    lost = {m["id"]: m["lost_because"] for m in v.to_dict()["matched"]}
    assert lost == {"wf": "less specific scope", "ws": "less specific scope"}


def test_user_within_workflow_is_more_specific_than_user_alone():
    rules = [
        rule("user", "deny", scope={"user": "ann"}),
        rule("both", "allow", order=5, scope={"user": "ann", "workflow_id": "wf"}),
    ]
    assert verdict(rules, SQL).rule.id == "both"
    assert verdict(rules, Call(tool="sql.query", risk="write", workflow_id="other", user="ann")).rule.id == "user"


def test_within_a_scope_the_lowest_order_wins_then_the_oldest():
    v = verdict([rule("b", "deny", order=10), rule("a", "allow", order=2), rule("c", "require_review", order=2)], SQL)
    assert v.rule.id == "a"
    assert [(m["id"], m["lost_because"]) for m in v.to_dict()["matched"]] == [
        ("c", "same scope and order, created later"),
        ("b", "later order"),
    ]


def test_a_scoped_rule_does_not_apply_outside_its_scope():
    rules = [rule("wf", "deny", scope={"workflow_id": "elsewhere"}), rule("u", "deny", scope={"user": "bob"})]
    v = verdict(rules, SQL)
    assert v.default and v.effect == "allow"  # write tools: allow by default


def test_the_default_depends_on_the_risk_and_a_lead_may_change_it():
    assert verdict([], Call(tool="x", risk="destructive")).effect == "require_review"
    assert verdict([], Call(tool="x", risk="read")).effect == "allow"
    assert verdict([], Call(tool="x", risk=None)).effect == "require_review"  # unknown tool: as destructive
    changed = {"write": "deny"}
    assert verdict([], Call(tool="x", risk="write"), changed).effect == "deny"
    d = verdict([], Call(tool="x", risk="write"), changed).to_dict()
    assert d["default"] is True and d["rule"]["id"] is None and d["matched"] == []


# -- match keys -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "tool", "matches"),
    [
        ("sql.*", "sql.query", True),
        ("sql.*", "sqlx.query", False),
        ("sql.*", "sql.", True),
        ("*.query", "sql.query", True),
        ("sql.quer?", "sql.query", True),
        ("sql.quer?", "sql.queries", False),
        ("file.[rw]*", "file.read", True),
        ("file.[!r]*", "file.read", False),
        ("file.[!r]*", "file.write", True),
        ("echo", "echo", True),
        ("echo", "echoes", False),
        ("mcp_*.*", "mcp_git.log", True),
        ("*", "anything", True),
    ],
)
def test_tool_globs(glob, tool, matches):
    assert (
        verdict([rule("g", "deny", tool=glob)], Call(tool=tool, risk="read")).rule is not None
        if matches
        else verdict([rule("g", "deny", tool=glob)], Call(tool=tool, risk="read")).default
    )


@pytest.mark.parametrize("bad", ["sql.[query", "sql query", "", "sql.]x", "a;b", "x" * 201])
def test_a_bad_glob_is_refused(bad):
    with pytest.raises(ValidationFailed) as err:
        rule("g", tool=bad)
    assert "match.tool" in err.value.details
    with pytest.raises(ValueError):
        compile_glob(bad)


def test_cheap_keys_step_type_risk_workflow_user_agent_step():
    r = rule(
        "r",
        "deny",
        step_type=["agent", "action"],
        risk=["write"],
        workflow_id="wf",
        user=["ann", "bob"],
        agent_step="analyse",
    )
    base = dict(tool="sql.query", risk="write", workflow_id="wf", user="ann", step_type="agent", agent_step="analyse")
    assert verdict([r], Call(**base)).effect == "deny"
    for change in (
        {"step_type": "approval"},
        {"risk": "read"},
        {"workflow_id": "x"},
        {"user": "eve"},
        {"agent_step": "other"},
        {"agent_step": None},
    ):
        assert verdict([r], Call(**{**base, **change})).default, change
    anyone = rule("any", "deny", agent_step="*")
    assert verdict([anyone], Call(**base)).effect == "deny"
    assert verdict([anyone], Call(**{**base, "agent_step": None})).default


def test_param_predicates_see_params_and_the_call():
    r = rule("big", "deny", params="params.amount > 1000 and tool.startswith('pay.') and user == 'ann'")
    assert verdict([r], Call(tool="pay.send", params={"amount": 5000}, risk="external", user="ann")).effect == "deny"
    assert verdict([r], Call(tool="pay.send", params={"amount": 5}, risk="external", user="ann")).default
    with pytest.raises(ValidationFailed) as err:
        rule("bad", params="params.amount >")
    assert "match.params" in err.value.details
    with pytest.raises(ValidationFailed) as err:
        rule("bad", params="__import__('os')")
    assert "match.params" in err.value.details


def test_host_not_in():
    r = rule("hosts", "deny", host_not_in=["api.example.com", "*.corp"])

    def effect(url):
        return verdict([r], Call(tool="http.request", params={"url": url}, risk="external")).effect

    assert effect("https://api.example.com/x") == "allow"  # external: allow by default
    assert effect("https://git.corp/x") == "allow"
    assert effect("https://API.Example.COM./x") == "allow"
    assert effect("https://evil.com/?api.example.com") == "deny"
    assert effect("https://api.example.com.evil.com/") == "deny"
    assert effect("https://api.example.com@evil.com/") == "deny"
    assert effect("https://corp/") == "deny"  # *.corp is names under corp
    assert effect("not a url") == "deny"  # no host: not in the list (fail closed)
    assert verdict([r], Call(tool="http.request", params={}, risk="external")).default  # no url: no match


@pytest.mark.parametrize(
    ("path", "outside"),
    [
        ("summaries/a.json", False),
        ("summaries/x/../b.json", False),
        ("./summaries//c.json", False),
        ("summaries", False),
        ("summaries-evil/a", True),
        ("summaries/../secrets.txt", True),
        ("../summaries/a", True),
        ("/summaries/a", True),
        ("/etc/passwd", True),
        ("~/x", True),
        ("summaries\\..\\..\\x", True),
        ("C:/x", True),
        ("notes.txt", True),
        ("summaries/\x00", True),
        (7, True),
    ],
)
def test_path_outside(path, outside):
    assert path_outside(path, "summaries") is outside
    r = rule("p", "deny", path_outside="summaries/")
    v = verdict([r], Call(tool="file.write", params={"path": path}, risk="write"))
    assert (v.effect == "deny") is outside


# -- the SQL classifier ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
        "SELECT 1; DROP TABLE t",
        "/* x */ dElEtE from t",
        "INSERT INTO a SELECT * FROM b",
        "COPY t TO '/tmp/out.csv'",
        "COPY t FROM '/tmp/in.csv'",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA table_info(t)",
        "ATTACH DATABASE 'other.db' AS other",
        "CREATE TEMP TABLE x AS SELECT 1",
        "SELECT * INTO new_t FROM t",
        "EXPLAIN ANALYZE DELETE FROM t",
        "EXPLAIN (ANALYZE, FORMAT JSON) UPDATE t SET a = 1",
        "SELECT * FROM t FOR UPDATE",
        "SELECT * FROM t FOR SHARE",
        "SELEC * FRM t",
        "",
        "   ;  ",
        "SET search_path = evil",
        "BEGIN",
        "UPDATE t SET a = 1",
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE",
        "TRUNCATE t",
        "CALL do_things()",
        "SELECT nextval('seq')",
        "select 1; select 2; delete from t",
        "SELECT " + "1 + " * 50_000 + "1",
    ],
)
def test_sql_that_is_not_a_read(sql):
    assert not is_read(sql), sql
    assert classify(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM t",
        "select * from t -- ; drop table t",
        "SELECT 1 /* ; DELETE FROM t */",
        "select * from t where a = 'x; drop table t'",
        "WITH x AS (SELECT 1 AS a) SELECT a FROM x",
        "SELECT a FROM t UNION ALL SELECT b FROM u",
        "SELECT count(*) FROM t WHERE a IN (SELECT b FROM u)",
        "EXPLAIN SELECT * FROM t",
        "VALUES (1), (2)",
        "select 1; select 2;",
    ],
)
def test_sql_that_is_a_read(sql):
    assert is_read(sql), classify(sql)


def test_the_sql_helper_reads_the_query_param():
    r = rule("w", "require_review", tool="sql.*", sql="not_read")

    def v(params):
        return verdict([r], Call(tool="sql.query", params=params, risk="read"))

    assert v({"query": "SELECT 1"}).default
    assert v({"query": "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d"}).effect == "require_review"
    assert v({"query": 42}).effect == "require_review"  # not text: not a read
    assert v({}).default  # no query: the helper does not apply


# -- failing closed and the budget ----------------------------------------------------------------------------


def test_an_error_in_a_predicate_is_a_fail_closed_require_review_with_the_reason():
    rules = [rule("allow-small", "allow", order=1, params="params.amount < 10"), rule("later", "deny", order=9)]
    v = verdict(rules, Call(tool="pay", params={"note": "no amount"}, risk="external"))
    assert (v.effect, v.rule.id) == ("require_review", "allow-small")
    d = v.to_dict()
    assert "amount" in d["rule"]["error"]
    assert [(m["id"], m["effect"]) for m in d["matched"]] == [("later", "deny")]
    # a losing rule that fails shows its error too
    v = verdict(
        list(reversed([rule("bad", "allow", order=5, params="1 / 0 > 1"), rule("first", "deny", order=1)])),
        Call(tool="t", risk="read"),
    )
    (lost,) = v.to_dict()["matched"]
    assert v.effect == "deny" and (lost["id"], lost["effect"]) == ("bad", "require_review") and lost["error"]


def test_a_predicate_that_runs_too_long_is_require_review_not_a_hang():
    slow = "(range(100000) | map('string') | join | length) + (range(100000) | map('string') | join | length) > 0"
    rules = [rule(f"slow{i}", "allow", order=i, params=slow) for i in range(50)]
    started = time.thread_time()  # the budget meters this thread's CPU time, which load does not inflate
    v = verdict(rules, Call(tool="t", risk="read"))
    took = time.thread_time() - started
    assert v.effect == "require_review" and "budget" in v.to_dict()["rule"]["error"]
    # one budget for the whole evaluation: 50 slow predicates cost about one budget, not 50
    assert took < 50 * budget.limits().time_s, took


def test_a_path_that_is_not_text_is_outside():
    r = rule("p", "deny", path_outside="summaries/")
    assert verdict([r], Call(tool="file.write", params={"path": ["summaries", "a"]}, risk="write")).effect == "deny"


def test_a_helper_that_raises_is_fail_closed():
    def raises(_params):
        raise RuntimeError("helper broke")

    broken = dataclasses.replace(rule("h", "allow"), checks=(("host_not_in", raises),))
    v = verdict([broken], Call(tool="t", risk="read"))
    assert (v.effect, v.rule.id) == ("require_review", "h")
    assert "helper broke" in v.to_dict()["rule"]["error"]


def test_unknown_match_keys_and_scope_keys_name_the_field():
    with pytest.raises(ValidationFailed) as err:
        compile_rule({"name": "x", "effect": "deny", "match": {"colour": 1}, "scope": {"team": "a"}})
    assert {"match.colour", "scope.team"} <= set(err.value.details)
    with pytest.raises(ValidationFailed) as err:
        compile_rule({"name": "x", "effect": "maybe", "order": "1", "match": {"risk": "scary"}})
    assert {"effect", "order", "match.risk"} <= set(err.value.details)


def test_candidates_are_indexed_per_tool_in_precedence_order():
    rules = [rule(f"r{i}", "deny", order=i, tool=f"tool{i}.*") for i in range(200)] + [rule("all", "allow", order=500)]
    rs = RuleSet(rules)
    assert [r.id for r in rs.candidates("tool7.x")] == ["r7", "all"]
    assert [r.id for r in rs.candidates("other")] == ["all"]


def test_a_confirm_rule_asks_an_agents_call_and_gives_a_workflows_call_its_fallback():
    asking = compile_rule({"name": "ask", "effect": "confirm", "match": {"tool": "shop.*"}}, rule_id="ask")
    assert asking.fallback == "require_review"  # the default
    rules = RuleSet([asking])
    by_agent = rules.evaluate(Call("shop.add", agent="bot"))
    assert (by_agent.effect, by_agent.fallback) == ("confirm", "require_review")
    assert by_agent.to_dict()["fallback"] == "require_review"
    by_workflow = rules.evaluate(Call("shop.add"))
    assert by_workflow.effect == "require_review" and by_workflow.fallback is None
    assert "fallback applies" in by_workflow.to_dict()["rule"]["note"]
    denying = compile_rule(
        {"name": "ask or deny", "effect": "confirm", "fallback": "deny", "match": {"tool": "shop.*"}}, rule_id="d"
    )
    assert RuleSet([denying]).evaluate(Call("shop.add")).effect == "deny"
    # precedence is the rules' as ever: a more specific deny wins over a confirm
    deny = rule("no", effect="deny", tool="shop.add")
    assert RuleSet([asking, dataclasses.replace(deny, order=-1)]).evaluate(Call("shop.add", agent="b")).effect == "deny"


@pytest.mark.parametrize(
    "data",
    [
        {"effect": "confirm", "fallback": "allow"},
        {"effect": "confirm", "fallback": ""},
        {"effect": "require_review", "fallback": "deny"},
    ],
)
def test_a_bad_fallback_is_refused_naming_it(data):
    with pytest.raises(ValidationFailed) as refused:
        compile_rule({"name": "x", **data})
    assert "fallback" in refused.value.details
