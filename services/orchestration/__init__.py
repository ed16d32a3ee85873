"""Orchestration: what moves executions on, above every concept it moves (executions, coaching, approvals, agents,
triggers). Nothing below imports this package.

drive.py      advancing an execution inside a transaction, to its next human gate or its end
runner.py     runs drive in background tasks, one step at a time, under a lease
scans.py      the periodic scans: deadlines, held decisions, schedules, stale leases
control.py    pause for clarification, correct, resume, cancel, answer
recovery.py   retry a failed step, resume from a step, re-run
history.py    a run's history
leases.py     which instance runs a step, until when
dispatch.py   the servers' side of the Celery queue (services/worker.py is the workers' side)
"""
