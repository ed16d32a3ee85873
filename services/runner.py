"""Advances executions in background tasks: load, run what can run, stop at the first human gate, commit.

No task waits on a human: a paused execution is rows, not a thread. Each step's result is committed
together with the decision about what comes next, so a killed server loses at most the step that was
running (it runs again on restart).
"""
from __future__ import annotations

import logging
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from config import Settings
from core.execution import states as S
from core.execution.engine import Next, Outcome, clarification_for, execute, next_action, resolve_params
from core.templating import TemplateFailure
from core.tools import ToolRegistry
from services import approvals, audit, coaching, control, executions, gates, policies
from services.db import Database, held
from services.models import Execution, Workflow, utcnow
from services.notifier import Events, Notifier
from services.workflows import DefinitionCache

log = logging.getLogger(__name__)

SLICE_S = 0.01  # the most one transaction of the runner spends taking steps (see Runner.drive)
YIELD_S = 0.001
AGAIN = object()
# a step decided by a person before it runs (coaching decisions, approvals): the policy's review is done
REVIEWED = ("accept", "correct", "approve", "edit")  # drive: the slice is used up, go on in a new transaction


class Runner:
    def __init__(self, db: Database, tools: ToolRegistry, definitions: DefinitionCache, notifier: Notifier,
                 settings: Settings | None = None, spawn: Callable | None = None):
        self.db, self.tools, self.definitions, self.notifier = db, tools, definitions, notifier
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
        self._rng = random.Random(self.settings.random_seed)
        self._scanner: threading.Thread | None = None
        self._stop = threading.Event()

    # scheduling: one task per execution at a time; a request while it runs makes it go round once more
    def schedule(self, execution_id: str) -> None:
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
            except Exception:
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
        """After a restart: steps caught running go back to pending, runnable executions go on, and approvals
        whose deadline passed while the server was down fire (once: see fire_due)."""
        self.fire_due()
        with self.db.transaction() as session:
            rows = session.scalars(select(Execution).where(Execution.status.in_(list(S.RUNNABLE)))).all()
            ids = []
            for ex in rows:
                for step in ex.steps.values():
                    if step.status == S.STEP_RUNNING:
                        executions.set_step(ex, step.step_id, status=S.STEP_PENDING)
                ids.append(ex.id)
        for execution_id in ids:
            self.schedule(execution_id)
        return len(ids)

    # deadlines: rows with a due time, scanned; no thread or timer per approval or gate
    def fire_due(self, now=None) -> int:
        """Fire every approval, and every human gate (services.gates), whose deadline has passed, each in its own
        transaction (a second scanner, in this process or another, finds it no longer pending and leaves it).
        Returns how many fired."""
        now = now or utcnow()
        with self.db.read() as session:
            due = [(approvals.fire_timeout, "approval", i) for i in approvals.due(session, now)]
            due += [(lambda s, i, n, e: gates.fire(s, self.definitions, i, n, e), "gate of execution", i)
                    for i in gates.due(session, now)]
        fired = 0
        for fire, what, target in due:
            events = Events()
            try:
                with self.db.transaction() as session:
                    ex = fire(session, target, now, events)
                    runnable = ex is not None and ex.status in S.RUNNABLE
            except Exception:  # one bad row must not stop the others' deadlines
                log.exception("firing the deadline of %s %s failed", what, target)
                continue
            self.notifier.send(events)
            if ex is not None:
                fired += 1
                if runnable:
                    self.schedule(ex.id)
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
        if self._scanner is not None:
            self._scanner.join(5)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def advance(self, execution_id: str) -> None:
        outcome: Outcome | None = None
        running: str | None = None
        while True:
            events = Events()
            with self.db.transaction() as session:
                ex = executions.get_any(session, execution_id)
                if ex is None:
                    return
                if outcome is not None:
                    self._record(ex, running, outcome)
                slow = self.drive(session, ex, events, claim=True)
            self.notifier.send(events)
            if slow is None:
                return
            if slow is AGAIN:  # its time slice is used up: let others in, then go on
                outcome = None
                # a timer, not sleep(0): gevent runs its ready greenlets on sleep(0) without polling the network
                time.sleep(YIELD_S)
                continue
            step, state, params = slow
            running = step.id
            outcome = execute(step, state, self.tools.for_workspace(state.workspace_id), params=params)

    def drive(self, session: Session, ex: Execution, events: Events, *, claim: bool):
        """Advance inside the caller's transaction: skips, gates, ends and instantaneous tools (echo, noop).
        Stops before a tool that takes time: with `claim` it marks that step running and returns
        (step, state, params) for the caller to run outside the transaction; without, it returns True
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
            executions.set_step(ex, nxt.step.id, status=S.STEP_RUNNING, started_at=utcnow())
            state = executions.to_state(ex)
            if not inline:
                return nxt.step, state, params
            self._record(ex, nxt.step.id, execute(nxt.step, state, self.tools.for_workspace(ex.workspace_id),
                                                  params=params))
            if time.monotonic() > until and ex.status in S.RUNNABLE:
                return AGAIN if claim else True
        events.add("execution_update", executions.update_event(ex), execution=ex.id, workspace=ex.workspace_id)
        return None

    def _inline(self, step, workspace_id: str) -> bool:
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
        gate = coaching.review_gate(session, ex, self.settings.spot_check_rate, self._rng)
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
                events.add("execution_update", executions.update_event(ex, step_id), execution=ex.id,
                           workspace=ex.workspace_id)
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
                params, _, _ = coaching.learned(session, held(session, Workflow, ex.workflow_id), step.id, params)
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

    @staticmethod
    def _fail(ex: Execution, step_id: str | None, message: str) -> None:
        if step_id and executions.step_state(ex, step_id).status not in S.STEP_DONE:
            executions.set_step(ex, step_id, status=S.STEP_FAILED, error=message, finished_at=utcnow())
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
