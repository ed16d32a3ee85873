"""Asking the person at the agent (a policy rule's `confirm` effect, docs/mcp-gateway.md "Confirm"): the question
as an MCP elicitation form, and what its answer means. No storage, no protocol objects: plain data.

The form (an elicitation's `requestedSchema`: flat, primitive properties only, as the spec allows):

- `coach_decision`: `run` or `do not run` (required; `run` by default);
- `coach_reason`: why not (or a note), free text;
- one field per argument the person may edit: a top-level argument whose value and schema are a string (enums
  included), a number, an integer or a boolean, pre-filled with the agent's value (`default`). Arguments of other
  kinds (objects, arrays) are shown in the message and cannot be edited there.

The answer (an elicitation result: `action` accept | decline | cancel, and `content` on accept):

- accept with `run` and no field changed: ACCEPT (counts as a reviewer's approve: accepted);
- accept with `run` and a field changed: EDIT (the edited arguments run; counts as corrected);
- accept with `do not run`, or the client's own decline: DECLINE, with the reason given (counts as rejected);
- cancel (dismissed without a choice): CANCEL, which is no decision and counts nowhere; the call did not run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

DECISION_FIELD, REASON_FIELD = "coach_decision", "coach_reason"
RUN, DONT = "run", "do not run"
ACCEPT, EDIT, DECLINE, CANCEL = "accept", "edit", "decline", "cancel"
# what an answer counts as, in a reviewer's words (core.gateway_learning.DECISION_KIND); CANCEL counts nowhere
AS_REVIEW = {ACCEPT: "approve", EDIT: "edit", DECLINE: "reject"}
INPUT_KEY = "coach_confirm"  # the key of the one input request of an InputRequiredResult
_PRIMITIVE = {"string": str, "number": (int, float), "integer": int, "boolean": bool}
MAX_SHOWN = 4000  # characters of the arguments shown in the message


@dataclass(frozen=True)
class Form:
    message: str
    schema: dict[str, Any]
    editable: dict[str, str] = field(default_factory=dict)  # argument -> its JSON type


@dataclass(frozen=True)
class Answer:
    kind: str  # ACCEPT | EDIT | DECLINE | CANCEL
    arguments: dict[str, Any]  # what would run (the edited arguments for EDIT)
    reason: str = ""
    changes: list[dict[str, Any]] = field(default_factory=list)  # [{field, before, after}] for EDIT


class BadAnswer(ValueError):
    """An answer the form did not ask for (a value of the wrong type, an unknown decision): the call does not run."""


def _type_of(spec: Any) -> str | None:
    if not isinstance(spec, dict):
        return None
    kind = spec.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the one non-null type
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    return kind if kind in _PRIMITIVE else None


def _fits(kind: str, value: Any) -> bool:
    if isinstance(value, bool) and kind != "boolean":
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _PRIMITIVE[kind])


def form(
    agent: str, tool: str, arguments: dict[str, Any], params_schema: dict[str, Any] | None, rule: dict[str, Any] | None
) -> Form:
    """The question for the person at `agent`: the call, its arguments, the rule that asks, and the form."""
    properties = (params_schema or {}).get("properties") if isinstance(params_schema, dict) else None
    properties = properties if isinstance(properties, dict) else {}
    fields_: dict[str, Any] = {
        DECISION_FIELD: {
            "type": "string",
            "title": f"Run this call of {tool}?",
            "enum": [RUN, DONT],
            "enumNames": ["Run it", "Do not run it"],
            "default": RUN,
        },
        REASON_FIELD: {
            "type": "string",
            "title": "Why not (or a note for the agent)",
            "description": "If you do not run it, say why: the agent is told.",
            "maxLength": 2000,
        },
    }
    editable: dict[str, str] = {}
    for name, value in arguments.items():
        if name in fields_:
            continue
        spec = properties.get(name)
        kind = _type_of(spec)
        if kind is None or not _fits(kind, value):
            continue
        prop: dict[str, Any] = {
            "type": kind,
            "title": str(spec.get("title") or name),
            "description": (
                str(spec.get("description") or "") + " (the agent's value: change it to edit the call)"
            ).strip()[:500],
            "default": value,
        }
        if kind == "string" and isinstance(spec.get("enum"), list) and all(isinstance(e, str) for e in spec["enum"]):
            prop["enum"] = spec["enum"]
        for key in ("minimum", "maximum", "minLength", "maxLength", "format"):
            if key in spec and isinstance(spec[key], (int, float, str)) and not isinstance(spec[key], bool):
                prop[key] = spec[key]
        fields_[name] = prop
        editable[name] = kind
    shown = json.dumps(arguments, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    if len(shown) > MAX_SHOWN:
        shown = shown[:MAX_SHOWN] + " … (cut)"
    why = ""
    if rule:
        why = f" Coach's policy rule {rule.get('name')!r} asks you" + (
            f": {rule['reason']}" if rule.get("reason") else ""
        )
    message = (
        f"Agent {agent} wants to call {tool} with these arguments:\n{shown}\n\n"
        f"Run it?{why}. You may change a value to edit the call, or choose 'do not run' and say why."
    )
    return Form(message, {"type": "object", "properties": fields_, "required": [DECISION_FIELD]}, editable)


def read_answer(action: Any, content: Any, arguments: dict[str, Any], editable: dict[str, str]) -> Answer:
    """What the person answered (an elicitation result's `action` and `content`); BadAnswer when it is not one the
    form allows."""
    if action == "cancel":
        return Answer(CANCEL, arguments)
    if action == "decline":
        return Answer(DECLINE, arguments, "")
    if action != "accept":
        raise BadAnswer(f"the answer's action must be accept, decline or cancel, not {action!r}")
    content = content if isinstance(content, dict) else {}
    decision = content.get(DECISION_FIELD, RUN)
    reason = content.get(REASON_FIELD) or ""
    if not isinstance(reason, str):
        raise BadAnswer(f"{REASON_FIELD} must be text")
    reason = reason.strip()[:2000]
    if decision == DONT:
        return Answer(DECLINE, arguments, reason)
    if decision != RUN:
        raise BadAnswer(f"{DECISION_FIELD} must be {RUN!r} or {DONT!r}, not {decision!r}")
    edited = dict(arguments)
    changes = []
    for name, kind in editable.items():
        if name not in content or content[name] is None:
            continue
        value = content[name]
        if not _fits(kind, value):
            raise BadAnswer(f"{name} must be {'an' if kind == 'integer' else 'a'} {kind}, not {value!r}")
        if kind == "integer" and isinstance(value, float):
            value = int(value)
        if value != arguments.get(name):
            edited[name] = value
            changes.append({"field": name, "before": arguments.get(name), "after": value})
    if changes:
        return Answer(EDIT, edited, reason, changes)
    return Answer(ACCEPT, arguments, reason)


def declined_text(tool: str, agent: str, reason: str) -> str:
    return f"The person at agent {agent} declined this call of {tool} when Coach asked them; it did not run." + (
        f" Their reason: {reason}" if reason else " They gave no reason."
    )


def cancelled_text(tool: str) -> str:
    return (
        f"The person at the agent dismissed Coach's question about this call of {tool} without answering; it did "
        f"not run. Send the same call again to be asked again."
    )


def edited_note(agent: str, changes: list[dict[str, Any]], reason: str) -> str:
    from core.gateway_learning import changes_text

    return f"The person at agent {agent} edited the arguments before the call: {changes_text(changes)}." + (
        f" Their note: {reason}" if reason else ""
    )


def fallen_back(verdict: dict[str, Any], why: str) -> dict[str, Any]:
    """A confirm verdict as its fallback applies (nobody at the agent can be asked), saying why."""
    fallback = verdict.get("fallback") or "require_review"
    return {**verdict, "effect": fallback, "confirm_fallback": fallback_note(fallback, why)}


def fallback_note(fallback: str, why: str) -> str:
    """Why a confirm rule's fallback applied, for the audit log and the agent."""
    return f"Coach could not ask the person at the agent ({why}), so the rule's fallback applies: {fallback}"
