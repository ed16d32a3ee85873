"""The audit log: append-only, hash-chained per workspace.

service.py, models.py
"""
