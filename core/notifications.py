"""Who hears what, and when: the pure rules of notifications (services/notifications does the storage and sending).

- the event kinds, and who hears each by default (`default_recipients`);
- a workspace's routes (`matching_routes`): this workflow's or this tool's events → a webhook endpoint or users;
- a person's preferences (`wants_email`) and quiet hours in their time zone (`quiet_until`);
- the retry schedule of a delivery (`retry_delay`: exponential and bounded, tenacity's `wait_exponential`);
- the webhook signature (`signature`, `verify_signature`) and the action links' tokens (`seal_link`, `open_link`);
- whether a link may decide at all (`link_decides`): risky calls open the web app instead.
No Flask, no session, no sockets: everything here is tested without a server.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tenacity import RetryCallState, Retrying, stop_after_attempt, wait_exponential

APPROVAL_REQUESTED = "approval_requested"
REVIEW_HELD = "review_held"  # a policy-forced review of a tool call: a step's, or an outside agent's (the gateway)
SUGGESTION_WAITING = "suggestion_waiting"
CLARIFICATION_ASKED = "clarification_asked"
DEADLINE_NEAR = "deadline_near"
DEMOTION = "demotion"
RUN_FAILED = "run_failed"
ESCALATION = "escalation"  # a review still undecided after a route's set time, sent to the next person / channel
KINDS = (
    APPROVAL_REQUESTED,
    REVIEW_HELD,
    SUGGESTION_WAITING,
    CLARIFICATION_ASKED,
    DEADLINE_NEAR,
    DEMOTION,
    RUN_FAILED,
    ESCALATION,
)
# what a person gets by email unless they turn it off; a suggestion in coaching comes every step, so it is opt-in
DEFAULT_EMAIL = frozenset(set(KINDS) - {SUGGESTION_WAITING})
DECIDABLE = frozenset({APPROVAL_REQUESTED, REVIEW_HELD, DEADLINE_NEAR, ESCALATION})  # carry approve / reject links

# push: Web Push to a person's browsers (services/notifications/push.py); slack: the workspace's Slack app
EMAIL, WEBHOOK, PUSH, SLACK = "email", "webhook", "push", "slack"
CHANNELS = (EMAIL, WEBHOOK, PUSH, SLACK)
PENDING, SENDING, SENT, FAILED = "pending", "sending", "sent", "failed"
STATUSES = (PENDING, SENDING, SENT, FAILED)

# retries: 30 s, 1 min, 2 min … at most an hour apart, 10 tries in all (about 3 h), then the row is failed
RETRY_FIRST_S, RETRY_MAX_S, MAX_ATTEMPTS = 30.0, 3600.0, 10
_WAIT = wait_exponential(multiplier=RETRY_FIRST_S, min=RETRY_FIRST_S, max=RETRY_MAX_S)
_STOP = stop_after_attempt(MAX_ATTEMPTS)
_RETRYING = Retrying(stop=_STOP, wait=_WAIT)


@dataclass(frozen=True)
class Facts:
    """What an event is about, as routing and default recipients read it."""

    kind: str
    workspace_id: str
    workflow_id: str | None = None
    tool: str | None = None
    approvers: dict[str, list[str]] = field(default_factory=dict)  # {roles, users}: an approval's
    started_by: str | None = None  # user id
    separate_duties: bool = False  # an approval its run's starter may not decide: they are not asked to


def may_decide(facts: Facts, user_id: str) -> bool:
    """Whether the person is someone an approval's ask goes to at all: under separate_duties not its starter."""
    return not (facts.separate_duties and facts.started_by is not None and user_id == facts.started_by)


@dataclass(frozen=True)
class Member:
    user_id: str
    email: str
    role: str


def _rank(role: str) -> int:
    return {"operator": 0, "lead": 1, "admin": 2}.get(role, -1)


