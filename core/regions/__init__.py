"""Regions of a tool scope's calls: named conditions over a call's resolved params, each with its own mode and
evidence (issue 41, docs/autonomy.md#regions). `region.py` checks conditions and finds the region a call falls
in; `evidence.py` gives each condition version its share of the scope's level; `proposals.py` learns candidate
conditions from the decisions; `replay.py` shows what a condition, or a policy rule being written, would have done
to the scope's past decided calls."""
