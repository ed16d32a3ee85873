"""A run's history, in words: per step what was suggested, what a person decided (who, when, the correction's
changes), the questions asked and the answers given, approvals with their approver and comment, rejections,
policy refusals, runs of the tool and retries. Pure: services/orchestration/history.py reads the rows (suggestions,
decisions, approvals, the execution's audit events, its control record) as plain dicts and hands them here."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from core.execution.recovery import changes

DECIDED = {
    "accept": "Accepted",
    "correct": "Corrected",
    "manual": "Done by hand",
    "skip": "Skipped",
    "reject": "Rejected",
}
APPROVAL = {"approve": "Approved", "reject": "Rejected", "edit": "Approved with changes", "expire": "Expired"}
EXECUTION_WIDE = "execution"
# the kinds of event a history holds (each made by event(kind, ...) below or in services/orchestration/history.py)
EVENT_KINDS = (
    "start",
    "suggestion",
    "decision",
    "withdrawn",
    "pause",
    "resume",
    "answer",
    "step_correction",
    "approval_requested",
    "approval",
    "policy_deny",
    "policy_review",
    "timeout",
    "run",
    "succeeded",
    "failed",
    "rejected",
    "skipped",
    "cancelled",
    "retry",
    "resume_from",
    "cancel",
    "rerun",
)


def moment(value: Any) -> datetime | None:
    """Datetimes and ISO 8601 text alike, as aware UTC datetimes (for one order)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def words(value: Any, limit: int = 300) -> str:
    """A value as a person reads it: text as it is, anything else as compact JSON, cut at `limit` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def event(
    kind: str, at: Any, text: str, *, step_id: str | None = None, actor: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "kind": kind,
        "at": moment(at),
        "step_id": step_id,
        "actor": actor,
        "text": text,
        **{k: v for k, v in extra.items() if v is not None},
    }


def _by(actor: str | None) -> str:
    return f" by {actor}" if actor else ""


def suggestion_events(
    suggestions: Iterable[dict[str, Any]], decisions: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each suggestion, and the person's decision on it (`decisions`: suggestion id -> decision)."""
    out = []
    for sug in suggestions:
        what = {"correction": "Correction asked for", "spot_check": "Spot check"}.get(
            str(sug.get("purpose")), "Suggested"
        )
        source = sug.get("source") or "definition"
        out.append(
            event(
                "suggestion",
                sug.get("created_at"),
                f"{what} ({source}): {words(sug.get('params'))}",
                step_id=sug["step_id"],
                actor="coach",
                suggestion_id=sug["id"],
                params=sug.get("params"),
                rationale=sug.get("rationale") or None,
                source=source,
            )
        )
        dec = decisions.get(sug["id"])
        if dec is None:
            if sug.get("status") == "superseded":
                out.append(
                    event(
                        "withdrawn",
                        sug.get("decided_at") or sug.get("created_at"),
                        "Suggestion withdrawn (the step changed or the run ended)",
                        step_id=sug["step_id"],
                        suggestion_id=sug["id"],
                    )
                )
            continue
        kind, feedback = dec["decision"], dec.get("feedback")
        text = f"{DECIDED.get(kind, kind.capitalize())}{_by(dec.get('operator'))}"
        diff = None
        if kind == "correct":
            diff = changes(sug.get("params"), dec.get("correction"))
            text += f": {len(diff)} change{'s' if len(diff) != 1 else ''}"
        elif kind == "reject":
            text += f": {feedback or 'no reason given'}"
        elif kind == "manual":
            text += f"; output: {words(dec.get('manual_output'))}"
        if feedback and kind != "reject":
            text += f" — “{feedback}”"
        out.append(
            event(
                "decision",
                dec.get("created_at"),
                text,
                step_id=sug["step_id"],
                actor=dec.get("operator"),
                decision=kind,
                suggestion_id=sug["id"],
                changes=diff,
                comment=feedback,
                params=dec.get("correction") if kind == "correct" else None,
            )
        )
    return out


