"""Talking to Slack's Web API with the official slack_sdk WebClient (base URL: COACH_SLACK_API_URL).

`post_review` posts a review message (services/slack/messages.py) to a channel, or to a person as a direct message
(conversations.open first), and returns the message's `channel` and `ts`, which `update_decided` needs to replace
it once the review is decided anywhere. Each review message carries Slack message metadata naming its outbox row
(`coach_review`, `{"row": <id>}`): a row tried again after its sender died between Slack's answer and storing it
looks in the channel's recent history for its own message first (`find_posted`), so the review is not posted twice.
Slack's refusals raise SlackError with Slack's own error code; `permanent` says whether retrying can help (the
outbox backs off and retries the others, honouring `retry_after`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from config import Settings

# errors no retry mends: the token, the channel or the bot's membership must be fixed by a person first
PERMANENT = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "no_permission",
        "missing_scope",
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "user_not_found",
        "user_disabled",
        "cannot_dm_bot",
        "invalid_blocks",
        "msg_too_long",
        "message_not_found",
        "cant_update_message",
        "edit_window_closed",
        "not_configured",
    }
)
TIMEOUT_S = 10
REVIEW_EVENT = "coach_review"  # the metadata event type of a review message: {"row": <its outbox row's id>}
HISTORY_LOOK = 100  # how many of a channel's newest messages a row tried again looks through for its own
log = logging.getLogger(__name__)


class SlackError(Exception):
    """Slack refused or could not be reached. `code`: Slack's error (`channel_not_found`…), `network_error`, or
    `not_configured` (no bot token). `retry_after`: seconds Slack asked to wait (rate limits), else None."""

    def __init__(self, code: str, message: str = "", retry_after: float | None = None):
        super().__init__(f"Slack: {code}" + (f" ({message})" if message else ""))
        self.code, self.retry_after = code, retry_after

    @property
    def permanent(self) -> bool:
        return self.code in PERMANENT


@dataclass(frozen=True)
class SlackConfig:
    """A workspace's Slack app, opened (services/slack/service.py `config` reads it)."""

    workspace_id: str
    bot_token: str
    signing_secret: str
    default_channel: str = ""


@dataclass(frozen=True)
class Posted:
    channel: str  # the channel id the message is in (a DM's own id for a person)
    ts: str  # the message's timestamp: its id for chat.update


def web_client(settings: Settings, config: SlackConfig) -> WebClient:
    if not config.bot_token:
        raise SlackError("not_configured", "the workspace has no Slack bot token")
    base = settings.slack_api_url if settings.slack_api_url.endswith("/") else settings.slack_api_url + "/"
    return WebClient(token=config.bot_token, base_url=base, timeout=TIMEOUT_S)


def _call(method, **kwargs) -> dict[str, Any]:
    try:
        return method(**kwargs).data
    except SlackApiError as exc:
        response = exc.response
        code = (response.get("error") if response is not None else None) or "unknown_error"
        retry = None
        if response is not None and response.status_code == 429:
            code = "ratelimited"
            try:
                retry = float(response.headers.get("Retry-After") or response.headers.get("retry-after") or 1)
            except (TypeError, ValueError):
                retry = 1.0
        raise SlackError(code, retry_after=retry) from exc
    except (SlackClientError, OSError) as exc:  # unreachable, timed out, not JSON
        raise SlackError("network_error", str(exc)) from exc


def is_person(target: str) -> bool:
    """Slack user ids start with U or W; channels with C, G (private) or D (a DM already open)."""
    return target[:1] in ("U", "W")


def post_review(
    settings: Settings,
    config: SlackConfig,
    channel_or_user: str | None,
    message: dict[str, Any],
    *,
    row: str | None = None,
    look_first: bool = False,
) -> Posted:
    """chat.postMessage of `message` ({text, blocks}) to a channel id, or to a Slack user id as a DM; None: the
    workspace's default channel. `row`: the outbox row's id, carried in the message's metadata. `look_first`: an
    earlier attempt of this row may have posted it (its sender died before storing Slack's answer): that message,
    if the channel's recent history has it, is the answer, and nothing is posted."""
    target = channel_or_user or config.default_channel
    if not target:
        raise SlackError("channel_not_found", "no channel given and the workspace has no default channel")
    client = web_client(settings, config)
    channel = target
    if is_person(target):
        opened = _call(client.conversations_open, users=target)
        channel = (opened.get("channel") or {}).get("id") or target
    if row and look_first:
        found = find_posted(client, channel, row)
        if found is not None:
            return found
    metadata = {"event_type": REVIEW_EVENT, "event_payload": {"row": row}} if row else None
    posted = _call(
        client.chat_postMessage,
        channel=channel,
        text=message.get("text", ""),
        blocks=message.get("blocks"),
        metadata=metadata,
    )
    return Posted(channel=posted.get("channel") or channel, ts=str(posted.get("ts") or ""))


def find_posted(client: WebClient, channel: str, row: str) -> Posted | None:
    """The review message of outbox row `row` among the channel's newest messages (conversations.history with
    metadata), or None. A channel named `#name` has no id to read until a post answers one, and an app without the
    history scopes (channels:history, groups:history, im:history) cannot look: then None, and the row is posted
    (at least once, as before)."""
    if channel.startswith("#"):
        return None
    try:
        history = _call(client.conversations_history, channel=channel, limit=HISTORY_LOOK, include_all_metadata=True)
    except SlackError as exc:
        log.warning("Slack conversations.history failed (%s): the review of row %s is posted again", exc.code, row)
        return None
    for found in history.get("messages") or []:
        meta = found.get("metadata") or {}
        if meta.get("event_type") == REVIEW_EVENT and (meta.get("event_payload") or {}).get("row") == row:
            return Posted(channel=channel, ts=str(found.get("ts") or ""))
    return None


def update_decided(settings: Settings, config: SlackConfig, channel: str, ts: str, message: dict[str, Any]) -> None:
    """chat.update: replace the posted review by `message` (messages.decided_message: "Approved by X")."""
    _call(
        web_client(settings, config).chat_update,
        channel=channel,
        ts=ts,
        text=message.get("text", ""),
        blocks=message.get("blocks"),
    )


def post_ephemeral(settings: Settings, config: SlackConfig, channel: str, user: str, text: str) -> None:
    """chat.postEphemeral: a note only `user` sees in `channel` (why a click decided nothing)."""
    _call(web_client(settings, config).chat_postEphemeral, channel=channel, user=user, text=text)


def open_modal(settings: Settings, config: SlackConfig, trigger_id: str, view: dict[str, Any]) -> None:
    """views.open (the Reject comment's modal) while the click's trigger_id is valid (3 seconds)."""
    _call(web_client(settings, config).views_open, trigger_id=trigger_id, view=view)


def auth_test(settings: Settings, config: SlackConfig) -> dict[str, Any]:
    """auth.test: whether Slack takes the bot token, and whose it is ({team, team_id, user, user_id, bot_id})."""
    return _call(web_client(settings, config).auth_test)
