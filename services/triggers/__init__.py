"""Starting workflows from outside: incoming webhooks (hooks.py) and cron schedules (schedules.py), each start
recorded with its trigger (starts.py); the rules are core/triggers.py (docs/triggers.md)."""