def approval_events(approvals: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for a in approvals:
        what = "Tool call review" if a.get("kind") == "tool_call" else "Approval"
        needs = f" ({a.get('quorum', 1)} needed)" if (a.get("quorum") or 1) > 1 else ""
        out.append(
            event(
                "approval_requested",
                a.get("created_at"),
                f"{what} asked for{needs}" + (f": {a['message']}" if a.get("message") else ""),
                step_id=a["step_id"],
                approval_id=a["id"],
                params=a.get("params"),
            )
        )
        for d in a.get("decisions") or []:
            kind = d.get("decision")
            actor = d.get("user")
            text = f"{APPROVAL.get(kind, str(kind).capitalize())}{_by(actor)}"
            if d.get("comment"):
                text += f": “{d['comment']}”" if actor != "system" else f": {d['comment']}"
            out.append(
                event(
                    "approval",
                    d.get("at"),
                    text,
                    step_id=a["step_id"],
                    actor=actor,
                    decision=kind,
                    comment=d.get("comment") or None,
                    approval_id=a["id"],
                )
            )
    return out


def audit_events(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the audit log alone holds: pauses with their question, resumes with their answer, corrections of a
    step that had not run, policy refusals, deadlines that fired, runs of a tool, retries, the start and the end."""
    out = []
    for row in rows:
        action, actor, at = row["action"], row.get("actor"), row.get("created_at")
        before, after = row.get("before") or {}, row.get("after") or {}
        target = row.get("target_id") or ""
        step_id = (
            after.get("step_id")
            or before.get("step_id")
            or (target.split("/", 1)[1] if row.get("target_type") == "step" and "/" in target else None)
        )
        if action == "pause":
            text = (
                f"Paused{_by(actor)} before this step: “{after['question']}”"
                if step_id
                else f"Coaching paused{_by(actor)}"
            )
            out.append(event("pause", at, text, step_id=step_id, actor=actor, question=after.get("question")))
        elif action == "resume":
            feedback = after.get("feedback")
            text = f"Resumed{_by(actor)}" + (
                f" with the answer: “{words(feedback)}”"
                if feedback is not None
                else (" without an answer" if step_id else "")
            )
            out.append(
                event(
                    "resume", at, text, step_id=step_id, actor=actor, question=before.get("question"), answer=feedback
                )
            )
        elif action == "answer":
            answer = after.get("answer")
            out.append(
                event(
                    "answer",
                    at,
                    f"Answered{_by(actor)}: “{words(answer)}”",
                    step_id=step_id,
                    actor=actor,
                    question=before.get("question"),
                    answer=answer,
                )
            )
        elif action == "step_correction":
            diff = changes(before, after)
            out.append(
                event(
                    "step_correction",
                    at,
                    f"Step changed before it ran{_by(actor)}: " + ", ".join(f"{c['path']}" for c in diff),
                    step_id=step_id,
                    actor=actor,
                    changes=diff,
                )
            )
        elif action == "policy_deny":
            policy = after.get("policy") or {}
            reason = policy.get("reason") or policy.get("message") or policy.get("rule") or "a policy rule"
            out.append(event("policy_deny", at, f"Refused by policy: {words(reason)}", step_id=step_id, actor="policy"))
        elif action == "policy_review":
            out.append(
                event(
                    "policy_review", at, "The policy asked for a review of this call", step_id=step_id, actor="policy"
                )
            )
        elif action == "gate_timeout":
            out.append(
                event(
                    "timeout",
                    at,
                    f"Nobody decided in time: {after.get('message') or after.get('action')}",
                    step_id=step_id,
                    actor="system",
                )
            )
        elif action == "tool_call":
            run = after.get("run")
            again = " again after a restart (same key)" if row.get("result") == "repeated" else ""
            tool = after.get("tool")  # an agent step has none: the agent started calling tools
            what = (f"Run {run} of {tool}" if tool and run else tool) if tool else "The agent"
            out.append(
                event(
                    "run",
                    at,
                    f"{what} started{again}",
                    step_id=step_id,
                    actor="system",
                    run=run,
                    idempotency_key=after.get("idempotency_key"),
                )
            )
        elif action == "retry":
            edited = after.get("edited")
            text = (
                f"Retried{_by(actor)} as run {after.get('next_run')}"
                + (" with changed params" if edited else " with the same params")
                + (f", after: {before['error']}" if before.get("error") else "")
            )
            retried_changes = changes(after.get("params_before"), after.get("params")) if edited else None
            out.append(
                event(
                    "retry",
                    at,
                    text,
                    step_id=step_id,
                    actor=actor,
                    run=after.get("next_run"),
                    params=after.get("params") if edited else None,
                    changes=retried_changes,
                    reason=before.get("error"),
                )
            )
        elif action == "resume_from":
            skipped = after.get("skipped") or []
            failed = before.get("errors") or {}
            out.append(
                event(
                    "resume_from",
                    at,
                    f"Resumed from step {after.get('step_id')!r}{_by(actor)}"
                    + (f", skipping {', '.join(skipped)}" if skipped else "")
                    + "".join(f" ({sid} had failed: {words(error)})" for sid, error in failed.items()),
                    actor=actor,
                    step_id=None,
                    target_step=after.get("step_id"),
                    skipped=skipped,
                )
            )
        elif action == "execution_start":
            out.append(
                event(
                    "start",
                    at,
                    f"Started{_by(actor)} in {after.get('mode')} mode"
                    + (f" with {words(after.get('variables'))}" if after.get("variables") else ""),
                    actor=actor,
                    params=after.get("variables"),
                )
            )
        elif action == "cancel":
            out.append(event("cancel", at, f"Cancelled{_by(actor)}", actor=actor))
        elif action == "rerun":
            out.append(
                event(
                    "rerun",
                    at,
                    f"Re-run{_by(actor)} as execution {after.get('execution_id')}",
                    actor=actor,
                    execution_id=after.get("execution_id"),
                    params=after.get("variables"),
                )
            )
    return out


def step_end_events(steps: Iterable[dict[str, Any]], answered: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """How each step ended, as it stands: succeeded, failed with the reason, skipped with why, an answer given (by
    whom, when the audit log says: `answered` are the steps whose answer it holds)."""
    out = []
    for st in steps:
        status, sid, at = st["status"], st["step_id"], st.get("finished_at")
        if status == "failed":
            out.append(
                event(
                    "failed",
                    at,
                    f"Failed: {st.get('error') or 'no reason recorded'}",
                    step_id=sid,
                    reason=st.get("error"),
                )
            )
        elif status == "rejected":
            out.append(
                event(
                    "rejected",
                    at,
                    f"Rejected: {st.get('error') or 'no reason given'}",
                    step_id=sid,
                    reason=st.get("error"),
                )
            )
        elif status == "skipped":
            out.append(
                event("skipped", at, f"Skipped: {st.get('error') or 'not needed'}", step_id=sid, reason=st.get("error"))
            )
        elif status == "succeeded":
            output = st.get("output")
            if sid in answered:
                continue
            if st.get("type") == "human_input" and isinstance(output, dict) and "answer" in output:
                out.append(
                    event("answer", at, f"Answered: “{words(output['answer'])}”", step_id=sid, answer=output["answer"])
                )
            else:
                tries = st.get("attempts") or 0
                out.append(
                    event("succeeded", at, "Succeeded" + (f" after {tries} tries" if tries > 1 else ""), step_id=sid)
                )
        elif status == "cancelled":
            out.append(event("cancelled", at, "Cancelled before it ended", step_id=sid))
    return out


def build(
    steps: list[dict[str, Any]],
    suggestions: list[dict[str, Any]],
    decisions: dict[str, dict[str, Any]],
    approvals: list[dict[str, Any]],
    audit: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the steps, each with its events in time order; the execution's own events). `steps`: each step's state
    with its name and type, in the definition's order."""
    audited = audit_events(audit)
    answered = frozenset(e["step_id"] for e in audited if e["kind"] == "answer")
    every = (
        suggestion_events(suggestions, decisions)
        + approval_events(approvals)
        + audited
        + step_end_events(steps, answered)
    )
    never = datetime.max.replace(tzinfo=UTC)
    every.sort(key=lambda e: e["at"] or never)  # stable: same-moment events keep their source's order
    known = {st["step_id"] for st in steps}
    per_step: dict[str, list[dict[str, Any]]] = {sid: [] for sid in known}
    wide: list[dict[str, Any]] = []
    for e in every:
        (per_step[e["step_id"]] if e["step_id"] in known else wide).append(e)
    return [{**st, "events": per_step[st["step_id"]]} for st in steps], wide
