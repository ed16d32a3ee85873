"""Approvals: storage and transactions around core/approvals.

service.py, models.py
"""
