"""What the coaching panel costs the server per decision: each pushed event arrives once, and a decision is
followed by at most two HTTP requests, none of them cancelled (issue #17, item 3)."""

from __future__ import annotations

import json
import time

import pytest

from tests.browser.coaching_support import create_workflow, echo_steps, expect_suggestion, open_panel, start_coaching
from tests.browser.conftest import WAIT_MS, log_in

pytestmark = pytest.mark.browser


def socket_events(page) -> list[tuple[str, dict]]:
    """Every Socket.IO event the page receives, as (name, payload), filled as frames arrive."""
    events: list[tuple[str, dict]] = []

    def on_frame(payload):
        text = payload if isinstance(payload, str) else payload.decode("utf-8", "replace")
        if text.startswith("42["):  # engine.io message + socket.io event, default namespace
            name, *args = json.loads(text[2:])
            events.append((name, args[0] if args else None))

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    return events


def wait_for_event(page, events: list, since: int, name: str) -> None:
    """Until an event `name` came after the first `since` (Playwright hands frames over while it is called)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while name not in [n for n, _ in events[since:]]:
        assert time.monotonic() < deadline, f"no {name} event came: {events[since:]}"
        page.wait_for_timeout(50)


def test_each_event_arrives_once_and_a_decision_costs_at_most_two_requests(live_server, page):
    wf = create_workflow(live_server, "Four steps", echo_steps("one", "two", "three", "four"))
    execution_id = start_coaching(live_server, wf["id"])
    log_in(page, live_server)
    events = socket_events(page)
    requests: list[str] = []
    failed: list[str] = []
    page.on("request", lambda r: requests.append(f"{r.method} {r.url}") if "/api/" in r.url else None)
    page.on("requestfailed", lambda r: failed.append(f"{r.method} {r.url} {r.failure}") if "/api/" in r.url else None)

    open_panel(page, live_server, execution_id)
    expect_suggestion(page, "Say one")
    # the panel's first reads are done, and the events of its joining are in (Playwright hands over frames only
    # while it is called: not during a time.sleep)
    page.wait_for_timeout(1500)
    failed.clear()  # (leaving the previous page may cancel its reads: not the panel's doing)
    for current, following in (("one", "two"), ("two", "three"), ("three", "four")):
        requests.clear()
        events_before = len(events)
        page.keyboard.press("a")  # accept, over the socket
        expect_suggestion(page, f"Say {following}")
        wait_for_event(page, events, events_before, "execution_update")  # however long a loaded machine takes
        page.wait_for_timeout(1500)  # then time for more requests or a repeated event to show, if there were any
        assert len(requests) <= 2, f"after accepting {current}: {requests}"
        burst = events[events_before:]
        suggestions = [p["suggestion_id"] for name, p in burst if name == "coaching_suggestion"]
        assert len(suggestions) == 1, f"after accepting {current}: {burst}"
        frames = [json.dumps([name, p], sort_keys=True) for name, p in burst]
        assert len(frames) == len(set(frames)), f"an event came twice after accepting {current}: {burst}"
    assert failed == [], f"cancelled requests: {failed}"
