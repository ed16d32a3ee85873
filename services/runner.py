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
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.orm import Session, object_session

from config import Settings
from core.execution import states as S
from core.execution.engine import Next, Outcome, call_key, clarification_for, execute, next_action, resolve_params
from core.templating import TemplateFailure
from core.tools import ToolRegistry
from services import agent, approvals, audit, coaching, control, correction_failures, executions, gates, policies
from services.db import Database, retrying
from services.leases import Leases
from services.models import Execution, Workflow, utcnow
from services.notifier import Events, Notifier
from services.triggers import schedules as trigger_schedules
from services.workflows import DefinitionCache

log = logging.getLogger(__name__)

SLICE_S = 0.01  # the most one transaction of the runner spends taking steps (see Runner.drive)
YIELD_S = 0.001
AGAIN = object()
FENCED = object()  # advance: the step this instance ran was taken over meanwhile; its result is dropped
# a step decided by a person before it runs (coaching decisions, approvals): the policy's review is done
REVIEWED = ("accept", "correct", "approve", "edit")  # drive: the slice is used up, go on in a new transaction


class Runner:
    # pauses before advancing an execution again after a failure that is not transient; then the step fails
    ADVANCE_BACKOFF_S: tuple[float, ...] = (0.1, 0.5, 2.0, 5.0)

    def __init__(self, db: Database, tools: ToolRegistry, definitions: DefinitionCache, notifier: Notifier,
                 settings: Settings | None = None, spawn: Callable | None = None,
                 dispatch: Callable[[str], None] | None = None):
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
        self._scanner: threading.Thread | None = None
        self._keeper: threading.Thread | None = None
        self._stop = threading.Event()
        self.llm = None  # the LLM provider of agent steps (services.llm), made on first use (services.agent)
        self.leases = Leases(db, self.settings)  # this instance's id, and the steps it runs now

    # scheduling: one task per execution at a time; a request while it runs makes it go round once more
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

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """For tests and benchmarks: wait until no execution is being advanced."""
        with self._lock:
            return self._idle.wait_for(lambda: not self._active, timeout)

    def recover(self) -> int:
        """At start: approvals and gates whose deadline passed while the server was down fire (once: see fire_due);
        steps caught running whose lease expired, or whose instance is gone (this instance's own before a restart),
        go back to pending and run again with their key; runnable executions go on. A live peer's running step is
        left to it. Returns how many executions were scheduled."""
        self.fire_due()
        with self.db.read() as session:
            ids = session.scalars(select(Execution.id).where(Execution.status.in_(list(S.RUNNABLE)))).all()
        return sum(self._take_over(execution_id, at_start=True) for execution_id in ids)

    # leases (services.leases): a step running outside a transaction is this instance's while its lease holds
    def _take_over(self, execution_id: str, *, at_start: bool = False) -> bool:
        """Schedule a runnable execution here; its steps caught running first go back to pending, when their lease
        allows (Leases.free), and the lease becomes this instance's. Under the execution's lock: of several instances
        scanning at once, one takes it over. False when it is left alone."""
        def once() -> tuple[bool, list[str]]:
            with self.db.transaction() as session:
                ex = executions.get_any(session, execution_id)
                if ex is None or ex.status not in S.RUNNABLE:
                    return False, []
                now = utcnow()
                running = [st.step_id for st in ex.steps.values() if st.status == S.STEP_RUNNING]
                if (running or ex.lease_owner is not None) and not self.leases.free(ex, now, at_start):
                    return False, []
                for step_id in running:  # run again with the same key (its idempotency_key is kept)
                    executions.set_step(ex, step_id, status=S.STEP_PENDING)
                if running or ex.lease_owner is not None:
                    previous = ex.lease_owner
                    self.leases.grant(ex, now)
                    if self._dispatch is not None:  # a worker runs it (services.worker): the lease is the one it claims
                        self.leases.release(ex)
                    if running:
                        log.warning("execution %s: taking over step %s from %s (lease expired or its instance "
                                    "gone)", execution_id, ", ".join(running), previous or "nobody")
                return True, running
        try:
            taken, _ = retrying(once, what=f"taking over execution {execution_id}")
        except Exception:
            log.exception("taking over execution %s failed (the next scan tries again)", execution_id)
            return False
        if taken:
            self.schedule(execution_id)
        return taken

    def scan_leases(self) -> int:
        """Take up the executions another instance may take over now (Leases.to_take_over); a second runner on one
        that nobody holds is harmless, the step is claimed under the execution's lock. Returns how many this
        instance took up."""
        taken = 0
        for execution_id in self.leases.to_take_over():
            with self._lock:
                busy = execution_id in self._active
            if not busy and self._take_over(execution_id):
                taken += 1
        return taken

    def start_leases(self, *, scan: bool = True) -> None:
        """Renew this instance's leases (every third of COACH_LEASE_S) and scan for expired ones (every
        COACH_LEASE_SCAN_S), in one background thread (green under gevent/eventlet), until shutdown. A Celery
        worker (services.worker) only renews: the servers scan, and send what they take over to the workers."""
        if self._keeper is not None or self.settings.lease_s <= 0:
            return
        renew_every = self.settings.lease_s / 3
        scan_every = self.settings.lease_scan_s if scan else 0

        def keep() -> None:
            next_renew = next_scan = time.monotonic()
            while not self._stop.wait(max(0.0, min(next_renew, next_scan) - time.monotonic())):
                now = time.monotonic()
                if now >= next_renew:
                    next_renew = now + renew_every
                    try:
                        self.leases.renew()
                    except Exception:
                        log.exception("renewing the leases of instance %s failed", self.leases.owner)
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
        """Fire every approval, and every human gate (services.gates), whose deadline has passed, each in its own
        transaction (a second scanner, in this process or another, finds it no longer pending and leaves it), and
        every due cron schedule (claimed by a conditional update: services/triggers/schedules.py). Returns how many
        fired."""
        now = now or utcnow()
        with self.db.read() as session:
            due = [(approvals.fire_timeout, "approval", i) for i in approvals.due(session, now)]
            due += [(lambda s, i, n, e: gates.fire(s, self.definitions, i, n, e), "gate of execution", i)
                    for i in gates.due(session, now)]
        fired = 0
        for fire, what, target in due:
            def once(fire=fire, target=target):
                events = Events()
                with self.db.transaction() as session:
                    ex = fire(session, target, now, events)
                    return ex, ex is not None and ex.status in S.RUNNABLE, events
            try:
                ex, runnable, events = retrying(once, what=f"firing the deadline of {what} {target}")
            except Exception:  # one bad row must not stop the others' deadlines
                log.exception("firing the deadline of %s %s failed", what, target)
                continue
            self.notifier.send(events)
            if ex is not None:
                fired += 1
                if runnable:
                    self.schedule(ex.id)
        try:  # cron schedules (services/triggers/schedules.py): each due one fires once, whichever instance scans
            fired += trigger_schedules.fire_due(self, now)
        except Exception:
            log.exception("the schedule scan failed")
        return fired

    def start_deadlines(self) -> None:
        """Scan for due approvals every COACH_APPROVAL_SCAN_S seconds, in one background thread (a green thread
        under gevent/eventlet) for the whole process, until shutdown."""
        interval = self.settings.approval_scan_s
        if interval <= 0 or self._scanner is not None:
            return

        def scan() -> None:
            while not self._stop.wait(interval):
                try:
                    self.fire_due()
                except Exception:
                    log.exception("the approval deadline scan failed")

        self._scanner = threading.Thread(target=scan, name="approval-deadlines", daemon=True)
        self._scanner.start()

    def shutdown(self) -> None:
        self._stop.set()
        self.leases.close()
        for thread in (self._scanner, self._keeper):
            if thread is not None:
                thread.join(5)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

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
                slow, events = done
                self.notifier.send(events)
                self.leases.held.pop(execution_id, None)
                if slow is None or slow is FENCED:
                    return
                outcome = running = None
                if slow is AGAIN:  # its time slice is used up: let others in, then go on
                    # a timer, not sleep(0): gevent runs its ready greenlets on sleep(0) without polling the network
                    time.sleep(YIELD_S)
                    continue
                step, state, params, key = slow
                running = step.id
                self.leases.held[execution_id] = step.id  # renewed by the lease keeper while the tool runs
                # an agent step commits its conversation as it goes (services.agent); None: it waits for a person
                outcome = agent.run_step(self, execution_id, step) if step.type == "agent" else \
                    execute(step, state, self.tools.for_workspace(state.workspace_id), params=params,
                            idempotency_key=key)
        finally:
            self.leases.held.pop(execution_id, None)

    def _transact(self, execution_id: str, running: str | None, outcome: Outcome | None):
        """One transaction of advance: record `outcome` (the result of step `running`), then drive. Returns
        (what drive returned, the events to push), or None. A transient error is tried again at once (retrying);
        any other failure after each pause of ADVANCE_BACKOFF_S, keeping the outcome in hand (the tool does not run
        again); when it still fails, the step (or the execution) fails with the reason."""
        def once():
            events = Events()
            with self.db.transaction() as session:
                slow = self._advance_in(session, execution_id, running, outcome, events)
            return slow, events

        failures = 0
        while True:
            try:
                return retrying(once, what=f"advancing execution {execution_id}")
            except Exception as exc:
                if failures == len(self.ADVANCE_BACKOFF_S):
                    log.error("advancing execution %s failed %d times; its step fails", execution_id, failures + 1,
                              exc_info=True)
                    self._give_up(execution_id, running, exc, failures + 1)
                    return None
                pause = self.ADVANCE_BACKOFF_S[failures]
                failures += 1
                log.warning("advancing execution %s failed (%s); trying again in %gs", execution_id, _reason(exc),
                            pause, exc_info=True)
                if self._stop.wait(pause):  # shutting down: its lease runs out, and an instance takes it over
                    return None

    def _advance_in(self, session: Session, execution_id: str, running: str | None, outcome: Outcome | None,
                    events: Events):
        ex = executions.get_any(session, execution_id)
        if ex is None:
            return None
        if outcome is not None:
            if ex.lease_owner != self.leases.owner:
                log.warning("execution %s: step %s was taken over by %s while it ran here; this result is dropped "
                            "(the step runs there again, with the same idempotency key)", execution_id, running,
                            ex.lease_owner or "another instance")
                return FENCED
            self._record(ex, running, outcome)
        elif ex.lease_owner not in (None, self.leases.owner) and not self.leases.free(ex, utcnow()):
            return None  # another instance runs one of its steps: it goes on from there, not this one
        slow = self.drive(session, ex, events, claim=True)
        if isinstance(slow, tuple):  # a tool that takes time: claimed, under this instance's lease
            step, state, params, repeat = slow
            st = ex.steps[step.id]
            self.leases.grant(ex)
            audit.record(session, ex.workspace_id, "system", "tool_call", target_type="step",
                         target_id=f"{ex.id}/{step.id}", execution_id=ex.id,
                         after={"step_id": step.id, "tool": step.tool, "idempotency_key": st.idempotency_key,
                                "run": st.run, "repeat": repeat, "instance": self.leases.owner},
                         result="repeated" if repeat else "started")
            # the step is running now, for as long as its tool takes: the panels show it (the step's state)
            executions.changed(session, events, ex, step.id)
            return step, state, params, st.idempotency_key
        self.leases.release(ex)
        return slow

    def _give_up(self, execution_id: str, running: str | None, error: Exception, failures: int) -> None:
        """The advance keeps failing: fail the step whose result could not be recorded (or the one caught running,
        else the execution), with the reason, so that nothing is left `running` without anyone on it."""
        reason = f"advancing the execution failed {failures} times: {_reason(error)}"

        def once():
            events = Events()
            with self.db.transaction() as session:
                ex = executions.get_any(session, execution_id)
                if ex is None or ex.status in S.TERMINAL:
                    return events
                if ex.lease_owner not in (None, self.leases.owner) and not self.leases.free(ex, utcnow()):
                    return events  # another instance holds it now
                step_id = running or next((st.step_id for st in ex.steps.values() if st.status == S.STEP_RUNNING),
                                          None)
                self._fail(ex, step_id, f"step {step_id!r}: {reason}" if step_id else reason)
                ex.lease_owner = ex.lease_expires_at = None
                executions.changed(session, events, ex, step_id)
            return events
        try:
            self.notifier.send(retrying(once, what=f"failing execution {execution_id}"))
        except Exception:
            log.exception("execution %s could not be failed either; the lease scan will find it", execution_id)

    def drive(self, session: Session, ex: Execution, events: Events, *, claim: bool):
        """Advance inside the caller's transaction: skips, gates, ends and instantaneous tools (echo, noop).
        Stops before a tool that takes time: with `claim` it marks that step running and returns
        (step, state, params, repeat) for the caller to run outside the transaction (repeat: the step's run was
        started before, its key is kept); without, it returns True
        so the caller schedules the runner. Returns None when nothing is left to run now.

        One transaction takes steps for at most SLICE_S: evaluations of users' templates and conditions are
        bounded one by one (core.budget), and the slice bounds a run of many of them, so that a workflow of
        hundreds of costly conditions cannot hold the server (and SQLite's write lock) meanwhile. Past it,
        the runner goes on in a new transaction (AGAIN, or True without `claim`)."""
        until = time.monotonic() + SLICE_S
        while ex.status in S.RUNNABLE:
            nxt, params = self._step(session, ex, events, until)
            if nxt.kind == "yield":
                return AGAIN if claim else True
            if nxt.kind != "run":
                return None
            inline = self._inline(nxt.step, ex.workspace_id)
            if not inline and not claim:
                return True
            st = ex.steps[nxt.step.id]
            repeat = st.idempotency_key is not None  # a run started before (a crash took its instance down)
            if repeat or nxt.step.type != "action":
                executions.set_step(ex, nxt.step.id, status=S.STEP_RUNNING, started_at=utcnow())
            else:  # a new run of its tool: a new key
                executions.set_step(ex, nxt.step.id, status=S.STEP_RUNNING, started_at=utcnow(), run=st.run + 1,
                                    idempotency_key=call_key(ex.id, nxt.step.id, st.run + 1))
            state = executions.to_state(ex)
            if not inline:
                return nxt.step, state, params, repeat
            self._record(ex, nxt.step.id, execute(nxt.step, state, self.tools.for_workspace(ex.workspace_id),
                                                  params=params,
                                                  idempotency_key=st.idempotency_key or ""))
            if time.monotonic() > until and ex.status in S.RUNNABLE:
                return AGAIN if claim else True
        executions.changed(session, events, ex)
        return None

    def _inline(self, step, workspace_id: str) -> bool:
        if step.type == "agent":  # LLM requests: always outside the transaction
            return False
        tool = self.tools.for_workspace(workspace_id).get(step.tool or "") if step.type == "action" else None
        return step.type != "action" or bool(getattr(tool, "inline", False))

    def _step(self, session: Session, ex: Execution, events: Events, until: float) -> tuple[Next, object]:
        """Take steps that need no tool (skips, gates, ends) until one must run or the execution stops."""
        defn = self.definitions.for_execution(session, ex)
        if ex.status == S.PENDING:
            executions.set_status(ex, "start")
            ex.started_at = utcnow()
        elif ex.status == S.RESUMED:
            executions.set_status(ex, "continue")
        gate = coaching.review_gate(session, ex, self.settings.spot_check_rate, self.rng)
        while True:
            try:
                nxt = next_action(defn, executions.to_state(ex), gate)
            except SQLAlchemyError:
                raise
            except Exception as exc:  # a bug or a case nobody foresaw: the execution fails with the reason
                log.exception("choosing the next step of execution %s failed", ex.id)
                nxt = Next("fail", None, f"could not choose the next step: {type(exc).__name__}: {exc}")
            step_id = nxt.step.id if nxt.step else None
            if nxt.kind == "skip":
                executions.set_step(ex, step_id, status=S.STEP_SKIPPED, error=nxt.reason, finished_at=utcnow())
                if time.monotonic() > until:
                    return Next("yield"), None
                continue
            params = None
            if nxt.kind == "run":
                row = executions.step_state(ex, step_id)
                # a suggestion accepted or corrected, or a reviewed tool call approved (or edited): those params
                reviewed = row.decision in REVIEWED
                # a suggestion accepted by its deadline runs with the suggested params, but nobody reviewed it
                params = row.params if reviewed or row.decision == gates.TIMEOUT_ACCEPT else None
                if nxt.step.type == "action":
                    nxt, params = self._police(session, ex, nxt.step, params, reviewed, events)
            if nxt.kind == "gate":
                self._open_gate(session, ex, defn, nxt, events)
            elif nxt.kind == "complete":
                executions.set_status(ex, "complete")
            elif nxt.kind == "fail":
                self._fail(ex, step_id, nxt.reason)
            if nxt.kind != "run":
                executions.changed(session, events, ex, step_id)
            return nxt, params

    def _police(self, session: Session, ex: Execution, step, params, reviewed: bool,
                events: Events) -> tuple[Next, object]:
        """The policy on the call the step is about to make, with the params it will really run with (so a
        correction, an edit or a rule changed while the execution waited is judged now). Its verdict is kept
        with the step. `deny` fails the step with the rule's reason; `require_review` opens a tool-call approval
        unless a person already reviewed this very call (a coaching decision or an approval)."""
        if params is None:
            try:
                params = resolve_params(step, executions.to_state(ex))
            except TemplateFailure:
                return Next("run", step), None  # execute fails the step, naming the template's field
            if ex.mode != "normal":  # unattended in a coached workflow: it runs what it would have suggested
                params, _, _ = coaching.learned(session, session.get(Workflow, ex.workflow_id), step.id, params)
        explained = policies.judge(session, self.tools.for_workspace(ex.workspace_id), ex, step, params)
        executions.set_step(ex, step.id, policy=explained)
        if explained["effect"] == "deny":
            audit.record(session, ex.workspace_id, "system", "policy_deny", target_type="step",
                         target_id=f"{ex.id}/{step.id}", execution_id=ex.id,
                         after={"tool": step.tool, "params": params, "policy": explained}, result="deny")
            return Next("fail", step, f"step {step.id!r}: {policies.denied_message(explained)}"), None
        if explained["effect"] == "require_review" and not reviewed:
            approval = approvals.open_tool_call(session, ex, step.id, step.tool, params, explained, events)
            audit.record(session, ex.workspace_id, "system", "policy_review", target_type="approval",
                         target_id=approval.id, execution_id=ex.id,
                         after={"step_id": step.id, "tool": step.tool, "params": params, "policy": explained},
                         result="require_review")
            return Next("gate", step, "policy"), None
        return Next("run", step), params

    def _open_gate(self, session: Session, ex: Execution, defn, nxt: Next, events: Events) -> None:
        step = nxt.step
        if nxt.reason == "policy":  # opened by _police
            return
        if nxt.reason == "clarification":  # a pause asked for this step, or its own requires_clarification
            control.hold(ex, step.id, clarification_for(step, executions.to_state(ex)), events)
            return
        if nxt.reason == "approval":
            try:
                approvals.open_step(session, ex, defn, step, events)
            except TemplateFailure as exc:
                self._fail(ex, step.id, f"step {step.id!r}: {exc}")
            return
        if nxt.reason == "human_input":
            executions.set_step(ex, step.id, status=S.STEP_WAITING)
            ex.gate = {"kind": "human_input", "step_id": step.id, "question": step.question,
                       "paused_at": utcnow().isoformat(), **gates.armed("human_input", step.human_timeout, utcnow())}
            executions.set_status(ex, "await_clarification")
            events.add("clarification_requested", {"execution_id": ex.id, "step_id": step.id,
                                                   "question": step.question}, execution=ex.id,
                       workspace=ex.workspace_id)
            return
        try:
            purpose = "coaching" if nxt.reason == "decision" else nxt.reason
            coaching.open_suggestion(session, ex, defn, step, purpose, events,
                                     self.tools.for_workspace(ex.workspace_id))
        except TemplateFailure as exc:
            self._fail(ex, step.id, f"step {step.id!r}: {exc}")
        except SQLAlchemyError:
            raise
        except Exception as exc:  # never an execution left pending and a 500 for whoever decided before it
            log.exception("opening the gate of step %s of execution %s failed", step.id, ex.id)
            self._fail(ex, step.id, f"step {step.id!r} could not be prepared: {type(exc).__name__}: {exc}")

    def _fail(self, ex: Execution, step_id: str | None, message: str) -> None:
        if step_id and executions.step_state(ex, step_id).status not in S.STEP_DONE:
            executions.set_step(ex, step_id, status=S.STEP_FAILED, error=message, finished_at=utcnow())
            session = object_session(ex)
            if session is not None:  # a correction the failure is put down to no longer counts in its pack
                correction_failures.on_step_failed(session, ex, self.definitions.for_execution(session, ex),
                                                   step_id, message)
        ex.error = {"step_id": step_id, "message": message}
        executions.set_status(ex, "fail")

    def _record(self, ex: Execution, step_id: str, outcome: Outcome) -> None:
        executions.set_step(ex, step_id, attempts=outcome.attempts, params=outcome.params, finished_at=utcnow())
        if ex.status == S.CANCELLED:  # cancelled while the tool ran: keep the cancel, drop the result
            executions.set_step(ex, step_id, status=S.STEP_CANCELLED)
            return
        if outcome.ok:
            executions.set_step(ex, step_id, status=S.STEP_SUCCEEDED, output=outcome.output, error=None)
        else:
            self._fail(ex, step_id, outcome.error or "failed")


def _reason(exc: BaseException) -> str:
    """A failure as a step's error says it: the driver's message for a database error (not the SQL), one line."""
    inner = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = str(inner).strip().splitlines()
    return f"{type(inner).__name__}: {text[0] if text else ''}"[:500]
