"""Correction packs through /api/correction-packs: grouping, learned rules in suggestions, enable/disable,
export/import, and the learning test: packs make a workflow AUTO-ready sooner."""

from __future__ import annotations

import threading

import pytest

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEP = {"id": "mail", "tool": "echo", "params": {"to": "a@x", "cc": "none"}}
# lenient (acceptance >= 60% at level 0.1, docs/autonomy.md) so that a short run is evidence: after three
# corrections, 18 accepts in a row are
FAST = {"coaching_after": 5, "auto_min_window": 10, "window": 20, "auto_acceptance": 0.6, "auto_alpha": 0.1}


def _workflow(api, name: str = "wf") -> str:
    return api.workflow([STEP], name=name)["id"]


def _suggest(api, wf_id: str) -> tuple[str, dict]:
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {}}, status=201)[
        "execution_id"
    ]
    api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug is not None and sug["step_id"] == "mail"
    return ex_id, sug


def _decide(api, ex_id: str, sug: dict, decision: str, correction: dict | None = None) -> None:
    body = {"suggestion_id": sug["suggestion_id"], "decision": decision}
    if correction is not None:
        body["correction"] = correction
    api.ok("POST", f"/api/executions/{ex_id}/coaching/decision", body)
    assert api.settle(ex_id)["status"] == "completed"


def _correct(api, wf_id: str, correction: dict) -> dict:
    ex_id, sug = _suggest(api, wf_id)
    _decide(api, ex_id, sug, "correct", correction)
    return sug


def _packs(api, wf_id: str) -> list[dict]:
    return api.ok("GET", f"/api/correction-packs?workflow_id={wf_id}")["items"]


def _pack(api, wf_id: str) -> dict:
    packs = _packs(api, wf_id)
    assert len(packs) == 1, packs
    return packs[0]


def test_corrections_are_grouped_per_step_by_field_before_and_after(api):
    wf_id = _workflow(api)
    other = _workflow(api, "other")
    assert _packs(api, wf_id) == []
    _correct(api, wf_id, {"to": "b@x", "cc": "none"})
    _correct(api, wf_id, {"to": "b@x", "cc": "none"})
    _correct(api, wf_id, {"to": "a@x", "cc": "boss"})
    pack = _pack(api, wf_id)
    assert (pack["workflow_id"], pack["step_id"], pack["enabled"], pack["corrections"]) == (wf_id, "mail", True, 3)
    assert pack["changes"] == [
        {"field": "to", "before": "a@x", "after": "b@x", "count": 2},
        {"field": "cc", "before": "none", "after": "boss", "count": 1},
    ]
    assert pack["rules"] == []  # 2 of 3 is neither 3 times nor 80%
    assert api.ok("GET", f"/api/correction-packs/{pack['id']}") == pack
    assert _packs(api, other) == []
    assert [p["id"] for p in api.ok("GET", "/api/correction-packs")["items"]] == [pack["id"]]


def test_three_identical_corrections_become_a_rule_the_next_suggestion_applies(api):
    wf_id = _workflow(api)
    for _ in range(2):
        _correct(api, wf_id, {"to": "b@x", "cc": "none"})
    ex_id, sug = _suggest(api, wf_id)
    assert (sug["source"], sug["params"]) == ("definition", {"to": "a@x", "cc": "none"})
    _decide(api, ex_id, sug, "correct", {"to": "b@x", "cc": "none"})
    pack = _pack(api, wf_id)
    assert [(r["field"], r["before"], r["after"], r["count"]) for r in pack["rules"]] == [("to", "a@x", "b@x", 3)]

    ex_id, sug = _suggest(api, wf_id)
    assert sug["source"] == f"correction_pack:{pack['id']}"
    assert sug["params"] == {"to": "b@x", "cc": "none"}
    assert sug["definition_params"] == {"to": "a@x", "cc": "none"}
    _decide(api, ex_id, sug, "accept")
    ex = api.ok("GET", f"/api/executions/{ex_id}")
    assert ex["steps"][0]["output"] == {"to": "b@x", "cc": "none"}

    patched = api.ok("PATCH", f"/api/correction-packs/{pack['id']}", {"enabled": False})
    assert patched["enabled"] is False and api.ok("GET", f"/api/correction-packs/{pack['id']}")["enabled"] is False
    ex_id, sug = _suggest(api, wf_id)
    assert (sug["source"], sug["params"]) == ("definition", {"to": "a@x", "cc": "none"})
    _decide(api, ex_id, sug, "accept")

    api.ok("PATCH", f"/api/correction-packs/{pack['id']}", {"enabled": True})
    _, sug = _suggest(api, wf_id)
    assert (sug["source"], sug["params"]) == (f"correction_pack:{pack['id']}", {"to": "b@x", "cc": "none"})


