"""JSON text for stored values: orjson's speed without refusing or changing what the standard library took."""

import json
import math
from datetime import UTC, datetime

import pytest

from services import jsontext


def test_plain_values_round_trip():
    value = {"a": [1, 2.5, None, True, "é\u2028\x00"], "nested": {"x": {"y": []}}, "neg": -0.0, "tiny": 1e-7}
    assert jsontext.loads(jsontext.dumps(value)) == value


def test_integers_beyond_64_bits_keep_their_value():
    value = {"big": 150000000000000000000, "negative": -(2**70), "in_a_string": "1234567890123456789012"}
    text = jsontext.dumps(value)
    back = jsontext.loads(text)
    assert back == value and type(back["big"]) is int
    assert jsontext.loads(text.encode()) == value  # bytes, as a driver may hand them over


def test_non_string_keys_become_strings_as_the_standard_library_makes_them():
    value = {5: "five", True: "yes", None: "nothing", 2.5: "half"}
    assert jsontext.loads(jsontext.dumps(value)) == json.loads(json.dumps(value))


def test_text_the_standard_library_wrote_with_nan_is_still_read():
    back = jsontext.loads(json.dumps({"x": float("nan"), "y": float("inf")}))
    assert math.isnan(back["x"]) and back["y"] == math.inf


def test_not_json_at_all_raises_a_value_error():
    with pytest.raises(ValueError):
        jsontext.loads("{not json")


def test_a_value_json_cannot_hold_raises_type_error():
    with pytest.raises(TypeError):
        jsontext.dumps({"x": object()})
    assert jsontext.loads(jsontext.dumps({"at": datetime(2026, 1, 2, 3, 4, 5)})) == {"at": "2026-01-02T03:04:05"}


def test_sorted_text_is_the_same_for_equal_values_whatever_their_order():
    assert jsontext.dumps_sorted({"b": 1, "a": {"d": 2, "c": 3}}) == jsontext.dumps_sorted(
        {"a": {"c": 3, "d": 2}, "b": 1}
    )
    assert jsontext.dumps_sorted({"b": 1, "a": 2}) == '{"a":2,"b":1}'
    assert json.loads(jsontext.dumps_sorted({"n": 2**70})) == {"n": 2**70}


def test_step_states_are_written_in_c_and_read_back_the_same_whichever_way_they_are_written():
    from core.execution.engine import StepState
    from services.orm import StepStates

    moment = datetime(2026, 11, 24, 9, 34, 56, 445526, tzinfo=UTC)
    steps = {
        "a": StepState(
            "a",
            status="succeeded",
            attempts=1,
            run=1,
            output={"n": 1},
            params={"n": 1},
            decision="accept",
            policy={"effect": "allow"},
            idempotency_key="x:a:1",
            started_at=moment,
            finished_at=moment,
        ),
        "b": StepState("b"),
    }
    column = StepStates()
    fast = jsontext.dumps(column.process_bind_param(steps, None))
    big = {**steps, "c": StepState("c", status="succeeded", output={"id": 2**70}, finished_at=moment)}
    slow = jsontext.dumps(column.process_bind_param(big, None))  # orjson declines 2**70: the standard library
    assert json.loads(fast) == json.loads(slow)[:2]  # the same fields, the same spelling
    back = column.process_result_value(jsontext.loads(slow), None)
    assert back["a"] == steps["a"] and back["b"] == steps["b"] and back["c"].output == {"id": 2**70}
    assert back["c"].finished_at == moment and back["a"].started_at.tzinfo is not None
    # rows written before left out the fields at their default, and their times carry the offset: read the same
    old = [
        {
            "step_id": "a",
            "status": "succeeded",
            "attempts": 1,
            "run": 1,
            "output": {"n": 1},
            "params": {"n": 1},
            "decision": "accept",
            "policy": {"effect": "allow"},
            "idempotency_key": "x:a:1",
            "started_at": moment.isoformat(),
            "finished_at": moment.isoformat(),
        },
        {"step_id": "b", "status": "pending"},
    ]
    assert column.process_result_value(old, None) == steps


def test_a_value_neither_way_can_write_is_refused_with_a_type_error():
    with pytest.raises(TypeError):
        jsontext.dumps({"x": object()})
    with pytest.raises(TypeError):
        jsontext.dumps({"x": object(), "big": 2**70})
