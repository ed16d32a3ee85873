"""Starting workflows from outside: the rules of incoming webhooks and schedules, in plain Python (docs/triggers.md).

A webhook request is signed with the hook's secret: `X-Coach-Signature: sha256=<hex>`, the HMAC-SHA256 of
`<X-Coach-Timestamp>.<raw body>`, where the timestamp is Unix seconds; one more than TOLERANCE_S away from the
server's clock is refused, so a captured request cannot be sent again later, and within the window the delivery id
(`X-Coach-Delivery`) makes a repeat start nothing new. The body is mapped to the workflow's declared variables: as
they are (the body's top-level keys are the variables), or through the hook's `mapping` (variable → dotted path in
the body). A schedule is a five-field cron expression read in an IANA time zone (cronsim, zoneinfo).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from core.errors import BadRequest, Unauthorized, ValidationFailed
from core.workflow import WorkflowDef, validate_variables

SIGNATURE_HEADER = "X-Coach-Signature"
TIMESTAMP_HEADER = "X-Coach-Timestamp"
DELIVERY_HEADER = "X-Coach-Delivery"
TOLERANCE_S = 300
SCHEME = "sha256="
MAX_DELIVERY_ID = 200
MAX_CRON = 200
_DELIVERY = re.compile(rf"[\x21-\x7e]{{1,{MAX_DELIVERY_ID}}}")  # visible ASCII, no spaces
_HEX = re.compile(r"[0-9a-fA-F]{64}")
_PATH_PART = re.compile(r"[^.\s]{1,200}")


# -- signatures ----------------------------------------------------------------------------------------------------


def sign(secret: str, timestamp: int | str, body: bytes) -> str:
    """The X-Coach-Signature value of `body` sent at `timestamp` (Unix seconds)."""
    mac = hmac.new(secret.encode("utf-8"), str(timestamp).encode("ascii") + b"." + body, hashlib.sha256)
    return SCHEME + mac.hexdigest()


def verify(secret: str, timestamp: str | None, signature: str | None, body: bytes, now: float) -> None:
    """Unauthorized (401) unless `signature` is the body's with this secret and the timestamp is within
    TOLERANCE_S of `now`; the code says which: signature_missing, timestamp_invalid, timestamp_stale,
    signature_invalid."""
    if not signature or not timestamp:
        raise Unauthorized(
            f"a signed request is required: send {TIMESTAMP_HEADER} (Unix seconds) and "
            f"{SIGNATURE_HEADER}: sha256=<HMAC-SHA256 of '<timestamp>.<body>' with the hook's secret>",
            code="signature_missing",
        )
    ts = timestamp.strip()
    if not ts.isascii() or not ts.isdigit() or len(ts) > 12:
        raise Unauthorized(f"{TIMESTAMP_HEADER} must be Unix seconds (an integer)", code="timestamp_invalid")
    if abs(now - int(ts)) > TOLERANCE_S:
        raise Unauthorized(
            f"{TIMESTAMP_HEADER} is more than {TOLERANCE_S} seconds away from the server's clock: "
            "sign the request again when you send it",
            code="timestamp_stale",
            details={"server_time": int(now)},
        )
    given = signature.strip()
    if not given.startswith(SCHEME) or not _HEX.fullmatch(given[len(SCHEME) :]):
        raise Unauthorized(f"{SIGNATURE_HEADER} must be sha256=<64 hex digits>", code="signature_invalid")
    if not hmac.compare_digest(sign(secret, ts, body).encode("ascii"), given.lower().encode("ascii")):
        raise Unauthorized(
            "the signature does not match the body and timestamp (wrong secret, or the body was changed)",
            code="signature_invalid",
        )


def delivery_id(value: str | None) -> str:
    """The sender's delivery id, required: 1-200 visible ASCII characters (a UUID is good)."""
    if value is None or not _DELIVERY.fullmatch(value.strip()):
        raise BadRequest(
            f"{DELIVERY_HEADER} is required: the sender's id of this delivery (1-{MAX_DELIVERY_ID} "
            "visible ASCII characters, e.g. a UUID); a repeat with the same id starts nothing new",
            details={DELIVERY_HEADER: ["missing or malformed"]},
            code="delivery_id_missing",
        )
    return value.strip()


# -- the body and the variables ------------------------------------------------------------------------------------


def check_mapping(mapping: Any, defn: WorkflowDef) -> dict[str, str]:
    """A hook's mapping, variable → dotted path in the body (`order.id`, `items.0.sku`); every variable must be
    declared by the workflow."""
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise ValidationFailed("the mapping is invalid", details={"mapping": ["must be an object"]})
    errors: dict[str, list[str]] = {}
    for name, path in mapping.items():
        if name not in defn.variables:
            errors[f"mapping.{name}"] = [f"unknown variable; this workflow takes {sorted(defn.variables)}"]
        elif not isinstance(path, str) or not path or not all(_PATH_PART.fullmatch(p) for p in path.split(".")):
            errors[f"mapping.{name}"] = ["must be a dotted path into the body, e.g. order.id"]
    if errors:
        raise ValidationFailed("the mapping is invalid", details=errors)
    return dict(mapping)


