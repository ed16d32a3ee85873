"""Approvals: storage and transactions around core/approvals. Deciding them is services/decisions (approvals.py,
approval_undo.py, deadlines.py).

service.py    opening approvals, reading them, their rows as core/approvals' state
held.py       a settling decision held for the undo window (services/decisions/approval_undo.py releases it or takes
              it back)
"""
