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
    expect(page.get_by_text("not a member of any workspace")).to_have_count(0)
    me = page.request.get(live_server.url("/api/auth/me")).json()
    assert [(w["role"]) for w in me["workspaces"]] == ["operator"]


def _log_in_as(page, live_server, email, password):
    page.goto(live_server.url("/queue"))
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_label("Password").press("Enter")


def test_an_invited_person_not_yet_a_member_is_told_to_accept_never_offline(live_server, page):
    """Issue #31, item 6: signed in with no workspace, the app says why and what to do; no "Offline" banner, no
    red boxes of refused reads."""
    invited = live_server.post("/api/users", json={"email": EMAIL, "role": "operator", "password": PASSWORD})
    assert invited.status_code == 202, invited.text
    _log_in_as(page, live_server, EMAIL, PASSWORD)

    expect(page.get_by_role("heading", name="You are not a member of any workspace", level=1)).to_be_visible()
    expect(page.get_by_text("Accept an invitation below to join its workspace.")).to_be_visible()
    page.wait_for_timeout(1_500)  # long enough for a refused socket to have shown its banner
    expect(page.get_by_text("Offline")).to_have_count(0)
    expect(page.get_by_role("alert")).to_have_count(0)

    page.get_by_role("region", name="Invitations").get_by_role("button", name="Accept").click()
    expect(page.get_by_role("heading", name="Queue", level=1)).to_be_visible()


def test_a_member_disabled_in_their_only_workspace_is_told_to_ask_an_admin(live_server, page):
    invited = live_server.post("/api/users", json={"email": EMAIL, "role": "operator", "password": PASSWORD})
    assert invited.status_code == 202, invited.text
    _log_in_as(page, live_server, EMAIL, PASSWORD)
    page.get_by_role("region", name="Invitations").get_by_role("button", name="Accept").click()
    expect(page.get_by_role("heading", name="Queue", level=1)).to_be_visible()
    member = next(m for m in live_server.get("/api/users").json()["items"] if m["email"] == EMAIL)
    assert live_server.post(f"/api/users/{member['id']}/disable").status_code == 200

    page.reload()
    expect(page.get_by_role("heading", name="You are not a member of any workspace", level=1)).to_be_visible()
    expect(page.get_by_text("An admin disabled your access to")).to_contain_text(
        "Ask an admin of that workspace to enable you again"
    )
    page.wait_for_timeout(1_500)
    expect(page.get_by_text("Offline")).to_have_count(0)
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
