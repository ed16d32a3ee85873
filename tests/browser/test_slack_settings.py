"""Settings → Slack in Chromium against the real server (issue 33): a person sets their own Slack member ID, an
admin sets the workspace's Slack app (bot token, signing secret, default channel), sees that the secrets are stored
but never shown again, and reads the field's error for a channel name instead of an id."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import collect_errors
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

TOKEN = "xoxb-1111-2222-browsertoken"
SECRET = "0123456789abcdef0123456789abcdef"


def test_a_member_sets_their_slack_id_and_an_admin_sets_the_slack_app(live_server, page):
    log_in(page, live_server)
    errors = collect_errors(page)
    page.goto(live_server.url("/settings"))

    mine = page.get_by_role("form", name="Your Slack member ID")
    mine.get_by_label("Slack member ID").fill("@me")
    mine.get_by_role("button", name="Save Slack ID").click()
    expect(mine.get_by_role("alert")).to_contain_text("U0123ABCD")  # the field's error says what an id looks like
    mine.get_by_label("Slack member ID").fill("U0ADMIN1")
    mine.get_by_role("button", name="Save Slack ID").click()
    expect(mine.get_by_role("status")).to_have_text("Saved: U0ADMIN1.")
    assert live_server.get("/api/workspace/slack/me").json() == {"slack_user_id": "U0ADMIN1"}

    section = page.locator("#slack")
    expect(section).to_contain_text("Slack is not set up yet.")
    form = section.get_by_role("form", name="Slack app")
    form.get_by_label("Bot token").fill(TOKEN)
    form.get_by_label("Signing secret").fill(SECRET)
    form.get_by_label("Default channel ID").fill("#general")
    form.get_by_role("button", name="Save Slack settings").click()
    expect(form.get_by_role("alert")).to_contain_text("channel id")
    assert live_server.get("/api/workspace/slack").json()["bot_token_set"] is False  # nothing saved

    form.get_by_label("Default channel ID").fill("C0REVIEWS")
    form.get_by_role("button", name="Save Slack settings").click()
    expect(section.get_by_text("Slack settings saved.")).to_be_visible()
    expect(section).to_contain_text("Slack is set up.")
    expect(form.get_by_label("Bot token")).to_have_value("")
    expect(form.get_by_label("Bot token")).to_have_attribute("placeholder", "A token is stored: leave empty to keep it")
    expect(form.get_by_label("Default channel ID")).to_have_value("C0REVIEWS")
    workspace = live_server.get("/api/auth/me").json()["workspace_id"]
    expect(form).to_contain_text(f"/api/integrations/slack/{workspace}/interactions")
    saved = live_server.get("/api/workspace/slack").json()
    assert saved["bot_token_set"] and saved["signing_secret_set"] and saved["default_channel"] == "C0REVIEWS"

    page.reload()  # stored, and never shown again
    expect(page.locator("#slack")).to_contain_text("Slack is set up.")
    content = page.content()
    assert TOKEN not in content and SECRET not in content
    assert [e for e in errors if "status of 422" not in e] == []  # the two refused saves above
