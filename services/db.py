"""The database: one engine and one sessionmaker per app, SQLite (WAL) or PostgreSQL by URL.

A write runs in a unit of work (services/unit_of_work.py) around a plain SQLAlchemy Session (`Database.transaction`,
which only the unit of work opens); `with db.read() as session:` only reads. The session's identity map is the one
cache a caller must know about; it holds what the transaction loaded for as long as the transaction lasts
(SQLAlchemy's "strong reference" recipe, strong_reference_session), so a second `session.get` of a row costs no
statement. Transient errors (deadlocks,
serialization failures, SQLite's busy database, a stale version) are tried again by one layer, `retrying`."""

from __future__ import annotations

import _thread
import logging
import os
import sqlite3
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import CursorResult, Engine, Result, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.pool import NullPool
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from services import jsontext

log = logging.getLogger(__name__)

READ_ONLY = "coach_read_only"  # execution option of the engine db.read() sessions use


def _prepare_sqlite(engine: Engine) -> None:
    """SQLAlchemy's documented pysqlite recipe: the driver's own transaction handling off, BEGIN emitted in the
    `begin` event. A write transaction begins IMMEDIATE (it takes the write lock up front: a deferred one that reads
    and then writes fails with "database is locked" instead of waiting when another writer got in first); a read
    stays deferred and, in WAL mode, runs beside a writer."""

    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        # the WAL is copied into the database file by the Checkpointer's thread; SQLite's own checkpoint inside a
        # commit (its default every 4 MB of WAL) is a backstop at ~40 MB
        cursor.execute("PRAGMA wal_autocheckpoint=10000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(conn):
        conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get(READ_ONLY) else "BEGIN IMMEDIATE")


def row_locks(session: Session) -> bool:
    """Whether this database needs row locks (SELECT … FOR UPDATE) to keep concurrent writers apart:
    PostgreSQL does; SQLite's write transactions start with BEGIN IMMEDIATE, one writer at a time."""
    return session.get_bind().dialect.name == "postgresql"


def rowcount(result: Result[Any]) -> int:
    """The rows an UPDATE or a DELETE matched (SQLAlchemy types what Session.execute answers as a Result; a DML
    statement's is a CursorResult)."""
    if not isinstance(result, CursorResult):
        raise TypeError(f"a {type(result).__name__} has no row count")
    return result.rowcount


def strong_reference_session(maker: sessionmaker) -> None:
    """Sessions of `maker` hold every object they loaded or wrote until they end: SQLAlchemy's "strong reference"
    recipe (Session Referencing Behavior), its set kept in the session's `info`. The identity map alone holds its
    objects weakly, so a row read once, dropped by the code, would be read again by a later `get`."""

    @event.listens_for(maker, "pending_to_persistent")
    @event.listens_for(maker, "deleted_to_persistent")
    @event.listens_for(maker, "detached_to_persistent")
    @event.listens_for(maker, "loaded_as_persistent")
    def strong_ref_object(sess: Session, instance: Any) -> None:
        if "refs" not in sess.info:
            sess.info["refs"] = refs = set()
        else:
            refs = sess.info["refs"]
        refs.add(instance)

    @event.listens_for(maker, "persistent_to_detached")
    @event.listens_for(maker, "persistent_to_deleted")
    @event.listens_for(maker, "persistent_to_transient")
    def deref_object(sess: Session, instance: Any) -> None:
        sess.info["refs"].discard(instance)


# -- transient errors: the same transaction, tried again from its start, may well not meet them -------------------

# PostgreSQL's serialization_failure and deadlock_detected: the database chose this transaction to give way
TRANSIENT_SQLSTATES = frozenset({"40001", "40P01"})
_SQLITE_BUSY = ("database is locked", "database is busy", "database table is locked")
# PostgreSQL's too_many_connections (53300) at connect time, where psycopg gives the server's message but no SQLSTATE
_TOO_MANY_CONNECTIONS = "sorry, too many clients already"
T = TypeVar("T")


