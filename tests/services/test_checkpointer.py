"""SQLite's WAL is copied into the database file by a thread of its own (services.db.Checkpointer), not inside
whichever commit crosses the threshold: the WAL stays small, and nothing is lost."""

from __future__ import annotations

import os
import time

from sqlalchemy import text

from services.db import Checkpointer, Database
from services.migrate import upgrade


def test_the_wal_is_checkpointed_beside_the_writers_and_every_row_stays(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'wal.db'}")
    upgrade(db)
    db.checkpointer.stop()
    # the WAL file keeps the size of its largest transaction: start from an empty one, not from the migrations'
    # (their footprint grows with every migration added, and would cross the bound below on its own)
    raw = db.engine.raw_connection()
    try:
        raw.dbapi_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        raw.close()
    checkpointer = db.checkpointer = Checkpointer(str(tmp_path / "wal.db"), pages=20, interval=0.02)
    try:
        with db.engine.begin() as conn:
            conn.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"))
        for i in range(400):  # about a page per commit, 20 times the threshold
            with db.transaction() as tx:
                tx.execute(text("INSERT INTO t (v) VALUES (:v)"), {"v": "x" * 1500})
            if i % 50 == 0:
                time.sleep(0.05)  # let it run now and then, as a server's idle moments do
        deadline = time.monotonic() + 30
        while checkpointer.done < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert checkpointer.done >= 2
        # the WAL started over after a checkpoint instead of growing by every commit (400 pages and more)
        assert os.path.getsize(tmp_path / "wal.db-wal") < 200 * 4096
        with db.read() as tx:
            assert tx.execute(text("SELECT count(*) FROM t")).scalar() == 400
    finally:
        db.dispose()
    time.sleep(0.1)
    done = checkpointer.done
    time.sleep(0.1)
    assert checkpointer.done == done  # stopped with the database