def test_an_exported_pack_imported_into_another_workflow_applies_there(api):
    source = _workflow(api)
    for _ in range(3):
        _correct(api, source, {"to": "b@x", "cc": "none"})
    pack = _pack(api, source)
    exported = api.ok("GET", f"/api/correction-packs/{pack['id']}/export")
    assert exported["workflow_id"] == source and exported["step_id"] == "mail" and exported["format"]

    target = _workflow(api, "target")
    _, sug = _suggest(api, target)
    assert sug["source"] == "definition"
    created = api.ok("POST", "/api/correction-packs/import", {**exported, "workflow_id": target}, status=201)
    assert created["id"] != pack["id"]
    assert (created["workflow_id"], created["step_id"], created["enabled"]) == (target, "mail", True)
    assert created["changes"] == pack["changes"]
    unstamped = lambda rules: [{k: v for k, v in r.items() if k != "since"} for r in rules]  # noqa: E731
    assert unstamped(created["rules"]) == unstamped(pack["rules"])
    # in the target the rule started applying when it was imported
    assert created["rules"][0]["since"] == created["rules_changed_at"] > pack["rules"][0]["since"]
    assert _pack(api, target)["id"] == created["id"]
    assert _pack(api, source)["id"] == pack["id"]  # the source keeps its own
    _, sug = _suggest(api, target)
    assert (sug["source"], sug["params"]) == (f"correction_pack:{created['id']}", {"to": "b@x", "cc": "none"})


def test_import_with_a_bad_format_or_body_is_422_and_creates_nothing(api):
    wf_id = _workflow(api)
    good = {
        "format": "coach.correction-pack/1",
        "workflow_id": wf_id,
        "step_id": "mail",
        "stats": {"corrections": 1, "groups": []},
    }
    for bad, field in (
        ({**good, "format": "something/else"}, "format"),
        ({k: v for k, v in good.items() if k != "format"}, "format"),
        ({k: v for k, v in good.items() if k != "stats"}, "stats"),
        ({**good, "stats": {"corrections": 1, "groups": [{"field": "to", "count": 5}]}}, "stats"),
    ):
        code, body = api.call("POST", "/api/correction-packs/import", bad)
        assert code == 422 and field in body["error"]["details"], body
    assert _packs(api, wf_id) == []


def test_import_of_stats_that_are_not_an_export_is_422_and_keeps_the_pack(api):
    # the pack's own view ({"changes": ...}) or anything else without corrections and groups must not
    # replace a pack's learning with nothing
    wf_id = _workflow(api)
    for _ in range(3):
        _correct(api, wf_id, {"to": "b@x", "cc": "none"})
    pack = _pack(api, wf_id)
    exported = api.ok("GET", f"/api/correction-packs/{pack['id']}/export")
    for stats in (
        {"garbage": 1},
        {"changes": pack["changes"]},
        {"corrections": 3},
        {"corrections": -1, "groups": []},
        {"corrections": 3, "groups": "x"},
        {"corrections": 3, "groups": [{"before": "a@x", "after": "b@x", "count": 3}]},
    ):
        code, body = api.call("POST", "/api/correction-packs/import", {**exported, "stats": stats})
        assert code == 422 and "stats" in body["error"]["details"], (stats, body)
    assert _pack(api, wf_id) == pack


def test_an_unknown_pack_is_404(api):
    for method, path, body in (
        ("GET", "/api/correction-packs/nope", None),
        ("PATCH", "/api/correction-packs/nope", {"enabled": False}),
        ("GET", "/api/correction-packs/nope/export", None),
    ):
        code, answer = api.call(method, path, body)
        assert code == 404 and answer["error"]["code"] == "not_found", (method, path, answer)
    code, _ = api.call(
        "POST",
        "/api/correction-packs/import",
        {
            "format": "coach.correction-pack/1",
            "workflow_id": "nope",
            "step_id": "mail",
            "stats": {"corrections": 0, "groups": []},
        },
    )
    assert code == 404


