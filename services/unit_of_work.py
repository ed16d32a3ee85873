"""A command's unit of work (docs/design.md "A command"): one object that owns the command's session, gathers the
events it raises and the executions it leaves for the runner, commits, and only then sends the events and schedules
the runs. Opened the same way by a REST view, a socket handler, a scan or a trigger:

    with services.command() as uow:
        ex, go_on = control.resume(uow, ...)
        if go_on:
            uow.run_next(ex.id)
        answer = control.state(ex)

The functions a command calls take the unit of work in place of a session (docs/design.md "A command"): they read
and write through `uow.session` and raise their events with `uow.events.add(...)`.

Underneath is SQLAlchemy's `Session.begin()` (services.db.Database.transaction): the block commits at its end, or
rolls back on any error, and then nothing is sent or scheduled. A transient error (services.db.retrying) tries the
whole block again with a new unit of work, so a failed try leaves nothing behind."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from services.db import Database
from services.notifier import Events, Notifier


class UnitOfWork:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.events = Events()  # sent once the session has committed, in the order they were raised
        self.runs: list[str] = []  # executions the runner goes on with once it has committed
        self.committed: list[Callable[[], object]] = []  # run right after the commit, before the events go out

    def run_next(self, execution_id: str) -> None:
        """After the commit, the runner advances this execution (its next steps, a slow tool) in the background."""
        if execution_id not in self.runs:
            self.runs.append(execution_id)

    def on_commit(self, action: Callable[[], object]) -> None:
        """`action()` once the session has committed, before its events are sent (the runner lets go of a step's
        lease there: the lease keeper must not renew it while the events go out)."""
        self.committed.append(action)


@contextmanager
def unit_of_work(db: Database, notifier: Notifier, schedule: Callable[[str], None]) -> Iterator[UnitOfWork]:
    with db.transaction() as session:
        uow = UnitOfWork(session)
        yield uow
    for action in uow.committed:
        action()
    notifier.send(uow.events)
    for execution_id in uow.runs:
        schedule(execution_id)
