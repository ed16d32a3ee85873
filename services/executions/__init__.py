"""Executions: starting and reading runs, the runner that advances them, control (pause, resume, cancel, answer),
recovery, history, leases, human gates' deadlines and the Celery workers.

service.py      start, read, list, change a step or the status; the session's counters
runner.py       advances executions in background tasks, stops at the first human gate
control.py      pause for clarification, correct, resume, cancel, answer
recovery.py     retry a failed step, resume from a step, re-run
history.py      a run's history
gates.py        deadlines on human gates
leases.py       which instance runs a step, until when
dispatch.py     the servers' side of the Celery queue; worker.py the workers' side
models.py       Execution
"""
