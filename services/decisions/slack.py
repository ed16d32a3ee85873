"""What a click in Slack does: POST /api/integrations/slack/<workspace_id>/interactions (docs/slack.md).

1. The request is checked with slack_sdk's SignatureVerifier and the workspace's signing secret: a bad signature,
   or a timestamp more than 5 minutes off, is refused (401) before anything is read.
2. The Slack user is mapped to the Coach member who set that Slack user id in this workspace; nobody: an ephemeral
   answer tells them to set it in Coach, and nothing is decided.
3. Approve decides at once; Reject opens a modal for a comment (views.open), whose submission decides. Both go
   through the REST decision endpoints' own service functions (services.decisions.approvals.submit,
   services.decisions.coaching.submit) as that person, so they are checked, audited and counted like any decision.
   Each carries an idempotency key made of the click (or the modal), so a retried or replayed request decides
   once and gets the first answer again.
4. An item decided elsewhere is refused (the services' 409): the person is told who decided, and the message is
   replaced to show it. An item of another workspace is not found: the decision functions are given this
   workspace, the one whose secret signed the request.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from slack_sdk.signature import SignatureVerifier

from core import approvals as A
from core.errors import BadRequest, CoachError, Conflict, NotFound, Unauthorized
from services.decisions import approvals as approval_decisions
from services.decisions import coaching as decisions
from services.models.approvals import Approval
from services.models.coaching import Decision, Suggestion
from services.slack import client as slack
from services.slack import messages as M
from services.slack import service as slack_settings

log = logging.getLogger(__name__)
SET_YOUR_ID = (
    "Coach does not know who you are in Slack: set your Slack member ID in Coach (Settings → Slack) "
    "to decide from here. Nothing was decided."
)


@dataclass
class Answer:
    """The HTTP answer to Slack (`body` for a view_submission; Slack ignores it for a click) and what happened."""

    outcome: str  # decided | refused | unknown_user | ignored | modal_opened
    message: str = ""
    body: dict[str, Any] | None = None

    def json(self) -> dict[str, Any]:
        return self.body if self.body is not None else {"outcome": self.outcome, "message": self.message}


def verify(signing_secret: str, raw: bytes, headers) -> None:
    """401 unless Slack signed `raw` with the workspace's secret within the last 5 minutes."""
    if not signing_secret:
        raise Unauthorized("bad or expired Slack signature", code="slack_signature")
    timestamp = headers.get("X-Slack-Request-Timestamp", "")
    ok = (
        timestamp.isdigit()
        and len(timestamp) < 16
        and SignatureVerifier(signing_secret).is_valid(
            body=raw, timestamp=timestamp, signature=headers.get("X-Slack-Signature", "")
        )
    )
    if not ok:
        raise Unauthorized("bad or expired Slack signature", code="slack_signature")


# the interaction types Slack sends (api.slack.com/interactivity): those Coach does not act on are answered 200
# "ignored"; any other type is not from Slack, and is refused with the reason (a Slack app's developer sees it)
SLACK_TYPES = frozenset(
    {
        "block_actions",
        "view_submission",
        "view_closed",
        "shortcut",
        "message_action",
        "block_suggestion",
        "interactive_message",
        "dialog_submission",
        "dialog_cancellation",
        "workflow_step_edit",
    }
)


