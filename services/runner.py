"""Advances executions in background tasks: load, run what can run, stop at the first human gate, commit.

No task waits on a human: a paused execution is rows, not a thread. Each step's result is committed before
the next step starts, so a killed server loses at most the step that was running (it runs again on restart).
"""
from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from sqlalchemy import select

from core.execution import states as S
from core.execution.engine import Next, execute, next_action
from core.tools import ToolRegistry
from services import executions
from services.db import Database
from services.models import Execution, utcnow
from services.notifier import Notifier
from services.workflows import DefinitionCache

log = logging.getLogger(__name__)


class Runner:
    def __init__(self, db: Database, tools: ToolRegistry, definitions: DefinitionCache, notifier: Notifier,
                 workers: int = 4, spawn: Callable | None = None):
        self.db, self.tools, self.definitions, self.notifier = db, tools, definitions, notifier
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="runner") if spawn is None else None
        self._spawn = spawn or self._pool.submit
        self._lock = threading.Lock()
        self._active: set[str] = set()
        self._again: set[str] = set()
        self._idle = threading.Condition(self._lock)

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
        """After a restart: steps caught running go back to pending, and runnable executions go on."""
        with self.db.transaction() as session:
            rows = session.scalars(select(Execution).where(Execution.status.in_(list(S.RUNNABLE)))).all()
            ids = []
            for ex in rows:
                for step in ex.steps:
                    if step.status == S.STEP_RUNNING:
                        step.status = S.STEP_PENDING
                ids.append(ex.id)
        for execution_id in ids:
            self.schedule(execution_id)
        return len(ids)

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # hooks that coaching and policies extend
    def needs_human(self, session, ex: Execution):
        return None

    def open_gate(self, session, ex: Execution, nxt: Next) -> None:
        row = executions.step_row(ex, nxt.step.id)
        row.status = S.STEP_WAITING
        if nxt.reason == "human_input":
            ex.gate = {"kind": "human_input", "step_id": nxt.step.id, "question": nxt.step.question}
            executions.set_status(ex, "await_clarification")

    def advance(self, execution_id: str) -> None:
        while True:
            with self.db.transaction() as session:
                ex = session.get(Execution, execution_id)
                if ex is None or ex.status not in S.RUNNABLE:
                    return
                defn = self.definitions.get(session, ex.workflow_id, ex.workflow_version)
                if ex.status == S.PENDING:
                    executions.set_status(ex, "start")
                    ex.started_at = utcnow()
                elif ex.status == S.RESUMED:
                    executions.set_status(ex, "continue")
                state = executions.to_state(ex)
                nxt = next_action(defn, state, self.needs_human(session, ex))
                step_id = nxt.step.id if nxt.step else None
                if nxt.kind == "skip":
                    row = executions.step_row(ex, step_id)
                    row.status, row.error, row.finished_at = S.STEP_SKIPPED, nxt.reason, utcnow()
                elif nxt.kind == "gate":
                    self.open_gate(session, ex, nxt)
                elif nxt.kind == "complete":
                    executions.set_status(ex, "complete")
                elif nxt.kind == "fail":
                    ex.error = {"step_id": step_id, "message": nxt.reason}
                    executions.set_status(ex, "fail")
                elif nxt.kind == "run":
                    row = executions.step_row(ex, step_id)
                    row.status, row.started_at = S.STEP_RUNNING, utcnow()
                    override = row.params if row.decision == "correct" else None
                update = executions.update_event(ex, step_id)
                workspace_id = ex.workspace_id
            self.notifier.execution_update(workspace_id, update)
            if nxt.kind in ("gate", "complete", "fail", "wait"):
                self.after_stop(execution_id, nxt)
                return
            if nxt.kind == "run":
                outcome = execute(nxt.step, state, self.tools, params=override)
                self._record(execution_id, step_id, outcome)

    def after_stop(self, execution_id: str, nxt: Next) -> None:
        """Called once an advance stops at a gate or an end; coaching pushes suggestions here."""

    def _record(self, execution_id: str, step_id: str, outcome) -> None:
        with self.db.transaction() as session:
            ex = session.get(Execution, execution_id)
            row = executions.step_row(ex, step_id)
            row.attempts, row.params, row.finished_at = outcome.attempts, outcome.params, utcnow()
            if ex.status != S.RUNNING:  # cancelled while the tool ran: keep the cancel, drop the result
                row.status = S.STEP_CANCELLED if row.status == S.STEP_RUNNING else row.status
                return
            if outcome.ok:
                row.status, row.output, row.error = S.STEP_SUCCEEDED, outcome.output, None
            else:
                row.status, row.error = S.STEP_FAILED, outcome.error
                ex.error = {"step_id": step_id, "message": outcome.error}
                executions.set_status(ex, "fail")
