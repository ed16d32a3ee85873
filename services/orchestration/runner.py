"""Advances executions in background tasks: load, run what can run, stop at the first human gate, commit.

No task waits on a human: a paused execution is rows, not a thread. Each step's result is committed
together with the decision about what comes next, so a killed server loses at most the step that was
running: it runs again, with the same idempotency key (core.execution.engine.call_key).

Leases (README "Several machines"): a step that runs outside a transaction (a tool that takes time) is claimed with
a lease on its execution, the instance's id and an expiry (COACH_LEASE_S), renewed while the tool runs. Every
instance looks for expired leases every COACH_LEASE_SCAN_S seconds and takes those steps over (once: under the
execution's lock), so a dead instance's steps go on elsewhere; at start it takes over only steps whose lease has
expired or whose instance is known to be gone (a process of this host that no longer runs), never a live peer's.
A result that comes back after its lease was taken over is dropped: the step's new owner runs it again.

Nothing advancing an execution fails silently: a transaction that meets a transient error is tried again at once
(services.db.retrying), any other failure again after a pause (ADVANCE_BACKOFF_S), and one that keeps failing
fails the step (or the execution) with its reason.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager

from sqlalchemy.exc import DBAPIError

from config import Settings
from core.execution import states as S
from core.execution.engine import Outcome, execute
from core.tools import ToolRegistry
from services.agents import service as agent
from services.audit import service as audit
from services.db import Database, retrying
from services.executions import service as executions
from services.models.executions import Execution
from services.notifier import Notifier
from services.orchestration import drive
from services.orchestration.leases import Leases
from services.orchestration.scans import Scans
from services.orm import utcnow
from services.unit_of_work import UnitOfWork, unit_of_work
from services.workflows.service import DefinitionCache

log = logging.getLogger(__name__)

YIELD_S = 0.001
FENCED = object()  # advance: the step this instance ran was taken over meanwhile; its result is dropped


class Runner:
    # pauses before advancing an execution again after a failure that is not transient; then the step fails
    ADVANCE_BACKOFF_S: tuple[float, ...] = (0.1, 0.5, 2.0, 5.0)

    def __init__(
        self,
        db: Database,
        tools: ToolRegistry,
        definitions: DefinitionCache,
        notifier: Notifier,
        settings: Settings | None = None,
        spawn: Callable | None = None,
        dispatch: Callable[[str], None] | None = None,
    ):
        self.db, self.tools, self.definitions, self.notifier = db, tools, definitions, notifier
        self._dispatch = dispatch  # Celery workers run the executions scheduled here (services.worker)
        self.settings = settings or Settings()
        self._pool = None
        if spawn is None:
            self._pool = ThreadPoolExecutor(max_workers=self.settings.runner_workers, thread_name_prefix="runner")
            spawn = self._pool.submit
        self._spawn = spawn
        self._lock = threading.Lock()
        self._active: set[str] = set()
        self._again: set[str] = set()
        self._idle = threading.Condition(self._lock)
        self.rng = random.Random(self.settings.random_seed)  # spot checks draw from it (a seed makes runs repeatable)
        self.stopping = threading.Event()  # set by shutdown: background work ends, a backoff stops waiting
        self.llm = (
            None  # the LLM provider of agent steps (services.agents.llm), made on first use (services.agents.service)
        )
        self.leases = Leases(db, self.settings)  # this instance's id, and the steps it runs now
        self.scans = Scans(self)  # recovery at start, the lease keeper and the deadline scanner

    # scheduling: one task per execution at a time; a request while it runs makes it go round once more
    def command(self) -> AbstractContextManager[UnitOfWork]:
        """A unit of work (services/unit_of_work.py) whose runs this runner takes once it commits."""
        return unit_of_work(self.db, self.notifier, self.schedule)

    def schedule(self, execution_id: str) -> None:
        if self._dispatch is not None:
            try:
                self._dispatch(execution_id)
                return
            except Exception:  # the broker is away: this server advances it itself rather than leave it waiting
                log.exception("could not send execution %s to the workers; advancing it here", execution_id)
        with self._lock:
            if execution_id in self._active:
                self._again.add(execution_id)
                return
            self._active.add(execution_id)
        self._spawn(self._task, execution_id)

    def _task(self, execution_id: str) -> None:
        while True:
            try:
                self.advance(execution_id)
            except Exception:  # advance reports its own failures (and fails the step): this is a bug of its own
                log.exception("advancing execution %s failed", execution_id)
            with self._lock:
                if execution_id in self._again:
                    self._again.discard(execution_id)
                    continue
                self._active.discard(execution_id)
                self._idle.notify_all()
                return

    @property
    def dispatches(self) -> bool:
        """Whether Celery workers run what this runner schedules."""
        return self._dispatch is not None

    def busy(self, execution_id: str) -> bool:
        """Whether this process is advancing the execution now."""
        with self._lock:
            return execution_id in self._active

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """For tests and benchmarks: wait until no execution is being advanced."""
        with self._lock:
            return self._idle.wait_for(lambda: not self._active, timeout)

    def shutdown(self) -> None:
        self.stopping.set()
        self.leases.close()
        self.scans.join(5)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def drive(self, uow: UnitOfWork, ex: Execution, *, claim: bool):
        """Advance inside the caller's transaction (services.orchestration.drive.drive)."""
        return drive.drive(self, uow, ex, claim=claim)

    def advance(self, execution_id: str) -> None:
        """Take the execution's steps until it stops at a gate or ends; each tool that takes time runs outside any
        transaction, under this instance's lease, and its result is committed with what comes next."""
        outcome: Outcome | None = None
        running: str | None = None
        try:
            while True:
                done = self._transact(execution_id, running, outcome)
                if done is None:  # given up (the step failed with the reason), or shutting down
                    return
                (slow,) = done
                if slow is None or slow is FENCED:
                    return
                outcome = running = None
                if slow is drive.AGAIN:  # its time slice is used up: let others in, then go on
                    # a timer, not sleep(0): gevent runs its ready greenlets on sleep(0) without polling the network
                    time.sleep(YIELD_S)
                    continue
                step, state, params, key = slow
                running = step.id
                self.leases.held[execution_id] = step.id  # renewed by the lease keeper while the tool runs
                # an agent step commits its conversation as it goes (services.agents.service); None: it waits for a
                # person
                outcome = (
                    agent.run_step(self, execution_id, step)
                    if step.type == "agent"
                    else execute(
                        step, state, self.tools.for_workspace(state.workspace_id), params=params, idempotency_key=key
                    )
                )
        finally:
            self.leases.held.pop(execution_id, None)

    def _transact(self, execution_id: str, running: str | None, outcome: Outcome | None):
        """One transaction of advance (a unit of work: its events are sent once it commits): record `outcome` (the
        result of step `running`), then drive. Returns (what drive returned,), or None when it gave up. A transient
        error is tried again at once (retrying); any other failure after each pause of ADVANCE_BACKOFF_S, keeping the
        outcome in hand (the tool does not run again); when it still fails, the step (or the execution) fails with the
        reason."""

        def once():
            with self.command() as uow:
                slow = self._advance_in(uow, execution_id, running, outcome)
                # no longer running here (its lease was released or handed on in this transaction): the lease keeper
                # must not renew it while the events go out, nor take its absence for a takeover
                uow.on_commit(lambda: self.leases.held.pop(execution_id, None))
            return (slow,)

        failures = 0
        while True:
            try:
                return retrying(once, what=f"advancing execution {execution_id}")
            except Exception as exc:
                if failures == len(self.ADVANCE_BACKOFF_S):
                    log.error(
                        "advancing execution %s failed %d times; its step fails",
                        execution_id,
                        failures + 1,
                        exc_info=True,
                    )
                    self._give_up(execution_id, running, exc, failures + 1)
                    return None
                pause = self.ADVANCE_BACKOFF_S[failures]
                failures += 1
                log.warning(
                    "advancing execution %s failed (%s); trying again in %gs",
                    execution_id,
                    _reason(exc),
                    pause,
                    exc_info=True,
                )
                if self.stopping.wait(pause):  # shutting down: its lease runs out, and an instance takes it over
                    return None

    def _advance_in(self, uow: UnitOfWork, execution_id: str, running: str | None, outcome: Outcome | None):
        session = uow.session
        ex = executions.get_any(session, execution_id)
        if ex is None:
            return None
        if outcome is not None:
            if ex.lease_owner != self.leases.owner:
                log.warning(
                    "execution %s: step %s was taken over by %s while it ran here; this result is dropped "
                    "(the step runs there again, with the same idempotency key)",
                    execution_id,
                    running,
                    ex.lease_owner or "another instance",
                )
                return FENCED
            assert running is not None  # (an outcome comes with the step that ran)
            drive.record(self, uow, ex, running, outcome)
        elif ex.lease_owner not in (None, self.leases.owner) and not self.leases.free(ex, utcnow()):
            return None  # another instance runs one of its steps: it goes on from there, not this one
        slow = self.drive(uow, ex, claim=True)
        if isinstance(slow, tuple):  # a tool that takes time: claimed, under this instance's lease
            step, state, params, repeat = slow
            st = ex.steps[step.id]
            self.leases.grant(ex)
            audit.record(
                session,
                ex.workspace_id,
                "system",
                "tool_call",
                target_type="step",
                target_id=f"{ex.id}/{step.id}",
                execution_id=ex.id,
                after={
                    "step_id": step.id,
                    "tool": step.tool,
                    "idempotency_key": st.idempotency_key,
                    "run": st.run,
                    "repeat": repeat,
                    "instance": self.leases.owner,
                },
                result="repeated" if repeat else "started",
            )
            # the step is running now, for as long as its tool takes: the panels show it (the step's state)
            executions.changed(uow, ex, step.id)
            return step, state, params, st.idempotency_key
        self.leases.release(ex)
        return slow

    def _give_up(self, execution_id: str, running: str | None, error: Exception, failures: int) -> None:
        """The advance keeps failing: fail the step whose result could not be recorded (or the one caught running,
        else the execution), with the reason, so that nothing is left `running` without anyone on it."""
        reason = f"advancing the execution failed {failures} times: {_reason(error)}"

        def once() -> None:
            with self.command() as uow:
                ex = executions.get_any(uow.session, execution_id)
                if ex is None or ex.status in S.TERMINAL:
                    return
                if ex.lease_owner not in (None, self.leases.owner) and not self.leases.free(ex, utcnow()):
                    return  # another instance holds it now
                step_id = running or next((st.step_id for st in ex.steps.values() if st.status == S.STEP_RUNNING), None)
                drive.fail(self, uow, ex, step_id, f"step {step_id!r}: {reason}" if step_id else reason)
                ex.lease_owner = ex.lease_expires_at = None
                executions.changed(uow, ex, step_id)

        try:
            retrying(once, what=f"failing execution {execution_id}")
        except Exception:
            log.exception("execution %s could not be failed either; the lease scan will find it", execution_id)


def _reason(exc: BaseException) -> str:
    """A failure as a step's error says it: the driver's message for a database error (not the SQL), one line."""
    inner = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = str(inner).strip().splitlines()
    return f"{type(inner).__name__}: {text[0] if text else ''}"[:500]