def default_recipients(facts: Facts, members: Iterable[Member]) -> list[str]:
    """User ids who hear of this event when no route says otherwise: those who may decide an approval or review;
    who started the run for its suggestions, questions and failure; leads and admins for a demotion."""
    members = list(members)
    if facts.kind in (APPROVAL_REQUESTED, REVIEW_HELD, DEADLINE_NEAR):
        roles = facts.approvers.get("roles") or (["lead"] if not facts.approvers.get("users") else [])
        named = {u.lower() for u in facts.approvers.get("users", [])}
        return [
            m.user_id
            for m in members
            if may_decide(facts, m.user_id)
            and (
                m.email.lower() in named or m.user_id.lower() in named or any(_rank(m.role) >= _rank(r) for r in roles)
            )
        ]
    if facts.kind == DEMOTION:
        return [m.user_id for m in members if _rank(m.role) >= _rank("lead")]
    if facts.kind in (SUGGESTION_WAITING, CLARIFICATION_ASKED, RUN_FAILED):
        return [m.user_id for m in members if m.user_id == facts.started_by]
    return []


def route_matches(route: dict[str, Any], facts: Facts) -> bool:
    """A route {events: [...], workflow_id?, tool? (a glob)} matches the event when every key it sets does."""
    events = route.get("events") or []
    if events and facts.kind not in events:
        return False
    if route.get("workflow_id") and route["workflow_id"] != facts.workflow_id:
        return False
    if route.get("tool"):
        from fnmatch import fnmatchcase

        if not facts.tool or not fnmatchcase(facts.tool, route["tool"]):
            return False
    return True


def matching_routes(routes: Iterable[dict[str, Any]], facts: Facts) -> list[dict[str, Any]]:
    return [r for r in routes if r.get("enabled", True) and route_matches(r, facts)]


def wants_email(prefs: dict[str, Any] | None, kind: str) -> bool:
    """A person's email switch for `kind`: their own choice ({email: bool, kinds: {kind: bool}}), or the default."""
    prefs = prefs or {}
    if prefs.get("email") is False:
        return False
    chosen = (prefs.get("kinds") or {}).get(ESCALATION if kind == ESCALATION else kind)
    return chosen if isinstance(chosen, bool) else kind in DEFAULT_EMAIL


def wants_push(prefs: dict[str, Any] | None, kind: str) -> bool:
    """A person's Web Push switch for `kind` ({push: bool, push_kinds: {kind: bool}}); by default the same kinds as
    email."""
    prefs = prefs or {}
    if prefs.get("push") is False:
        return False
    chosen = (prefs.get("push_kinds") or {}).get(kind)
    return chosen if isinstance(chosen, bool) else kind in DEFAULT_EMAIL


PUSH_TITLES = {
    APPROVAL_REQUESTED: "Approval requested",
    REVIEW_HELD: "A call waits for review",
    SUGGESTION_WAITING: "A suggestion waits",
    CLARIFICATION_ASKED: "A question",
    DEADLINE_NEAR: "Deadline near",
    DEMOTION: "Demoted to coaching",
    RUN_FAILED: "A run failed",
    ESCALATION: "Still waiting",
}


