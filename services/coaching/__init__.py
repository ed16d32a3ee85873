"""Coaching: suggestions, the operator's work list, correction packs, check suggestions. Applying a decision is
services/decisions (coaching.py, undo.py).

service.py              suggestions and the durable session around them
corrections.py          correction packs and the rules learned from them
correction_failures.py  a correction whose step then failed because of it
checks.py               check suggestions: drawn when a suggestion opens, and decided
answers.py              what every decision answers and sends (a check's as a real one's)
counting.py             a decision counted in the metrics, readiness evidence and regions
held.py                 a decision on a risky call held for the undo window
worklist.py             the operator's work list (the queue)
"""