def payload_of(raw: bytes) -> dict[str, Any]:
    """The interaction's JSON payload (the form field `payload`); 400 naming what is wrong when there is none."""
    try:
        form = parse_qs(raw.decode("utf-8"), max_num_fields=20)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadRequest(f"the body is not a form: {exc}") from None
    if not form.get("payload"):
        raise BadRequest("no payload: Slack sends an interaction as the form field `payload`")
    try:
        data = json.loads(form["payload"][0])
    except ValueError as exc:
        raise BadRequest(f"the payload is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest("the payload is not a JSON object")
    if data.get("type") not in SLACK_TYPES:
        raise BadRequest(
            f"interaction type {data.get('type')!r} is not one Slack sends "
            f"(Coach acts on block_actions and view_submission)"
        )
    return data


def handle(svc, workspace_id: str, raw: bytes, headers) -> Answer:
    """Verify, parse and act on one interactivity request of the workspace `workspace_id`."""
    with svc.db.read() as session:
        config = slack_settings.config(session, svc.settings, workspace_id)
    # no app here is answered as a bad signature (as verify answers an empty secret): the answer tells nobody which
    # workspaces use Slack
    if config is None:
        raise Unauthorized("bad or expired Slack signature", code="slack_signature")
    verify(config.signing_secret, raw, headers)
    payload = payload_of(raw)
    kind = payload.get("type")
    slack_user = str(_dict(payload.get("user")).get("id") or "")
    if kind == "block_actions":
        actions = payload.get("actions")
        action = _dict(actions[0] if isinstance(actions, list) and actions else None)
        value = M.parse_value(str(action.get("value") or ""))
        if value is None or action.get("action_id") not in (M.APPROVE, M.REJECT):
            return Answer("ignored", "not a decision")  # "Open in Coach" is a link; Slack still tells us
        where = _where(payload)
        who = _member(svc, workspace_id, slack_user)
        if who is None:
            _ephemeral(svc, config, where, slack_user, SET_YOUR_ID)
            return Answer("unknown_user", SET_YOUR_ID)
        key = _key(workspace_id, slack_user, action.get("action_ts"), action.get("action_id"), action.get("value"))
        if action["action_id"] == M.REJECT and payload.get("trigger_id"):
            modal_meta = json.dumps(
                {**value, "channel": where[0], "ts": where[1], "title": where[2][:500]}, separators=(",", ":")
            )
            try:
                slack.open_modal(svc.settings, config, payload["trigger_id"], M.reject_modal(modal_meta, where[2]))
                return Answer("modal_opened", "asked for a comment")
            except slack.SlackError as exc:  # the modal could not open: reject without a comment
                log.warning("Slack views.open failed (%s): rejecting without a comment", exc.code)
        return _decide(svc, config, workspace_id, who, value, action["action_id"] == M.APPROVE, None, key, where)
    if kind == "view_submission" and _dict(payload.get("view")).get("callback_id") == "coach_reject_comment":
        view = payload["view"]
        meta = M.parse_value(str(view.get("private_metadata") or ""))
        if meta is None:
            return Answer("ignored", "not a Coach modal", body={})
        where = (meta.get("channel"), meta.get("ts"), str(meta.get("title") or "Review"))
        who = _member(svc, workspace_id, slack_user)
        if who is None:
            return Answer("unknown_user", SET_YOUR_ID, body=_modal_error(SET_YOUR_ID))
        comment = _dict(_dict(_dict(_dict(view.get("state")).get("values")).get("comment")).get("comment")).get("value")
        comment = str(comment)[:5000] if comment else None
        answer = _decide(
            svc,
            config,
            workspace_id,
            who,
            meta,
            False,
            comment,
            _key(workspace_id, slack_user, view.get("id"), "view", view.get("hash")),
            where,
        )
        answer.body = {"response_action": "clear"} if answer.outcome == "decided" else _modal_error(answer.message)
        return answer
    return Answer("ignored", f"{kind} is not handled")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _modal_error(text: str) -> dict[str, Any]:
    return {"response_action": "errors", "errors": {"comment": text[:150]}}


def _where(payload: dict[str, Any]) -> tuple[str | None, str | None, str]:
    container = _dict(payload.get("container"))
    channel = container.get("channel_id") or _dict(payload.get("channel")).get("id")
    ts = container.get("message_ts") or _dict(payload.get("message")).get("ts")
    return channel, ts, _title(payload)


def _title(payload: dict[str, Any]) -> str:
    # the message's fallback text as Slack keeps it: escaped for mrkdwn; decided_message escapes it again
    text = str(_dict(payload.get("message")).get("text") or "Review")
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _key(workspace_id: str, *parts: Any) -> str:
    digest = hashlib.sha256("|".join([workspace_id, *(str(p) for p in parts)]).encode("utf-8")).hexdigest()
    return f"slack:{digest[:48]}"


def _member(svc, workspace_id: str, slack_user: str):
    if not slack_user:
        return None
    with svc.db.read() as session:
        found = slack_settings.member_of(session, workspace_id, slack_user)
        return None if found is None else (found[0].id, found[0].email, found[1])


def _ephemeral(svc, config, where, slack_user: str, text: str) -> None:
    channel = where[0]
    if not channel or not slack_user:
        return
    try:
        slack.post_ephemeral(svc.settings, config, channel, slack_user, text)
    except slack.SlackError as exc:
        log.warning("Slack chat.postEphemeral failed: %s", exc.code)


def _decide(
    svc, config, workspace_id: str, who, value: dict[str, Any], approve: bool, comment: str | None, key: str, where
) -> Answer:
    user_id, email, role = who
    try:
        if value["kind"] == "approval":
            body = {"decision": "approve" if approve else "reject", "comment": comment, "params": None}
            response = approval_decisions.submit(
                svc, workspace_id, value["id"], body, A.Actor(user_id=user_id, email=email, role=role), key
            )
            status = response["approval"]["status"]
            if status == A.PENDING:  # a quorum: counted, others still to approve
                text = (
                    f"Your approval is counted ({response['approval']['approvals']} of "
                    f"{response['approval']['quorum']})."
                )
                _ephemeral(svc, config, where, _slack_of(svc, workspace_id, user_id), text)
                return Answer("decided", text)
        else:
            execution_id = _execution_of(svc, workspace_id, value["id"])
            body = {
                "suggestion_id": value["id"],
                "decision": "accept" if approve else "reject",
                "correction": None,
                "feedback": comment,
                "manual_output": None,
            }
            decisions.submit(svc, workspace_id, execution_id, body, email, key)
            status = "approved" if approve else "rejected"
    except Conflict as exc:
        decided = decided_by(svc, workspace_id, value)
        text = (
            f"Already {decided[0]} by {decided[1]}: nothing was changed." if decided else f"Not decided: {exc.message}"
        )
        _ephemeral(svc, config, where, _slack_of(svc, workspace_id, user_id), text)
        if decided:
            _update(svc, config, where, decided[0], decided[1], decided[2])
        return Answer("refused", text)
    except CoachError as exc:  # not found here (another workspace's item), not allowed to approve, a bad edit…
        text = f"Not decided: {exc.message}"
        _ephemeral(svc, config, where, _slack_of(svc, workspace_id, user_id), text)
        return Answer("refused", text)
    _update(svc, config, where, status, email, comment)
    return Answer("decided", f"{status.capitalize()} by {email}")


def _slack_of(svc, workspace_id: str, user_id: str) -> str:
    with svc.db.read() as session:
        return slack_settings.slack_id_of(session, workspace_id, user_id) or ""


def _execution_of(svc, workspace_id: str, suggestion_id: str) -> str:
    with svc.db.read() as session:
        sug = session.get(Suggestion, suggestion_id)
        if sug is None or sug.workspace_id != workspace_id:
            raise NotFound(f"suggestion {suggestion_id} not found")
        return sug.execution_id


def decided_by(svc, workspace_id: str, value: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """(status, who, comment) of an item decided already, in this workspace; None when it is not decided."""
    with svc.db.read() as session:
        if value.get("kind") == "approval":
            a = session.get(Approval, value.get("id") or "")
            if a is None or a.workspace_id != workspace_id or a.status == A.PENDING:
                return None
            last = (a.decisions or [{}])[-1]
            return a.status, last.get("user") or A.SYSTEM, last.get("comment")
        d = session.get(Decision, value.get("id") or "")
        if d is None or d.workspace_id != workspace_id:
            sug = session.get(Suggestion, value.get("id") or "")
            if sug is not None and sug.workspace_id == workspace_id and sug.status != "pending":
                return sug.status, "Coach", None
            return None
        word = {
            "accept": "approved",
            "reject": "rejected",
            "correct": "corrected",
            "skip": "skipped",
            "manual": "done by hand",
        }.get(d.decision, d.decision)
        return word, d.operator, d.feedback


def _update(svc, config, where, status: str, who: str, comment: str | None) -> None:
    channel, ts, title = where
    if not channel or not ts:
        return
    try:
        slack.update_decided(svc.settings, config, channel, ts, M.decided_message(title, status, who, comment))
    except slack.SlackError as exc:
        log.warning("Slack chat.update failed: %s", exc.code)
