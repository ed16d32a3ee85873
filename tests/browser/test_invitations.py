"""An invited person accepts in the web app (issue #11, item 3): nobody joins a workspace behind their back."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

EMAIL, PASSWORD = "newcomer@other.test", "newcomer-pass-1"


def test_an_invited_person_accepts_in_the_app_and_then_sees_the_queue(live_server, page):
    invited = live_server.post("/api/users", json={"email": EMAIL, "role": "operator", "password": PASSWORD})
    assert invited.status_code == 202, invited.text

    page.goto(live_server.url("/"))
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Password").press("Enter")
    banner = page.get_by_role("region", name="Invitations")
    expect(banner).to_contain_text("as operator")
    expect(banner).to_contain_text(live_server.admin_email)
    banner.get_by_role("button", name="Accept").click()

    expect(banner).to_have_count(0)
    expect(page.get_by_role("heading", name="Queue")).to_be_visible()
    expect(page.get_by_text("not a member of any workspace")).to_have_count(0, timeout=10_000)
    me = page.request.get(live_server.url("/api/auth/me")).json()
    assert [(w["role"]) for w in me["workspaces"]] == ["operator"]
