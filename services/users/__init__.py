"""Users, workspaces, memberships and bearer tokens (docs/auth.md).

service.py, models.py
"""
