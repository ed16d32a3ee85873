"""Regions of a tool step's calls: named conditions over a call's resolved params, each with its own mode and
evidence (issue 41). `proposals.py` learns candidate conditions from the decisions; `replay.py` shows what a
condition, or a policy rule being written, would have done to the scope's past decided calls."""
