"""The policy engine: ordered rules `match` → `effect`, scoped, explained (docs/design.md#concepts, README "Policies").

Plain Python, no storage: services/policies/service.py loads a workspace's rules, compiles them once per revision into a
RuleSet and asks it about each tool call.
"""

from core.policy.engine import Call, Matched, RuleSet, Verdict
from core.policy.rules import (
    DEFAULT_EFFECTS,
    DEFAULTS,
    EFFECTS,
    FALLBACKS,
    MATCH_KEYS,
    CompiledRule,
    check_defaults,
    compile_rule,
)

__all__ = [
    "Call",
    "CompiledRule",
    "DEFAULTS",
    "DEFAULT_EFFECTS",
    "EFFECTS",
    "FALLBACKS",
    "MATCH_KEYS",
    "Matched",
    "RuleSet",
    "Verdict",
    "check_defaults",
    "compile_rule",
]
