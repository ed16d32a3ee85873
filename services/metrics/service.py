"""CoachingMetricsCollector: keeps each scope's running metrics in a row's columns (and its latency buckets in
metric_latency), updated inside the decision's transaction (row-locked on PostgreSQL, under the workspace's lock taken
first, services.audit.service.lock_workspace; SQLite's write transactions are already serial). A unit of work reads
each row it counts in once, counts in memory (core.coaching.metrics.MetricsState) and writes the columns that changed
at its end; the buckets are counted up in SQL. Reads are a row and its buckets; the charts' hourly series are counted
from the decisions when read (series.py)."""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from cachetools import LRUCache
from sqlalchemy import bindparam, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.coaching import autonomy
from core.coaching.counters import Counters, RollingWindow
from core.coaching.evidence import Evidence
from core.coaching.latency import LatencyHistogram, latency_bucket
from core.coaching.levels import LevelThresholds
from core.coaching.metrics import MetricsState
from services.audit.service import lock_workspace
from services.db import row_locks
from services.metrics import review_settings, series
from services.models.metrics import MetricLatency, MetricScope
from services.orm import utcnow
from services.unit_of_work import UnitOfWork


def workflow_scopes(workflow_id: str, version: int, step_id: str) -> list[tuple[str, str]]:
    """Where a workflow's suggestions and decisions count (the workspace's and the operators' totals are counted from
    the decisions when read: services/metrics/totals.py)."""
    return [
        ("workflow", workflow_id),
        ("version", f"{workflow_id}@{version}"),
        ("step", f"{workflow_id}/{step_id}"),
    ]


def plan_scopes(tool: str | None) -> list[tuple[str, str]]:
    """Where a plan's suggestions and decisions count: it has no workflow, so per tool (and in the workspace's totals,
    counted from the decisions when read)."""
    return [("tool", tool or "(none)")]


def _insert(session: Session):
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


def _scope_rows(
    session: Session, workspace_id: str, keys: list[tuple[str, str]], ahead: Sequence[tuple[str, str]] = ()
) -> list[MetricScope]:
    """Get-or-create the rows of these scopes, locked for update where the database can (PostgreSQL: under the
    workspace's lock, taken first). A row read earlier in this transaction is the one in the session's identity map
    (only this function loads MetricScope objects, so each of them is locked), so a decision and the suggestion that
    follows it in the same transaction read each scope once. `ahead`: rows read in the same SELECT if they exist,
    because this transaction is likely to need them next (neither created nor changed here)."""
    found = {(row.scope, row.key): row for row in _in_session(session, workspace_id)}
    missing = [k for k in keys if k not in found]
    if missing:
        lock = row_locks(session)
        if lock:  # every metric row is locked under the workspace's lock, taken first: one lock order for all
            lock_workspace(session, workspace_id)

        def fetch(wanted):
            for row in session.scalars(
                _FETCH_LOCKED if lock else _FETCH,
                {"workspace_id": workspace_id, "keys": sorted({k for _, k in wanted})},
            ):
                found[(row.scope, row.key)] = row  # the key alone may match other scopes' rows: kept too

        fetch(missing + [k for k in ahead if k not in found])
        absent = [k for k in missing if k not in found]
        if absent:  # INSERT … ON CONFLICT DO NOTHING: two first decisions of a scope at once find the one row
            now = utcnow()
            session.execute(
                _insert(session)(MetricScope.__table__).on_conflict_do_nothing(),
                [
                    {"workspace_id": workspace_id, "scope": scope, "key": key, "updated_at": now}
                    for scope, key in absent
                ],
            )
            fetch(absent)
    return [found[k] for k in keys]


