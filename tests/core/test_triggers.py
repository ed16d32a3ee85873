"""The rules of triggers (core/triggers.py): webhook signatures, body → variables, cron schedules in a zone."""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core import triggers as T
from core.errors import BadRequest, Unauthorized, ValidationFailed
from core.workflow.validation import parse_definition
from tests.core.test_workflow_validation import echo, wf

SECRET = "whsec_test"
NOW = 1_800_000_000
BODY = b'{"order_id": "A-1"}'


@pytest.fixture
def defn(tools):
    return parse_definition(
        wf(
            echo("a"),
            variables={"order_id": {"type": "string", "required": True}, "amount": {"type": "number", "default": 1}},
        ),
        tools,
    )


# --- signatures ---------------------------------------------------------------------------------------------------


def test_the_signature_is_hmac_sha256_of_timestamp_dot_body_as_the_docs_say():
    expected = hmac.new(SECRET.encode(), f"{NOW}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert T.sign(SECRET, NOW, BODY) == f"sha256={expected}"
    T.verify(SECRET, str(NOW), f"sha256={expected}", BODY, NOW)
    T.verify(SECRET, str(NOW), f"sha256={expected.upper()}", BODY, NOW + T.TOLERANCE_S)  # hex in any case


@pytest.mark.parametrize(
    "timestamp, signature, body, now, code",
    [
        (None, "sig", BODY, NOW, "signature_missing"),
        (str(NOW), None, BODY, NOW, "signature_missing"),
        ("12e3", "sha256=" + "0" * 64, BODY, NOW, "timestamp_invalid"),
        ("-5", "sha256=" + "0" * 64, BODY, NOW, "timestamp_invalid"),
        (str(NOW - T.TOLERANCE_S - 1), T.sign(SECRET, NOW - T.TOLERANCE_S - 1, BODY), BODY, NOW, "timestamp_stale"),
        (str(NOW + T.TOLERANCE_S + 1), T.sign(SECRET, NOW + T.TOLERANCE_S + 1, BODY), BODY, NOW, "timestamp_stale"),
        (str(NOW), "sha1=" + "0" * 40, BODY, NOW, "signature_invalid"),
        (str(NOW), T.sign("whsec_other", NOW, BODY), BODY, NOW, "signature_invalid"),
        (str(NOW), T.sign(SECRET, NOW, BODY), BODY + b" ", NOW, "signature_invalid"),  # the body changed
        (str(NOW), T.sign(SECRET, NOW - 1, BODY), BODY, NOW, "signature_invalid"),  # the timestamp changed
    ],
)
def test_a_missing_malformed_stale_or_wrong_signature_is_refused_saying_which(timestamp, signature, body, now, code):
    with pytest.raises(Unauthorized) as info:
        T.verify(SECRET, timestamp, signature, body, now)
    assert info.value.code == code


@pytest.mark.parametrize("value", [None, "", " ", "a b", "é", "x" * 201])
def test_a_delivery_id_is_required_visible_ascii(value):
    with pytest.raises(BadRequest):
        T.delivery_id(value)


def test_a_delivery_id_is_kept_as_sent():
    assert T.delivery_id(" 0b7e-44 ") == "0b7e-44"


# --- body -> variables --------------------------------------------------------------------------------------------


def test_without_a_mapping_the_body_is_the_variables_with_defaults_filled(defn):
    assert T.variables_from_body({"order_id": "A"}, {}, defn) == {"order_id": "A", "amount": 1}


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "body.order_id"),
        ({"order_id": 1}, "body.order_id"),
        ({"order_id": "A", "x": 1}, "body.x"),
        ([1], "body"),
        ("s", "body"),
    ],
)
def test_a_body_that_does_not_fit_names_its_field(defn, body, field):
    with pytest.raises(ValidationFailed) as info:
        T.variables_from_body(body, {}, defn)
    assert field in info.value.details


