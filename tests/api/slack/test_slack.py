"""Slack (issue 33): the workspace's Slack settings and each member's Slack id, review messages posted through the
real slack_sdk WebClient to a scripted Slack API on loopback, and the interactivity endpoint: signed clicks decide
as the mapped person (audited and counted), bad or old signatures are 401, replays decide once, unknown people and
other workspaces' items decide nothing, and an item decided elsewhere is refused naming who decided."""

from __future__ import annotations

import json
import time

import pytest

from services.models.slack import WorkspaceSlack
from services.slack import client as slack_client
from services.slack import messages as M
from services.slack import service as slack_settings
from tests.conftest import Api, make_user
from tests.support.slack_server import click, form, sign, submission

TOKEN = "xoxb-1234-5678-abcdefghijkl"
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
HOOK = "/api/integrations/slack/{}/interactions"
TOTAL = {"id": "total", "tool": "echo", "params": {"sum": 42}}
SIGN_OFF = {"id": "sign_off", "type": "approval", "message": "Pay {{ steps.total.output.sum }}?"}
AFTER = {"id": "after", "tool": "echo", "params": {"paid": "{{ steps.total.output.sum }}"}}


def as_user(app, services, email: str, role: str, workspace: str = "default") -> Api:
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, email, role, workspace)}"
    return Api(client, services)


def waiting_approval(api: Api) -> dict:
    wf = api.workflow([TOTAL, SIGN_OFF, AFTER])
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_approval", ex
    return api.ok("GET", "/api/approvals?status=pending")["items"][0]


def suggestion_for_slack_operator(app, api: Api, services) -> tuple[str, dict]:
    """operator@test.local, whose Slack id is U0OPER, and a coaching run of one echo step (greet) waiting for its
    decision: (the execution's id, greet's suggestion)."""
    operator = as_user(app, services, "operator@test.local", "operator")
    operator.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0OPER"})
    wf = api.workflow([{"id": "greet", "tool": "echo", "params": {"message": "hi"}}])
    ex_id = api.start(wf["id"], mode="coaching")["execution_id"]
    api.settle(ex_id)
    return ex_id, api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]


def post(app, workspace_id: str, payload: dict, secret: str = SECRET, **sign_kw):
    body = form(payload)
    return app.test_client().post(HOOK.format(workspace_id), data=body, headers=sign(secret, body, **sign_kw))


def approve_value(approval: dict) -> str:
    return json.dumps({"kind": "approval", "id": approval["approval_id"], "execution_id": approval["execution_id"]})


def decisions_audited(api: Api) -> list[dict]:
    return [e for e in api.ok("GET", "/api/audit?per_page=100")["items"] if e["action"] == "approval_decision"]


# -- settings ------------------------------------------------------------------------------------------------------


def test_admins_set_slack_the_secrets_are_sealed_and_never_returned(app, api, services):
    operator = as_user(app, services, "operator@test.local", "operator")
    assert operator.call("GET", "/api/workspace/slack")[0] == 403
    assert operator.call("PUT", "/api/workspace/slack", {"bot_token": TOKEN})[0] == 403
    saved = api.ok(
        "PUT", "/api/workspace/slack", {"bot_token": TOKEN, "signing_secret": SECRET, "default_channel": "C0REVIEWS"}
    )
    assert saved["bot_token_set"] and saved["signing_secret_set"] and saved["default_channel"] == "C0REVIEWS"
    workspace = app.extensions["coach_default_workspace"]
    assert saved["interactivity_path"] == HOOK.format(workspace)
    shown = api.client.get("/api/workspace/slack").get_data(as_text=True) + api.client.get(
        "/api/audit?per_page=100"
    ).get_data(as_text=True)
    assert TOKEN not in shown and SECRET not in shown
    with services.db.read() as session:
        row = session.get(WorkspaceSlack, workspace)
        assert TOKEN not in row.bot_token and SECRET not in row.signing_secret
        opened = slack_settings.config(session, services.settings, workspace)
    assert (opened.bot_token, opened.signing_secret, opened.default_channel) == (TOKEN, SECRET, "C0REVIEWS")
    # null keeps a secret, empty removes it; bad values are 422 naming the field
    kept = api.ok("PUT", "/api/workspace/slack", {"default_channel": "C0OTHER"})
    assert kept["bot_token_set"] and kept["default_channel"] == "C0OTHER"
    assert api.ok("PUT", "/api/workspace/slack", {"signing_secret": ""})["signing_secret_set"] is False
    code, body = api.call("PUT", "/api/workspace/slack", {"bot_token": "xoxp-user-token", "default_channel": "#x"})
    assert code == 422 and set(body["error"]["details"]) == {"bot_token", "default_channel"}
    api.ok("DELETE", "/api/workspace/slack", status=204)
    assert api.ok("GET", "/api/workspace/slack")["bot_token_set"] is False