_MISSING = object()


def _lookup(body: Any, path: str) -> Any:
    value = body
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def variables_from_body(body: Any, mapping: dict[str, str] | None, defn: WorkflowDef) -> dict[str, Any]:
    """The variables a hook's body starts the workflow with, checked against the declarations (defaults filled).
    ValidationFailed (422) names the body's field: `body.<key>` (no mapping) or `body.<path>` (mapped)."""
    if not isinstance(body, dict):
        raise ValidationFailed(
            "the body does not fit the workflow's variables", details={"body": ["must be a JSON object"]}
        )
    if mapping:
        given = {name: value for name, path in mapping.items() if (value := _lookup(body, path)) is not _MISSING}
        where = {name: f"body.{path}" for name, path in mapping.items()}
    else:
        given, where = body, {}
    try:
        return validate_variables(defn, given)
    except ValidationFailed as exc:
        details = {}
        for key, messages in exc.details.items():
            name = key.removeprefix("variables.")
            details[where.get(name, f"body.{name}")] = [f"{m} (variable {name!r})" for m in messages]
        raise ValidationFailed("the body does not fit the workflow's variables", details=details) from None


# -- schedules -----------------------------------------------------------------------------------------------------


def zone(name: Any) -> ZoneInfo:
    """The IANA time zone `name` (Europe/Berlin, UTC); ValidationFailed naming `timezone` otherwise."""
    if isinstance(name, str) and 0 < len(name) <= 64 and ".." not in name and not name.startswith("/"):
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    raise ValidationFailed(
        "unknown time zone",
        details={
            "timezone": [f"unknown time zone {name!r}: use an IANA name such as UTC, Europe/Berlin or America/New_York"]
        },
    )


def check_cron(expression: Any) -> str:
    """A five-field cron expression (minute hour day-of-month month day-of-week, as crontab(5); `L`, `#` and
    names such as MON or JAN too). ValidationFailed naming `cron` when it does not parse or never fires."""
    if not isinstance(expression, str) or not expression.strip() or len(expression) > MAX_CRON:
        raise ValidationFailed(
            "invalid cron expression",
            details={"cron": [f"a cron expression of 5 fields is required (at most {MAX_CRON} characters)"]},
        )
    text = " ".join(expression.split())
    if len(text.split(" ")) != 5:  # cronsim also takes a sixth field (seconds): a schedule's unit is the minute
        raise ValidationFailed(
            "invalid cron expression",
            details={
                "cron": [
                    f"{text!r} has {len(text.split(' '))} fields; a schedule has 5 (minute hour day-of-month month "
                    "day-of-week), e.g. '0 9 * * MON-FRI'"
                ]
            },
        )
    try:
        next(CronSim(text, datetime(2000, 1, 1, tzinfo=UTC)))
    except CronSimError as exc:
        raise ValidationFailed(
            "invalid cron expression",
            details={
                "cron": [
                    f"{exc}: {text!r} is not a cron expression of 5 fields "
                    "(minute hour day-of-month month day-of-week), e.g. '0 9 * * MON-FRI'"
                ]
            },
        ) from None
    except StopIteration:
        raise ValidationFailed("invalid cron expression", details={"cron": [f"{text!r} never fires"]}) from None
    return text


def next_fires(expression: str, zone_name: str, after: datetime, count: int = 1) -> list[datetime]:
    """The next `count` times the schedule fires strictly after `after`, in UTC (read in the schedule's zone: a time
    that a daylight-saving change skips fires at the first minute after the gap, one that repeats fires once)."""
    it = CronSim(expression, after.astimezone(zone(zone_name)))
    out: list[datetime] = []
    for moment in it:
        out.append(moment.astimezone(UTC))
        if len(out) >= count:
            break
    return out


def next_fire(expression: str, zone_name: str, after: datetime) -> datetime:
    return next_fires(expression, zone_name, after)[0]


def describe(expression: str) -> str:
    """In words: 'At 09:00 on Monday through Friday'."""
    try:
        return CronSim(expression, datetime(2000, 1, 1, tzinfo=UTC)).explain()
    except Exception:  # explain() is best effort; the expression itself was checked
        return expression


def after_missed(due_at: datetime, now: datetime, expression: str, zone_name: str) -> datetime:
    """The next fire time to store once the fire due at `due_at` is taken at `now`: the first slot after `now`, so
    slots missed while no server ran fire once together, not once each."""
    return next_fire(expression, zone_name, max(due_at, now))
