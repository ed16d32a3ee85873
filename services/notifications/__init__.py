"""Notifications (issue 33, docs/notifications.md): an outbox written with the events' own transactions
(outbox.py), sent after commit by a scanner or a worker (sender.py) by email (email.py), outgoing webhooks
(webhooks.py) or Web Push to people's browsers (push.py); people's preferences and a workspace's routes
(settings.py); approve / reject links (links.py).
This package's __init__ imports nothing: the services that note events import `outbox` alone."""