# built once (every decision runs them): SQLAlchemy caches their compiled forms
_FETCH = select(MetricScope).where(
    MetricScope.workspace_id == bindparam("workspace_id"), MetricScope.key.in_(bindparam("keys", expanding=True))
)
_FETCH_LOCKED = _FETCH.with_for_update()
_BUCKETS = select(MetricLatency.scope_id, MetricLatency.bucket, MetricLatency.count).where(
    MetricLatency.scope_id.in_(bindparam("ids", expanding=True))
)
# a state's columns (a MetricScope row's, read without loading the row: MetricScope objects are the locked ones)
_COLUMNS = (
    MetricScope.id,
    MetricScope.key,
    MetricScope.suggestions,
    MetricScope.accepted,
    MetricScope.rejected,
    MetricScope.corrected,
    MetricScope.manual,
    MetricScope.skipped,
    MetricScope.recent,
    MetricScope.evidence_accepted,
    MetricScope.evidence_counted,
    MetricScope.evidence_drop,
    MetricScope.evidence_attentive,
    MetricScope.latency_min,
    MetricScope.latency_max,
)


def _in_session(session: Session, workspace_id: str) -> list[MetricScope]:
    return [
        obj for obj in session.identity_map.values() if type(obj) is MetricScope and obj.workspace_id == workspace_id
    ]


def _buckets(session: Session, ids: Iterable[int]) -> dict[int, dict[int, int]]:
    """The latency buckets of these scopes (by scope id), in one statement."""
    out: dict[int, dict[int, int]] = defaultdict(dict)
    ids = sorted(set(ids))
    if ids:
        for scope_id, bucket, n in session.execute(_BUCKETS, {"ids": ids}):
            out[scope_id][bucket] = n
    return out


def _from_columns(row: Any, latency: LatencyHistogram, thresholds: LevelThresholds) -> MetricsState:
    """The state a row's columns (a MetricScope or a row of _COLUMNS) hold, with this latency histogram."""
    return MetricsState(
        counters=Counters(row.suggestions, row.accepted, row.rejected, row.corrected, row.manual, row.skipped),
        window=RollingWindow(thresholds.window, row.recent or ""),
        latency=latency,
        thresholds=thresholds,
        evidence=Evidence(row.evidence_accepted, row.evidence_counted, row.evidence_drop, row.evidence_attentive),
    )


def _histogram(row: Any, buckets: dict[int, dict[int, int]]) -> LatencyHistogram:
    return LatencyHistogram.of(buckets.get(row.id, {}), row.latency_min, row.latency_max)


class _Unread(LatencyHistogram):
    """The latency histogram of a row whose buckets this transaction has not read (the row of a scope it only counts
    a suggestion in: nothing there asks for a latency). Anything that would use it is a mistake, said at once."""

    def add(self, ms: float) -> None:
        raise RuntimeError("a latency added to a metric scope whose buckets were not read (services/metrics/service)")

    def quantile(self, q: float) -> int | None:
        raise RuntimeError("a latency asked of a metric scope whose buckets were not read (services/metrics/service)")

    def to_dict(self) -> dict[str, Any]:
        raise RuntimeError("a metric scope copied before its buckets were read (services/metrics/service)")


