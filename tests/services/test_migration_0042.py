"""0042 moves each metric scope's JSON state into columns and latency buckets as the models say, and back: what a
state said before shows the same after (the counters, the window, the readiness evidence, the latencies), and a state
stored before the evidence existed starts it from its window's counts, as the code before did (SQLite, and
PostgreSQL when it answers)."""

from __future__ import annotations

import json

from sqlalchemy import text

from core.coaching.levels import LevelThresholds
from core.coaching.metrics import MetricsState
from services.db import Database
from services.metrics import service as metrics
from tests.support.migrations import back_at_head, columns, differences_from_models, migrate, tables

T0 = "2026-12-07 11:00:00"


def _stored() -> dict:
    """A state as the code before 0042 stored it: a window of 50 by a workflow that keeps 80, latencies, evidence."""
    state = MetricsState(thresholds=LevelThresholds(window=80))
    for i in range(70):
        state.record_suggestion()
        state.record_decision("reject" if i % 7 == 0 else "accept" if i % 5 else "skip", 300.0 + 40 * i)
    return state.to_dict()


def test_0042_moves_the_json_states_into_columns_and_back(database_url):
    db = Database(database_url)
    stored = _stored()
    try:
        assert differences_from_models(db, "metric_scopes", "metric_latency") == []
        migrate(db, "0041_totals_from_decisions", down=True)
        assert "metric_latency" not in tables(db) and "recent" not in columns(db, "metric_scopes")
        with db.engine.begin() as conn:
            conn.execute(
                text("INSERT INTO workspaces (id, slug, name, created_at) VALUES ('ws', 'ws', 'WS', :t)"), {"t": T0}
            )
            for key, state in (("wf", stored), ("old", {"counters": {"accepted": 3}, "window": "aars"}), ("none", {})):
                conn.execute(
                    text(
                        "INSERT INTO metric_scopes (workspace_id, scope, key, state, updated_at) "
                        "VALUES ('ws', 'workflow', :k, :s, :t)"
                    ),
                    {"k": key, "s": json.dumps(state), "t": T0},
                )
        migrate(db, "head")
        assert "state" not in columns(db, "metric_scopes")
        with db.read() as session:
            moved = metrics.load_many(session, "ws", "workflow", thresholds=LevelThresholds(window=80))
        assert moved["wf"].snapshot() == MetricsState.from_dict(stored).snapshot()
        assert moved["wf"].window.to_str() == stored["window"] and moved["wf"].latency.count == 70
        # stored before the evidence: it starts from the window's counts (2 accepts of 3 counted)
        assert (moved["old"].counters.accepted, moved["old"].evidence.accepted, moved["old"].evidence.counted) == (
            3,
            2,
            3,
        )
        assert moved["none"].snapshot() == MetricsState(thresholds=LevelThresholds(window=80)).snapshot()

        migrate(db, "0041_totals_from_decisions", down=True)
        with db.engine.connect() as conn:
            value = conn.execute(text("SELECT state FROM metric_scopes WHERE key = 'wf'")).scalar_one()
        back = json.loads(value) if isinstance(value, str) else value  # (SQLite's JSON is text here)
        again = MetricsState.from_dict(back)
        again.set_thresholds(LevelThresholds(window=80))
        assert again.snapshot() == MetricsState.from_dict(stored).snapshot()
        assert back["latency"]["buckets"] == stored["latency"]["buckets"]
    finally:
        back_at_head(db, "metric_latency", "metric_scopes", "workspaces")
