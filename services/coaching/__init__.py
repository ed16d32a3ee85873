"""Coaching: suggestions, the five decisions and what each does, the operator's work list, correction packs.

service.py              suggestions and the durable session around them
decisions.py            applying a decision in one transaction
corrections.py          correction packs and the rules learned from them
correction_failures.py  a correction whose step then failed because of it
worklist.py             the operator's work list (the queue)
models.py               Suggestion, Decision, CorrectionPack
"""
