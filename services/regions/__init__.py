"""Regions of a tool scope, stored and applied (docs/autonomy.md#regions): the rules are core/regions."""