def _decisions_to_auto_ready(api, wf_id: str, limit: int, *, disable_pack: bool) -> tuple[int | None, list[str]]:
    """A simulated operator who always wants to: b@x. It accepts a suggestion that already says so and
    corrects any other. Returns how many decisions it took to reach auto_ready (None: not within `limit`)."""
    api.ok("PUT", f"/api/workflows/{wf_id}/thresholds", FAST)
    made: list[str] = []
    for n in range(1, limit + 1):
        ex_id, sug = _suggest(api, wf_id)
        if sug["params"]["to"] == "b@x":
            made.append("accept")
            _decide(api, ex_id, sug, "accept")
        else:
            made.append("correct")
            _decide(api, ex_id, sug, "correct", {**sug["params"], "to": "b@x"})
            if disable_pack:
                pack = _pack(api, wf_id)
                if pack["enabled"]:
                    api.ok("PATCH", f"/api/correction-packs/{pack['id']}", {"enabled": False})
        if api.ok("GET", f"/api/metrics/workflows/{wf_id}")["auto_ready"]:
            return n, made
    return None, made


def test_learning_from_corrections_reaches_auto_ready_in_fewer_decisions(api):
    limit = 26
    learned = _workflow(api, "learns")
    control = _workflow(api, "control")
    with_pack, made = _decisions_to_auto_ready(api, learned, limit, disable_pack=False)
    without_pack, made_control = _decisions_to_auto_ready(api, control, limit, disable_pack=True)

    # the pack learns after 3 corrections; then 18 accepts in a row make it ready
    assert made[:3] == ["correct"] * 3 and set(made[3:]) == {"accept"}
    assert with_pack == 21
    # without the pack every suggestion needs the same correction: never ready
    assert set(made_control) == {"correct"} and without_pack is None
    assert with_pack < (without_pack or limit + 1)

    m_learned = api.ok("GET", f"/api/metrics/workflows/{learned}")
    m_control = api.ok("GET", f"/api/metrics/workflows/{control}")
    assert (m_learned["level"], m_learned["auto_ready"]) == ("AUTO", True)
    assert (m_control["level"], m_control["auto_ready"], m_control["rolling_acceptance_rate"]) == (
        "COACHING",
        False,
        0.0,
    )
    assert m_learned["rolling_acceptance_rate"] >= 0.85 > m_control["rolling_acceptance_rate"]
    assert _pack(api, control)["enabled"] is False and _pack(api, control)["corrections"] == limit
    assert _pack(api, learned)["corrections"] == 3


def test_cached_rules_follow_pack_changes_made_by_another_process(api, services):
    """Each process caches a workflow's rules under workflows.packs_revision; a change anywhere bumps it."""
    from services.coaching import corrections
    from services.models.workflows import Workflow

    wf_id = _workflow(api)
    here, there = corrections.RulesCache(), corrections.RulesCache()  # two server processes' caches

    def rules(cache):
        with services.db.read() as session:
            pack_id, found = cache.rules(session, session.get(Workflow, wf_id)).get("mail", (None, []))
            return pack_id, [(r.field, r.after) for r in found]

    assert rules(here) == (None, []) == rules(there)
    for _ in range(3):
        _correct(api, wf_id, {"to": "b@x", "cc": "none"})
    pack_id = _pack(api, wf_id)["id"]
    assert rules(here) == (pack_id, [("to", "b@x")]) == rules(there)
    api.ok("PATCH", f"/api/correction-packs/{pack_id}", {"enabled": False})
    assert rules(here) == (None, []) == rules(there)
    with services.db.read() as session:
        assert session.get(Workflow, wf_id).packs_revision == 4  # three corrections and one switch
    ex_id, sug = _suggest(api, wf_id)
    assert sug["source"] == "definition" and sug["params"]["to"] == "a@x"


REFUND = {"id": "refund", "tool": "echo", "params": {"order_id": "A-1", "amount": 40, "currency": "EUR"}}


def _refund_workflow(api) -> str:
    return api.workflow([REFUND], name="refunds")["id"]


def _refund_suggestion(api, wf_id: str) -> tuple[str, dict]:
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {}}, status=201)[
        "execution_id"
    ]
    api.settle(ex_id)
    return ex_id, api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]


class _Pushed:
    """What a lead's dashboard receives: a Socket.IO client (Flask-SocketIO's test client, through the real
    connect and join handlers) that joined the workspace room. Iterating gives (event, payload, "workspace")."""

    def __init__(self, app, token: str):
        self.client = app.extensions["socketio"].test_client(app, auth={"token": token})
        assert self.client.emit("join_workspace", {}, callback=True)["ok"] is True
        self.client.get_received()
        self.items: list[tuple[str, dict, str]] = []

    def _drain(self) -> None:
        self.items += [(m["name"], m["args"][0], "workspace") for m in self.client.get_received()]

    def __iter__(self):
        self._drain()
        return iter(list(self.items))

    def clear(self) -> None:
        self._drain()
        self.items.clear()


