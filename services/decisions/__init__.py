"""Decisions: every way a person's decision is taken, above what it decides on (suggestions, approvals, executions,
agents' replies, the gateway's held calls) and below orchestration (drive, runner, scans).

coaching.py       a coaching decision (accept, reject, correct, manual, skip), from REST or the socket
undo.py           a held coaching decision released after its undo window, or taken back
approvals.py      a person's decision on an approval, and what a final one does to its step and execution
approval_undo.py  a held approval decision released or taken back
deadlines.py      an approval's deadline fired; approvals expired with a cancelled execution
links.py          a decision taken with an email's approve / reject link
slack.py          a decision taken with a Slack message's buttons (the interactivity endpoint)
"""
