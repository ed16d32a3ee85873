"""Fixtures of the Slack tests: a scripted Slack API on loopback, the settings that point at it, a lead with a Slack
id and a workspace with Slack configured."""

from __future__ import annotations

import pytest

from tests.api.slack.test_slack import SECRET, TOKEN, as_user
from tests.conftest import Api
from tests.support.slack_server import ScriptedSlack


@pytest.fixture
def slack():
    with ScriptedSlack(token=TOKEN) as server:
        yield server


@pytest.fixture
def settings(settings, slack):
    return settings.with_overrides(slack_api_url=slack.base_url)


@pytest.fixture
def lead(app, services, api) -> Api:
    person = as_user(app, services, "lead@test.local", "lead")
    person.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0LEAD"})
    return person


@pytest.fixture
def configured(api, app) -> str:
    api.ok(
        "PUT", "/api/workspace/slack", {"bot_token": TOKEN, "signing_secret": SECRET, "default_channel": "C0REVIEWS"}
    )
    return app.extensions["coach_default_workspace"]
