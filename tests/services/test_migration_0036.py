"""0036_slack_message_updates brings the outbox's Slack message columns and a route's Slack channel as the models say,
and keeps the outbox and the routes across its downgrade and upgrade (SQLite, and PostgreSQL when it answers)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import text

from services.db import Database
from tests.support.migrations import back_at_head, columns, differences_from_models, migrate

TABLES = {"notification_outbox", "notification_routes"}


def test_0036_brings_slack_message_columns_as_the_models_say_and_takes_them_back_keeping_the_rows(database_url):
    db = Database(database_url)
    at = datetime(2026, 11, 28, tzinfo=UTC)
    try:
        assert differences_from_models(db, *TABLES) == []
        migrate(db, "0035_gateway_builtins", down=True)
        assert "slack_ts" not in columns(db, "notification_outbox")
        assert "slack_channel" not in columns(db, "notification_routes")
        with db.engine.begin() as conn:  # a row and a route written before 0036
            conn.execute(
                text(
                    "INSERT INTO notification_outbox (id, workspace_id, event_id, kind, channel, recipient, "
                    "address, payload, status, attempts, next_attempt_at, created_at) VALUES ('o1', 'w1', "
                    "'approval:a1', 'approval_requested', 'slack', 'channel', 'C0REVIEWS', '{}', 'sent', 1, "
                    ":t, :t)"
                ),
                {"t": at},
            )
            conn.execute(
                text(
                    "INSERT INTO notification_routes (id, workspace_id, name, events, users, escalate_users, "
                    "enabled, created_at) VALUES ('r1', 'w1', 'ops', '[]', '[\"a@x\"]', '[]', true, :t)"
                ),
                {"t": at},
            )
        migrate(db, "head")
        with db.engine.connect() as conn:
            row = conn.execute(
                text("SELECT address, approval_id, slack_channel, slack_ts FROM notification_outbox")
            ).one()
            route = conn.execute(text("SELECT name, slack_channel FROM notification_routes")).one()
        assert tuple(row) == ("C0REVIEWS", None, None, None) and tuple(route) == ("ops", None)
    finally:
        back_at_head(db, "notification_outbox", "notification_routes")
