"""sql.query: one statement against a named connection from COACH_SQL_CONNECTIONS, granted per workspace.

The setting is JSON `{"name": {"url": "<sqlalchemy url>", "workspaces": ["<workspace id or slug>", ...]}}`.
The old plain form `{"name": "<url>"}` names no workspace, so it is granted to none (a warning is logged at start):
a connection is never shared by every tenant by default.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
import threading
import uuid
from decimal import Decimal
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from config import Settings
from core.tools import ToolContext, ToolError, require_workspace

from .basic import budget, seconds_text
from .tenancy import IdsOnly, Workspaces

log = logging.getLogger(__name__)


def parse_connections(raw: Any) -> dict[str, tuple[str, frozenset[str]]]:
    """COACH_SQL_CONNECTIONS as {name: (url, workspaces granted)}; entries that grant nothing are logged."""
    connections: dict[str, tuple[str, frozenset[str]]] = {}
    if not isinstance(raw, dict):
        log.warning("COACH_SQL_CONNECTIONS must be a JSON object; no SQL connection is available")
        return connections
    for name, spec in raw.items():
        if isinstance(spec, str):
            log.warning(
                "SQL connection %r has the old form {name: url}, which grants it to no workspace; use "
                '{"%s": {"url": "...", "workspaces": ["<workspace id or slug>"]}}',
                name,
                name,
            )
            continue
        url = spec.get("url") if isinstance(spec, dict) else None
        granted = spec.get("workspaces") if isinstance(spec, dict) else None
        if (
            not isinstance(url, str)
            or not url
            or not isinstance(granted, list)
            or not all(isinstance(w, str) and w for w in granted)
        ):
            log.warning('SQL connection %r is not {"url": str, "workspaces": [str, ...]}; it is ignored', name)
            continue
        if not granted:
            log.warning("SQL connection %r is granted to no workspace", name)
        connections[str(name)] = (url, frozenset(granted))
    return connections


def json_safe(value: Any) -> Any:
    """Turn a DB value into something json.dumps accepts, keeping numbers numeric where possible."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() and abs(value) < 2**53 else float(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(raw).decode("ascii")
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)


def _db_message(exc: SQLAlchemyError) -> str:
    # SQLAlchemy's own str() appends the SQL, the params and a docs link; users need the DB's words.
    orig = getattr(exc, "orig", None)
    message = str(orig) if orig is not None else str(exc)
    return message.strip().splitlines()[0] if message.strip() else type(exc).__name__


def _interrupt(dbapi_conn: Any) -> None:
    # Best effort: sqlite3 offers interrupt(), psycopg cancel(); other drivers run to completion.
    for attr in ("interrupt", "cancel"):
        method = getattr(dbapi_conn, attr, None)
        if callable(method):
            try:
                method()
            except Exception:  # the query may have finished meanwhile; nothing to stop
                pass
            return


class SqlQueryTool:
    # it stops by itself at ctx.deadline, so the engine runs it without a watchdog thread
    honours_deadline = True

    name = "sql.query"
    description = (
        "Runs one SQL statement in a transaction on a configured connection and returns "
        "the rows (as objects keyed by column), the column names and the row count."
    )
    # Not "read": the statement may be anything; policy inspects it to decide on review.
    risk = "write"
    params_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "connection": {"type": "string", "minLength": 1},
            "query": {"type": "string", "minLength": 1},
            "params": {"type": "object"},
            "max_rows": {"type": "integer", "minimum": 0, "default": 1000},
        },
        "required": ["connection", "query"],
        "additionalProperties": False,
    }

    def __init__(self, settings: Settings, workspaces: Workspaces | None = None):
        self.settings = settings
        self.workspaces = workspaces or IdsOnly()
        self.connections = parse_connections(settings.sql_connections or {})
        self._engines: dict[str, Engine] = {}
        self._lock = threading.Lock()

    def _engine(self, url: str) -> Engine:
        # One engine (and pool) per URL for the life of the tool; engines are costly to build.
        with self._lock:
            engine = self._engines.get(url)
            if engine is None:
                try:
                    engine = create_engine(url, pool_pre_ping=True)
                except (SQLAlchemyError, ImportError, ValueError) as exc:
                    raise ToolError(f"cannot use this connection's URL: {exc}") from None
                self._engines[url] = engine
            return engine

    def close(self) -> None:
        with self._lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()

    def run(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        name = params.get("connection")
        workspace = require_workspace(ctx, self.name)
        names = self.workspaces.names(workspace)
        granted = {n: url for n, (url, to) in self.connections.items() if to & names}
        if name not in granted:
            # the same words whether the connection does not exist or belongs to another workspace
            available = ", ".join(sorted(granted)) or "none (COACH_SQL_CONNECTIONS grants none to it)"
            raise ToolError(f"no SQL connection {name!r} is available to this workspace; available: {available}")
        max_rows = int(params.get("max_rows", 1000))
        seconds = budget(ctx)
        engine = self._engine(granted[name])

        timed_out = threading.Event()
        try:
            with engine.begin() as conn:
                dbapi_conn = conn.connection.dbapi_connection

                def stop() -> None:
                    timed_out.set()
                    _interrupt(dbapi_conn)

                timer = threading.Timer(seconds, stop)
                timer.daemon = True
                timer.start()
                try:
                    result = conn.execute(text(params["query"]), params.get("params") or {})
                    if result.returns_rows:
                        columns = [str(c) for c in result.keys()]
                        fetched = result.fetchmany(max_rows + 1) if max_rows else result.fetchmany(1)
                        truncated = len(fetched) > max_rows
                        rows = [
                            {col: json_safe(v) for col, v in zip(columns, row, strict=False)}
                            for row in fetched[:max_rows]
                        ]
                        result.close()
                        rowcount = len(rows)
                    else:
                        columns, rows, truncated = [], [], False
                        rowcount = result.rowcount
                finally:
                    timer.cancel()
        except SQLAlchemyError as exc:
            if timed_out.is_set():
                raise ToolError(f"query timed out after {seconds_text(seconds)}") from None
            prefix = "database error" if isinstance(exc, DBAPIError) else "SQL error"
            raise ToolError(f"{prefix}: {_db_message(exc)}") from None
        return {"rows": rows, "rowcount": rowcount, "columns": columns, "truncated": truncated}
