"""CoachingMetricsCollector: keeps each scope's running metrics in a row, updated inside the decision's
transaction (row-locked on PostgreSQL, under the workspace's lock taken first, services.audit.lock_workspace;
SQLite's write transactions are already serial). Reads are one row."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable

from sqlalchemy import Text, bindparam, cast, select, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.coaching import autonomy
from core.coaching.metrics import LevelThresholds, MetricsState, bucket_start
from services import jsontext
from services.audit import lock_workspace
from services.db import on, prepared, row_locks
from services.models import MetricBucket, MetricScope, column_defaults, utcnow

GLOBAL = ("global", "all")
SERIES_SCOPES = ("global", "workflow", "operator")  # the scopes dashboards chart over time


def workflow_scopes(workflow_id: str, version: int, step_id: str) -> list[tuple[str, str]]:
    return [GLOBAL, ("workflow", workflow_id), ("version", f"{workflow_id}@{version}"),
            ("step", f"{workflow_id}/{step_id}")]


def plan_scopes(tool: str | None) -> list[tuple[str, str]]:
    """Where a plan's suggestions and decisions count: it has no workflow, so globally and per tool."""
    return [GLOBAL, ("tool", tool or "(none)")]


def _insert(session: Session):
    return pg_insert if session.bind.dialect.name == "postgresql" else sqlite_insert


_compact = jsontext.dumps


class _Cell:
    """One metric row: its id and its JSON value (a scope's state or a bucket's counts). Rows are read and
    written with prepared statements: several are touched by every decision, and the ORM's per-object
    bookkeeping was most of a decision's cost."""

    __slots__ = ("id", "_value", "_state")

    def __init__(self, id: int, value: dict):
        self.id, self._value, self._state = id, value, None

    @property
    def value(self) -> dict:
        """The row's JSON value: a parsed state's current JSON form, made when asked for."""
        return self._state.to_dict() if self._state is not None else self._value

    def text(self) -> str:
        """The row's JSON value as text, to write it."""
        return self._state.to_json() if self._state is not None else _compact(self._value)

    def state(self, scope: str, thresholds: LevelThresholds | None) -> MetricsState:
        """The scope's state, parsed once (kept with the cell), under the thresholds that apply now."""
        if self._state is None:
            self._state = MetricsState.from_dict(self._value)
        self._state.set_thresholds(_thresholds_for(scope, thresholds))
        return self._state


_DIRTY = "metrics:dirty"


def _fetch_statement(session: Session, table, column: str, names: tuple[str, ...], count: int, lock: bool):
    """One prepared SELECT per table, key shape and number of keys."""
    def build():
        query = select(table.c.id, table.c[column], *[table.c[n] for n in names]).where(
            table.c.workspace_id == bindparam("workspace_id"),
            table.c.key.in_([bindparam(f"k{i}") for i in range(count)]))
        return query.with_for_update() if lock else query
    return prepared(session, ("metrics:fetch", table.name, names, count, lock), build)