def test_a_mapping_reads_dotted_paths_and_ignores_the_rest(defn):
    mapping = {"order_id": "data.order.id", "amount": "data.lines.1.total"}
    body = {"data": {"order": {"id": "B"}, "lines": [{"total": 1}, {"total": 7}]}, "noise": [1, 2]}
    assert T.variables_from_body(body, mapping, defn) == {"order_id": "B", "amount": 7}
    with pytest.raises(ValidationFailed) as info:  # a path that is not there: the variable is missing
        T.variables_from_body({"data": {"lines": []}}, mapping, defn)
    assert "body.data.order.id" in info.value.details
    assert T.variables_from_body({"data": {"order": {"id": "C"}}}, mapping, defn)["amount"] == 1  # its default


@pytest.mark.parametrize(
    "mapping, field",
    [
        ({"nope": "a"}, "mapping.nope"),
        ({"amount": ""}, "mapping.amount"),
        ({"amount": "a..b"}, "mapping.amount"),
        ("x", "mapping"),
    ],
)
def test_a_mapping_names_declared_variables_and_real_paths(defn, mapping, field):
    with pytest.raises(ValidationFailed) as info:
        T.check_mapping(mapping, defn)
    assert field in info.value.details


# --- schedules ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression", ["61 * * * *", "* * * *", "* * * * * *", "", "@daily", "0 0 30 2 *", None, 5, "*/0 * * * *"]
)
def test_a_cron_expression_that_does_not_parse_or_never_fires_names_cron(expression):
    with pytest.raises(ValidationFailed) as info:
        T.check_cron(expression)
    assert "cron" in info.value.details


def test_a_cron_expression_is_kept_with_single_spaces():
    assert T.check_cron("  0  9 * *   MON-FRI ") == "0 9 * * MON-FRI"


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "../etc/passwd", "/etc/localtime", None, "x" * 65])
def test_an_unknown_zone_names_timezone(name):
    with pytest.raises(ValidationFailed) as info:
        T.zone(name)
    assert "timezone" in info.value.details


def test_next_fires_are_read_in_the_schedules_zone_and_given_in_utc():
    after = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)  # a Monday, 13:00 in Berlin
    fires = T.next_fires("0 9 * * MON-FRI", "Europe/Berlin", after, 3)
    assert fires == [
        datetime(2026, 1, 6, 8, 0, tzinfo=UTC),
        datetime(2026, 1, 7, 8, 0, tzinfo=UTC),
        datetime(2026, 1, 8, 8, 0, tzinfo=UTC),
    ]
    summer = T.next_fire("0 9 * * *", "Europe/Berlin", datetime(2026, 7, 1, 12, tzinfo=UTC))
    assert summer == datetime(2026, 7, 2, 7, 0, tzinfo=UTC)  # CEST


def test_a_time_skipped_by_daylight_saving_fires_once_after_the_gap():
    # 2026-03-29 Berlin: 02:00 -> 03:00. A 02:30 schedule fires at 03:00 local that day, once.
    fires = T.next_fires("30 2 * * *", "Europe/Berlin", datetime(2026, 3, 28, 12, tzinfo=UTC), 3)
    local = [f.astimezone(ZoneInfo("Europe/Berlin")) for f in fires]
    assert [(t.day, t.hour) for t in local] == [(29, 3), (30, 2), (31, 2)]


def test_the_next_fire_after_a_missed_slot_is_after_now_so_missed_slots_fire_once():
    due = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    now = due + timedelta(days=2, minutes=30)
    assert T.after_missed(due, now, "0 * * * *", "UTC") == due + timedelta(days=2, hours=1)
    assert T.after_missed(due, due + timedelta(seconds=5), "0 * * * *", "UTC") == due + timedelta(hours=1)


def test_a_rule_in_words():
    assert T.describe("0 9 * * MON-FRI") == "At 09:00 on Monday through Friday"
