"""The per-event token check of socket connections (services.users.service.token_active), on each database backend."""

from __future__ import annotations

from services.db import Database
from services.users import service as users
from services.users import tokens


def test_token_active_until_revoked_or_unknown(database_url):
    db = Database(database_url)
    try:
        with db.transaction() as session:
            user = users.create_user(session, "socket@test.local", "password-123")
            token, secret = tokens.create_token(session, user, "socket")
        hashed = users.token_hash(secret)
        assert tokens.token_active(db, hashed) is True
        assert tokens.token_active(db, users.token_hash(secret + "x")) is False
        with db.transaction() as session:
            tokens.revoke_token(session, session.get(type(user), user.id), token.id)
        assert tokens.token_active(db, hashed) is False
    finally:
        db.dispose()