def _rows(session: Session, model, workspace_id: str, names: tuple[str, ...], keys: list[tuple],
          ahead: list[tuple] = ()) -> list[_Cell]:
    """Get-or-create the rows with these unique keys (value tuples of the columns `names`), locked for update where
    the database can. Rows already read in this transaction are reused, so a decision and the suggestion that
    follows it in the same transaction read each scope once. `ahead`: rows read in the same SELECT if they exist,
    because this transaction is likely to need them next (neither created nor changed here)."""
    table, column = model.__table__, ("state" if model is MetricScope else "counts")
    cache = session.info.setdefault(f"rows:{table.name}:{workspace_id}", {})
    missing = [k for k in keys if k not in cache]
    if not missing:
        return [cache[k] for k in keys]
    lock = row_locks(session)

    def fetch(subset):
        found_keys = sorted({k[names.index("key")] for k in subset})
        query = _fetch_statement(session, table, column, names, len(found_keys), lock)
        # the key alone may match other scopes' rows: keep them too
        for row in query.rows(session, {"workspace_id": workspace_id,
                                        **{f"k{i}": k for i, k in enumerate(found_keys)}}):
            found = tuple(row[2:])
            if found not in cache:
                cache[found] = _Cell(row[0], dict(row[1] or {}))

    if missing:
        if lock:  # every metric row is locked under the workspace's lock, taken first: one lock order for all
            lock_workspace(session, workspace_id)
        fetch(missing + [k for k in ahead if k not in cache])
        absent = [k for k in missing if k not in cache]
        if absent:
            # Python-side defaults (updated_at) filled here, as NewId fills them: a prepared statement computes none
            defaults = {key: default.arg(None) if default.is_callable else default.arg
                        for key, default in column_defaults(model)[1] if key not in (*names, column)}
            create = prepared(session, ("metrics:create", table.name, names),
                              lambda: _insert(session)(table).on_conflict_do_nothing(),
                              column_keys=["workspace_id", *names, column, *defaults])
            create.execute_many(session, [{**dict(zip(names, k)), column: {}} for k in absent],
                                {"workspace_id": workspace_id, **defaults})
            fetch(absent)
    return [cache[k] for k in keys]


_SCOPE = ("scope", "key")
_BUCKET = ("scope", "key", "bucket")


def _changed(session: Session, model, cell: _Cell) -> None:
    session.info.setdefault(_DIRTY, {}).setdefault(model, {})[cell.id] = cell


_VALUE = {MetricScope: "state", MetricBucket: "counts"}


@on("before_commit")
def _write_changed_rows(session: Session) -> None:
    """Write every metric row changed in this transaction, one statement per table. Values go as JSON text
    (a parsed state writes its own, MetricsState.to_json): the column type's serializer would encode again."""
    for model, cells in session.info.pop(_DIRTY, {}).items():
        write = prepared(session, ("metrics:write", model.__tablename__), lambda: _write_statement(session, model))
        write.execute_many(session, [{"_id": c.id, "_value": c.text()} for c in cells.values()], {"_at": utcnow()})


def _write_statement(session: Session, model):
    table, column = model.__table__, _VALUE[model]
    text_value = bindparam("_value", type_=Text)
    if session.bind.dialect.name == "postgresql":
        text_value = cast(text_value, JSONB)
    values = {column: text_value}
    if "updated_at" in table.c:  # MetricScope.updated_at: its onupdate default, filled here
        values["updated_at"] = bindparam("_at", type_=table.c.updated_at.type)
    return update(table).where(table.c.id == bindparam("_id")).values(values)


def _thresholds_for(scope: str, thresholds: LevelThresholds | None) -> LevelThresholds:
    return thresholds if thresholds is not None and scope in ("workflow", "version", "step", "spot") \
        else _DEFAULTS


def load(session: Session, workspace_id: str, scope: str, key: str,
         thresholds: LevelThresholds | None = None) -> MetricsState:
    cell = session.info.get(f"rows:{MetricScope.__tablename__}:{workspace_id}", {}).get((scope, key))
    if cell is not None:  # read (and maybe changed) earlier in this transaction
        value = cell.value
    else:
        row = session.scalar(select(MetricScope).where(MetricScope.workspace_id == workspace_id,
                                                       MetricScope.scope == scope, MetricScope.key == key))
        value = row.state if row else None
    state = MetricsState.from_dict(value)
    state.set_thresholds(_thresholds_for(scope, thresholds))
    return state


def load_many(session: Session, workspace_id: str, scope: str, keys: Iterable[str] | None = None,
              thresholds: LevelThresholds | None = None, prefix: str | None = None) -> dict[str, MetricsState]:
    query = select(MetricScope).where(MetricScope.workspace_id == workspace_id, MetricScope.scope == scope)
    if prefix:
        query = query.where(MetricScope.key.startswith(prefix, autoescape=True))
    if keys is not None:
        query = query.where(MetricScope.key.in_(list(keys)))
    out = {}
    for row in session.scalars(query):
        state = MetricsState.from_dict(row.state)
        state.set_thresholds(_thresholds_for(scope, thresholds))
        out[row.key] = state
    return out


