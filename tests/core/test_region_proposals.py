"""Proposed regions learned from decisions and the counterfactual replay of a condition or a policy rule
(core/regions; docs/autonomy.md "Proposals and replay")."""

from __future__ import annotations

import random

import pytest

from core import budget, templating
from core.errors import ValidationFailed
from core.policy import Call, RuleSet, compile_rule
from core.regions import proposals as P
from core.regions import replay as R


def _refunds(n: int, seed: int = 7, cut: int = 200) -> list[tuple[dict, bool]]:
    """Refund calls accepted 98% of the time at amount <= cut and 60% above, newest first."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        amount = rng.randint(1, 2 * cut)
        rows.append(
            (
                {"amount": amount, "currency": rng.choice(["GBP", "EUR"])},
                rng.random() < (0.98 if amount <= cut else 0.60),
            )
        )
    return rows


def _holding(when: str, rows) -> int:
    return sum(1 for params, _a in rows if templating.evaluate_condition(when, {"params": params}))


def test_a_history_accepted_98_percent_below_200_and_60_above_yields_a_threshold_near_200():
    rows = _refunds(600)
    found = P.propose(rows, subject="refunds")
    auto = [p for p in found if p.suggested_mode == "auto" and p.params == ("amount",)]
    assert auto, found
    best = auto[0]
    threshold = float(best.when.rsplit("<=", 1)[1])
    assert best.when.startswith("params.amount <= ") and 185 <= threshold <= 215, best
    assert best.lower_bound >= 0.85 and best.acceptance > 0.95
    assert best.explanation == f"refunds with amount ≤ {int(threshold)}: {best.accepted} of {best.decisions} accepted"
    # the figures are what the predicate, evaluated by the sandbox, holds for
    assert _holding(best.when, rows) == best.decisions
    low = [p for p in found if p.suggested_mode == "always_review" and p.params == ("amount",)]
    assert low and low[0].when.startswith("params.amount > ") and low[0].upper_bound < 0.85
    assert found.index(best) < found.index(low[0])  # auto candidates first


def test_a_categorical_param_gives_an_equality_and_its_complement():
    rng = random.Random(3)
    rows = []
    for _ in range(300):
        currency = rng.choice(["GBP", "EUR", "USD", "JPY"])
        rows.append(({"currency": currency}, rng.random() < (0.995 if currency == "GBP" else 0.4)))
    found = {p.when: p for p in P.propose(rows)}
    assert found["params.currency == 'GBP'"].suggested_mode == "auto"
    assert found["params.currency != 'GBP'"].suggested_mode == "always_review"
    assert _holding("params.currency == 'GBP'", rows) == found["params.currency == 'GBP'"].decisions


def test_two_accepted_categories_give_an_in_list():
    rng = random.Random(5)
    rows = [
        ({"method": m}, rng.random() < (0.995 if m in ("GET", "HEAD") else 0.3))
        for m in (rng.choice(["GET", "HEAD", "POST", "DELETE"]) for _ in range(400))
    ]
    whens = [p.when for p in P.propose(rows)]
    assert any(w in ("params.method in ['GET', 'HEAD']", "params.method in ['HEAD', 'GET']") for w in whens), whens


def test_a_path_prefix_is_proposed_over_the_list_of_paths_it_covers():
    rng = random.Random(11)
    paths = ["summaries/a.txt", "summaries/2026/b.md", "etc/passwd", "tmp/x"]
    rows = [
        ({"path": p}, rng.random() < (0.995 if p.startswith("summaries/") else 0.3))
        for p in (rng.choice(paths) for _ in range(300))
    ]
    found = {p.when: p for p in P.propose(rows, subject="file writes")}
    prefix = found["params.path.startswith('summaries/')"]
    assert prefix.suggested_mode == "auto"
    assert prefix.explanation.startswith("file writes with path starting with 'summaries/': ")
    assert found["not params.path.startswith('summaries/')"].suggested_mode == "always_review"


def test_a_conjunction_of_two_params_when_neither_alone_separates():
    rng = random.Random(13)
    rows = []
    for _ in range(800):
        amount, currency = rng.randint(1, 400), rng.choice(["GBP", "EUR"])
        good = currency == "GBP" and amount <= 200
        rows.append(({"amount": amount, "currency": currency}, rng.random() < (0.995 if good else 0.5)))
    conjunctions = [p for p in P.propose(rows) if len(p.params) == 2 and p.suggested_mode == "auto"]
    assert conjunctions, P.propose(rows)
    when = conjunctions[0].when
    assert "params.currency == 'GBP'" in when and "params.amount <= " in when and " and " in when
    assert _holding(when, rows) == conjunctions[0].decisions


def test_a_param_missing_from_some_calls_is_guarded_so_the_condition_never_fails():
    rows = [({"amount": i} if i % 3 else {}, i <= 100) for i in range(1, 301)]
    found = P.propose(rows)
    assert found
    for p in found:
        assert "is number" in p.when or "is defined" in p.when or "is string" in p.when, p.when
        assert _holding(p.when, rows) == p.decisions  # no UndefinedError on the calls without it


def test_nothing_is_proposed_under_the_minimum_count_of_decisions():
    rows = [({"amount": a}, a <= 50) for a in range(1, 101)]
    assert P.propose(rows[: P.MIN_DECISIONS - 1]) == []
    assert P.MIN_DECISIONS == 30


def test_uniform_acceptance_gives_no_proposal():
    rng = random.Random(2)
    rows = [
        ({"amount": rng.randint(1, 400), "currency": rng.choice(["GBP", "EUR"])}, rng.random() < 0.8)
        for _ in range(500)
    ]
    assert P.propose(rows) == []


def test_only_the_latest_decisions_are_considered():
    # the newest 1,000 are accepted below 200, the 4,000 older ones only below 50: the older ones are not read
    newest = [({"amount": a}, a <= 200 or a % 3 == 0) for a in (1 + (i * 7) % 400 for i in range(P.MAX_DECISIONS))]
    older = [({"amount": a}, a <= 50) for a in (1 + (i * 7) % 400 for i in range(4000))]
    found = P.propose(newest + older)
    assert found and all(p.decisions <= P.MAX_DECISIONS for p in found)
    assert sum(p.decisions for p in found if p.suggested_mode == "auto") <= P.MAX_DECISIONS
    best = next(p for p in found if p.suggested_mode == "auto")
    assert 190 <= float(best.when.rsplit("<=", 1)[1]) <= 210, best


def test_thresholds_tried_are_capped_for_many_distinct_values():
    rows = [({"x": i / 7.0}, i < 600) for i in range(1000)]
    cuts = list(P._numeric(rows, "x"))
    assert len(cuts) <= P.MAX_CUTS + 1


@pytest.mark.parametrize(
    "accepted, n, low, high",
    [(212, 215, 0.9598, 0.9952), (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (28, 28, 0.8794, 1.0)],
)
def test_the_wilson_interval(accepted, n, low, high):
    got = P.wilson(accepted, n)
    assert got == pytest.approx((low, high), abs=1e-4)
    assert P.wilson(0, 0) == (0.0, 1.0)


# -- replay --------------------------------------------------------------------------------------------------------


def _past(amount: int, decision: str, mode: str = "coaching", risk: str = "read", gateway: bool = False) -> R.Past:
    return R.Past(
        Call("refund", {"amount": amount}, risk=risk),
        decision,
        mode,
        gateway=gateway,
        link={"suggestion_id": f"s{amount}", "path": f"/executions/e{amount}"},
    )


HISTORY = [
    _past(100, "accept"),
    _past(150, "correct"),
    _past(190, "reject"),
    _past(200, "skip"),
    _past(250, "accept"),
    _past(300, "reject"),
    _past(350, "manual"),
]


def test_a_condition_replay_counts_what_would_have_run_unattended_and_links_the_bad_ones():
    table = R.replay_condition("params.amount <= 200", HISTORY, RuleSet([]))
    assert table["calls"] == 7 and table["in_region"] == 4 and table["evidence"] is False
    assert table["unattended"] == {"calls": 4, "accepted": 1, "corrected": 1, "rejected": 1, "manual": 0, "skipped": 1}
    assert table["asked"] == {"calls": 3, "accepted": 1, "corrected": 0, "rejected": 1, "manual": 1, "skipped": 0}
    assert table["denied"]["calls"] == 0
    assert [(link["suggestion_id"], link["decision"]) for link in table["links"]] == [
        ("s150", "correct"),
        ("s190", "reject"),
    ]


def test_a_policy_requiring_review_or_denying_wins_over_the_region():
    big = {"name": "big", "effect": "require_review", "match": {"params": "params.amount > 180"}}
    rules = RuleSet(
        [
            compile_rule(big, rule_id="a" * 32),
            compile_rule(
                {"name": "no", "effect": "deny", "match": {"params": "params.amount == 100"}}, rule_id="b" * 32
            ),
        ]
    )
    table = R.replay_condition("params.amount <= 200", HISTORY, rules)
    assert (table["unattended"]["calls"], table["denied"]["calls"], table["asked"]["calls"]) == (1, 1, 5)
    # a destructive tool is reviewed by the workspace default: never unattended in a workflow's step
    destructive = [_past(100, "accept", risk="destructive")]
    assert R.replay_condition("true", destructive, RuleSet([]))["asked"]["calls"] == 1
    # a gateway call held by the default follows the region; one held by a rule does not
    held = [_past(amount, "accept", risk="destructive", gateway=True) for amount in (100, 190)]
    table = R.replay_condition("true", held, rules)
    assert (table["unattended"]["calls"], table["denied"]["calls"], table["asked"]["calls"]) == (0, 1, 1)
    assert R.replay_condition("true", held, RuleSet([]))["unattended"]["calls"] == 2


def test_a_gateway_confirm_rule_is_lifted_by_the_region_as_the_defaults_hold_is():
    ask = compile_rule({"name": "ask", "effect": "confirm", "match": {"tool": "refund"}}, rule_id="c" * 32)
    held = [
        R.Past(Call("refund", {"amount": amount}, risk="read", agent="bot"), "accept", gateway=True)
        for amount in (100, 300)
    ]
    table = R.replay_condition("params.amount <= 200", held, RuleSet([ask]))
    assert (table["unattended"]["calls"], table["asked"]["calls"]) == (1, 1)
    # a workflow's call has nobody at an agent to ask: the rule's fallback (require_review) keeps it asked
    workflow = [R.Past(Call("refund", {"amount": 100}, risk="read"), "accept")]
    assert R.replay_condition("true", workflow, RuleSet([ask]))["asked"]["calls"] == 1


def test_calls_outside_the_region_follow_the_scope_mode():
    past = [_past(100, "accept", mode="auto"), _past(300, "reject", mode="auto")]
    table = R.replay_condition("params.amount <= 200", past, RuleSet([]))
    assert table["unattended"]["calls"] == 2 and len(table["links"]) == 1


def test_a_condition_that_fails_on_a_call_does_not_hold_there():
    past = [R.Past(Call("refund", {}, risk="read"), "accept"), _past(10, "accept")]
    table = R.replay_condition("params.amount <= 200", past, RuleSet([]))
    assert table["in_region"] == 1 and table["condition_failed"]["calls"] == 1
    assert "amount" in table["condition_failed"]["first_error"]


def test_the_replay_is_bounded_by_its_limit():
    many = [_past(i, "accept") for i in range(3000)]
    assert R.replay_condition("params.amount < 10", many, RuleSet([]), limit=20)["calls"] == 20
    assert R.replay_condition("params.amount < 10", many, RuleSet([]), limit=10**6)["calls"] == R.MAX_CALLS


@pytest.mark.parametrize(
    "when, says",
    [
        ("", "non-empty"),
        ("params.amount <=", "does not compile"),
        ("secret > 1", "unknown name(s) secret"),
        (7, "non-empty"),
        ("x" * 2001, "at most 2000"),
    ],
)
def test_a_bad_condition_is_refused_naming_the_problem(when, says):
    with pytest.raises(ValidationFailed) as failure:
        R.replay_condition(when, HISTORY, RuleSet([]))
    assert says in failure.value.details["when"][0]


@pytest.mark.parametrize(
    "when", ["'a' * 10**7 == 'b'", "range(100000)" + "|map('string')|map('length')" * 6 + "|sum > 0"]
)
def test_a_condition_beyond_the_budget_is_refused_not_run_to_its_end(when):
    with pytest.raises(ValidationFailed) as failure:
        R.replay_condition(when, HISTORY, RuleSet([]))
    assert "exceeds the evaluation budget" in failure.value.details["when"][0]


def test_a_cheap_condition_that_adds_up_over_the_history_is_refused():
    before = budget.limits()
    try:
        budget.configure(time_s=60.0, max_ops=1_000_000)
        costly = "range(90000)|map('string')|list|length > 0"  # ~90,000 operations a call: under a call's budget
        with pytest.raises(ValidationFailed) as failure:
            R.replay_condition(costly, [_past(i, "accept") for i in range(200)], RuleSet([]))
        assert "replay's budget" in failure.value.details["when"][0]
    finally:
        budget.configure(time_s=before.time_s, max_ops=before.max_ops)


def test_a_rule_replay_counts_what_the_rule_changes():
    rule = compile_rule(
        {"name": "deny big", "effect": "deny", "match": {"params": "params.amount > 200"}}, rule_id=R.REPLAY_RULE_ID
    )
    table = R.replay_rule(rule, HISTORY, RuleSet([]))
    assert (table["matched"], table["changed"], table["denied"]["calls"]) == (3, 3, 3)
    assert table["effects"] == {"allow": 4, "require_review": 0, "deny": 3, "confirm": 0}
    assert table["denied"]["rejected"] == 1 and table["denied"]["manual"] == 1
    # a more specific stored rule still wins over the rule being written
    stored = compile_rule({"name": "ok", "effect": "allow", "scope": {"user": "ann@x"}, "match": {}}, rule_id="a" * 32)
    past = [R.Past(Call("refund", {"amount": 500}, risk="read", user="ann@x"), "accept")]
    assert R.replay_rule(rule, past, RuleSet([stored]))["matched"] == 0


def test_a_rule_whose_predicate_exceeds_the_budget_is_refused():
    rule = compile_rule(
        {"name": "x", "effect": "deny", "match": {"params": "'a' * 10**7 == 'b'"}}, rule_id=R.REPLAY_RULE_ID
    )
    with pytest.raises(ValidationFailed) as failure:
        R.replay_rule(rule, HISTORY, RuleSet([]))
    assert "rule.match.params" in failure.value.details
