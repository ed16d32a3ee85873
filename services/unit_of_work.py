"""A command's unit of work (docs/design.md "A command"): one object that owns the command's session, gathers the
events it raises and the executions it leaves for the runner, keeps what the command's modules remember beside the
session's identity map, does their work due before the commit, commits, and only then sends the events and schedules
the runs. Opened the same way by a REST view, a socket handler, a scan or a trigger:

    with services.command() as uow:
        ex, go_on = control.resume(uow, ...)
        if go_on:
            uow.run_next(ex.id)
        answer = control.state(ex)

The functions a command calls take the unit of work in place of a session (docs/design.md "A command"): they read
and write through `uow.session` and raise their events with `uow.events.add(...)`.

Underneath is SQLAlchemy's `Session.begin()` (services.db.Database.transaction, which nothing else opens): the block
commits at its end, or rolls back on any error, and then nothing is sent or scheduled. A transient error
(services.db.retrying) tries the whole block again with a new unit of work, so a failed try leaves nothing behind.

Code below a command that holds only the session (or an ORM object of it: `object_session`) finds its unit of work
with `UnitOfWork.of(session)`, kept in the session's `info` (SQLAlchemy's per-session dictionary); a session opened
for reads (`db.read()`) has none.

What its modules remember lives exactly as long as the unit of work, as the identity map does: a row read again in
the same transaction (the review settings a decision and its next suggestion both ask for, a workflow's step regions
asked at every gate the drive takes) is read once, and a new unit of work, a retry's too, reads everything again, so
nothing remembered outlives the transaction that read it (no cache across transactions: another process may change
the rows between them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from sqlalchemy.orm import Session

from services.db import Database
from services.notifier import Events, Notifier

_KEY = "coach.unit_of_work"  # the key of a session's unit of work in its `info`


class Outbox(Protocol):
    """The outbox's settings (services.notifications.outbox.Config), given to a unit of work by whoever builds it:
    they fan the command's noted notifications out into rows, just before its commit."""

    def fan_out(self, uow: UnitOfWork) -> None: ...


class UnitOfWork:
    def __init__(
        self, session: Session, *, gathered: Events | None = None, notifications: Outbox | None = None
    ) -> None:
        self.session = session
        session.info[_KEY] = self  # (UnitOfWork.of)
        self.events = Events() if gathered is None else gathered  # sent once it has committed, in the order raised
        self.runs: list[str] = []  # executions the runner goes on with once it has committed
        self.committed: list[Callable[[], object]] = []  # run right after the commit, before the events go out
        self._schedules = True
        # what the command's modules remember beside the identity map, each kept by the one module named:
        # the workspaces whose lock it took (services/audit/service.lock_workspace: once each)
        self.locked_workspaces: set[str] = set()
        # workflows whose correction packs it changed (services/coaching/corrections: their learned rules are read
        # from the database, not from the per-process cache, until it commits)
        self.changed_packs: set[str] = set()
        # the outbox (services/notifications/outbox): its settings (None: a unit of work that writes no
        # notifications), the events noted (made into outbox rows just before the commit), the rows made then without
        # routing (a decided review's Slack updates), and whether a person decides in it (their next suggestion is
        # no news to send them)
        self.notifications = notifications
        self.noted: dict[str, Any] = {}
        self.noted_rows: dict[str, Any] = {}
        self.person_present = False
        # what the command's modules write at the end of the block, before the commit (services/metrics/service: the
        # metric states it counted in, kept in memory while the command runs)
        self._at_end: list[Callable[[], None]] = []
        # the review settings of each workspace it read (services/metrics/review_settings.get_floor: read once, since
        # session.get remembers no missing row and a workspace at the defaults has none; replaced when they are set)
        self.review_settings: dict[str, dict[str, Any]] = {}
        # each workflow's step regions it read, by (workspace, workflow) (services/regions/service.step_regions: read
        # once, though the gate of every step taken and the suggestion opened ask; dropped when a region changes)
        self.step_regions: dict[tuple[str, str], dict[str, list[Any]]] = {}

    @staticmethod
    def of(session: Session | None) -> UnitOfWork | None:
        """The unit of work `session` belongs to; None for a session outside any (a read: `db.read()`, `db.aside()`)
        or no session at all (an object not in one)."""
        if session is None:
            return None
        return session.info.get(_KEY)

    def run_next(self, execution_id: str) -> None:
        """After the commit, the runner advances this execution (its next steps, a slow tool) in the background."""
        if not self._schedules:
            raise RuntimeError(f"this unit of work schedules no runs (execution {execution_id})")
        if execution_id not in self.runs:
            self.runs.append(execution_id)

    def on_commit(self, action: Callable[[], object]) -> None:
        """`action()` once the session has committed, before its events are sent (the runner lets go of a step's
        lease there: the lease keeper must not renew it while the events go out)."""
        self.committed.append(action)

    def at_end(self, action: Callable[[], None]) -> None:
        """`action()` at the end of the block, before the commit (step 2 of `before_commit`)."""
        self._at_end.append(action)

    def before_commit(self) -> None:
        """The work the command's modules left for its end, at the end of the block, before the commit, in this
        order (a step may add to the session; the commit's flush writes it all):

        1. the outbox's noted events fanned out into rows (`notifications.fan_out`: who hears each, one row per
           recipient and channel), then the rows noted without routing;
        2. the actions left for the end (`at_end`: the metric states counted in, written into their rows);
        3. the payloads of the events whose payload is a state (`Events.at_commit`) made from the state as it is."""
        if (self.noted or self.noted_rows) and self.notifications is not None:
            self.notifications.fan_out(self)
        actions, self._at_end = self._at_end, []
        for action in actions:
            action()
        self.events.made()


class _NoEvents(Events):
    """The events of a unit of work that sends none (no notifier): raising one is a mistake, not a push to drop."""

    def add(self, event: str, *_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError(f"this unit of work sends no events ({event})")

    def at_commit(self, event: str, *_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError(f"this unit of work sends no events ({event})")


@contextmanager
def unit_of_work(
    db: Database,
    notifier: Notifier | None = None,
    schedule: Callable[[str], None] | None = None,
    *,
    notifications: Outbox | None = None,
) -> Iterator[UnitOfWork]:
    """A unit of work on `db`. Without `notifier` it sends no events (adding one raises), without `schedule` it
    schedules no runs (run_next raises), without `notifications` it writes no notifications: `unit_of_work(db)` is a
    plain write (a token's last use, a setting) where only the database is at hand."""
    with db.transaction() as session:
        uow = UnitOfWork(session, gathered=None if notifier is not None else _NoEvents(), notifications=notifications)
        uow._schedules = schedule is not None
        yield uow
        uow.before_commit()
    session.info.pop(_KEY, None)  # (the session is closed: its objects, detached, find no unit of work either)
    for action in uow.committed:
        action()
    if notifier is not None:
        notifier.send(uow.events)
    if schedule is not None:
        for execution_id in uow.runs:
            schedule(execution_id)
