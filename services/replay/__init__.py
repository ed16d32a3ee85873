"""Proposed regions and counterfactual replays over a scope's decided calls (core/regions; issue 41)."""
