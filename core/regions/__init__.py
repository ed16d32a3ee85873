"""Regions of a tool scope: named conditions over a call's params with their own mode and evidence
(docs/autonomy.md#regions)."""