def push_message(kind: str, event_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The small JSON a browser's service worker shows (a push message holds about 4 KB): a title, a body, the path
    of the item in the web app, and the event id as the tag, so that a repeat of the same event replaces the
    notification shown rather than stacking a second one."""
    if payload.get("approval_id"):
        path = f"/queue?approval={payload['approval_id']}"
    elif payload.get("execution_id"):  # a suggestion opens the coaching panel; a question or a failure, the run
        path = f"/executions/{payload['execution_id']}" + ("/coach" if kind == SUGGESTION_WAITING else "")
    elif payload.get("workflow_id"):
        path = f"/workflows/{payload['workflow_id']}"
    else:
        path = "/"
    body = str(payload.get("text") or payload.get("subject") or "")
    return {
        "title": PUSH_TITLES.get(kind, "Coach"),
        "body": body[:240] + ("…" if len(body) > 240 else ""),
        "url": path,
        "tag": event_id[:200],
        "kind": kind,
    }


def parse_clock(text: str) -> time:
    """ "22:00" → time(22, 0); ValueError with a message for people on nonsense."""
    try:
        hours, minutes = text.split(":")
        return time(int(hours), int(minutes))
    except (ValueError, AttributeError):
        raise ValueError(f"{text!r} is not a time of day like 22:00") from None


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{name!r} is not a known time zone (e.g. Europe/Berlin)") from None


def quiet_until(now: datetime, start: str | None, end: str | None, tz: str | None) -> datetime | None:
    """When quiet hours [start, end) in time zone `tz` hold `now`: the UTC instant they end; else None.
    Quiet hours may span midnight (22:00–07:00); start == end means none."""
    if not start or not end:
        return None
    begin, finish = parse_clock(start), parse_clock(end)
    if begin == finish:
        return None
    local = now.astimezone(zone(tz))
    clock = local.time().replace(tzinfo=None)
    inside = begin <= clock < finish if begin < finish else (clock >= begin or clock < finish)
    if not inside:
        return None
    day = local.date() if clock < finish else local.date() + timedelta(days=1)
    ends = datetime.combine(day, finish, tzinfo=local.tzinfo)
    return ends.astimezone(UTC)


def retry_delay(attempts: int) -> float | None:
    """Seconds before try number attempts + 1, after `attempts` failed ones; None when no try is left."""
    # the call state tenacity's stop and wait read (only its attempt_number), outside a retried call
    state = RetryCallState(_RETRYING, None, (), {})
    state.attempt_number = attempts
    if _STOP(state):
        return None
    return float(_WAIT(state))


def signature(secret: str, body: bytes) -> str:
    """The X-Coach-Signature header of a webhook delivery: `sha256=` and the hex HMAC-SHA256 of the raw body."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    if not header:
        return False
    return hmac.compare_digest(signature(secret, body), header)


# -- action links ---------------------------------------------------------------------------------------------------


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal_link(key: bytes, link_id: str, decision: str) -> str:
    """The token of one action link: which link row, which decision, signed with the server's key. The row says
    who it was sent to, when it expires and whether it was used."""
    payload = _b64(json.dumps({"l": link_id, "d": decision}, separators=(",", ":")).encode("utf-8"))
    mac = hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest()
    return f"{payload}.{_b64(mac)}"


def open_link(key: bytes, token: str) -> tuple[str, str] | None:
    """(link id, decision) of a token this server signed; None for a forged or mangled one."""
    try:
        payload, mac = token.split(".", 1)
        expected = hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, _unb64(mac)):
            return None
        body = json.loads(_unb64(payload))
        link_id, decision = body["l"], body["d"]
    except (ValueError, KeyError, TypeError, UnicodeError):
        return None
    if not isinstance(link_id, str) or decision not in ("approve", "reject"):
        return None
    return link_id, decision


def link_refusal(used_at: datetime | None, expires_at: datetime, now: datetime, status: str) -> str | None:
    """Why a link no longer decides (used, expired, decided elsewhere), or None while it may."""
    if used_at is not None:
        return "This link was already used."
    if now >= expires_at:
        return "This link has expired."
    if status != "pending":
        return f"This approval was already decided elsewhere: it is {status}."
    return None


RISKY = frozenset({"destructive"})


def link_decides(
    risk: str | None, policy: dict[str, Any] | None, params: Any, amount_limit: float | None
) -> str | None:
    """Why a review must be decided in the web app rather than from one click in a message (the tool is
    destructive, by its registration or the policy's verdict; or an amount in its params is above the limit), or
    None when a link may decide it."""
    risk = risk or (policy or {}).get("risk")
    if risk in RISKY:
        return f"the tool is {risk}"
    amount = amount_of(params)
    if amount_limit is not None and amount is not None and amount > amount_limit:
        return f"the amount {amount:g} is above {amount_limit:g}"
    return None


def amount_of(params: Any, depth: int = 0) -> float | None:
    """The first number named like an amount (amount, total, sum, value, price), top level or one object down: the
    web app's confirming prompt reads the same (frontend/src/coaching/confirmation.ts)."""
    if not isinstance(params, dict) or depth > 1:
        return None
    for key, value in params.items():
        if (
            str(key).lower() in ("amount", "total", "sum", "value", "price")
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            return float(value)
    for value in params.values():
        found = amount_of(value, depth + 1)
        if found is not None:
            return found
    return None
