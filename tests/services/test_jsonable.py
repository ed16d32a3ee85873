"""services.notifier.jsonable: the plain JSON copy every event payload and many answers go through."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta, timezone

from services.audit import service as audit
from services.notifier import jsonable, jsonable_exact


def test_a_copy_in_plain_json_values_datetimes_in_iso_utc_keys_as_strings():
    source = {
        "at": datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        "naive": datetime(2026, 1, 2, 3, 4, 5),
        "offset": datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))),
        "day": date(2026, 1, 2),
        1: (1, 2.5, None, True),
        "nested": {"list": [{"x": "é"}]},
    }
    copied = jsonable(source)
    assert copied == {
        "at": "2026-01-02T03:04:05.000006+00:00",
        "naive": "2026-01-02T03:04:05+00:00",
        "offset": "2026-01-02T03:04:05+02:00",
        "day": "2026-01-02",
        "1": [1, 2.5, None, True],
        "nested": {"list": [{"x": "é"}]},
    }
    assert copied == jsonable_exact(source)  # the same values as the copy value by value
    copied["nested"]["list"][0]["x"] = "changed"
    assert source["nested"]["list"][0]["x"] == "é"  # a copy, not the caller's values


def test_what_orjson_declines_is_copied_value_by_value():
    assert jsonable({"big": 2**70, "at": [datetime(2026, 1, 1, tzinfo=UTC)]}) == {
        "big": 2**70,
        "at": ["2026-01-01T00:00:00+00:00"],
    }
    assert jsonable(["\ud800"]) == ["\ud800"]  # a lone surrogate


def test_nan_and_infinities_become_null_in_payloads_and_stay_spelled_in_the_audit():
    assert jsonable({"x": math.nan, "y": [math.inf]}) == {"x": None, "y": [None]}
    assert audit.plain({"x": math.nan, "y": [-math.inf]}) == {"x": "nan", "y": ["-inf"]}