def _pushed(app, token: str) -> _Pushed:
    return _Pushed(app, token)


def test_an_unrelated_correction_of_the_amount_does_not_undo_the_learned_currency(api):
    """Issue #12 item 7: 3 of 3 currency corrections, then one of the amount; the rule must keep applying."""
    wf_id = _refund_workflow(api)
    for _ in range(3):
        ex_id, sug = _refund_suggestion(api, wf_id)
        _decide(api, ex_id, sug, "correct", {**sug["params"], "currency": "GBP"})
    ex_id, sug = _refund_suggestion(api, wf_id)
    pack = _pack(api, wf_id)
    assert (sug["source"], sug["params"]["currency"]) == (f"correction_pack:{pack['id']}", "GBP")
    _decide(api, ex_id, sug, "correct", {**sug["params"], "amount": 45})  # the currency is right: not touched

    pack = _pack(api, wf_id)
    assert pack["corrections"] == 4 and pack["field_corrections"] == {"currency": 3, "amount": 1}
    assert [(r["field"], r["after"], r["count"], r["share"]) for r in pack["rules"]] == [("currency", "GBP", 3, 1.0)]
    for _ in range(2):
        ex_id, sug = _refund_suggestion(api, wf_id)
        assert (sug["source"], sug["params"]) == (
            f"correction_pack:{pack['id']}",
            {"order_id": "A-1", "amount": 40, "currency": "GBP"},
        )
        _decide(api, ex_id, sug, "accept")


def test_a_rule_that_starts_or_stops_applying_is_audited_pushed_and_dated(api, app, admin_token):
    sent = _pushed(app, admin_token)
    wf_id = _refund_workflow(api)
    for n in range(3):
        ex_id, sug = _refund_suggestion(api, wf_id)
        _decide(api, ex_id, sug, "correct", {**sug["params"], "currency": "GBP"})
        changed = [p for e, p, _ in sent if e == "correction_pack_changed"]
        assert len(changed) == (1 if n == 2 else 0)  # only the third correction makes the rule
    pack = _pack(api, wf_id)
    [(event, payload, room)] = [s for s in sent if s[0] == "correction_pack_changed"]
    assert room == "workspace"  # received by a client in the workspace room
    assert payload["pack_id"] == pack["id"] and payload["workflow_id"] == wf_id and payload["step_id"] == "refund"
    assert payload["cause"] == "correction" and payload["stopped"] == []
    assert payload["started"] == [{"field": "currency", "before": "EUR", "after": "GBP", "count": 3, "share": 1.0}]
    assert pack["rules"][0]["since"] == pack["rules_changed_at"] == payload["rules_changed_at"]
    assert pack["last_rule_change"]["started"] == [{"field": "currency", "before": "EUR", "after": "GBP"}]

    # an operator who puts EUR back twice disagrees with the rule: 3 of 5 currency corrections, it stops
    sent.clear()
    for _ in range(2):
        ex_id, sug = _refund_suggestion(api, wf_id)
        _decide(api, ex_id, sug, "correct", {**sug["params"], "currency": "EUR"})
    [payload] = [p for e, p, _ in sent if e == "correction_pack_changed"]
    assert payload["rules"] == [] and [r["field"] for r in payload["stopped"]] == ["currency"]
    pack = _pack(api, wf_id)
    assert pack["rules"] == [] and pack["rules_changed_at"] == payload["rules_changed_at"]
    assert pack["last_rule_change"]["stopped"] == [{"field": "currency", "before": "EUR", "after": "GBP"}]

    audit = api.ok("GET", "/api/audit?action=learned_rule_change")
    rows = audit["items"] if isinstance(audit, dict) else audit
    assert len(rows) == 2
    by_start = sorted(rows, key=lambda r: r["seq"])
    assert by_start[0]["before"] == {"rules": []} and by_start[0]["after"]["started"][0]["after"] == "GBP"
    assert by_start[1]["after"]["rules"] == [] and by_start[1]["after"]["stopped"][0]["field"] == "currency"
    assert {r["target_id"] for r in rows} == {pack["id"]}


