"""The declarative base, ids and column types every concept's models share, and the read of a workspace's row by
its id."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TypeVar

import uuid_utils
from sqlalchemy import JSON, DateTime, Table, TypeDecorator
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.sqlite import DATETIME as SQLITE_DATETIME
from sqlalchemy.orm import DeclarativeBase

from core.errors import NotFound
from core.execution.engine import StepState

T = TypeVar("T")
JsonType = JSON().with_variant(JSONB(), "postgresql")


def new_id() -> str:
    """A UUIDv7 (RFC 9562, from uuid-utils) as 32 hex digits: 48 bits of Unix milliseconds, then random bits. Ids
    made later sort later, so a new row's id lands at the right edge of every index on it, the page an insert just
    wrote, instead of a random page per index (random ids made each decision write several more pages)."""
    return uuid_utils.uuid7().hex


def utcnow() -> datetime:
    return datetime.now(UTC)


class _SqliteUtcDateTime(SQLITE_DATETIME):
    """SQLite's DATETIME, its text written in one step: an aware value as UTC, the text exactly the dialect's
    storage format (`2026-11-24 15:54:07.080772`, microseconds always written). SQLAlchemy's own processor formats
    through a dict of seven fields, and every decision writes several datetimes."""

    cache_ok = True

    def bind_processor(self, dialect):
        dates = super().bind_processor(dialect)  # a date, or a type the dialect refuses: as SQLAlchemy does
        utc = UTC

        def process(value):
            if type(value) is not datetime:
                return dates(value) if dates is not None else value  # (SQLite's DATETIME has a processor)
            if value.tzinfo is utc:
                return value.isoformat(" ", "microseconds")[:26]  # less the "+00:00"
            if value.tzinfo is not None:
                value = value.astimezone(utc).replace(tzinfo=None)
            return value.isoformat(" ", "microseconds")

        return process


class UtcDateTime(TypeDecorator):
    """Timezone-aware UTC datetimes on every backend (SQLite stores them without an offset, as UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect):
        # SQLite: as UTC text (see there). PostgreSQL's timestamptz stores an aware value as the instant it is,
        # whatever its offset (no conversion needed), and gives it back aware
        return _SqliteUtcDateTime() if dialect.name == "sqlite" else super().load_dialect_impl(dialect)

    def process_result_value(self, value, dialect):
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class StepStates(TypeDecorator):
    """An execution's step states: stored as one JSON list in definition order, used as the ordered dict
    step_id → core StepState that the engine reads directly. Every field is written (rows written before
    session 9 left out those at their default: read the same)."""

    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect):
        return dialect.type_descriptor(JSONB() if dialect.name == "postgresql" else JSON())

    def process_bind_param(self, value, dialect):
        # the StepState objects themselves: the engine's JSON serializer (services.jsontext, orjson) writes each as
        # an object of all its fields, datetimes in ISO 8601, in C; rewritten on every change to an execution
        return None if value is None else list(value.values())

    def process_result_value(self, value, dialect):
        steps = {}
        for item in value or ():
            st = StepState(**item)
            started, finished = item.get("started_at"), item.get("finished_at")  # stored as ISO 8601 text
            if started is not None:
                st.started_at = _utc(datetime.fromisoformat(started))
            if finished is not None:
                st.finished_at = _utc(datetime.fromisoformat(finished))
            steps[st.step_id] = st
        return steps


class Base(DeclarativeBase):
    pass


def table_of(model: type[Base]) -> Table:
    """A mapped class's Table, for Core statements (SQLAlchemy types `__table__` as any FROM clause; a declarative
    class's is its Table)."""
    table = model.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not mapped to a table")
    return table


def in_workspace(session, model: type[T], workspace_id: str, row_id: str, what: str, **owned_by: str) -> T:
    """The `model` row `row_id` when it belongs to the workspace (and to what `owned_by` names, e.g. a hook's
    `workflow_id`); NotFound ("<what> <id> not found") otherwise, the same answer for another workspace's row as for
    none, so that ids of other tenants are not revealed."""
    row = session.get(model, row_id)
    if row is None or row.workspace_id != workspace_id or any(getattr(row, k) != v for k, v in owned_by.items()):
        raise NotFound(f"{what} {row_id} not found")
    return row


class FilledAtInit:
    """Ids and column defaults are filled when the object is made, not at flush, so an object can be
    read (pushed to clients, put in an answer) before anything is written."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for key, default in column_defaults(type(self))[1]:
            if key not in kwargs:
                setattr(self, key, default.arg(None) if default.is_callable else default.arg)


_DEFAULTS: dict[type, tuple[frozenset[str], tuple]] = {}


def column_defaults(cls) -> tuple[frozenset[str], tuple]:
    """A model's column keys, and the Python-side defaults filled at construction (scalars and callables)."""
    found = _DEFAULTS.get(cls)
    if found is None:
        columns = cls.__table__.columns
        found = _DEFAULTS[cls] = (
            frozenset(c.key for c in columns),
            tuple(
                (c.key, c.default)
                for c in columns
                if c.default is not None
                and (getattr(c.default, "is_scalar", True) or getattr(c.default, "is_callable", False))
            ),
        )
    return found
