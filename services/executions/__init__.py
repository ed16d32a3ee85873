"""Executions: starting and reading runs, a step's or the status's changes, human gates' deadlines. What moves
them on (the runner, control, recovery, history, leases, the Celery dispatch) is services/orchestration.

service.py      start, read, list, change a step or the status; the session's counters
gates.py        deadlines on human gates
"""