def is_transient(exc: BaseException) -> bool:
    """Whether `exc` is an error a new try of the whole transaction may well not meet: a lost connection, a
    PostgreSQL deadlock or serialization failure, a new connection refused because the server has too many, SQLite's
    "database is locked" (its busy timeout ran out), or a write whose version check found the row changed since it was
    read (StaleDataError). The failed transaction
    committed nothing (a connection lost during COMMIT itself is the one case that cannot tell)."""
    if isinstance(exc, StaleDataError):
        return True
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:  # the connection was gone: the pool is renewed and the transaction never ran
        return True
    orig = exc.orig
    if getattr(orig, "sqlstate", None) in TRANSIENT_SQLSTATES or getattr(orig, "pgcode", None) in TRANSIENT_SQLSTATES:
        return True
    if _TOO_MANY_CONNECTIONS in str(orig):  # PostgreSQL refused a new connection (its max_connections): one may free up
        return True
    return isinstance(orig, sqlite3.OperationalError) and any(text in str(orig) for text in _SQLITE_BUSY)


def retrying(
    attempt: Callable[[], T],
    *,
    tries: int = 6,
    delay: float = 0.005,
    max_delay: float = 0.4,
    what: str = "a transaction",
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """attempt(), tried again while it fails with a transient error (is_transient), at most `tries` times in all,
    after a random pause that grows exponentially from `delay` up to `max_delay` (tenacity); any other error, and
    the last transient one, goes to the caller. `attempt` runs a whole transaction (Database.transaction inside it)
    and anything that must not outlive a failed try (events to push, objects read): a failed try committed nothing."""

    def log_retry(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None  # (set once a try ran)
        log.info(
            "%s met a transient error (try %d of %d), trying again: %s",
            what,
            state.attempt_number,
            tries,
            getattr(exc, "orig", None) or exc,
        )

    return Retrying(
        retry=retry_if_exception(is_transient),
        stop=stop_after_attempt(tries),
        wait=wait_random_exponential(multiplier=delay, max=max_delay),
        sleep=sleep,
        before_sleep=log_retry,
        reraise=True,
    )(attempt)


class Database:
    def __init__(self, url: str, *, pool_size: int = 10, max_overflow: int = 20):
        """`pool_size` / `max_overflow`: each process's connections to a database server (PostgreSQL); a request
        that finds them all taken waits for one (up to 30 s). Keep every process's sum under the server's
        max_connections (COACH_DB_POOL_SIZE, COACH_DB_MAX_OVERFLOW; `make cluster` sizes its workers' smaller)."""
        self.url = url
        parsed = make_url(url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        kwargs: dict = {"json_serializer": jsontext.dumps, "json_deserializer": jsontext.loads}
        if self.is_sqlite:
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        else:
            # no pool_pre_ping: it sends a statement at every checkout, one round trip more for each transaction.
            # A pooled connection that went away (the server restarted, a backend was terminated) fails its first
            # statement instead; SQLAlchemy then invalidates the pool, and the transaction, tried again
            # (is_transient), runs on a new connection: the docs' "optimistic" disconnect handling
            kwargs.update(pool_size=pool_size, max_overflow=max_overflow)
        if parsed.drivername == "postgresql":  # the driver Coach installs (SQLAlchemy 2.0 would pick psycopg2)
            parsed = parsed.set(drivername="postgresql+psycopg")
        self.engine = create_engine(parsed, **kwargs)
        self.checkpointer: Checkpointer | None = None
        if self.is_sqlite:
            _prepare_sqlite(self.engine)
            if parsed.database and parsed.database != ":memory:":
                self.checkpointer = Checkpointer(parsed.database)
                weakref.finalize(self, self.checkpointer.stop)  # a Database nobody disposed of
        # expire_on_commit off: what a command loaded is still readable after its commit (answers, pushed events);
        # autoflush off: the unit of work writes at commit, or where the code says session.flush()
        self.Session = sessionmaker(self.engine, expire_on_commit=False, autoflush=False)
        # the same pool; on SQLite its transactions begin deferred (see _prepare_sqlite)
        self.read_engine = self.engine.execution_options(**{READ_ONLY: True})
        self.ReadSession = sessionmaker(self.read_engine, expire_on_commit=False, autoflush=False)
        strong_reference_session(self.Session)
        strong_reference_session(self.ReadSession)
        self._aside_engine: Engine | None = None
        self._aside_args = {
            k: kwargs[k] for k in ("connect_args", "json_serializer", "json_deserializer") if k in kwargs
        }

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """The session of a unit of work, for services/unit_of_work.py only: it commits at the end of the block, or
        rolls back on any error. Everything else writes in a unit of work (`services.command()`, `runner.command()`,
        `unit_of_work(db)`), which does what its modules left for before the commit and sends its events after it:
        a session from here does neither."""
        with self.Session.begin() as session:
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reads only: never takes SQLite's write lock, and is rolled back at the end."""
        with self.ReadSession() as session:
            yield session

    @contextmanager
    def aside(self) -> Iterator[Session]:
        """A short read on a connection of its own, outside the pool, for a lookup that may run while its caller
        holds a pooled connection in a transaction (a workspace's MCP tools, looked up by the runner). From the pool
        it could wait for a connection that callers like it hold: under load every pooled connection can be taken
        by transactions waiting for the one that waits for the pool."""
        if self._aside_engine is None:
            self._aside_engine = create_engine(self.engine.url, poolclass=NullPool, **self._aside_args)
        with Session(bind=self._aside_engine) as session:
            yield session

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    def dispose(self) -> None:
        if self._aside_engine is not None:
            self._aside_engine.dispose()
        if self.checkpointer is not None:
            self.checkpointer.stop()
        self.engine.dispose()


class Checkpointer:
    """SQLite: copies the WAL into the database file from an OS thread of its own, whenever the WAL has grown
    past `pages` pages, so that no commit pays for it. Left to SQLite, a checkpoint runs inside the commit that
    crosses its threshold: 50-75 ms of copying and two fsyncs, during which a gevent or eventlet server's event
    loop stands still and every decision arriving meanwhile waits (a large part of the server's p99).

    A PASSIVE checkpoint waits for nobody: writers go on, and it copies what readers no longer need; once all
    is copied, the next writer starts the WAL over. The connections' own wal_autocheckpoint (10,000 pages)
    stays as a backstop. The thread is a real OS thread also where gevent or eventlet patched threading
    (their green threads would run the checkpoint on the event loop), and sqlite3 lets other threads run while
    SQLite works."""

    def __init__(self, path: str, pages: int = 1000, interval: float = 0.25):
        self.path, self.wal, self.pages, self.interval = path, path + "-wal", pages, interval
        self.done = 0  # checkpoints run (for tests)
        self._stopped = False
        start, self._sleep = _native_threads()
        start(self._run, ())

    def stop(self) -> None:
        self._stopped = True

    def _run(self) -> None:
        connection, page_size = None, 4096
        try:
            while not self._stopped:
                self._sleep(self.interval)
                try:
                    if self._stopped or os.path.getsize(self.wal) < self.pages * page_size:
                        continue
                    if connection is None:
                        connection = sqlite3.connect(self.path, timeout=30)
                        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.done += 1
                except (OSError, sqlite3.Error) as exc:  # no WAL yet, or busy: try again at the next round
                    log.debug("checkpoint of %s skipped: %s", self.path, exc)
        finally:
            if connection is not None:
                connection.close()


def _native_threads():
    """(start_new_thread, sleep) that start and pause real OS threads, whatever gevent or eventlet patched."""
    if "gevent.monkey" in sys.modules:
        from gevent import monkey

        if monkey.is_module_patched("threading"):
            return monkey.get_original("_thread", "start_new_thread"), monkey.get_original("time", "sleep")
    if "eventlet.patcher" in sys.modules:
        from eventlet import patcher

        if patcher.is_monkey_patched("thread"):
            return patcher.original("_thread").start_new_thread, patcher.original("time").sleep
    return _thread.start_new_thread, time.sleep
