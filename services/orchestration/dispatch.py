"""The servers' side of the Celery queue: a Celery app of the server's settings that sends an execution needing a
slow tool to the workers (services/worker.py runs them). Apart from the worker module, so that a server's
Services (services/container.py) can send without importing the worker, which imports the Services."""

from __future__ import annotations

from celery import Celery

from config import Settings

QUEUE = "coach"
TASK = "coach.advance"
NOTIFY_TASK = "coach.notify"  # one round of the notification sender (services/notifications/sender.run_once)


def configure(app: Celery, settings: Settings) -> Celery:
    app.conf.update(
        broker_url=settings.broker_url,
        task_default_queue=QUEUE,
        task_acks_late=True,  # acknowledged once the step is recorded, not when received
        task_reject_on_worker_lost=True,  # a worker process that dies mid-task puts the task back
        worker_prefetch_multiplier=1,  # a worker holds no more tasks than it runs
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": settings.worker_redeliver_s},
        worker_hijack_root_logger=False,
        # with `celery beat` running, the workers send the notification outbox too (the servers' scanners go on:
        # a row is claimed by one sender at a time, so they share the work)
        beat_schedule={
            "coach-notify": {
                "task": NOTIFY_TASK,
                "schedule": max(settings.notify_scan_s, 1.0),
                "options": {"queue": QUEUE, "expires": 30},
            }
        },
    )
    return app


def dispatcher(settings: Settings):
    """For a server's runner: send an execution that needs a slow tool to the workers (through a Celery app of
    the server's own settings)."""
    app = configure(Celery("coach-server"), settings)

    def dispatch(execution_id: str) -> None:
        app.send_task(TASK, args=[execution_id], queue=QUEUE)

    return dispatch
