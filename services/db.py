"""The database: one engine and session factory per app, SQLite (WAL) or PostgreSQL by URL."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sqlalchemy import bindparam, create_engine, event, insert, inspect, text, update
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.orm.attributes import set_committed_value


def _prepare_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection, _record):
        # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite's own BEGIN is deferred).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(conn):
        # IMMEDIATE takes the write lock up front: a deferred transaction that reads and then writes
        # fails with "database is locked" instead of waiting when another writer got in first.
        # Read-only transactions (Database.read) stay deferred: in WAL mode they run beside a writer.
        # Straight on the driver's connection: this runs for every transaction, and SQLAlchemy's statement
        # machinery (events, result handling) would cost more than the BEGIN itself.
        conn.connection.dbapi_connection.execute("BEGIN" if conn.get_execution_options().get(READ_ONLY)
                                                 else "BEGIN IMMEDIATE")


READ_ONLY = "coach_read_only"


def held(session: Session, model, key):
    """session.get that keeps the object for the rest of the transaction. SQLAlchemy's identity map is
    weak: an unmodified row nobody references is forgotten and read again by the next get."""
    obj = session.get(model, key)
    if obj is not None:
        session.info.setdefault("held", []).append(obj)
    return obj


def insert_row(session: Session, obj) -> None:
    """Write a new object's row now with one Core INSERT, outside the unit of work: for rows a hot path only
    appends (audit events, decisions, suggestions), where the flush's bookkeeping costs more than the INSERT.
    The object stays out of the session, so later changes to it are not saved."""
    table = obj.__table__
    values = obj.__dict__
    session.connection().execute(_insert_statement(table),
                                 {c.key: values[c.key] for c in table.columns if c.key in values})


def write_changes(session: Session, obj: object | None) -> None:
    """Write a loaded object's changed columns now with one Core UPDATE by primary key, as the flush would
    (version column checked and bumped, `onupdate` defaults filled), and mark them saved, so the flush at
    commit has nothing to do for it: one object's write without the unit of work's bookkeeping."""
    state = inspect(obj) if obj is not None else None
    if state is None or not state.persistent or not state.committed_state:
        return  # nothing loaded, or a new object (the flush inserts it), or nothing changed
    table, mapper = obj.__table__, state.mapper
    (pk,) = table.primary_key.columns
    # changed columns only: anything else (a relationship) stays for the flush
    values = {key: state.dict[key] for key in state.committed_state if key in table.c}
    if not values:
        return
    for column in table.columns:
        if column.onupdate is not None and column.key not in values and column.onupdate.is_callable:
            values[column.key] = column.onupdate.arg(None)
    params = {**values, "_pk": getattr(obj, pk.key)}
    version = mapper.version_id_col
    if version is not None:
        params["_version"] = state.dict[version.key]
        values[version.key] = params["_version"] + 1
        params[version.key] = values[version.key]
    stmt = _update_statement(table, pk, tuple(values), version)
    if session.connection().execute(stmt, params).rowcount != 1:
        raise StaleDataError(f"UPDATE statement on table '{table.name}' expected to update 1 row(s); 0 were matched.")
    for name, value in values.items():
        set_committed_value(obj, name, value)


# Built once per table and shape: SQLAlchemy then reuses their compiled form without recomputing keys.
_STATEMENTS: dict[tuple, object] = {}


def _insert_statement(table):
    key = (table.name, "insert")
    if key not in _STATEMENTS:
        _STATEMENTS[key] = insert(table)
    return _STATEMENTS[key]


def _update_statement(table, pk, names: tuple[str, ...], version):
    key = (table.name, "update", names)
    if key not in _STATEMENTS:
        where = pk == bindparam("_pk")
        if version is not None:
            where = where & (version == bindparam("_version"))
        _STATEMENTS[key] = update(table).where(where).values({n: bindparam(n) for n in names})
    return _STATEMENTS[key]


class Database:
    def __init__(self, url: str):
        self.url = url
        parsed = make_url(url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        kwargs: dict = {"future": True}
        if self.is_sqlite:
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        else:
            kwargs.update(pool_pre_ping=True, pool_size=10, max_overflow=20)
        self.engine = create_engine(url, **kwargs)
        if self.is_sqlite:
            _prepare_sqlite(self.engine)
        # no autoflush: services flush where they need to, instead of before every query
        self.sessions = sessionmaker(self.engine, expire_on_commit=False, autoflush=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session whose work commits at the end of the block, or rolls back on any error."""
        session = self.sessions()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reads only: never takes SQLite's write lock, and is rolled back at the end."""
        session = self.sessions()
        try:
            session.connection(execution_options={READ_ONLY: True})
            yield session
        finally:
            session.rollback()
            session.close()

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    def dispose(self) -> None:
        self.engine.dispose()
