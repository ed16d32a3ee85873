"""Celery workers: the steps that need a slow tool run on worker processes, possibly on other machines.

Chosen by configuration: with `COACH_BROKER_URL` set (Redis), a server's runner does not run slow tools itself.
It still takes decisions, runs what is instantaneous (skips, gates, echo) in the decision's own transaction and
pushes events; an execution that reaches a slow tool is sent to the `coach` queue as a `coach.advance` task, and a
worker runs `Runner.advance` on it: claims the step (its lease, services.orchestration.runner), runs the tool,
records the outcome, goes on to the next gate, and pushes its events through the Socket.IO message queue
(`COACH_MESSAGE_QUEUE`), so clients connected to any server see them.

Started with one command (README "Several machines"):

    .venv/bin/python -m celery -A services.worker worker --loglevel=INFO     (or: make worker)

Nothing is lost with a worker: tasks are acknowledged late (after the step is recorded) and re-delivered when
the worker running them dies (`task_reject_on_worker_lost`; for a worker killed whole, Redis re-delivers unacked
tasks after `COACH_WORKER_REDELIVER_S`). Meanwhile the step's lease runs out and a server's lease scan hands it to
another worker, so a lost step is taken over within the lease time; a second delivery of the same task finds the
step recorded, or leased by a live owner, and does nothing.
"""

from __future__ import annotations

import logging
import threading

from celery import Celery, signals

from config import Settings
from services.orchestration.dispatch import NOTIFY_TASK, TASK, configure

log = logging.getLogger(__name__)

celery = configure(Celery("coach"), Settings.from_env())

_services = None
_lock = threading.Lock()


def services():
    """This worker process's Services (made on first use, after the fork): the database, the tools, and a
    notifier that pushes through the message queue."""
    global _services
    with _lock:
        if _services is None:
            from flask_socketio import SocketIO

            from services.container import Services
            from services.notifier import Notifier

            settings = Settings.from_env()
            # Flask-SocketIO's emitter for processes without a server: the servers' channel on the message queue
            emitter = SocketIO(message_queue=settings.message_queue) if settings.message_queue else None
            if emitter is None:
                log.warning("COACH_MESSAGE_QUEUE is not set: this worker's events reach no client")
            # steps run here, in this process: never sent back to the queue. Its notifier tells a workspace's room
            # `queue_changed` after each transaction, not coalesced: the emitter is write-only, with no server to run
            # a timer in (and a Celery pool process is not a green-thread hub); a step run here is a slow one anyway
            _services = Services.build(
                settings, notifier=Notifier(emitter), spawn=lambda fn, *a: fn(*a), dispatch=False
            )
            _services.runner.scans.start_leases(scan=False)  # renews the lease of the step it runs; servers scan
        return _services


@signals.worker_process_init.connect
def _warm(**_kwargs) -> None:
    """Each pool process makes its Services when it starts, not at its first task (imports and connections take
    seconds)."""
    services()


@celery.task(name=TASK)
def advance(execution_id: str) -> None:
    services().runner.advance(execution_id)


@celery.task(name=NOTIFY_TASK)
def notify() -> None:
    """One round of the notification sender, the same code path as the server's scanner."""
    from services.notifications import sender

    sender.run_once(services())