def record_suggestion(session: Session, workspace_id: str, scopes: list[tuple[str, str]],
                      thresholds: LevelThresholds | None = None) -> dict[tuple[str, str], MetricsState]:
    out = {}
    cells = _rows(session, MetricScope, workspace_id, _SCOPE, [tuple(s) for s in scopes])
    for (scope, key), cell in zip(scopes, cells):
        state = cell.state(scope, thresholds)
        state.record_suggestion()
        _changed(session, MetricScope, cell)
        out[(scope, key)] = state
    return out


def held_states(session: Session, workspace_id: str, scopes: list[tuple[str, str]],
                thresholds: LevelThresholds | None = None) -> dict[tuple[str, str], MetricsState]:
    """Scopes' states as the transaction will write them: a change made to them (restart_evidence at a demotion)
    is written at commit, like a decision's."""
    out = {}
    cells = _rows(session, MetricScope, workspace_id, _SCOPE, [tuple(s) for s in scopes])
    for (scope, key), cell in zip(scopes, cells):
        out[(scope, key)] = cell.state(scope, thresholds)
        _changed(session, MetricScope, cell)
    return out


def record_decision(session: Session, workspace_id: str, scopes: list[tuple[str, str]], kind: str,
                    latency_ms: float, thresholds: LevelThresholds | None = None,
                    now: datetime | None = None, ahead: list[tuple[str, str]] = (),
                    levels: Iterable[tuple[str, str]] | None = None
                    ) -> dict[tuple[str, str], tuple[MetricsState, str | None]]:
    """Count one decision in every scope; returns each scope's new state and its level before (for the scopes
    in `levels` only, when given: the others' None). `ahead`: scopes read in the same SELECT because the
    transaction will likely count a suggestion in them next."""
    out = {}
    cells = _rows(session, MetricScope, workspace_id, _SCOPE, [tuple(s) for s in scopes],
                  [tuple(a) for a in ahead])
    for (scope, key), cell in zip(scopes, cells):
        state = cell.state(scope, thresholds)
        before = state.assess().level if levels is None or (scope, key) in levels else None
        state.record_decision(kind, latency_ms)
        _changed(session, MetricScope, cell)
        out[(scope, key)] = (state, before)
    bucket = bucket_start(now or utcnow(), "hour")
    charted = [(sc, k, bucket) for sc, k in scopes if sc in SERIES_SCOPES]
    for cell in _rows(session, MetricBucket, workspace_id, _BUCKET, charted):
        counts = cell.value
        counts[kind] = counts.get(kind, 0) + 1
        counts["latency_ms_sum"] = counts.get("latency_ms_sum", 0.0) + float(latency_ms)
        _changed(session, MetricBucket, cell)
    return out


def series(session: Session, workspace_id: str, scope: str, key: str, hours: int = 24 * 14) -> list[dict]:
    since = bucket_start(utcnow() - timedelta(hours=hours), "hour")
    rows = session.scalars(select(MetricBucket).where(
        MetricBucket.workspace_id == workspace_id, MetricBucket.scope == scope, MetricBucket.key == key,
        MetricBucket.bucket >= since).order_by(MetricBucket.bucket))
    out = []
    for row in rows:
        c = row.counts or {}
        decisions = sum(c.get(k, 0) for k in ("accept", "reject", "correct", "manual", "skip"))
        counted = decisions - c.get("skip", 0)
        bucket = row.bucket if row.bucket.tzinfo else row.bucket.replace(tzinfo=bucket_start(utcnow()).tzinfo)
        out.append({
            "bucket": bucket.isoformat(), "decisions": decisions, "accepted": c.get("accept", 0),
            "rejected": c.get("reject", 0), "corrected": c.get("correct", 0), "manual": c.get("manual", 0),
            "skipped": c.get("skip", 0),
            "acceptance_rate": round(c.get("accept", 0) / counted, 4) if counted else 0.0,
            "latency_ms_avg": round(c.get("latency_ms_sum", 0.0) / decisions, 1) if decisions else None,
        })
    return out


