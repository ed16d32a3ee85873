"""Taking a decision back (docs/design.md#decisions (undo) and docs/operations.md, issue #31 item 4): which decisions
are held for an undo window, and what an undo may do. Pure rules; services/coaching/held.py stores, releases and undoes.

- A decision on a **risky** call is held: its tool's risk is `external` or `destructive`, or the policy flagged it
  (its verdict is not `allow`). The same rule as the web app's confirming key (frontend/src/coaching/confirmation.ts),
  so the calls that ask for a second key are the ones that can be taken back in time.
- While held, the decision is stored but has not acted: the step waits, nothing is counted, and the execution waits
  at a gate of kind `held` whose deadline is the end of the window; the deadline scanner releases it then.
- An undo takes a held decision back: the suggestion is pending again, exactly as it was. Once released, the step it
  released may have started, and nothing takes it back (409).
"""

from __future__ import annotations

from typing import Any

HELD = "held"  # the gate kind of a held decision, and its suggestion's status until release
RISKY = frozenset({"external", "destructive"})
DEFAULT_WINDOW_S = 10.0
MAX_WINDOW_S = 300.0


def is_risky(risk: str | None, policy: dict[str, Any] | None) -> bool:
    """Whether a decision on a call of this tool risk and policy verdict is held for the undo window."""
    return risk in RISKY or (policy is not None and policy.get("effect", "allow") != "allow")


def holds(window_s: float, kind: str, risk: str | None, policy: dict[str, Any] | None) -> bool:
    """Whether a decision on a step's suggestion is held: a window is set and the call is risky. An agent's tool call
    (`kind` tool_call) is never held: the agent loop waits for its answer."""
    return window_s > 0 and kind != "tool_call" and is_risky(risk, policy)


def refusal(status: str, held_here: bool) -> str | None:
    """Why a decision on a suggestion of `status` cannot be taken back (None: it can). `held_here`: the execution's
    gate is this suggestion's held decision."""
    if status == "pending":
        return "this suggestion has no decision to take back"
    if status == HELD and held_here:
        return None
    if status == "decided":
        return "the step already started: its decision can no longer be taken back"
    return f"the suggestion is {status}: there is no decision to take back"
