"""An admin manages the workspace's members in the web app, and a person makes and revokes their API tokens."""

from __future__ import annotations

import pytest
import requests
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser

NEW_EMAIL = "ops@live.test"
NEW_PASSWORD = "ops-password-1"


def test_an_admin_invites_changes_the_role_of_disables_and_removes_a_member(live_server, page, browser):
    log_in(page, live_server)
    page.get_by_role("link", name="Admin").click()
    expect(page.get_by_role("heading", name="Administration", level=1)).to_be_visible()
    members = page.get_by_role("region", name="Members")
    expect(members).to_contain_text(live_server.admin_email)

    # invite with a first password: the person signs in and accepts
    form = page.get_by_role("form", name="Invite someone")
    form.get_by_label("Email").fill(NEW_EMAIL)
    form.get_by_label("Role").select_option("operator")
    form.get_by_label("First password (optional)").fill(NEW_PASSWORD)
    form.get_by_role("button", name="Send invitation").click()
    expect(page.get_by_role("status").filter(has_text=f"Invited {NEW_EMAIL} as operator")).to_be_visible()
    expect(page.get_by_role("list", name="Pending invitations")).to_contain_text(NEW_EMAIL)

    other = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        newcomer = other.new_page()
        newcomer.goto(live_server.url("/"))
        newcomer.get_by_label("Email").fill(NEW_EMAIL)
        newcomer.get_by_label("Password").fill(NEW_PASSWORD)
        newcomer.get_by_label("Password").press("Enter")
        newcomer.get_by_role("button", name="Accept").first.click()
        expect(newcomer.get_by_role("button", name="Log out")).to_be_visible()
    finally:
        other.close()

    page.reload()
    row = members.get_by_role("row").filter(has_text=NEW_EMAIL)
    expect(row).to_be_visible()
    row.get_by_label(f"Role of {NEW_EMAIL}").select_option("lead")
    expect(page.get_by_role("status").filter(has_text=f"{NEW_EMAIL} is now lead.")).to_be_visible()
    row.get_by_role("button", name=f"Disable {NEW_EMAIL}").click()
    confirm = page.get_by_role("dialog", name=f"Disable {NEW_EMAIL}?")  # one click alone never disables anyone
    expect(row).not_to_contain_text("Disabled")
    confirm.get_by_role("button", name="Disable member").click()
    expect(row).to_contain_text("Disabled")
    page.screenshot(path=str(SCREENSHOTS / "admin.png"), full_page=True)

    # the last admin cannot demote themselves: the server's 409 is shown
    me = members.get_by_role("row").filter(has_text=live_server.admin_email)
    me.get_by_label(f"Role of {live_server.admin_email}").select_option("operator")
    expect(page.get_by_role("alert").filter(has_text="Not done")).to_be_visible()

    row.get_by_role("button", name=f"Remove {NEW_EMAIL}").click()
    dialog = page.get_by_role("dialog", name=f"Remove {NEW_EMAIL}?")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    dialog.get_by_role("button", name="Remove member").click()
    expect(members.get_by_role("row").filter(has_text=NEW_EMAIL)).to_have_count(0)
    listed = live_server.get("/api/users").json()["items"]
    assert [m["email"] for m in listed] == [live_server.admin_email], listed
    actions = {e["action"] for e in live_server.get("/api/audit?per_page=100").json()["items"]}
    assert {"invitation_create", "user_change", "member_disable", "member_remove"} <= actions, actions


def test_a_token_is_shown_once_works_and_is_revoked_from_settings(live_server, page):
    log_in(page, live_server)
    page.get_by_role("link", name="Settings").click()
    expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible()
    page.get_by_label("Token name").fill("nightly import")
    page.get_by_role("button", name="Create token").click()
    shown = page.get_by_label("The new token")
    expect(page.get_by_text("Copy it now: it is not shown again.")).to_be_visible()
    secret = shown.input_value()
    assert secret, "the token is shown"
    answer = requests.get(live_server.url("/api/auth/me"), headers={"Authorization": f"Bearer {secret}"}, timeout=10)
    assert answer.status_code == 200 and answer.json()["user"]["email"] == live_server.admin_email
    page.screenshot(path=str(SCREENSHOTS / "settings.png"), full_page=True)

    page.get_by_role("button", name="Done, hide it").click()
    expect(page.get_by_label("The new token")).to_have_count(0)
    page.get_by_role("button", name="Revoke token nightly import").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke token").click()
    expect(page.get_by_role("button", name="Revoke token nightly import")).to_have_count(0)
    answer = requests.get(live_server.url("/api/auth/me"), headers={"Authorization": f"Bearer {secret}"}, timeout=10)
    assert answer.status_code == 401
