"""Approvals: storage and transactions around core/approvals.

service.py    opening approvals, reading them, their rows as core/approvals' state
decisions.py  a person's decision, and what a final approval does to its step and execution
deadlines.py  a deadline fired, and approvals expired with a cancelled execution
held.py       a settling decision held for the undo window; undo.py releases it or takes it back
models.py
"""