class _Counted:
    """What one unit of work counted: the rows whose state it holds in memory (each parsed once), and the latency
    buckets its decisions added to. At the end of the unit of work (UnitOfWork.at_end) each state goes back into its
    row's columns (the flush writes those that changed) and the buckets are counted up in SQL, one statement."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.states: list[tuple[MetricScope, MetricsState]] = []
        self.latency: Counter[tuple[int, int]] = Counter()

    @staticmethod
    def of(session: Session) -> _Counted:
        counted = session.info.get(_COUNTED)
        if counted is None:
            uow = UnitOfWork.of(session)
            if uow is None:
                raise RuntimeError("a metric counted outside a unit of work (services/unit_of_work.py) would be lost")
            counted = session.info[_COUNTED] = _Counted(session)
            uow.at_end(counted.write)
        return counted

    def write(self) -> None:
        """Each changed state into its row: every column of the rows whose state changed from what was read, in one
        executemany UPDATE by primary key (SQLAlchemy's ORM bulk UPDATE; the MetricScope objects keep the values as
        read, which nothing reads after this); then the buckets, counted up in SQL."""
        self.session.info.pop(_COUNTED, None)
        now, changed = utcnow(), []
        for row, state in self.states:
            c, e, h = state.counters, state.evidence, state.latency
            values = {
                "suggestions": c.suggestions,
                "accepted": c.accepted,
                "rejected": c.rejected,
                "corrected": c.corrected,
                "manual": c.manual,
                "skipped": c.skipped,
                "recent": state.window.to_str(),
                "evidence_accepted": e.accepted,
                "evidence_counted": e.counted,
                "evidence_drop": e.drop,
                "evidence_attentive": e.attentive,
                "latency_min": row.latency_min if isinstance(h, _Unread) else h.min,
                "latency_max": row.latency_max if isinstance(h, _Unread) else h.max,
            }
            if any(getattr(row, name) != value for name, value in values.items()):
                changed.append({"id": row.id, **values, "updated_at": now})
        if changed:
            self.session.execute(update(MetricScope), changed)
        if self.latency:
            table = MetricLatency.__table__
            insert = _insert(self.session)(table)
            self.session.execute(
                insert.on_conflict_do_update(
                    index_elements=[table.c.scope_id, table.c.bucket],
                    set_={"count": table.c.count + insert.excluded.count},
                ),
                [{"scope_id": i, "bucket": b, "count": n} for (i, b), n in sorted(self.latency.items())],
            )


_COUNTED = "coach.metrics.counted"  # a session's _Counted, in its `info`
PARSED = "parsed_state"  # a MetricScope row's MetricsState, parsed once per transaction (a plain attribute)


def _states(session: Session, workspace_id: str) -> _Counted:
    """Every MetricScope row of the workspace in this transaction with its state in memory: those not parsed yet
    (the rows just read, those read ahead) parsed now, their latency buckets left unread until asked (_read_latency:
    a suggestion counted needs none)."""
    counted = _Counted.of(session)
    for row in _in_session(session, workspace_id):
        if getattr(row, PARSED, None) is None:
            # under the thresholds that apply once `_state` gives them: until then a window that keeps every entry
            keep = LevelThresholds(window=max(_DEFAULTS.window, len(row.recent or "")))
            state = _from_columns(row, _Unread(), keep)
            setattr(row, PARSED, state)
            counted.states.append((row, state))
    return counted


def _read_latency(session: Session, rows: Iterable[MetricScope]) -> None:
    """The latency buckets of those of these (parsed) rows whose buckets are unread, in one statement."""
    unread = [row for row in rows if isinstance(getattr(row, PARSED).latency, _Unread)]
    if unread:
        buckets = _buckets(session, [row.id for row in unread])
        for row in unread:
            getattr(row, PARSED).latency = _histogram(row, buckets)


def _state(row: MetricScope, thresholds: LevelThresholds | None) -> MetricsState:
    """The row's state (parsed by _states), under the thresholds that apply now."""
    state: MetricsState = getattr(row, PARSED)
    state.set_thresholds(_thresholds_for(row.scope, thresholds))
    return state


def _thresholds_for(scope: str, thresholds: LevelThresholds | None) -> LevelThresholds:
    # a region's (services/regions) are given at its condition version's share of its scope's level
    return (
        thresholds
        if thresholds is not None and scope in ("workflow", "version", "step", "spot", "region", "region_spot")
        else _DEFAULTS
    )


def load(
    session: Session, workspace_id: str, scope: str, key: str, thresholds: LevelThresholds | None = None
) -> MetricsState:
    """A scope's state as this transaction sees it (with what it counted already): a copy, to read."""
    row = next((r for r in _in_session(session, workspace_id) if (r.scope, r.key) == (scope, key)), None)
    state = getattr(row, PARSED, None) if row is not None else None
    if row is not None and state is not None:
        _read_latency(session, [row])
        state = MetricsState.from_dict(state.to_dict())
    else:  # the columns only: MetricScope objects in the session are the locked ones (_scope_rows)
        found = session.execute(
            select(*_COLUMNS).where(
                MetricScope.workspace_id == workspace_id, MetricScope.scope == scope, MetricScope.key == key
            )
        ).first()
        state = (
            MetricsState()
            if found is None
            else _from_columns(found, _histogram(found, _buckets(session, [found.id])), _DEFAULTS)
        )
    state.set_thresholds(_thresholds_for(scope, thresholds))
    return state


