"""Regions of a tool scope (docs/autonomy.md#regions): a named condition over a call's resolved params, with its own
mode, evidence and spot checks.

A region is `name`, `when` (an expression in the policy engine's predicate language, the same as a policy rule's
`match.params`, reading the same names: core/policy/rules.py PREDICATE_NAMES, with the agent identity as `agent`;
evaluated by core/templating.py within the metered budget of core/budget.py),
`order` and `mode` (`coaching`, `auto`, `always_review`), plus `identity` for a gateway tool's region (one agent
identity's calls only; None: every identity's). A scope (a workflow's tool step, an agent step's `<step>:<tool>`,
a gateway tool) has at most MAX_REGIONS of them.

A call falls in the first region, by `order` (then id, which sorts by creation), whose condition holds; a call in
no region follows its step's (or tool's) mode. A condition that fails on a call (an error, or over its budget)
does not hold, and the call is asked (`failed`): an unevaluable condition never lets a call through. Policies are
judged apart and always win (a `require_review` or `deny` verdict holds whatever a region's mode).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jinja2 import TemplateError

from core import budget, templating
from core.budget import BudgetExceeded
from core.coaching.autonomy import ALWAYS_REVIEW, AUTO, COACHING, STEP_MODES
from core.errors import ValidationFailed
from core.policy.rules import MAX_PREDICATE, PREDICATE_NAMES

MAX_REGIONS = 8  # per scope
MAX_WHEN = 500  # characters of a condition
MAX_NAME = 120
REGION_NAMES = PREDICATE_NAMES  # one language with the policy rules and the replay (core/regions/replay.py)
REGION_MODES = STEP_MODES  # coaching, auto, always_review


@dataclass(frozen=True)
class Region:
    """A region as the router sees it: checked once when written, matched many times."""

    id: str
    name: str
    when: str
    order: int = 0
    mode: str = COACHING
    identity: str | None = None
    condition_version: int = 1  # the scope's counter of condition versions when `when` was last fixed


@dataclass(frozen=True)
class Match:
    """Where a call falls: its region (None: in no region), and why a condition could not be evaluated."""

    region: Region | None
    failed: str | None = None

    def to_ref(self) -> dict[str, str] | None:
        """What a suggestion names (`region`: {id, name} or null)."""
        return None if self.region is None else {"id": self.region.id, "name": self.region.name}


NO_REGION = Match(None)


def check_when(source: Any, path: str = "when", *, max_chars: int = MAX_PREDICATE) -> str:
    """A condition as written, for a region or a replay: a non-empty predicate of at most `max_chars` that compiles
    and reads only the names a policy predicate sees; ValidationFailed naming `path` and the problem otherwise."""
    if not isinstance(source, str) or not source.strip() or len(source) > max_chars:
        size = f" (it has {len(source)})" if isinstance(source, str) and len(source) > max_chars else ""
        message = f"must be a non-empty expression of at most {max_chars} characters{size}"
        raise ValidationFailed(f"`{path}` {message}", {path: [message]})
    try:
        names = templating.expression_names(source)
    except TemplateError as exc:
        raise ValidationFailed(f"`{path}` does not compile: {exc}", {path: [f"does not compile: {exc}"]}) from None
    unknown = sorted(names - REGION_NAMES)
    if unknown:
        message = f"unknown name(s) {', '.join(unknown)}; a condition sees {', '.join(sorted(REGION_NAMES))}"
        raise ValidationFailed(f"`{path}`: {message}", {path: [message]})
    return source.strip()


def check_region_when(source: Any, path: str = "when") -> str:
    """A region's condition: check_when's, at most MAX_WHEN characters, and reading the call (its params, or for a
    gateway tool its agent): a condition of nothing would be the whole tool again."""
    when = check_when(source, path, max_chars=MAX_WHEN)
    if not templating.expression_names(when) & {"params", "agent"}:
        raise ValidationFailed(
            "the region's condition reads nothing of the call",
            {path: ["must read the call's params (or, for a gateway tool, its agent)"]},
        )
    return when


def check_region(data: Any, *, partial: bool = False, gateway: bool = False) -> dict[str, Any]:
    """A region's fields as a client wrote them (POST, or PATCH with `partial`), checked: every wrong field named
    in one ValidationFailed. Only the fields given are returned for a PATCH."""
    if not isinstance(data, dict):
        raise ValidationFailed("a region must be an object", {"(body)": ["must be an object"]})
    errors: dict[str, list[str]] = {}
    out: dict[str, Any] = {}
    allowed = {"name", "when", "order", "mode"} | ({"identity"} if gateway else set())
    for key in data:
        if key not in allowed:
            errors.setdefault(key, []).append(f"unknown field; one of {sorted(allowed)}")
    for key in ("name", "when") if not partial else ():
        if key not in data:
            errors.setdefault(key, []).append("is required")
    if "name" in data:
        name = data["name"]
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            errors.setdefault("name", []).append(f"must be a non-empty string of at most {MAX_NAME} characters")
        else:
            out["name"] = name.strip()
    if "when" in data:
        try:
            out["when"] = check_region_when(data["when"])
        except ValidationFailed as exc:
            for k, v in (exc.details or {}).items():
                errors.setdefault(k, []).extend(v)
    if "order" in data:
        order = data["order"]
        if not isinstance(order, int) or isinstance(order, bool) or not -(10**6) <= order <= 10**6:
            errors.setdefault("order", []).append("must be an integer between -1000000 and 1000000")
        else:
            out["order"] = order
    if "mode" in data:
        if data["mode"] not in REGION_MODES:
            errors.setdefault("mode", []).append(f"must be one of {', '.join(REGION_MODES)}")
        elif data["mode"] == AUTO:
            errors.setdefault("mode", []).append("a region is promoted through POST /api/regions/<id>/mode")
        else:
            out["mode"] = data["mode"]
    if "identity" in data:
        identity = data["identity"]
        if identity is not None and (not isinstance(identity, str) or not identity.strip() or len(identity) > 200):
            errors.setdefault("identity", []).append("must be null or an agent identity's name")
        else:
            out["identity"] = identity.strip() if identity else None
    if errors:
        raise ValidationFailed("the region is not valid", errors)
    return out


def check_count(existing: int) -> None:
    """A new region in a scope that has `existing` ones: ValidationFailed past MAX_REGIONS."""
    if existing >= MAX_REGIONS:
        raise ValidationFailed(
            "too many regions", {"(body)": [f"a scope has at most {MAX_REGIONS} regions; remove one first"]}
        )


def ordered(regions: Iterable[Region]) -> list[Region]:
    return sorted(regions, key=lambda r: (r.order, r.id))


def region_for(
    regions: Iterable[Region],
    params: Any,
    *,
    tool: str | None = None,
    identity: str | None = None,
    context: dict[str, Any] | None = None,
) -> Match:
    """The first region (by order, then id) whose condition holds on the call. All the conditions of one call share
    one budget. A region for another identity is passed over. A condition that fails stops the search: the call
    is asked (Match.failed says why), never let through by a later region. `context`: the call's other names as a
    policy predicate sees them (core.policy.Call.context: risk, step_type, workflow_id, user, agent_step)."""
    candidates = [r for r in ordered(regions) if r.identity is None or r.identity == identity]
    if not candidates:
        return NO_REGION
    context = {
        **{name: None for name in REGION_NAMES},
        **(context or {}),
        "params": params if isinstance(params, dict) else {},
        "tool": tool,
        "agent": identity,
    }
    try:
        with budget.metered("evaluating region conditions"):
            for region in candidates:
                if templating.evaluate_condition(region.when, context, f"region {region.name!r}"):
                    return Match(region)
    except templating.TemplateFailure as exc:
        return Match(None, exc.message)
    except BudgetExceeded as exc:
        return Match(None, exc.message)
    return NO_REGION


def effective_step_mode(step_mode: str | None, match: Match) -> str | None:
    """The mode the router gates a call by (core.coaching.autonomy.review_for's `step_mode`): the region's when the
    call falls in one; a step pinned to always_review stays pinned; a condition that failed asks."""
    if match.failed is not None or step_mode == ALWAYS_REVIEW:
        return ALWAYS_REVIEW
    if match.region is None:
        return step_mode
    return match.region.mode
