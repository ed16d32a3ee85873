"""core.coaching.trail: the e-value before and after each of the latest decisions, read back from the evidence."""

from core.coaching.evidence import Evidence, log_e_promote
from core.coaching.trail import evidence_trail

P0, ALPHA = 0.85, 0.05


def _replay(kinds):
    """The evidence after each decision, going forward as the server counts them."""
    ev, after = Evidence(), []
    for k in kinds:
        if k != "skip":
            ev.record(k == "accept", P0, ALPHA)
        after.append((ev.accepted, ev.counted))
    return ev, after


def test_the_trail_gives_each_decisions_e_value_before_and_after_as_counted_forward():
    kinds = ["accept"] * 30 + ["correct", "accept", "skip", "reject", "manual", "accept"]
    ev, after = _replay(kinds)
    trail = evidence_trail(ev.accepted, ev.counted, list(reversed(kinds)), P0, ALPHA)
    forward = list(reversed(trail))
    import math

    for i, step in enumerate(forward):
        a, n = after[i]
        assert step["e_value_after"] == round(math.exp(log_e_promote(a, n, P0)), 4)
        if i:
            assert step["e_value_before"] == forward[i - 1]["e_value_after"]
    # a correction after a long run of accepts brings the e-value down, and more accepts are needed after it
    correct = forward[30]
    assert correct["e_value_after"] < correct["e_value_before"]
    assert correct["accepts_needed_after"] > forward[29]["accepts_needed_after"]
    assert forward[32]["e_value_before"] == forward[32]["e_value_after"]  # the skip changes nothing


def test_the_trail_stops_where_the_evidence_restarted():
    # the current evidence holds only the last 3 decisions: the earlier ones are not in it
    trail = evidence_trail(3, 3, ["accept", "accept", "accept", "reject", "accept"], P0, ALPHA)
    assert all(t is not None for t in trail[:3])
    assert trail[3] is None and trail[4] is None
    assert trail[2]["e_value_before"] == 1.0  # no evidence before the first counted decision


def test_an_empty_history_has_an_empty_trail():
    assert evidence_trail(0, 0, [], P0, ALPHA) == []