def load_many(
    session: Session,
    workspace_id: str,
    scope: str,
    keys: Iterable[str] | None = None,
    thresholds: LevelThresholds | None = None,
    prefix: str | None = None,
) -> dict[str, MetricsState]:
    query = select(*_COLUMNS).where(MetricScope.workspace_id == workspace_id, MetricScope.scope == scope)
    if prefix:
        query = query.where(MetricScope.key.startswith(prefix, autoescape=True))
    if keys is not None:
        query = query.where(MetricScope.key.in_(list(keys)))
    rows = session.execute(query).all()
    buckets = _buckets(session, [row.id for row in rows])
    limits = _thresholds_for(scope, thresholds)
    return {row.key: _from_columns(row, _histogram(row, buckets), limits) for row in rows}


def record_suggestion(
    session: Session, workspace_id: str, scopes: list[tuple[str, str]], thresholds: LevelThresholds | None = None
) -> dict[tuple[str, str], MetricsState]:
    out = {}
    rows = _scope_rows(session, workspace_id, [(scope, key) for scope, key in scopes])
    _states(session, workspace_id)
    for (scope, key), row in zip(scopes, rows, strict=True):
        state = _state(row, thresholds)
        state.record_suggestion()
        out[(scope, key)] = state
    return out


def held_states(
    session: Session, workspace_id: str, scopes: list[tuple[str, str]], thresholds: LevelThresholds | None = None
) -> dict[tuple[str, str], MetricsState]:
    """Scopes' states as the transaction will write them: a change made to them (restart_evidence at a demotion)
    is written with the transaction, like a decision's."""
    rows = _scope_rows(session, workspace_id, [(scope, key) for scope, key in scopes])
    _states(session, workspace_id)
    _read_latency(session, rows)
    return {(scope, key): _state(row, thresholds) for (scope, key), row in zip(scopes, rows, strict=True)}


def record_decision(
    session: Session,
    workspace_id: str,
    scopes: list[tuple[str, str]],
    kind: str,
    latency_ms: float,
    thresholds: LevelThresholds | None = None,
    ahead: Sequence[tuple[str, str]] = (),
    levels: Iterable[tuple[str, str]] | None = None,
    *,
    left_out: Iterable[tuple[str, str]] = (),
    attentive: bool = False,
) -> dict[tuple[str, str], tuple[MetricsState, str | None]]:
    """Count one decision in every scope; returns each scope's new state and its level before (for the scopes
    in `levels` only, when given: the others' None). `ahead`: scopes read in the same SELECT because the
    transaction will likely count a suggestion in them next. `left_out`: scopes whose readiness test does not take
    it (an operator below the bars, core.coaching.metrics.MetricsState.record_decision); `attentive`: it came from
    an attentive operator."""
    out = {}
    left_out = set(left_out)
    rows = _scope_rows(
        session, workspace_id, [(scope, key) for scope, key in scopes], [(scope, key) for scope, key in ahead]
    )
    counted = _states(session, workspace_id)
    _read_latency(session, rows)
    # a bad latency refuses the decision before anything is counted
    bucket = None if latency_ms is None else latency_bucket(latency_ms)
    for (scope, key), row in zip(scopes, rows, strict=True):
        state = _state(row, thresholds)
        before = state.assess().level if levels is None or (scope, key) in levels else None
        state.record_decision(kind, latency_ms, evidence=(scope, key) not in left_out, attentive=attentive)
        if bucket is not None:
            counted.latency[(row.id, bucket)] += 1
        out[(scope, key)] = (state, before)
    return out


