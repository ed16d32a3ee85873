"""Data migrations keep what is already stored (SQLite, and PostgreSQL when it answers)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from services.db import Database
from services.executions import service as executions
from services.models.executions import Execution
from tests.support.migrations import (
    T0,
    back_at_head,
    columns,
    differences_from_models,
    migrate,
    tables,
    workspace_and_workflow,
)


def _cancelled_execution(conn) -> None:
    """Execution `ex` of workflow `wf`, cancelled, started by u1 (the rows of 0012 and after)."""
    conn.execute(
        text(
            "INSERT INTO executions (id, workspace_id, workflow_id, workflow_version, mode, status, "
            "variables, created_at, updated_at, row_version, started_by) VALUES "
            "('ex', 'ws', 'wf', 1, 'normal', 'cancelled', '{}', :t, :t, 1, 'u1')"
        ),
        {"t": T0},
    )


def test_step_runs_move_into_the_execution_row_and_back(database_url):
    db = Database(database_url)
    try:
        migrate(db, "0003", down=True)
        with db.engine.begin() as conn:
            workspace_and_workflow(conn)
            for ex in ("ex1", "ex2"):
                conn.execute(
                    text(
                        "INSERT INTO executions (id, workspace_id, workflow_id, workflow_version, mode, "
                        "status, variables, created_at, updated_at, row_version) VALUES "
                        "(:id, 'ws', 'wf', 1, 'coaching', 'waiting_decision', '{}', :t, :t, 1)"
                    ),
                    {"id": ex, "t": T0},
                )
            rows = [
                ("ex1", "b", 1, "waiting", None, None, 0, None, None, None, None),
                ("ex1", "a", 0, "succeeded", '{"n": 0}', None, 1, '{"n": 0}', "accept", T0, T0),
                ("ex1", "c", 2, "pending", None, None, 0, None, None, None, None),
                ("ex2", "a", 0, "failed", None, "boom", 2, '{"x": 1}', None, T0, T0),
            ]
            for r in rows:
                conn.execute(
                    text(
                        "INSERT INTO step_runs (execution_id, step_id, position, status, output, error, "
                        "attempts, params, decision, started_at, finished_at) VALUES "
                        "(:e, :s, :p, :st, :o, :err, :at, :pa, :d, :t1, :t2)"
                    ),
                    dict(zip(("e", "s", "p", "st", "o", "err", "at", "pa", "d", "t1", "t2"), r, strict=False)),
                )
        migrate(db, "head")
        at = datetime(2024, 5, 1, 10, tzinfo=UTC)
        with db.read() as s:
            ex1, ex2 = s.get(Execution, "ex1"), s.get(Execution, "ex2")
            assert list(ex1.steps) == ["a", "b", "c"]  # definition order, from position
            a = ex1.steps["a"]
            assert (a.status, a.output, a.attempts, a.params, a.decision) == (
                "succeeded",
                {"n": 0},
                1,
                {"n": 0},
                "accept",
            )
            assert a.started_at == at and a.finished_at == at
            assert ex1.steps["b"].status == "waiting" and ex1.steps["b"].started_at is None
            assert (ex2.steps["a"].status, ex2.steps["a"].error, ex2.steps["a"].attempts) == ("failed", "boom", 2)
            view = executions.view(ex1)
            assert view["progress"] == {"done": 1, "total": 3, "percent": 33.3}
            assert [st["step_id"] for st in view["steps"]] == ["a", "b", "c"]
        migrate(db, "0003", down=True)
        with db.engine.connect() as conn:
            back = conn.execute(
                text(
                    "SELECT execution_id, step_id, position, status, error, attempts, decision "
                    "FROM step_runs ORDER BY execution_id, position"
                )
            ).all()
        assert [tuple(r) for r in back] == [
            ("ex1", "a", 0, "succeeded", None, 1, "accept"),
            ("ex1", "b", 1, "waiting", None, 0, None),
            ("ex1", "c", 2, "pending", None, 0, None),
            ("ex2", "a", 0, "failed", "boom", 2, None),
        ]
    finally:  # leave the schema at head, and empty, for the tests that follow
        back_at_head(db, "step_runs", "executions", "workflows", "workspaces")


def test_coaching_session_stats_move_into_the_execution_row_and_back(database_url):
    db = Database(database_url)
    stats = {"suggestions_made": 3, "accepted": 2, "rejected": 0, "corrected": 0, "manual_executions": 0, "skipped": 0}
    try:
        migrate(db, "0005", down=True)
        with db.engine.begin() as conn:
            workspace_and_workflow(conn)
            for ex, mode, status in (("ex1", "coaching", "paused"), ("ex2", "normal", "running")):
                conn.execute(
                    text(
                        "INSERT INTO executions (id, workspace_id, workflow_id, workflow_version, mode, "
                        "status, variables, created_at, updated_at, row_version, steps) VALUES "
                        "(:id, 'ws', 'wf', 1, :mode, :status, '{}', :t, :t, 1, '[]')"
                    ),
                    {"id": ex, "mode": mode, "status": status, "t": T0},
                )
            conn.execute(
                text(
                    "INSERT INTO coaching_sessions (execution_id, workspace_id, paused, stats, updated_at) "
                    "VALUES ('ex1', 'ws', :paused, :stats, :t)"
                ),
                {"paused": True, "stats": json.dumps(stats), "t": T0},
            )
        migrate(db, "head")
        with db.read() as s:
            assert s.get(Execution, "ex1").coaching_stats == stats
            assert s.get(Execution, "ex2").coaching_stats is None  # a normal execution has no session
        assert "coaching_sessions" not in tables(db)
        migrate(db, "0005", down=True)
        with db.engine.connect() as conn:
            back = conn.execute(text("SELECT execution_id, paused, stats FROM coaching_sessions")).all()
        assert [(r[0], bool(r[1]), r[2] if isinstance(r[2], dict) else json.loads(r[2])) for r in back] == [
            ("ex1", True, stats)
        ]
    finally:
        back_at_head(db, "coaching_sessions", "executions", "workflows", "workspaces")


def test_decisions_keep_their_rows_and_one_decision_per_idempotency_key_across_0009(database_url):
    db = Database(database_url)

    def decision(conn, n: int, key: str | None) -> None:
        conn.execute(
            text(
                "INSERT INTO suggestions (id, workspace_id, execution_id, workflow_id, workflow_version, "
                "step_id, tool, params, definition_params, rationale, confidence, source, status, "
                "version, purpose, created_at) VALUES (:id, 'ws', 'ex1', 'wf', 1, 's', 'echo', '{}', "
                "'{}', '', 0, 'definition', 'decided', 1, 'coaching', :t)"
            ),
            {"id": f"sug{n}", "t": T0},
        )
        conn.execute(
            text(
                "INSERT INTO decisions (id, suggestion_id, workspace_id, execution_id, workflow_id, "
                "step_id, decision, operator, latency_ms, idempotency_key, created_at) VALUES "
                "(:id, :sug, 'ws', 'ex1', 'wf', 's', 'accept', 'op', 1.5, :key, :t)"
            ),
            {"id": f"dec{n}", "sug": f"sug{n}", "key": key, "t": T0},
        )

    def rows() -> list[tuple]:
        with db.engine.connect() as conn:
            return [
                tuple(r)
                for r in conn.execute(text("SELECT id, suggestion_id, idempotency_key FROM decisions ORDER BY id"))
            ]

    try:
        migrate(db, "0008", down=True)
        with db.engine.begin() as conn:
            workspace_and_workflow(conn)
            conn.execute(
                text(
                    "INSERT INTO executions (id, workspace_id, workflow_id, workflow_version, mode, status, "
                    "variables, created_at, updated_at, row_version, steps) VALUES ('ex1', 'ws', 'wf', 1, "
                    "'coaching', 'running', '{}', :t, :t, 1, '[]')"
                ),
                {"t": T0},
            )
            for n, key in ((1, "k1"), (2, None), (3, None)):
                decision(conn, n, key)
        before = rows()
        migrate(db, "head")
        assert rows() == before == [("dec1", "sug1", "k1"), ("dec2", "sug2", None), ("dec3", "sug3", None)]
        with db.engine.begin() as conn:
            decision(conn, 4, None)  # any number of decisions without a key
        with pytest.raises(IntegrityError):
            with db.engine.begin() as conn:
                decision(conn, 5, "k1")  # one decision per key in a workspace
        with pytest.raises(IntegrityError):
            with db.engine.begin() as conn:
                conn.execute(
                    text(
                        "INSERT INTO decisions (id, suggestion_id, workspace_id, execution_id, workflow_id, "
                        "step_id, decision, operator, latency_ms, created_at) VALUES ('dec6', 'sug1', 'ws', "
                        "'ex1', 'wf', 's', 'accept', 'op', 1, :t)"
                    ),
                    {"t": T0},
                )  # one per suggestion
        migrate(db, "0008", down=True)
        assert [r[0] for r in rows()] == ["dec1", "dec2", "dec3", "dec4"]
    finally:
        back_at_head(db, "decisions", "suggestions", "executions", "workflows", "workspaces")


def test_workspace_outbound_lists_come_with_0011_and_go_with_its_downgrade(database_url):
    db = Database(database_url)
    try:
        migrate(db, "0009", down=True)
        assert "workspace_outbound" not in tables(db)
        with db.engine.begin() as conn:
            workspace_and_workflow(conn)
        migrate(db, "head")
        assert "workspace_outbound" in tables(db)
        from services.policies.outbound import get_lists, set_lists

        with db.transaction() as session:
            set_lists(session, "ws", {"allow": ["api.example.com"], "deny": ["10.0.0.0/8"]}, "admin@x")
        with db.read() as session:
            assert get_lists(session, "ws").as_dict() == {"allow": ["api.example.com"], "deny": ["10.0.0.0/8"]}
        with pytest.raises(IntegrityError):  # lists belong to a workspace that exists
            with db.engine.begin() as conn:
                conn.execute(
                    text(
                        "INSERT INTO workspace_outbound (workspace_id, allow, deny, updated_by, updated_at) "
                        "VALUES ('nope', '[]', '[]', '', :t)"
                    ),
                    {"t": T0},
                )
        migrate(db, "0009", down=True)
        assert "workspace_outbound" not in tables(db)
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT slug FROM workspaces")).scalar() == "ws"
    finally:
        back_at_head(db, "audit_events", "workflows", "workspaces")


def test_0010_gives_each_user_the_workspace_they_landed_in_and_goes_back(database_url):
    """Before 0010 a user's requests landed in their oldest membership: that becomes their explicit default
    workspace, so nothing moves for them; the new columns and table go away on downgrade and come back."""
    db = Database(database_url)
    try:
        migrate(db, "0009", down=True)
        with db.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO workspaces (id, slug, name, created_at) VALUES "
                    "('new', 'new', 'New', '2024-05-02 10:00:00'), ('old', 'old', 'Old', :t)"
                ),
                {"t": T0},
            )
            conn.execute(
                text(
                    "INSERT INTO users (id, email, name, password_hash, disabled, created_at) VALUES "
                    "('u1', 'u1@x', 'u1', 'h', false, :t), ('u2', 'u2@x', 'u2', 'h', false, :t)"
                ),
                {"t": T0},
            )
            conn.execute(
                text(
                    "INSERT INTO memberships (user_id, workspace_id, role, created_at) VALUES "
                    "('u1', 'new', 'admin', :t), ('u1', 'old', 'operator', :t)"
                ),
                {"t": T0},
            )
        migrate(db, "head")
        with db.engine.connect() as conn:
            users_after = conn.execute(
                text("SELECT id, default_workspace_id, session_version FROM users ORDER BY id")
            ).all()
            members = conn.execute(
                text("SELECT workspace_id, disabled, tokens_not_before FROM memberships ORDER BY workspace_id")
            ).all()
        assert [tuple(r) for r in users_after] == [("u1", "old", 0), ("u2", None, 0)]
        assert [(r[0], bool(r[1]), r[2]) for r in members] == [("new", False, None), ("old", False, None)]
        assert "invitations" in tables(db)
        migrate(db, "0009", down=True)
        assert "invitations" not in tables(db)
        assert "default_workspace_id" not in columns(db, "users")
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM memberships")).scalar() == 2
    finally:
        back_at_head(db, "memberships", "users", "workspaces")


def test_0012_brings_approvals_and_started_by_as_the_models_say_and_takes_them_back(database_url):
    db = Database(database_url)
    try:
        ours = differences_from_models(db, "approvals", "started_by")  # the table and the column match the models
        assert ours == [], ours
        with db.engine.begin() as conn:
            workspace_and_workflow(conn)
            _cancelled_execution(conn)
        migrate(db, "0011", down=True)
        names = tables(db)
        assert "approvals" not in names
        assert "started_by" not in columns(db, "executions")
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT id FROM executions")).scalar() == "ex"
        migrate(db, "head")
        assert "approvals" in tables(db)
    finally:
        back_at_head(db, "approvals", "executions", "audit_events", "workflows", "policy_settings", "workspaces")


def test_0025_brings_agents_gateway_calls_and_executionless_approvals_and_takes_them_back(database_url):
    db = Database(database_url)
    try:
        # the new tables and the approvals' change match the models
        ours = differences_from_models(db, "agent_identities", "gateway_calls", "approvals")
        assert ours == [], ours
        indexes = {i["name"]: i for i in inspect(db.engine).get_indexes("approvals")}
        assert "ix_approvals_due" in indexes  # made again after the batch copy, with its WHERE clause
        with db.engine.begin() as conn:
            workspace_and_workflow(conn)
            _cancelled_execution(conn)
            for ident, execution in (("a1", "'ex'"), ("a2", "NULL")):
                conn.execute(
                    text(
                        "INSERT INTO approvals (id, workspace_id, execution_id, step_id, kind, status, message, "
                        "approvers, quorum, separate_duties, decisions, replies, on_timeout, created_at, row_version) "
                        f"VALUES (:id, 'ws', {execution}, 's', 'step', 'pending', '', '{{}}', 1, false, '[]', '{{}}', "
                        "'reject', :t, 1)"
                    ),
                    {"id": ident, "t": T0},
                )
        migrate(db, "0024", down=True)
        names = tables(db)
        assert "agent_identities" not in names and "gateway_calls" not in names
        with db.engine.connect() as conn:  # the step's approval stays; the execution-less one cannot
            assert [r[0] for r in conn.execute(text("SELECT id FROM approvals"))] == ["a1"]
        with pytest.raises(IntegrityError), db.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO approvals (id, workspace_id, execution_id, step_id, kind, status, message, approvers, "
                    "quorum, separate_duties, decisions, replies, on_timeout, created_at, row_version) VALUES "
                    "('a3', 'ws', NULL, 's', 'step', 'pending', '', '{}', 1, false, '[]', '{}', 'reject', :t, 1)"
                ),
                {"t": T0},
            )
        migrate(db, "head")
        assert "gateway_calls" in tables(db)
    finally:
        back_at_head(db, "approvals", "executions", "audit_events", "workflows", "policy_settings", "workspaces")
