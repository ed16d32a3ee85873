"""The runner's background work (services.orchestration.runner): at start, recovery of what was running when the
server stopped; a lease keeper that renews this instance's leases and takes over expired ones (README "Several
machines"); a deadline scanner that fires approvals and human gates nobody acted on in time. One thread each (green
under gevent/eventlet) for the whole process, whatever the number of executions."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import select

from core.execution import states as S
from services.db import retrying
from services.decisions import deadlines as approval_deadlines
from services.decisions import undo
from services.executions import gates
from services.executions import service as executions
from services.models.executions import Execution
from services.orm import utcnow
from services.triggers import schedules as trigger_schedules
from services.unit_of_work import UnitOfWork

# what fires one deadline, in its own transaction: (session, the approval's or execution's id, now, events) -> the
# execution when it fired
Fire = Callable[[UnitOfWork, str, datetime], Execution | None]

log = logging.getLogger(__name__)


class Scans:
    def __init__(self, runner):
        self.runner = runner
        self._scanner: threading.Thread | None = None
        self._keeper: threading.Thread | None = None

    def join(self, timeout: float) -> None:
        for thread in (self._scanner, self._keeper):
            if thread is not None:
                thread.join(timeout)

    def recover(self) -> int:
        """At start: approvals and gates whose deadline passed while the server was down fire (once: see fire_due);
        steps caught running whose lease expired, or whose instance is gone (this instance's own before a restart),
        go back to pending and run again with their key; runnable executions go on. A live peer's running step is
        left to it. Returns how many executions were scheduled."""
        self.fire_due()
        with self.runner.db.read() as session:
            ids = session.scalars(select(Execution.id).where(Execution.status.in_(list(S.RUNNABLE)))).all()
        return sum(self.take_over(execution_id, at_start=True) for execution_id in ids)

    # leases (services.orchestration.leases): a step running outside a transaction is this instance's while its
    # lease holds
    def take_over(self, execution_id: str, *, at_start: bool = False) -> bool:
        """Schedule a runnable execution here; its steps caught running first go back to pending, when their lease
        allows (Leases.free), and the lease becomes this instance's. Under the execution's lock: of several instances
        scanning at once, one takes it over. False when it is left alone."""

        def once() -> tuple[bool, list[str]]:
            with self.runner.db.transaction() as session:
                ex = executions.get_any(session, execution_id)
                if ex is None or ex.status not in S.RUNNABLE:
                    return False, []
                now = utcnow()
                running = [st.step_id for st in ex.steps.values() if st.status == S.STEP_RUNNING]
                if (running or ex.lease_owner is not None) and not self.runner.leases.free(ex, now, at_start):
                    return False, []
                for step_id in running:  # run again with the same key (its idempotency_key is kept)
                    executions.set_step(ex, step_id, status=S.STEP_PENDING)
                if running or ex.lease_owner is not None:
                    previous = ex.lease_owner
                    self.runner.leases.grant(ex, now)
                    if self.runner.dispatches:  # a worker runs it (services.worker): the lease is the one it claims
                        self.runner.leases.release(ex)
                    if running:
                        log.warning(
                            "execution %s: taking over step %s from %s (lease expired or its instance gone)",
                            execution_id,
                            ", ".join(running),
                            previous or "nobody",
                        )
                return True, running

        try:
            taken, _ = retrying(once, what=f"taking over execution {execution_id}")
        except Exception:
            log.exception("taking over execution %s failed (the next scan tries again)", execution_id)
            return False
        if taken:
            self.runner.schedule(execution_id)
        return taken

    def scan_leases(self) -> int:
        """Take up the executions another instance may take over now (Leases.to_take_over); a second runner on one
        that nobody holds is harmless, the step is claimed under the execution's lock. Returns how many this
        instance took up."""
        taken = 0
        for execution_id in self.runner.leases.to_take_over():
            if not self.runner.busy(execution_id) and self.take_over(execution_id):
                taken += 1
        return taken

    def start_leases(self, *, scan: bool = True) -> None:
        """Renew this instance's leases (every third of COACH_LEASE_S) and scan for expired ones (every
        COACH_LEASE_SCAN_S), in one background thread (green under gevent/eventlet), until shutdown. A Celery
        worker (services.worker) only renews: the servers scan, and send what they take over to the
        workers."""
        if self._keeper is not None or self.runner.settings.lease_s <= 0:
            return
        renew_every = self.runner.settings.lease_s / 3
        scan_every = self.runner.settings.lease_scan_s if scan else 0

        def keep() -> None:
            next_renew = next_scan = time.monotonic()
            while not self.runner.stopping.wait(max(0.0, min(next_renew, next_scan) - time.monotonic())):
                now = time.monotonic()
                if now >= next_renew:
                    next_renew = now + renew_every
                    try:
                        self.runner.leases.renew()
                    except Exception:
                        log.exception("renewing the leases of instance %s failed", self.runner.leases.owner)
                if scan_every > 0 and now >= next_scan:
                    next_scan = now + scan_every
                    try:
                        self.scan_leases()
                    except Exception:
                        log.exception("the lease scan failed")
                elif scan_every <= 0:
                    next_scan = float("inf")

        self._keeper = threading.Thread(target=keep, name="leases", daemon=True)
        self._keeper.start()

    # deadlines: rows with a due time, scanned; no thread or timer per approval or gate
    def fire_due(self, now=None) -> int:
        """Fire every approval, and every human gate (services.executions.gates), whose deadline has passed, each in its
        own transaction (a second scanner, in this process or another, finds it no longer pending and leaves it), and
        every due cron schedule (claimed by a conditional update: services/triggers/schedules.py). Returns how many
        fired."""
        now = now or utcnow()
        with self.runner.db.read() as session:
            due: list[tuple[Fire, str, str]] = [
                (approval_deadlines.fire_timeout, "approval", i) for i in approval_deadlines.due(session, now)
            ]
            # a gate's deadline, or the end of a held decision's undo window (services.decisions.undo.fire)
            due += [
                (
                    lambda uow, i, n: undo.fire(uow, self.runner.definitions, self.runner.tools.for_workspace, i, n),
                    "gate of execution",
                    i,
                )
                for i in gates.due(session, now)
            ]
        fired = 0
        for fire, what, target in due:

            def once(fire=fire, target=target):
                with self.runner.command() as uow:
                    ex = fire(uow, target, now)
                    if ex is not None and ex.status in S.RUNNABLE:
                        uow.run_next(ex.id)
                return ex

            try:
                ex = retrying(once, what=f"firing the deadline of {what} {target}")
            except Exception:  # one bad row must not stop the others' deadlines
                log.exception("firing the deadline of %s %s failed", what, target)
                continue
            if ex is not None:
                fired += 1
        try:  # cron schedules (services/triggers/schedules.py): each due one fires once, whichever instance scans
            fired += trigger_schedules.fire_due(self.runner, now)
        except Exception:
            log.exception("the schedule scan failed")
        return fired

    def start_deadlines(self) -> None:
        """Scan for due approvals every COACH_APPROVAL_SCAN_S seconds, in one background thread (a green thread
        under gevent/eventlet) for the whole process, until shutdown."""
        interval = self.runner.settings.approval_scan_s
        if interval <= 0 or self._scanner is not None:
            return

        def scan() -> None:
            while not self.runner.stopping.wait(interval):
                try:
                    self.fire_due()
                except Exception:
                    log.exception("the approval deadline scan failed")

        self._scanner = threading.Thread(target=scan, name="approval-deadlines", daemon=True)
        self._scanner.start()
