"""Data migrations keep what is already stored (SQLite, and PostgreSQL when it answers)."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from alembic import command
from sqlalchemy import inspect, text

from services import executions
from services.db import Database
from services.migrate import alembic_config
from services.models import Execution

T0 = "2024-05-01 10:00:00"


def _migrate(db: Database, revision: str, down: bool = False) -> None:
    cfg = alembic_config(db.url)
    with db.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(cfg, revision)
        conn.commit()


def _workspace_and_workflow(conn) -> None:
    """Workspace `ws` and its workflow `wf`, as rows of any schema revision since 0001."""
    conn.execute(text("INSERT INTO workspaces (id, slug, name, created_at) VALUES ('ws', 'ws', 'WS', :t)"), {"t": T0})
    conn.execute(text("INSERT INTO workflows (id, workspace_id, name, description, current_version, mode, "
                      "settings, created_at, updated_at) VALUES ('wf', 'ws', 'wf', '', 1, 'coaching', "
                      "'{}', :t, :t)"), {"t": T0})


def test_step_runs_move_into_the_execution_row_and_back(database_url):
    db = Database(database_url)
    try:
        _migrate(db, "0003", down=True)
        with db.engine.begin() as conn:
            _workspace_and_workflow(conn)
            for ex in ("ex1", "ex2"):
                conn.execute(text("INSERT INTO executions (id, workspace_id, workflow_id, workflow_version, mode, "
                                  "status, variables, created_at, updated_at, row_version) VALUES "
                                  "(:id, 'ws', 'wf', 1, 'coaching', 'waiting_decision', '{}', :t, :t, 1)"),
                             {"id": ex, "t": T0})
            rows = [("ex1", "b", 1, "waiting", None, None, 0, None, None, None, None),
                    ("ex1", "a", 0, "succeeded", '{"n": 0}', None, 1, '{"n": 0}', "accept", T0, T0),
                    ("ex1", "c", 2, "pending", None, None, 0, None, None, None, None),
                    ("ex2", "a", 0, "failed", None, "boom", 2, '{"x": 1}', None, T0, T0)]
            for r in rows:
                conn.execute(text("INSERT INTO step_runs (execution_id, step_id, position, status, output, error, "
                                  "attempts, params, decision, started_at, finished_at) VALUES "
                                  "(:e, :s, :p, :st, :o, :err, :at, :pa, :d, :t1, :t2)"),
                             dict(zip(("e", "s", "p", "st", "o", "err", "at", "pa", "d", "t1", "t2"), r)))
        _migrate(db, "head")
        at = datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
        with db.read() as s:
            ex1, ex2 = s.get(Execution, "ex1"), s.get(Execution, "ex2")
            assert list(ex1.steps) == ["a", "b", "c"]  # definition order, from position
            a = ex1.steps["a"]
            assert (a.status, a.output, a.attempts, a.params, a.decision) == ("succeeded", {"n": 0}, 1, {"n": 0},
                                                                              "accept")
            assert a.started_at == at and a.finished_at == at
            assert ex1.steps["b"].status == "waiting" and ex1.steps["b"].started_at is None
            assert (ex2.steps["a"].status, ex2.steps["a"].error, ex2.steps["a"].attempts) == ("failed", "boom", 2)
            view = executions.view(ex1)
            assert view["progress"] == {"done": 1, "total": 3, "percent": 33.3}
            assert [st["step_id"] for st in view["steps"]] == ["a", "b", "c"]
        _migrate(db, "0003", down=True)
        with db.engine.connect() as conn:
            back = conn.execute(text("SELECT execution_id, step_id, position, status, error, attempts, decision "
                                     "FROM step_runs ORDER BY execution_id, position")).all()
        assert [tuple(r) for r in back] == [("ex1", "a", 0, "succeeded", None, 1, "accept"),
                                            ("ex1", "b", 1, "waiting", None, 0, None),
                                            ("ex1", "c", 2, "pending", None, 0, None),
                                            ("ex2", "a", 0, "failed", "boom", 2, None)]
    finally:  # leave the schema at head, and empty, for the tests that follow
        with db.engine.begin() as conn:
            tables = set(inspect(conn).get_table_names())
            for table in ("step_runs", "executions", "workflows", "workspaces"):
                if table in tables:
                    conn.execute(text(f"DELETE FROM {table}"))
        _migrate(db, "head")
        db.dispose()


def test_coaching_session_stats_move_into_the_execution_row_and_back(database_url):
    db = Database(database_url)
    stats = {"suggestions_made": 3, "accepted": 2, "rejected": 0, "corrected": 0, "manual_executions": 0,
             "skipped": 0}
    try:
        _migrate(db, "0005", down=True)
        with db.engine.begin() as conn:
            _workspace_and_workflow(conn)
            for ex, mode, status in (("ex1", "coaching", "paused"), ("ex2", "normal", "running")):
                conn.execute(text("INSERT INTO executions (id, workspace_id, workflow_id, workflow_version, mode, "
                                  "status, variables, created_at, updated_at, row_version, steps) VALUES "
                                  "(:id, 'ws', 'wf', 1, :mode, :status, '{}', :t, :t, 1, '[]')"),
                             {"id": ex, "mode": mode, "status": status, "t": T0})
            conn.execute(text("INSERT INTO coaching_sessions (execution_id, workspace_id, paused, stats, updated_at) "
                              "VALUES ('ex1', 'ws', :paused, :stats, :t)"),
                         {"paused": True, "stats": json.dumps(stats), "t": T0})
        _migrate(db, "head")
        with db.read() as s:
            assert s.get(Execution, "ex1").coaching_stats == stats
            assert s.get(Execution, "ex2").coaching_stats is None  # a normal execution has no session
        assert "coaching_sessions" not in inspect(db.engine).get_table_names()
        _migrate(db, "0005", down=True)
        with db.engine.connect() as conn:
            back = conn.execute(text("SELECT execution_id, paused, stats FROM coaching_sessions")).all()
        assert [(r[0], bool(r[1]), r[2] if isinstance(r[2], dict) else json.loads(r[2])) for r in back] == \
            [("ex1", True, stats)]
    finally:
        with db.engine.begin() as conn:
            tables = set(inspect(conn).get_table_names())
            for table in ("coaching_sessions", "executions", "workflows", "workspaces"):
                if table in tables:
                    conn.execute(text(f"DELETE FROM {table}"))
        _migrate(db, "head")
        db.dispose()
