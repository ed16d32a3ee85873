"""The maths of coaching: decision counters, learning levels, latency quantiles, correction packs.

Plain Python, stdlib only. Every state object here is small, updated incrementally on each decision
and round-trips through JSON-friendly dicts, so storage can keep it in one row and update it in the
decision's transaction (docs/design.md#metrics-and-learning-levels: metric reads are O(1) in the number of decisions).
"""
