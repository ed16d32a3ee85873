"""The database: one engine and session factory per app, SQLite (WAL) or PostgreSQL by URL."""
from __future__ import annotations

import _thread
import logging
import os
import random
import sqlite3
import sys
import time
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from sqlalchemy import bindparam, create_engine, event, insert, inspect, select, text, update
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, make_transient, make_transient_to_detached
from sqlalchemy.pool import NullPool
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm import LoaderCallableStatus

from services import jsontext

log = logging.getLogger(__name__)


def _prepare_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection, _record):
        # Coach issues BEGIN itself (Transaction.raw; the "begin" event below for plain Core connections such as
        # migrations'): pysqlite's own BEGIN would be deferred.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        # Checkpoint (copy the WAL into the database file, with an fsync of each) every ~40 MB of WAL instead
        # of SQLite's default 4 MB: a decision writes ~16-18 pages, so the default checkpointed every ~55
        # decisions, inside one of them (its latency) and at an fsync each time.
        cursor.execute("PRAGMA wal_autocheckpoint=10000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(conn):
        # A Core connection's transaction (migrations, tests' raw writes) begins IMMEDIATE as a Transaction's
        # does (see there); a Transaction's own Core connection finds BEGIN done already (BEGUN).
        options = conn.get_execution_options()
        if not options.get(BEGUN):
            conn.connection.dbapi_connection.execute("BEGIN IMMEDIATE")


BEGUN = "coach_begun"  # a Transaction's connection: BEGIN went to the driver when it started


def row_locks(session: Session) -> bool:
    """Whether this database needs row locks (SELECT … FOR UPDATE) to keep concurrent writers apart:
    PostgreSQL does; SQLite's write transactions start with BEGIN IMMEDIATE, one writer at a time."""
    return session.bind.dialect.name == "postgresql"


def held(session: Session, model, key):
    """session.get that keeps the object for the rest of the transaction (SQLAlchemy's identity map is
    weak: an unmodified row nobody references would be forgotten and read again by the next get). Without
    the ORM session (a Transaction that did not need it yet) the row is read with a prepared SELECT."""
    kept = session.info.setdefault(HELD, {})
    obj = kept.get((model, key))
    if obj is None:
        if isinstance(session, Transaction) and session._orm is None:
            found = load_objects(session, ("held", model.__tablename__), lambda: _by_key(model), {"_pk": key},
                                 (model,))
            return found[0] if found else None
        obj = session.get(model, key)
        if obj is not None:
            kept[(model, key)] = obj
    return obj


def _by_key(model):
    (pk,) = model.__table__.primary_key.columns
    return select(*columns_of(model)).where(pk == bindparam("_pk"))


def hold(session: Session, obj) -> None:
    """Keep an object loaded another way for `held` (a single-column primary key, as all the hot rows have).
    A loaded row joins the transaction's ORM Session, if it has one, as those held before it was made did."""
    model = type(obj)
    key = _PK_KEY.get(model) or _pk_key(model)
    session.info.setdefault(HELD, {})[(model, getattr(obj, key))] = obj
    orm = session._orm if isinstance(session, Transaction) else None
    if orm is not None:
        state = inspect(obj)
        if state.key is not None and state.session is None:
            orm.add(obj)


HELD = "held"
_PK_KEY: dict[type, str] = {}


def _pk_key(model) -> str:
    found = _PK_KEY[model] = inspect(model).primary_key[0].key
    return found


def connection(session: Session):
    """The transaction's SQLAlchemy Connection, for Core statements."""
    return session.core


class Prepared:
    """A Core statement compiled once per dialect and driver and run on the driver's cursor, for the few
    statements every decision runs. SQLAlchemy's per-execution work (statement cache lookup, execution
    context, parameter and result bookkeeping) costs several times what the database spends on such a
    statement. Values still go through the column types' own processors (JSON, UTC datetimes, step states),
    so the rows written and read are exactly those of an ordinary execute, and driver errors become
    SQLAlchemy's; but no execution events run (a statement counter built on them does not see these).

    Parameters are a dict by bind name; defaults and onupdate values the statement would compute itself must
    be in it (insert_row and write_changes put them there)."""

    __slots__ = ("sql", "names", "binds", "fixed", "columns", "dialect", "results")

    def __init__(self, statement, dialect, column_keys=None):
        compiled = statement.compile(dialect=dialect, column_keys=column_keys)
        if compiled.positional:  # Database makes every engine use named parameters (SQLite's: paramstyle="named")
            raise ValueError(f"{dialect.name}+{dialect.driver} uses positional parameters; Prepared needs named ones")
        self.sql = compiled.string
        self.names = tuple(compiled.binds)
        # each type's processor for this dialect, through the public TypeEngine API (TypeDecorators and variants
        # resolved by dialect_impl); made once per statement, so SQLAlchemy's own per-type cache is not needed
        self.binds = tuple(compiled.binds[n].type.dialect_impl(dialect).bind_processor(dialect) for n in self.names)
        # values the statement carries itself (a LIMIT, a literal compared with)
        self.fixed = {n: b.value for n, b in compiled.binds.items() if not b.required}
        self.columns, self.dialect = tuple(getattr(statement, "exported_columns", ())), dialect
        self.results = None  # made from the first result's description: some drivers' processors need its types

    def _params(self, values: dict[str, Any], binds: tuple | None = None):
        if self.fixed:
            values = {**self.fixed, **values}
        return {n: values[n] if p is None else p(values[n]) for n, p in zip(self.names, binds or self.binds)}

    def execute(self, session: Session, values: dict[str, Any]) -> int:
        """Run an INSERT or UPDATE; returns how many rows it changed."""
        return self._run(session, "execute", self._params(values))[1]

    def execute_many(self, session: Session, rows: list[dict[str, Any]], same: dict[str, Any] | None = None) -> int:
        """Run a statement once per row. `same`: values that are the same in every row, processed once."""
        binds = None
        if same:
            same = {n: (same[n] if p is None else p(same[n])) for n, p in zip(self.names, self.binds) if n in same}
            binds = tuple(None if n in same else p for n, p in zip(self.names, self.binds))
            rows = [{**v, **same} for v in rows]
        return self._run(session, "executemany", [self._params(v, binds) for v in rows])[1]

    def rows(self, session: Session, values: dict[str, Any]) -> list[tuple]:
        """A SELECT's (or a RETURNING's) rows as tuples of Python values, each through its type's processor."""
        return self._processed(self._run(session, "execute", self._params(values), fetch=True)[0])

    def read_alone(self, db: Database, values: dict[str, Any]) -> list[tuple]:
        """`rows` as a read of its own, on a pooled connection and without a session (whose setup would cost
        more than the SELECT): for a check that runs on every socket event."""
        raw = db.engine.raw_connection()
        try:
            cursor = raw.cursor()
            try:
                return self._processed(self._on(cursor, "execute", self._params(values), fetch=True)[0])
            finally:
                cursor.close()
        finally:
            raw.close()  # back to the pool, which ends any transaction the driver began

    def _processed(self, found: list) -> list[tuple]:
        procs = self.results
        return [tuple(v if p is None else p(v) for v, p in zip(row, procs)) for row in found]

    def _run(self, session: Session, method: str, params, fetch: bool = False) -> tuple[list, int]:
        return self._on(session.cursor(), method, params, fetch)

    def _on(self, cursor, method: str, params, fetch: bool) -> tuple[list, int]:
        # Straight on the driver's cursor (the statement is already compiled): SQLAlchemy's execution path
        # would cost more than the statement. Driver errors become SQLAlchemy's, as in any execute, so
        # callers catch sqlalchemy.exc.IntegrityError and the like as usual.
        try:
            getattr(cursor, method)(self.sql, params)
            found = cursor.fetchall() if fetch else []
            if fetch and self.results is None:  # some drivers' result processors need the column types
                self.results = tuple(c.type.dialect_impl(self.dialect).result_processor(self.dialect, d[1])
                                     for c, d in zip(self.columns, cursor.description))
            return found, cursor.rowcount
        except self.dialect.loaded_dbapi.Error as exc:
            raise _translated(self.dialect, self.sql, params, exc) from exc


_PREPARED: dict[tuple, Prepared] = {}


def prepared(where: Session | Database, key: tuple, build: Callable[[], Any], column_keys=None) -> Prepared:
    """The statement `build()` makes, compiled once for this session's (or database's) dialect, cached under `key`."""
    dialect = where.engine.dialect if isinstance(where, Database) else where.bind.dialect
    full = (dialect.name, dialect.driver, *key)  # the driver decides the parameter style
    found = _PREPARED.get(full)
    if found is None:
        found = _PREPARED[full] = Prepared(build(), dialect, column_keys)
    return found


def load_objects(session: Session, key: tuple, build: Callable[[], Any], values: dict[str, Any],
                 models: tuple) -> tuple | None:
    """The first row of a prepared SELECT of `models`' full column lists (in that order), as persistent
    ORM objects of this session, as if the ORM had loaded them: changes to them are tracked from here.
    For the decision path, where the ORM's loading machinery costs several times the SELECT itself.
    None when no row matched."""
    rows = prepared(session, key, build).rows(session, values)
    if not rows:
        return None
    row, start, out = rows[0], 0, []
    for model in models:
        names = _COLUMN_KEYS.get(model) or _column_keys(model)
        out.append(_persistent(session, model, dict(zip(names, row[start:start + len(names)]))))
        start += len(names)
    for obj in out:  # the identity map is weak: keep them for the transaction
        hold(session, obj)
    return tuple(out)


def columns_of(*models) -> list:
    """Every column of these models' tables, in order: the select list `load_objects` expects."""
    return [c for model in models for c in model.__table__.columns]


_COLUMN_KEYS: dict[type, tuple[str, ...]] = {}


def _column_keys(model) -> tuple[str, ...]:
    """The model's column attribute names, in table order (cached)."""
    found = _COLUMN_KEYS[model] = tuple(c.key for c in model.__table__.columns)
    _COLUMN_SETS[model] = frozenset(found)
    return found


_COLUMN_SETS: dict[type, frozenset[str]] = {}


def _persistent(session: Session, model, values: dict[str, Any]):
    mapper = inspect(model)
    pk = [values[c.key] for c in mapper.primary_key]
    orm = session._orm if isinstance(session, Transaction) else session
    present = (orm.identity_map.get(mapper.identity_key_from_primary_key(pk)) if orm is not None
               else session.info.get(HELD, {}).get((model, pk[0])))
    if present is not None:  # already loaded in this transaction (maybe changed): that one counts
        return present
    # every column is given (callers select the full column list), so NewId's constructor defaults nothing and
    # records no change; make_transient_to_detached makes the values the loaded state, the primary key the identity
    obj = model(**values)
    make_transient_to_detached(obj)
    if orm is not None:
        orm.add(obj)
    return obj


def insert_row(session: Session, obj) -> None:
    """Write a new object's row now with one INSERT, outside the unit of work: for rows a hot path only
    appends (audit events, decisions, suggestions), where the flush's bookkeeping costs more than the INSERT.
    The object stays out of the session, so later changes to it are not saved."""
    insert_values(session, type(obj), obj.__dict__)


def insert_values(session: Session, model, values: dict[str, Any]) -> None:
    """A new row of `model` from its column values (models.row_values fills the defaults) with one INSERT: for
    rows that are only appended, without an ORM object at all. Columns not in `values` are left to the database."""
    table = model.__table__
    names = _COLUMN_KEYS.get(model) or _column_keys(model)
    if not values.keys() >= _COLUMN_SETS[model]:  # not every column given (NewId fills them all): those that are
        names = tuple(n for n in names if n in values)
    stmt = prepared(session, (table.name, "insert", names), lambda: insert(table), column_keys=list(names))
    stmt.execute(session, values)


def write_changes(session: Session, obj: object | None) -> None:
    """Write a loaded object's changed columns now with one UPDATE by primary key, as the flush would
    (version column checked and bumped, `onupdate` defaults filled), and mark them saved, so the flush at
    commit has nothing to do for it: one object's write without the unit of work's bookkeeping.
    Columns set back to what was loaded (a status that went running and back to waiting) are left out, and
    with nothing really changed nothing is written: an indexed column in the SET list costs its index pages
    even when its value stays the same."""
    state = inspect(obj) if obj is not None else None
    if state is None or state.key is None or state.deleted or not state.committed_state:
        return  # nothing loaded, or a new object (the flush inserts it), or nothing changed
    table, mapper = obj.__table__, state.mapper
    (pk,) = table.primary_key.columns
    # columns only: anything else (a relationship) stays for the flush
    touched = [key for key in state.committed_state if key in table.c]
    values = {key: state.dict[key] for key in touched if _differs(state.committed_state[key], state.dict[key])}
    if values:
        fills = _ONUPDATE.get(table)
        for key, fill in fills if fills is not None else _onupdate(table):
            if key not in values:
                values[key] = fill(None)
        params = {**values, "_pk": getattr(obj, pk.key)}
        version = mapper.version_id_col
        if version is not None:
            params["_version"] = state.dict[version.key]
            values[version.key] = params["_version"] + 1
            params[version.key] = values[version.key]
        names = tuple(values)

        def build():
            where = pk == bindparam("_pk")
            if version is not None:
                where = where & (version == bindparam("_version"))
            return update(table).where(where).values({n: bindparam(n) for n in names})

        if prepared(session, (table.name, "update", names), build).execute(session, params) != 1:
            raise StaleDataError(f"UPDATE statement on table '{table.name}' expected to update 1 row(s); "
                                 "0 were matched.")
    # every change was a column's and is saved now, on an object in no Session: marked unmodified at once (below)
    whole = state.session is None and len(touched) == len(state.committed_state)
    for key in () if whole else touched:
        set_committed_value(obj, key, state.dict[key])
    for key, value in values.items():  # the values the UPDATE computed (onupdate, version) go into the object
        if not whole or key not in state.committed_state:
            set_committed_value(obj, key, value)
    if whole:
        # Everything is saved: the object is marked unmodified again (public API: transient, then detached with
        # its identity, which commits every loaded value), or an ORM Session this transaction adds it to
        # would compare all its attributes with what was loaded at its flush. An
        # object in a Session is left to that Session: its flush finds no change and writes nothing.
        make_transient(obj)
        make_transient_to_detached(obj)


_ONUPDATE: dict[Any, tuple] = {}


def _onupdate(table) -> tuple:
    """The table's columns with a Python-side `onupdate` default, and its function (cached): every UPDATE fills them."""
    found = _ONUPDATE[table] = tuple((c.key, c.onupdate.arg) for c in table.columns
                                     if c.onupdate is not None and c.onupdate.is_callable)
    return found


def _differs(before: Any, now: Any) -> bool:
    # NO_VALUE: changed in place (flag_modified) or never loaded: always written
    return before is LoaderCallableStatus.NO_VALUE or (before is not now and before != now)


class Transaction:
    """One database transaction: a pooled driver connection, begun when first used, with the ORM Session only
    when something asks for it. It stands in for the Session the services are written against: what it does not
    define itself (`scalar`, `execute`, `add`, `flush`, `get` …) is the Session's, made on first use on this
    transaction's connection. The decision path needs none of it (prepared statements, `held` and
    `load_objects` rows, `insert_row`, `write_changes`): a Session's own begin, commit and close cost several
    times the SQL of a decision's transaction.

    Without a Session, rows loaded here are detached ORM objects that this transaction holds; their changes
    are written at commit (`write_changes`), as a flush would. When the Session is made, they join it, so from
    then on there is one object per row and the flush writes them as usual.

    Hooks (`on("before_commit")`): run at commit, before anything is written (services.metrics writes the
    metric rows this transaction changed)."""

    def __init__(self, db: Database, *, read_only: bool = False):
        self.bind, self._sqlite, self._read_only = db.engine, db.is_sqlite, read_only
        self.info: dict[str, Any] = {}
        self._raw = self._core = self._orm = self._begun = self._cursor = None
        self._committed = False

    @property
    def raw(self):
        """The pooled driver connection, its transaction begun on first use (as a Session's would be)."""
        if self._raw is None:
            raw = self.bind.raw_connection()
            if self._sqlite:
                # IMMEDIATE takes the write lock up front: a deferred transaction that reads and then writes fails
                # with "database is locked" instead of waiting when another writer got in first. Reads stay
                # deferred: in WAL mode they run beside a writer. (PostgreSQL's driver begins by itself.)
                begin = "BEGIN" if self._read_only else "BEGIN IMMEDIATE"
                try:
                    _driver(self.bind.dialect, begin, lambda: raw.dbapi_connection.execute(begin))
                except BaseException:
                    raw.close()
                    raise
            self._raw = raw
        return self._raw

    def cursor(self):
        """The driver cursor this transaction's prepared statements run on, one after the other (each has all its
        rows fetched before the next runs): made once, not per statement."""
        if self._cursor is None:
            self._cursor = self.raw.cursor()
        return self._cursor

    def get_bind(self, *args, **kwargs) -> Engine:
        return self.bind

    @property
    def core(self):
        """A SQLAlchemy Connection on this transaction's connection (made on first use)."""
        if self._core is None:
            core = Connection(self.bind, connection=self.raw)
            core.execution_options(**{BEGUN: True})  # no second BEGIN (services.db's begin event)
            self._begun = core.begin()
            self._core = core
        return self._core

    @property
    def orm(self) -> Session:
        """The ORM Session of this transaction (made on first use), sharing `info` and the held objects."""
        if self._orm is None:
            orm = Session(bind=self.core, expire_on_commit=False, autoflush=False,
                          join_transaction_mode="rollback_only")
            # one `info` for both (Session(info=...) would copy it): what was put there before is moved over
            orm.info.update(self.info)
            self.info = orm.info
            for obj in self.info.get(HELD, {}).values():
                state = inspect(obj)
                if state.key is not None and state.session is None:  # loaded rows (new ones are written already)
                    orm.add(obj)
            self._orm = orm
        return self._orm

    def __getattr__(self, name: str):
        return getattr(self.orm, name)

    def commit(self) -> None:
        for hook in _HOOKS["before_commit"]:
            hook(self)
        if self._orm is not None:
            self._orm.flush()
        else:
            for obj in list(self.info.get(HELD, {}).values()):
                write_changes(self, obj)
        if self._begun is not None:
            self._begun.commit()
        elif self._raw is not None:
            # SQLite: COMMIT as a statement, prepared once (the driver's statement cache); the driver's commit()
            # prepares it anew every time
            _driver(self.bind.dialect, "COMMIT", self._sqlite_commit if self._sqlite else self._raw.commit)
        self._committed = True

    def _sqlite_commit(self) -> None:
        self._raw.dbapi_connection.execute("COMMIT")

    def rollback(self) -> None:
        if self._begun is not None and self._begun.is_active:
            self._begun.rollback()
        elif self._raw is not None:
            self._raw.rollback()

    def close(self) -> None:
        """Give the connection back (a transaction neither committed nor rolled back is rolled back)."""
        if self._cursor is not None:
            self._cursor.close()
        if self._orm is not None:
            self._orm.close()
        if self._core is not None:
            self._core.close()  # the driver connection goes back to the pool with it
        elif self._raw is not None:
            self._raw.close()


_HOOKS: dict[str, list[Callable[[Transaction], None]]] = {"before_commit": []}


def on(moment: str):
    """Register a function to run at that moment of every Transaction (see Transaction)."""
    def register(fn):
        _HOOKS[moment].append(fn)
        return fn
    return register


def _driver(dialect, sql: str, call: Callable[[], Any]) -> Any:
    """A call on the driver's connection (BEGIN, COMMIT), its errors become SQLAlchemy's as a statement's do."""
    try:
        return call()
    except dialect.loaded_dbapi.Error as exc:
        raise _translated(dialect, sql, None, exc) from exc


def _translated(dialect, sql: str, params, exc: Exception) -> DBAPIError:
    """The driver's error as SQLAlchemy raises it (IntegrityError, OperationalError …), as any execute would."""
    return DBAPIError.instance(sql, params, exc, dialect.loaded_dbapi.Error, dialect=dialect)


# -- transient errors: the same transaction, tried again from its start, may well not meet them -------------------

# PostgreSQL's serialization_failure and deadlock_detected: the database chose this transaction to give way
TRANSIENT_SQLSTATES = frozenset({"40001", "40P01"})
_SQLITE_BUSY = ("database is locked", "database is busy", "database table is locked")
T = TypeVar("T")


def is_transient(exc: BaseException) -> bool:
    """Whether `exc` is an error a new try of the whole transaction may well not meet: a PostgreSQL deadlock or
    serialization failure, SQLite's "database is locked" (its busy timeout ran out), or a write whose version
    check found the row changed since it was read (StaleDataError). The failed transaction committed nothing."""
    if isinstance(exc, StaleDataError):
        return True
    if not isinstance(exc, DBAPIError):
        return False
    orig = exc.orig
    if getattr(orig, "sqlstate", None) in TRANSIENT_SQLSTATES or getattr(orig, "pgcode", None) in TRANSIENT_SQLSTATES:
        return True
    return isinstance(orig, sqlite3.OperationalError) and any(text in str(orig) for text in _SQLITE_BUSY)


def retrying(attempt: Callable[[], T], *, tries: int = 6, delay: float = 0.005, max_delay: float = 0.4,
             what: str = "a transaction", sleep: Callable[[float], None] = time.sleep) -> T:
    """attempt(), tried again while it fails with a transient error (is_transient), at most `tries` times in all,
    after a random pause around `delay` that doubles each time (up to `max_delay`); any other error, and the last
    transient one, goes to the caller. `attempt` runs a whole transaction (Database.transaction inside it) and
    anything that must not outlive a failed try (events to push, objects read): a failed try committed nothing."""
    for n in range(1, tries + 1):
        try:
            return attempt()
        except Exception as exc:
            if n == tries or not is_transient(exc):
                raise
            log.info("%s met a transient error (try %d of %d), trying again: %s", what, n, tries,
                     getattr(exc, "orig", None) or exc)
        sleep(delay * (0.5 + random.random()))
        delay = min(max_delay, delay * 2)
    raise AssertionError("unreachable")


class Database:
    def __init__(self, url: str):
        self.url = url
        parsed = make_url(url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        kwargs: dict = {"future": True, "json_serializer": jsontext.dumps, "json_deserializer": jsontext.loads}
        if self.is_sqlite:
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
            # named parameters (sqlite3 takes both styles): Prepared maps values by name without reaching into
            # the compiled statement's positional order
            kwargs["paramstyle"] = "named"
        else:
            kwargs.update(pool_pre_ping=True, pool_size=10, max_overflow=20)
        if parsed.drivername == "postgresql":  # the driver Coach installs (SQLAlchemy 2.0 would pick psycopg2)
            parsed = parsed.set(drivername="postgresql+psycopg")
        self.engine = create_engine(parsed, **kwargs)
        self.checkpointer: Checkpointer | None = None
        if self.is_sqlite:
            _prepare_sqlite(self.engine)
            if parsed.database and parsed.database != ":memory:":
                self.checkpointer = Checkpointer(parsed.database)
                weakref.finalize(self, self.checkpointer.stop)  # a Database nobody disposed of
        self._aside_engine: Engine | None = None
        self._aside_args = {k: kwargs[k] for k in ("connect_args", "json_serializer", "json_deserializer")
                            if k in kwargs}

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

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A transaction that commits at the end of the block, or rolls back on any error."""
        tx = Transaction(self)
        try:
            yield tx
            tx.commit()
        except BaseException:
            tx.rollback()
            raise
        finally:
            tx.close()

    @contextmanager
    def read(self) -> Iterator[Transaction]:
        """A transaction for reads only: never takes SQLite's write lock, and is rolled back at the end."""
        tx = Transaction(self, read_only=True)
        try:
            yield tx
        finally:
            try:
                tx.rollback()
            finally:
                tx.close()

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