def test_disabling_and_enabling_a_pack_stops_and_starts_its_rules_and_says_so(api, app, admin_token):
    wf_id = _refund_workflow(api)
    for _ in range(3):
        ex_id, sug = _refund_suggestion(api, wf_id)
        _decide(api, ex_id, sug, "correct", {**sug["params"], "currency": "GBP"})
    pack = _pack(api, wf_id)
    sent = _pushed(app, admin_token)
    off = api.ok("PATCH", f"/api/correction-packs/{pack['id']}", {"enabled": False})
    assert off["rules"][0]["since"] is None and off["last_rule_change"]["stopped"][0]["field"] == "currency"
    on = api.ok("PATCH", f"/api/correction-packs/{pack['id']}", {"enabled": True})
    assert on["rules"][0]["since"] == on["rules_changed_at"] > pack["rules_changed_at"]
    causes = [(p["cause"], len(p["started"]), len(p["stopped"])) for e, p, _ in sent if e == "correction_pack_changed"]
    assert causes == [("disabled", 0, 1), ("enabled", 1, 0)]
    # a pack switched off that learned nothing changes no rule: nothing said
    sent.clear()
    other = _workflow(api, "other")
    _correct(api, other, {"to": "b@x", "cc": "none"})
    api.ok("PATCH", f"/api/correction-packs/{_pack(api, other)['id']}", {"enabled": False})
    assert [e for e, _, _ in sent if e == "correction_pack_changed"] == []


def test_the_export_carries_no_rule_history_and_an_old_export_imports(api):
    wf_id = _refund_workflow(api)
    for _ in range(3):
        ex_id, sug = _refund_suggestion(api, wf_id)
        _decide(api, ex_id, sug, "correct", {**sug["params"], "currency": "GBP"})
    exported = api.ok("GET", f"/api/correction-packs/{_pack(api, wf_id)['id']}/export")
    assert set(exported["stats"]) == {"corrections", "groups"}
    # an export from before per-field consistency: 3 currency and 1 amount correction of 4 (was 75%: no rule)
    old = {
        "format": "coach.correction-pack/1",
        "workflow_id": _refund_workflow(api),
        "step_id": "refund",
        "enabled": True,
        "stats": {
            "corrections": 4,
            "groups": [
                {"field": "currency", "before": "EUR", "after": "GBP", "count": 3},
                {"field": "amount", "before": 40, "after": 45, "count": 1},
            ],
        },
    }
    created = api.ok("POST", "/api/correction-packs/import", old, status=201)
    assert [(r["field"], r["share"]) for r in created["rules"]] == [("currency", 1.0)]
    assert created["last_rule_change"]["started"][0]["field"] == "currency"


def test_a_correction_that_makes_a_rule_reads_no_history(api, services):
    """Whether a rule starts or stops applying is worked out from the pack row the correction reads anyway:
    the correction that makes the rule reads nothing more than one that does not (it writes one audit row)."""
    from sqlalchemy import event

    wf_id = _refund_workflow(api)
    statements: list[str] = []

    me = threading.get_ident()

    def seen(conn, cursor, statement, parameters, context, executemany):
        if threading.get_ident() == me:  # the request's, not a deadline scanner's that runs meanwhile
            statements.append(" ".join(statement.split()).upper())

    def correction_reads() -> list[str]:
        ex_id, sug = _refund_suggestion(api, wf_id)
        statements.clear()
        event.listen(services.db.engine, "before_cursor_execute", seen)
        try:
            api.ok(
                "POST",
                f"/api/executions/{ex_id}/coaching/decision",
                {
                    "suggestion_id": sug["suggestion_id"],
                    "decision": "correct",
                    "correction": {**sug["params"], "currency": "GBP"},
                },
            )
        finally:
            event.remove(services.db.engine, "before_cursor_execute", seen)
        api.settle(ex_id)
        return [s for s in statements if s.startswith("SELECT")]

    correction_reads()
    plain = correction_reads()  # the second: no rule yet
    making = correction_reads()  # the third: the rule starts applying
    assert _pack(api, wf_id)["rules"]
    # what the making correction reads beyond the plain one's reads: none of the decisions' or suggestions' history
    # (incidental reads of a decision's own path, the workspace's review settings or the audit chain's last row, may
    # fall to either correction depending on what the machine's timing made of the others)
    extra = [s for s in making if s not in plain]
    assert not [s for s in extra if " FROM DECISIONS" in s or " FROM SUGGESTIONS" in s], extra
    assert len(making) <= len(plain) + 1, (plain, making)
    assert not any(" FROM DECISIONS" in s for s in making), making  # no scan of earlier decisions