def workflow_thresholds(workflow) -> LevelThresholds:
    """A workflow's level thresholds: its own settings over DESIGN.md §3's defaults. One object per distinct
    setting (nobody changes a LevelThresholds once made), so a kept metric state sees the same object again."""
    given = (workflow.settings or {}).get("thresholds")
    try:
        key = tuple(sorted(given.items())) if isinstance(given, dict) else given
        found = _THRESHOLDS.get(key)
    except TypeError:  # something unhashable in the settings: no sharing, from_dict says what is wrong
        return LevelThresholds.from_dict(given)
    if found is None:
        found = LevelThresholds.from_dict(given)
        if len(_THRESHOLDS) > 1000:
            _THRESHOLDS.clear()
        _THRESHOLDS[key] = found
    return found


_THRESHOLDS: dict[Any, LevelThresholds] = {}
_DEFAULTS = LevelThresholds()  # DESIGN.md §3's, for the scopes no workflow sets (global, operator)


def workflow_view(session: Session, workflow, *, detail: bool = False,
                  scopes: dict[str, dict[str, MetricsState]] | None = None) -> dict[str, Any]:
    """GET /api/metrics/workflows/<id> (DESIGN.md "Shapes"): all versions, the current one, steps, series.
    Without `detail` (the list), the steps are still there, from `scopes` when the caller read every
    workflow's step and spot-check rows at once (`workspace_step_scopes`)."""
    thresholds = workflow_thresholds(workflow)
    snap = load(session, workflow.workspace_id, "workflow", workflow.id, thresholds).snapshot()
    body = {"workflow_id": workflow.id, "name": workflow.name, "mode": workflow.mode, **snap}
    prefix = f"{workflow.id}/"
    if scopes is None:
        scopes = {scope: load_many(session, workflow.workspace_id, scope, None, thresholds, prefix=prefix)
                  for scope in ("step", "spot")}
    modes = autonomy.step_modes(workflow.settings)
    body["steps"] = {}
    for key, state in scopes["step"].items():
        if key.startswith(prefix):
            step_id = key[len(prefix):]
            state.set_thresholds(thresholds)
            body["steps"][step_id] = {**state.snapshot(), "mode": modes.get(step_id, autonomy.COACHING)}
            spot = scopes["spot"].get(key)
            if spot is not None:
                spot.set_thresholds(thresholds)
                body["steps"][step_id]["spot_checks"] = spot.snapshot()
    for step_id, mode in modes.items():  # a step promoted or pinned before any decision of it
        body["steps"].setdefault(step_id, {**MetricsState.from_dict(None).snapshot(), "mode": mode})
    for key in [k for k in body["steps"] if ":" in k]:  # an agent's calls of one tool (`<step>:<tool>`): also
        owner, _, tool = key.partition(":")          # under their agent step's `tools`
        if owner in body["steps"]:
            body["steps"][owner].setdefault("tools", {})[tool] = body["steps"][key]
    if detail:
        version_key = f"{workflow.id}@{workflow.current_version}"
        body["current_version"] = {"version": workflow.current_version,
                                   **load(session, workflow.workspace_id, "version", version_key,
                                          thresholds).snapshot()}
        body["spot_checks"] = load(session, workflow.workspace_id, "spot", workflow.id, thresholds).snapshot()
        body["series"] = series(session, workflow.workspace_id, "workflow", workflow.id)
    return body


def workspace_step_scopes(session: Session, workspace_id: str) -> dict[str, dict[str, MetricsState]]:
    """Every workflow's step and spot-check rows of a workspace, in two queries (the metrics list)."""
    return {scope: load_many(session, workspace_id, scope) for scope in ("step", "spot")}
