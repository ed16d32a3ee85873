"""Whether a workspace's Slack app works (issue 40, item 15): Test asks Slack (auth.test, through the real slack_sdk
WebClient against the scripted Slack API) whether it takes the stored bot token, the settings show the last
delivery's error, and say when Slack cannot reach the interactivity URL; a person's settings say whether email can
be sent at all."""

from __future__ import annotations

import pytest

from tests.api.slack.test_slack import SECRET, TOKEN, as_user, waiting_approval
from tests.support.slack_server import ScriptedSlack

BAD_TOKEN = "xoxb-9999-wrong-token"


@pytest.fixture
def slack():
    with ScriptedSlack(token=TOKEN) as server:
        yield server


@pytest.fixture
def settings(settings, slack):
    return settings.with_overrides(slack_api_url=slack.base_url, public_url="http://127.0.0.1:5000")


def test_test_asks_slack_whether_it_takes_the_bot_token_and_posts_nothing(app, api, services, slack):
    nothing = api.ok("POST", "/api/workspace/slack/test")
    assert nothing["ok"] is False and nothing["code"] == "not_configured"
    assert "Bot User OAuth Token" in nothing["failure"]

    api.ok("PUT", "/api/workspace/slack", {"bot_token": TOKEN, "signing_secret": SECRET})
    good = api.ok("POST", "/api/workspace/slack/test")
    assert (good["ok"], good["team"], good["bot_user"]) == (True, "Scripted Team", "coach")
    assert [c["token"] for c in slack.calls("auth.test")] == [TOKEN]

    api.ok("PUT", "/api/workspace/slack", {"bot_token": BAD_TOKEN})
    bad = api.ok("POST", "/api/workspace/slack/test")
    assert bad["ok"] is False and bad["code"] == "invalid_auth" and "copy the Bot User OAuth Token" in bad["failure"]
    assert slack.calls("chat.postMessage") == []
    operator = as_user(app, services, "operator@test.local", "operator")
    assert operator.call("POST", "/api/workspace/slack/test")[0] == 403


def test_the_settings_show_the_last_deliverys_slack_error(app, api, services, slack):
    from services.notifications import sender

    api.ok(
        "PUT",
        "/api/workspace/slack",
        {"bot_token": BAD_TOKEN, "signing_secret": SECRET, "default_channel": "C0REVIEWS"},
    )
    assert api.ok("GET", "/api/workspace/slack")["last_delivery"] is None
    waiting_approval(api)
    sender.deliver_due(services)
    last = api.ok("GET", "/api/workspace/slack")["last_delivery"]
    assert last["status"] != "sent" and "invalid_auth" in last["error"] and last["attempts"] == 1, last

    api.ok("PUT", "/api/workspace/slack", {"bot_token": TOKEN})
    waiting_approval(api)
    sender.deliver_due(services)
    last = api.ok("GET", "/api/workspace/slack")["last_delivery"]
    assert (last["status"], last["error"]) == ("sent", None), last


def test_the_settings_say_slack_cannot_reach_an_interactivity_url_on_a_loopback_address(api, app):
    shown = api.ok("GET", "/api/workspace/slack")
    workspace = app.extensions["coach_default_workspace"]
    assert shown["interactivity_url"] == f"http://127.0.0.1:5000/api/integrations/slack/{workspace}/interactions"
    assert "Slack cannot reach it" in shown["interactivity_unreachable"]
    assert "COACH_PUBLIC_URL" in shown["interactivity_unreachable"]


@pytest.mark.parametrize(
    "url,reachable",
    [
        ("https://coach.example.com", True),
        ("http://localhost:5000", False),
        ("http://10.1.2.3", False),
        ("http://[::1]:5000", False),
    ],
)
def test_only_a_public_address_is_said_to_be_reachable_by_slack(settings, url, reachable):
    from services.slack import check

    assert (check.unreachable_reason(settings.with_overrides(public_url=url)) is None) is reachable


def test_a_persons_settings_say_when_this_server_cannot_send_email(api, settings):
    assert not settings.smtp_host
    assert api.ok("GET", "/api/notifications/settings")["email_available"] is False
    assert api.ok("PUT", "/api/notifications/settings", {"email": True})["email_available"] is False