def workflow_thresholds(workflow) -> LevelThresholds:
    """A workflow's level thresholds: its own settings over docs/design.md#metrics-and-learning-levels's defaults. One
    object per distinct setting (nobody changes a LevelThresholds once made), so a kept metric state sees the same
    object again."""
    given = (workflow.settings or {}).get("thresholds")
    try:
        key = tuple(sorted(given.items())) if isinstance(given, dict) else given
        with _THRESHOLDS_LOCK:
            found = _THRESHOLDS.get(key)
    except TypeError:  # something unhashable in the settings: no sharing, from_dict says what is wrong
        return LevelThresholds.from_dict(given)
    if found is None:
        found = LevelThresholds.from_dict(given)
        with _THRESHOLDS_LOCK:
            _THRESHOLDS[key] = found
    return found


# settings are values, not rows: one object per distinct setting, the least recently used dropped past 1,000
_THRESHOLDS: LRUCache[Any, LevelThresholds] = LRUCache(maxsize=1000)
_THRESHOLDS_LOCK = threading.Lock()
_DEFAULTS = (
    LevelThresholds()
)  # docs/design.md#metrics-and-learning-levels's, for the scopes no workflow sets (tools, an operator's checks)


def workflow_view(
    session: Session, workflow, *, detail: bool = False, scopes: dict[str, dict[str, MetricsState]] | None = None
) -> dict[str, Any]:
    """GET /api/metrics/workflows/<id> (docs/api.md#shapes): all versions, the current one, steps, series.
    Without `detail` (the list), the steps are still there, from `scopes` when the caller read every
    workflow's step and spot-check rows at once (`workspace_step_scopes`)."""
    thresholds = workflow_thresholds(workflow)
    snap = load(session, workflow.workspace_id, "workflow", workflow.id, thresholds).snapshot()
    body = {"workflow_id": workflow.id, "name": workflow.name, "mode": workflow.mode, **snap}
    prefix = f"{workflow.id}/"
    if scopes is None:
        scopes = {
            scope: load_many(session, workflow.workspace_id, scope, None, thresholds, prefix=prefix)
            for scope in ("step", "spot")
        }
    modes = autonomy.step_modes(workflow.settings)
    body["steps"] = {}
    for key, state in scopes["step"].items():
        if key.startswith(prefix):
            step_id = key[len(prefix) :]
            state.set_thresholds(thresholds)
            body["steps"][step_id] = {**state.snapshot(), "mode": modes.get(step_id, autonomy.COACHING)}
            spot = scopes["spot"].get(key)
            if spot is not None:
                spot.set_thresholds(thresholds)
                body["steps"][step_id]["spot_checks"] = spot.snapshot()
    for step_id, mode in modes.items():  # a step promoted or pinned before any decision of it
        body["steps"].setdefault(step_id, {**MetricsState.from_dict(None).snapshot(), "mode": mode})
    for key in [k for k in body["steps"] if ":" in k]:  # an agent's calls of one tool (`<step>:<tool>`): also
        owner, _, tool = key.partition(":")  # under their agent step's `tools`
        if owner in body["steps"]:
            body["steps"][owner].setdefault("tools", {})[tool] = body["steps"][key]
    if detail:
        version_key = f"{workflow.id}@{workflow.current_version}"
        body["current_version"] = {
            "version": workflow.current_version,
            **load(session, workflow.workspace_id, "version", version_key, thresholds).snapshot(),
        }
        body["spot_checks"] = load(session, workflow.workspace_id, "spot", workflow.id, thresholds).snapshot()
        body["series"] = series.workflow_series(session, workflow.workspace_id, workflow.id)

        body["evidence_from"] = review_settings.get_floor(session, workflow.workspace_id)["evidence_from"]
    return body


def workspace_step_scopes(session: Session, workspace_id: str) -> dict[str, dict[str, MetricsState]]:
    """Every workflow's step and spot-check rows of a workspace, in two queries (the metrics list)."""
    return {scope: load_many(session, workspace_id, scope) for scope in ("step", "spot")}