def test_each_member_sets_their_own_slack_id_once_per_workspace(app, api, services):
    operator = as_user(app, services, "operator@test.local", "operator")
    assert operator.ok("GET", "/api/workspace/slack/me") == {"slack_user_id": None}
    assert operator.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0OPER"}) == {"slack_user_id": "U0OPER"}
    assert operator.ok("GET", "/api/workspace/slack/me") == {"slack_user_id": "U0OPER"}
    assert api.call("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0OPER"})[0] == 409  # someone else's
    code, body = api.call("PUT", "/api/workspace/slack/me", {"slack_user_id": "@jane"})
    assert code == 422 and "slack_user_id" in body["error"]["details"]
    assert operator.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": ""}) == {"slack_user_id": None}


# -- posting -------------------------------------------------------------------------------------------------------


def test_a_review_is_posted_with_approve_and_reject_and_a_dm_opens_the_conversation(api, services, slack, configured):
    approval = waiting_approval(api)
    review = M.from_approval(approval, configured, "https://coach.example", workflow="wf")
    with services.db.read() as session:
        config = slack_settings.config(session, services.settings, configured)
    posted = slack_client.post_review(services.settings, config, None, M.review_message(review))
    call = slack.calls("chat.postMessage")[0]
    assert call["token"] == TOKEN and call["args"]["channel"] == "C0REVIEWS" and posted.ts
    text = json.dumps(call["args"]["blocks"])
    assert "Pay 42?" in text and "Workflow: wf" in text
    buttons = [e for b in call["args"]["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert [b["action_id"] for b in buttons] == [M.APPROVE, M.REJECT, M.OPEN]
    assert json.loads(buttons[0]["value"]) == {
        "kind": "approval",
        "id": approval["approval_id"],
        "execution_id": approval["execution_id"],
    }
    assert buttons[2]["url"] == f"https://coach.example/executions/{approval['execution_id']}"
    dm = slack_client.post_review(services.settings, config, "U0LEAD", M.review_message(review))
    assert slack.calls("conversations.open")[0]["args"]["users"] == "U0LEAD"
    assert dm.channel == "D0LEAD" and slack.calls("chat.postMessage")[1]["args"]["channel"] == "D0LEAD"


def test_a_destructive_call_held_for_review_gets_only_open_in_coach(api, services, slack, configured):
    wf = api.workflow([{"id": "wipe", "tool": "shell.run", "params": {"command": ["echo", "rm -rf /data"]}}])
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_approval", ex
    approval = api.ok("GET", "/api/approvals?status=pending")["items"][0]
    review = M.from_approval(approval, configured, "https://coach.example")
    assert review.event == "tool_call_held" and M.risk_reason(review) == "destructive"
    message = M.review_message(review)
    buttons = [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert [b["action_id"] for b in buttons] == [M.OPEN]
    assert "rm -rf /data" in json.dumps(message["blocks"]) and "Risky (destructive)" in json.dumps(message["blocks"])


def test_slack_errors_carry_slacks_code_and_say_which_are_permanent(api, services, slack, configured):
    with services.db.read() as session:
        config = slack_settings.config(session, services.settings, configured)
    message = {"text": "hi", "blocks": []}
    for code in ("channel_not_found", "not_in_channel"):
        slack.fail("chat.postMessage", code)
        with pytest.raises(slack_client.SlackError) as failed:
            slack_client.post_review(services.settings, config, "C0GONE", message)
        assert failed.value.code == code and failed.value.permanent
    slack.fail("chat.postMessage", "ratelimited", status=429, retry_after=3)
    with pytest.raises(slack_client.SlackError) as limited:
        slack_client.post_review(services.settings, config, "C0BUSY", message)
    assert limited.value.code == "ratelimited" and not limited.value.permanent and limited.value.retry_after == 3
    wrong = slack_client.SlackConfig(configured, "xoxb-wrong", SECRET)
    with pytest.raises(slack_client.SlackError) as refused:
        slack_client.post_review(services.settings, wrong, "C0REVIEWS", message)
    assert refused.value.code == "invalid_auth" and refused.value.permanent


# -- clicks --------------------------------------------------------------------------------------------------------


def test_a_signed_click_approves_as_the_mapped_person_and_updates_the_message(app, api, slack, lead, configured):
    approval = waiting_approval(api)
    response = post(app, configured, click("U0LEAD", M.APPROVE, approve_value(approval), text="Pay 42?"))
    assert response.status_code == 200 and response.get_json()["outcome"] == "decided"
    decided = api.ok("GET", f"/api/approvals/{approval['approval_id']}")
    assert decided["status"] == "approved" and decided["decisions"][0]["user"] == "lead@test.local"
    events = decisions_audited(api)
    assert [(e["actor"], e["result"]) for e in events] == [("lead@test.local", "approve")]
    update = slack.calls("chat.update")[0]["args"]
    assert (update["channel"], update["ts"]) == ("C0REVIEWS", "1700000001.000001")
    assert "Approved* by lead@test.local" in json.dumps(update["blocks"])
    assert api.settle(approval["execution_id"])["status"] == "completed"


def test_a_click_accepts_a_suggestion_counted_like_any_decision(app, api, services, slack, configured):
    ex_id, suggestion = suggestion_for_slack_operator(app, api, services)
    review = M.from_suggestion(suggestion, configured, "https://coach.example")
    value = [e for b in M.review_message(review)["blocks"] if b["type"] == "actions" for e in b["elements"]][0]
    assert review.url == f"https://coach.example/executions/{ex_id}/coach"
    assert post(app, configured, click("U0OPER", M.APPROVE, value["value"])).get_json()["outcome"] == "decided"
    assert post(app, configured, click("U0OPER", M.APPROVE, value["value"]), retry=1).status_code == 200  # a retry
    assert api.ok("GET", f"/api/executions/{ex_id}/coaching/stats")["accepted"] == 1
    assert api.settle(ex_id)["status"] == "completed"
    decision = [e for e in api.ok("GET", "/api/audit?per_page=100")["items"] if e["action"] == "decision"]
    assert [e["actor"] for e in decision] == ["operator@test.local"]


def test_a_bad_or_old_signature_is_401_and_decides_nothing(app, api, lead, configured):
    approval = waiting_approval(api)
    payload = click("U0LEAD", M.APPROVE, approve_value(approval))
    assert post(app, configured, payload, secret="not-the-secret").status_code == 401
    assert post(app, configured, payload, timestamp=int(time.time()) - 6 * 60).status_code == 401
    body = form(payload)
    tampered = app.test_client().post(
        HOOK.format(configured), data=body.replace(b"U0LEAD", b"U0LEAX"), headers=sign(SECRET, body)
    )
    assert tampered.status_code == 401
    for stamp in ("", "soon", "9" * 40):
        headers = {**sign(SECRET, body), "X-Slack-Request-Timestamp": stamp}
        assert app.test_client().post(HOOK.format(configured), data=body, headers=headers).status_code == 401
    # well signed but not a click on a Coach button: answered, and nothing happens
    for junk in (
        {"type": "block_actions", "actions": "x", "user": []},
        {"type": "view_submission", "view": 3},
        {
            "type": "block_actions",
            "user": {"id": "U0LEAD"},
            "actions": [{"action_id": M.APPROVE, "value": "{not json"}],
        },
    ):
        answer = post(app, configured, junk)
        assert answer.status_code == 200 and answer.get_json()["outcome"] == "ignored"
    assert api.ok("GET", f"/api/approvals/{approval['approval_id']}")["status"] == "pending"
    assert decisions_audited(api) == []


def test_a_signed_interaction_with_no_payload_bad_json_or_an_unknown_type_is_400_with_the_reason(app, api, configured):
    """Issue 40, item 5: a Slack app's developer is shown why (Slack displays a non-200 answer's failure)."""
    approval = waiting_approval(api)
    cases = {
        b"": "no payload",
        b"other=1": "no payload",
        b"payload=%7B%7B": "not JSON",
        b"payload=%5B1%5D": "not a JSON object",
        form({"type": "banana", "user": {"id": "U0LEAD"}}): "banana",
    }
    for body, reason in cases.items():
        answer = app.test_client().post(HOOK.format(configured), data=body, headers=sign(SECRET, body))
        assert answer.status_code == 400, (body, answer.get_json())
        error = answer.get_json()["error"]
        assert error["code"] == "bad_request" and reason in error["message"], (body, error)
    # a type Slack sends that Coach does not act on is still answered 200, ignored
    closed = form({"type": "view_closed", "user": {"id": "U0LEAD"}})
    answer = app.test_client().post(HOOK.format(configured), data=closed, headers=sign(SECRET, closed))
    assert answer.status_code == 200 and answer.get_json()["outcome"] == "ignored"
    assert api.ok("GET", f"/api/approvals/{approval['approval_id']}")["status"] == "pending"
    assert decisions_audited(api) == []


def test_a_replayed_or_retried_click_decides_once(app, api, services, slack, configured):
    lead = as_user(app, services, "lead@test.local", "lead")
    lead.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0LEAD"})
    wf = api.workflow([TOTAL, dict(SIGN_OFF, quorum=2), AFTER])
    api.settle(api.start(wf["id"])["execution_id"])
    approval = api.ok("GET", "/api/approvals?status=pending")["items"][0]
    payload = click("U0LEAD", M.APPROVE, approve_value(approval))
    body = form(payload)
    headers = sign(SECRET, body)
    first = app.test_client().post(HOOK.format(configured), data=body, headers=headers)
    again = app.test_client().post(HOOK.format(configured), data=body, headers=headers)  # a replay, byte for byte
    retried = post(app, configured, payload, retry=1)  # Slack's retry: signed again
    assert [r.status_code for r in (first, again, retried)] == [200, 200, 200]
    read = api.ok("GET", f"/api/approvals/{approval['approval_id']}")
    assert read["status"] == "pending" and read["approvals"] == 1 and len(read["decisions"]) == 1
    assert len(decisions_audited(api)) == 1


def test_an_unknown_slack_user_is_told_to_set_their_id_and_nothing_is_decided(app, api, slack, configured):
    approval = waiting_approval(api)
    answer = post(app, configured, click("U0STRANGER", M.APPROVE, approve_value(approval))).get_json()
    assert answer["outcome"] == "unknown_user"
    note = slack.calls("chat.postEphemeral")[0]["args"]
    assert note["user"] == "U0STRANGER" and "Slack member ID in Coach" in note["text"]
    assert api.ok("GET", f"/api/approvals/{approval['approval_id']}")["status"] == "pending"
    assert decisions_audited(api) == []


def test_an_item_decided_elsewhere_is_refused_naming_who_decided(app, api, services, slack, lead, configured):
    approval = waiting_approval(api)
    lead.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "reject", "comment": "no"})
    other = as_user(app, services, "lead2@test.local", "lead")
    other.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0LEAD2"})
    answer = post(app, configured, click("U0LEAD2", M.APPROVE, approve_value(approval))).get_json()
    assert answer["outcome"] == "refused" and "rejected by lead@test.local" in answer["message"]
    assert "rejected by lead@test.local" in slack.calls("chat.postEphemeral")[0]["args"]["text"]
    assert "Rejected* by lead@test.local" in json.dumps(slack.calls("chat.update")[0]["args"]["blocks"])
    read = api.ok("GET", f"/api/approvals/{approval['approval_id']}")
    assert read["status"] == "rejected" and len(read["decisions"]) == 1


def test_a_payload_for_another_workspace_decides_nothing(app, api, services, slack, lead, configured):
    approval = waiting_approval(api)  # workspace A (default)
    admin_b = as_user(app, services, "admin-b@test.local", "admin", workspace="other")
    admin_b.ok("PUT", "/api/workspace/slack", {"bot_token": TOKEN, "signing_secret": "b-secret-0123456789"})
    workspace_b = admin_b.ok("GET", "/api/auth/me")["workspace_id"]
    as_user(app, services, "lead@test.local", "lead", workspace="other").ok(
        "PUT", "/api/workspace/slack/me", {"slack_user_id": "U0LEAD"}, headers={"X-Coach-Workspace": "other"}
    )
    # signed by B's app, to B's URL, naming A's approval: not found there
    answer = post(app, workspace_b, click("U0LEAD", M.APPROVE, approve_value(approval)), secret="b-secret-0123456789")
    assert answer.status_code == 200 and answer.get_json()["outcome"] == "refused"
    # A's payload sent to B's URL: B's secret did not sign it
    assert post(app, workspace_b, click("U0LEAD", M.APPROVE, approve_value(approval))).status_code == 401
    assert api.ok("GET", f"/api/approvals/{approval['approval_id']}")["status"] == "pending"
    assert decisions_audited(api) == []


def test_reject_asks_for_a_comment_in_a_modal_then_rejects_with_it(app, api, slack, lead, configured):
    approval = waiting_approval(api)
    opened = post(app, configured, click("U0LEAD", M.REJECT, approve_value(approval), trigger_id="T.123"))
    assert opened.get_json()["outcome"] == "modal_opened"
    assert api.ok("GET", f"/api/approvals/{approval['approval_id']}")["status"] == "pending"
    view = slack.calls("views.open")[0]["args"]
    assert view["trigger_id"] == "T.123" and view["view"]["callback_id"] == "coach_reject_comment"
    done = post(app, configured, submission("U0LEAD", view["view"]["private_metadata"], "wrong supplier"))
    assert done.status_code == 200 and done.get_json() == {"response_action": "clear"}
    read = api.ok("GET", f"/api/approvals/{approval['approval_id']}")
    assert read["status"] == "rejected" and read["decisions"][0]["comment"] == "wrong supplier"
    assert read["decisions"][0]["user"] == "lead@test.local"
    assert "Rejected* by lead@test.local: wrong supplier" in json.dumps(slack.calls("chat.update")[0]["args"])


def test_rejecting_a_suggestion_from_slack_sends_the_comment_as_feedback(app, api, services, slack, configured):
    ex_id, suggestion = suggestion_for_slack_operator(app, api, services)
    value = M.button_value(M.from_suggestion(suggestion, configured, "https://coach.example"))
    post(app, configured, click("U0OPER", M.REJECT, value, trigger_id="T.9"))
    meta = slack.calls("views.open")[0]["args"]["view"]["private_metadata"]
    assert post(app, configured, submission("U0OPER", meta, "say hello properly")).get_json() == {
        "response_action": "clear"
    }
    assert api.ok("GET", f"/api/executions/{ex_id}/coaching/stats")["rejected"] == 1
    assert api.settle(ex_id)["status"] == "waiting_correction"
    decision = [e for e in api.ok("GET", "/api/audit?per_page=100")["items"] if e["action"] == "decision"]
    assert [e["actor"] for e in decision] == ["operator@test.local"]
    # the dialog sent again (a retry) decides nothing more; a click on the decided item is refused naming who
    post(app, configured, submission("U0OPER", meta, "say hello properly"))
    again = post(app, configured, click("U0OPER", M.APPROVE, value, action_ts="1700000200.000001")).get_json()
    assert again["outcome"] == "refused" and "rejected by operator@test.local" in again["message"]
    assert api.ok("GET", f"/api/executions/{ex_id}/coaching/stats")["rejected"] == 1


# -- the outbox's Slack channel (services/notifications/slack.py) ----------------------------------------------------


def test_an_approval_request_is_posted_by_the_outbox_to_the_default_channel_once(app, api, services, slack, configured):
    from core import notifications as N
    from services.notifications import sender

    approval = waiting_approval(api)
    sender.deliver_due(services)
    sender.deliver_due(services)  # sent: not again

    posted = slack.calls("chat.postMessage")
    assert len(posted) == 1 and posted[0]["args"]["channel"] == "C0REVIEWS"
    buttons = json.dumps(posted[0]["args"]["blocks"])
    assert approval["approval_id"] in buttons and "Approve" in buttons and "Reject" in buttons
    with services.db.read() as session:
        from services.models.notifications import OutboxRow

        rows = session.query(OutboxRow).filter(OutboxRow.channel == N.SLACK).all()
    assert [(r.recipient, r.status) for r in rows] == [("channel", N.SENT)]

    # the button posted by the outbox decides, as the member who clicked
    clicker = as_user(app, services, "lead@test.local", "lead")
    clicker.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0LEAD"})
    value = next(
        e["value"]
        for block in posted[0]["args"]["blocks"]
        for e in block.get("elements", [])
        if e.get("action_id") == M.APPROVE
    )
    answer = post(app, configured, click("U0LEAD", M.APPROVE, value))
    assert answer.status_code == 200 and answer.get_json()["outcome"] == "decided"
    decided = api.ok("GET", f"/api/approvals/{approval['approval_id']}")
    assert decided["status"] == "approved" and decided["decisions"][0]["user"] == "lead@test.local"


def test_without_a_default_channel_each_recipient_with_a_slack_id_gets_a_direct_message(app, api, services, slack):
    from services.notifications import sender

    api.ok("PUT", "/api/workspace/slack", {"bot_token": TOKEN, "signing_secret": SECRET})
    lead = as_user(app, services, "lead@test.local", "lead")
    lead.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0LEAD"})
    as_user(app, services, "other-lead@test.local", "lead")  # no Slack id: no message

    waiting_approval(api)
    sender.deliver_due(services)

    assert [c["args"]["users"] for c in slack.calls("conversations.open")] == ["U0LEAD"]
    assert [c["args"]["channel"] for c in slack.calls("chat.postMessage")] == ["D0LEAD"]
