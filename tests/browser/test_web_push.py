"""Web Push in Chromium against the real server (`python wsgi.py`): "Notify this browser" asks the notification
permission (granted here through Playwright's context permissions), registers /sw.js with scope /, and subscribes
with the server's VAPID key; headless Chromium has no push service to reach here, so its subscribe may fail, and then
the page says so. A push is then delivered to the registered service worker through the DevTools protocol
(ServiceWorker.deliverPushMessage, what a push service would hand the browser), and the worker shows it: the title
and body from the message, the event id as its tag, the item's URL in its data."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

COUNT_PERMISSION_REQUESTS = """
window.__permissionRequests = 0;
const ask = Notification.requestPermission.bind(Notification);
Notification.requestPermission = (...args) => { window.__permissionRequests += 1; return ask(...args); };
"""


def test_notify_this_browser_registers_the_service_worker_which_shows_a_push(live_server, page):
    context = page.context
    context.grant_permissions(["notifications"], origin=live_server.url("/").rstrip("/"))
    context.add_init_script(COUNT_PERMISSION_REQUESTS)
    log_in(page, live_server)
    page.goto(live_server.url("/settings"))
    section = page.get_by_role("region", name="Notifications", exact=True)
    toggle = section.get_by_role("switch", name="Notify this browser")
    expect(toggle).to_have_attribute("aria-checked", "false")
    toggle.click()
    expect(toggle).not_to_have_attribute("aria-busy", "true")
    assert page.evaluate("window.__permissionRequests") == 1
    scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == live_server.url("/")
    subscribed = live_server.get("/api/notifications/push/subscriptions").json()["items"]
    if toggle.get_attribute("aria-checked") == "true":  # a push service answered: the subscription reached Coach
        assert len(subscribed) == 1 and subscribed[0]["endpoint"].startswith("https://")
    else:  # no push service reachable from here: the page says the browser could not, and nothing was stored
        expect(section.get_by_role("alert")).to_contain_text("could not start push notifications")
        assert subscribed == []

    cdp = context.new_cdp_session(page)
    registrations: list[dict] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda e: registrations.extend(e["registrations"]))
    cdp.send("ServiceWorker.enable")
    page.wait_for_function("navigator.serviceWorker.ready")
    for _ in range(50):
        if registrations:
            break
        page.wait_for_timeout(100)
    registration = next(r for r in registrations if r["scopeURL"] == live_server.url("/") and not r["isDeleted"])
    message = {
        "title": "Approval requested",
        "body": "Pay 42?",
        "url": "/queue?approval=a-1",
        "tag": "approval:a-1",
        "kind": "approval_requested",
    }
    origin = live_server.url("/").rstrip("/")
    for _ in range(2):  # a repeat of the same event replaces the notification shown
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": origin, "registrationId": registration["registrationId"], "data": json.dumps(message)},
        )
    shown = None
    for _ in range(100):  # the worker shows it once its push handler ran (an async function's promise is always
        # truthy, so wait_for_function would not wait for it: poll the result instead)
        shown = page.evaluate("""async () => {
            const r = await navigator.serviceWorker.ready;
            const all = await r.getNotifications();
            return all.length ? all.map((n) => ({title: n.title, body: n.body, tag: n.tag, url: n.data.url})) : null;
        }""")
        if shown:
            break
        page.wait_for_timeout(100)
    assert shown == [
        {"title": "Approval requested", "body": "Pay 42?", "tag": "approval:a-1", "url": "/queue?approval=a-1"}
    ]
