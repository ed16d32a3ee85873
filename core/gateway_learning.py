"""Learning to stop asking, per gateway tool (docs/mcp-gateway.md, docs/mcp-gateway.md "Learning per tool").

The rules that need no storage: where a decision on an agent's held call counts (the tool, the tool for that agent
identity, the identity across tools, and the spot-check scope of whatever is in AUTO), which mode applies to a call
(the tool's, or the identity's own for that tool), and what the gateway does with a call given the policy's verdict
and that mode. The statistics are the steps' own (core/coaching/metrics.py, core/coaching/evidence.py); promotion and
pinning follow the steps' rules (core/coaching/autonomy.py).

Modes, as a step's: `coaching` (held calls are reviewed), `auto` (held calls are forwarded unattended, except a
spot-check sample), `always_review` (pinned: reviewed whatever the evidence). A tool has a mode; a tool *for one
identity* may have one of its own (mode_for says which applies).

Policies win: AUTO lifts only the holds that the workspace default makes (no rule matched the call: e.g. the tools of
an untrusted server, destructive by default). A rule whose effect is `require_review` is a person's explicit word
about that call and holds it in every mode; a `deny` denies it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.coaching.autonomy import ALWAYS_REVIEW, AUTO, COACHING, STEP_MODES, check_force
from core.errors import Conflict, ValidationFailed

__all__ = ["ALWAYS_REVIEW", "AUTO", "COACHING", "MODES", "check_force", "check_mode"]

MODES = STEP_MODES

# metric_scopes.scope values (at most 24 characters). Keys: the tool (`<server>.<tool>`), `<agent>/<tool>` (an agent's
# name has no "/", so the first "/" splits it), or the agent's name.
TOOL, AGENT_TOOL, IDENTITY = "gateway_tool", "gateway_agent_tool", "gateway_identity"
TOOL_SPOT, AGENT_TOOL_SPOT = "gateway_tool_spot", "gateway_agent_spot"
# the answers of the person at the agent (a `confirm` rule's question, core/gateway_confirm.py), per `<agent>/<tool>`:
# they count in the scopes above like a reviewer's decisions; this scope says how many came from the agent's side
AGENT_CONFIRM = "gateway_agent_confirm"

# a reviewer's decision on a held call, as the steps' decisions count (docs/design.md#decisions, §3)
DECISION_KIND = {"approve": "accept", "edit": "correct", "reject": "reject"}

# what the gateway does with a call
FORWARD, HOLD, SPOT_CHECK, DENY = "forward", "hold", "spot_check", "deny"
# which mode decides a call: the tool's own, or the tool's for this identity
UNIT_TOOL, UNIT_AGENT = "tool", "agent"


def agent_tool_key(tool: str, agent: str) -> str:
    return f"{agent}/{tool}"


def split_agent_tool_key(key: str) -> tuple[str, str]:
    """(agent, tool) of an `<agent>/<tool>` key."""
    agent, _, tool = key.partition("/")
    return agent, tool


def mode_for(tool_mode: str | None, agent_mode: str | None) -> tuple[str, str | None]:
    """The mode a call of this tool by this identity is gated by, and whose mode it is (None: nobody chose one, the
    tool is coached). A pin (always_review) wins, the tool's first; then AUTO, the tool's first (an identity's own
    AUTO matters while the tool as a whole is coached); `coaching` is no mode of one's own: an identity with it
    follows the tool."""
    if tool_mode == ALWAYS_REVIEW:
        return ALWAYS_REVIEW, UNIT_TOOL
    if agent_mode == ALWAYS_REVIEW:
        return ALWAYS_REVIEW, UNIT_AGENT
    if tool_mode == AUTO:
        return AUTO, UNIT_TOOL
    if agent_mode == AUTO:
        return AUTO, UNIT_AGENT
    return COACHING, None


def gate(effect: str, by_default: bool, mode: str, spot_check: Callable[[], bool]) -> str:
    """What the gateway does with a call: DENY, FORWARD, HOLD (a review; for `confirm`: ask the person at the agent)
    or SPOT_CHECK (an AUTO call sampled for a review, or a question). `by_default`: the verdict is the workspace
    default (no rule matched). `spot_check()` draws the sample; it is called only for a call that AUTO would otherwise
    forward. A `confirm` rule is learned like the default's holds: where the tool (for that agent, or the call's
    region) earned AUTO, the person is no longer asked (but for spot checks)."""
    if effect == "deny":
        return DENY
    if effect == "allow":
        return FORWARD
    if effect == "confirm":
        by_default = True  # asking the person at the agent is what learning may stop
    if not by_default or mode != AUTO:  # an explicit require_review rule holds whatever the evidence
        return HOLD
    return SPOT_CHECK if spot_check() else FORWARD


def decision_scopes(tool: str, agent: str, auto_unit: str | None, at_agent: bool = False) -> list[tuple[str, str]]:
    """Where one decision on a held call counts: the tool, the tool for this identity, the identity across its tools,
    and (while the tool, or the tool for this identity, is in AUTO) that unit's spot-check scope: in AUTO every
    reviewed call (a spot check, or a call an explicit rule held) is evidence for the demotion test, as a
    policy-forced review of an AUTO step is."""
    key = agent_tool_key(tool, agent)
    scopes = [(TOOL, tool), (AGENT_TOOL, key), (IDENTITY, agent)]
    if at_agent:  # the person at the agent answered (confirm): counted above, and here apart (before the spot scope)
        scopes.append((AGENT_CONFIRM, key))
    if auto_unit == UNIT_TOOL:
        scopes.append((TOOL_SPOT, tool))
    elif auto_unit == UNIT_AGENT:
        scopes.append((AGENT_TOOL_SPOT, key))
    return scopes


def unit_scopes(tool: str, agent: str | None) -> tuple[tuple[str, str], tuple[str, str]]:
    """(the evidence scope, the spot-check scope) of the tool (agent None) or of the tool for one identity."""
    if agent is None:
        return (TOOL, tool), (TOOL_SPOT, tool)
    key = agent_tool_key(tool, agent)
    return (AGENT_TOOL, key), (AGENT_TOOL_SPOT, key)


def check_mode(current: str, target: str, *, auto_ready: bool, force: bool) -> None:
    """The steps' rules (core.coaching.autonomy.check_step_mode) in a tool's words: ValidationFailed for an unknown
    mode; Conflict when promoting a tool that is not AUTO-ready (unless forced: the caller checks the admin role) or a
    pinned one (set it to coaching first: a pin is not overridden by a promotion)."""
    if target not in MODES:
        raise ValidationFailed("unknown mode", details={"mode": [f"must be one of {', '.join(MODES)}"]})
    if target != AUTO or current == AUTO:
        return
    if current == ALWAYS_REVIEW:
        raise Conflict(
            "this tool is pinned to always_review: set it to coaching first to unpin it", details={"mode": current}
        )
    if not auto_ready and not force:
        raise Conflict(
            "this tool is not AUTO-ready yet: its decisions do not show enough evidence", details={"auto_ready": False}
        )


def check_rate(rate: float | None) -> float | None:
    """A tool's own spot-check rate (None: the server's COACH_SPOT_CHECK_RATE): a share within 0..1."""
    if rate is None:
        return None
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 <= float(rate) <= 1.0:
        raise ValidationFailed(
            "the spot-check rate is a share of calls", details={"spot_check_rate": ["must be a number from 0 to 1"]}
        )
    return float(rate)


def changes_text(applied: list[dict[str, Any]]) -> str:
    """Learned corrections in words, for the agent and the reviewer: "amount: 5 → 50; note: (absent) → 'x'"
    (`applied`: the rules as core.coaching.rules.LearnedRule.to_dict gives them)."""

    def shown(value: Any) -> str:
        return "(absent)" if isinstance(value, dict) and value.get("$missing") else repr(value)

    return "; ".join(f"{r['field']}: {shown(r['before'])} → {shown(r['after'])}" for r in applied)


def stated(result: dict[str, Any], learned: dict[str, Any], status_key: str) -> dict[str, Any]:
    """An upstream result of a call forwarded in AUTO with the arguments corrected by learned rules, saying so: a text
    block first, and `_meta[status_key]` with the arguments sent and the rules applied (the agent must know that what
    ran is not exactly what it asked for)."""
    note = {
        "type": "text",
        "text": f"Coach corrected the arguments before the call, by learned rules of this tool: "
        f"{changes_text(learned['rules'])}.",
    }
    meta = dict(result.get("_meta") or {})
    meta[status_key] = {
        **(meta.get(status_key) or {}),
        "corrected_arguments": learned["params"],
        "applied_corrections": learned["rules"],
    }
    return {**result, "content": [note, *(result.get("content") or [])], "_meta": meta}


def edited(
    result: dict[str, Any], original: dict[str, Any], sent: dict[str, Any], reviewer: str, comment: str, status_key: str
) -> dict[str, Any]:
    """An upstream result of a held call a reviewer edited, saying so as `stated` says an AUTO correction: a text block
    first ("A reviewer (lead@…) edited the arguments before the call: b: 2 → 22. Their comment: …"), and
    `_meta[status_key]` with decision `edited`, the reviewer, the arguments sent, the agent's own and the changes."""
    from core.coaching.corrections import diff_params

    changes = [c.to_dict() for c in diff_params(original, sent)]
    text = (
        f"A reviewer ({reviewer}) edited the arguments before the call: "
        f"{changes_text(changes) if changes else 'no field changed'}."
        + (f" Their comment: {comment}" if comment else "")
    )
    result = with_status(
        result,
        status_key,
        {
            "decision": "edited",
            "reviewer": reviewer,
            "edited_arguments": sent,
            "original_arguments": original,
            "changes": changes,
            **({"comment": comment} if comment else {}),
        },
    )
    return {**result, "content": [{"type": "text", "text": text}, *(result.get("content") or [])]}


def with_status(result: dict[str, Any], status_key: str, status: dict[str, Any]) -> dict[str, Any]:
    """The result with `status` merged into `_meta[status_key]` (how the agent tells what Coach did with its call)."""
    meta = dict(result.get("_meta") or {})
    meta[status_key] = {**(meta.get(status_key) or {}), **status}
    return {**result, "_meta": meta}


def demotion_reason(acceptance: float, auto_acceptance: float, alpha: float) -> str:
    return (
        f"spot checks show acceptance below {auto_acceptance:.0%} (spot-check acceptance {acceptance:.0%}, "
        f"test at level {alpha:g})"
    )
