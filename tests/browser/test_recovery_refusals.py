"""What a new user met recovering and correcting a run (issue #40, items 8, 11 and 12), in Chromium: "Retry with
changes…" on a step whose param is a template retries it (the template is the server's to render and check); "Resume
from…" offers only the steps the server would resume from, the others greyed with its reason; a correction the policy
denies keeps the editor open with what was typed and the refusal beside the field."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.coaching_support import (
    collect_errors,
    decide_via_api,
    execution,
    expect_finished,
    expect_suggestion,
    open_panel,
    page_errors,
    pending_suggestion,
    start_coaching,
)
from tests.browser.conftest import SCREENSHOTS, log_in

TEMPLATE = "{{ vars.base_url }}/healthz"


def service_check(server) -> dict:
    """The demo's Service check, calling this live server: its URL is a template of a variable."""
    answer = server.post(
        "/api/workflows",
        json={
            "name": "Service check",
            "description": "Calls this server's own /healthz.",
            "variables": {"base_url": {"type": "string", "default": server.base_url}},
            "steps": [
                {
                    "id": "ping",
                    "name": "Call /healthz",
                    "type": "action",
                    "tool": "http.request",
                    "timeout_s": 10,
                    "params": {"method": "GET", "url": TEMPLATE},
                },
                {
                    "id": "check",
                    "name": "The service says ok",
                    "type": "validation",
                    "condition": "steps.ping.output.status == 200 and steps.ping.output.json.status == 'ok'",
                },
            ],
        },
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def shot(page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / name), full_page=False)


def test_retry_with_changes_of_a_templated_url_is_sent_and_the_run_completes(live_server, page):
    errors = collect_errors(page)
    wf = service_check(live_server)
    ex_id = start_coaching(live_server, wf["id"])
    # the person corrects the URL to one nobody answers: the step fails
    sug = pending_suggestion(live_server, ex_id)
    decide_via_api(
        live_server,
        ex_id,
        sug["suggestion_id"],
        "correct",
        correction={"method": "GET", "url": "http://127.0.0.1:9/healthz"},
    )
    live_server.wait_for(lambda: execution(live_server, ex_id)["status"] == "failed")

    log_in(page, live_server)
    open_panel(page, live_server, ex_id)
    banner = page.get_by_test_id("failure-banner")
    banner.get_by_role("button", name="Retry with changes…").click()
    dialog = page.get_by_role("dialog", name="Retry step Call /healthz (ping) with changes")
    url = dialog.get_by_label("url")
    expect(url).to_have_value(TEMPLATE)
    # the template is not judged as a literal URL: it is rendered, and checked, when the step runs
    expect(dialog.get_by_text("does not match pattern")).to_have_count(0)
    expect(dialog.get_by_text("A template: checked once rendered")).to_be_visible()
    shot(page, "retry-template.png")
    url.press("Control+Enter")
    expect(dialog).to_be_hidden()
    expect(page.get_by_text("Not sent: fix these first.")).to_have_count(0)

    # the step is suggested again, with the URL the template renders to; accepted (a risky call: confirmed), it runs
    expect_suggestion(page, "Call /healthz")
    page.keyboard.press("a")
    page.keyboard.press("Enter")
    expect_finished(page)
    steps = {s["step_id"]: s for s in execution(live_server, ex_id)["steps"]}
    assert steps["ping"]["params"]["url"] == f"{live_server.base_url}/healthz"
    assert steps["ping"]["output"]["status"] == 200 and steps["ping"]["run"] == 2
    assert page_errors(errors) == []


def test_resume_from_offers_only_the_steps_the_server_takes_and_greys_the_others_with_why(live_server, page):
    errors = collect_errors(page)
    answer = live_server.post(
        "/api/workflows",
        json={
            "name": "Read and report",
            "description": "Reads a file, reports it, says done.",
            "steps": [
                {
                    "id": "read",
                    "name": "Read the report",
                    "type": "action",
                    "tool": "file.read",
                    "params": {"path": "missing.txt"},
                },
                {
                    "id": "last",
                    "name": "Say done",
                    "type": "action",
                    "tool": "echo",
                    "params": {"message": "done"},
                    "depends_on": ["read"],
                },
                {
                    "id": "after",
                    "name": "Report it",
                    "type": "action",
                    "tool": "echo",
                    "params": {"message": "read {{ steps.read.output.content }}"},
                },
            ],
        },
    )
    assert answer.status_code == 201, answer.text
    started = live_server.post("/api/executions/", json={"workflow_id": answer.json()["id"], "mode": "normal"})
    assert started.status_code == 201, started.text
    ex_id = started.json()["execution_id"]
    live_server.wait_for(lambda: execution(live_server, ex_id)["status"] == "failed")

    log_in(page, live_server)
    page.goto(live_server.url(f"/executions/{ex_id}"))
    page.get_by_test_id("failure-banner").get_by_role("button", name="Resume from…").click()
    dialog = page.get_by_role("dialog", name="Resume from a step")
    select = dialog.get_by_label("Go on from step")
    expect(select).to_have_value("last")
    expect(dialog.get_by_role("option", name="Report it (after) (cannot be chosen)")).to_be_disabled()
    expect(dialog).to_contain_text(
        "Report it (after): step 'after' reads the output of step 'read', which has no "
        "output to give: retry 'read' instead"
    )
    expect(dialog).to_contain_text("This skips read.")
    shot(page, "resume-from-choices.png")
    dialog.get_by_role("button", name="Resume").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("dd [data-status='completed']")).to_be_visible(timeout=15_000)
    steps = {s["step_id"]: s["status"] for s in execution(live_server, ex_id)["steps"]}
    assert steps == {"read": "skipped", "last": "succeeded", "after": "skipped"}
    assert page_errors(errors) == []


def test_a_correction_the_policy_denies_keeps_the_editor_open_with_the_refusal_beside_the_field(live_server, page):
    errors = collect_errors(page)
    rule = live_server.post(
        "/api/policies",
        json={
            "name": "Known hosts only",
            "order": 1,
            "effect": "deny",
            "reason": "calls go to our own service",
            "scope": {"workflow_id": None, "user": None},
            "match": {"tool": "http.request", "host_not_in": ["127.0.0.1"]},
        },
    )
    assert rule.status_code == 201, rule.text
    wf = service_check(live_server)
    ex_id = start_coaching(live_server, wf["id"])

    log_in(page, live_server)
    open_panel(page, live_server, ex_id)
    expect_suggestion(page, "Call /healthz")
    page.keyboard.press("c")
    dialog = page.get_by_role("dialog", name="Correct step Call /healthz")
    url = dialog.get_by_label("url")
    url.fill("https://example.com/healthz")
    page.keyboard.press("Control+Enter")
    refusal = "this call is denied by policy 'Known hosts only': calls go to our own service"
    field = dialog.locator(".form-group.rjsf-field-string").filter(has=page.get_by_label("url"))
    expect(field).to_contain_text(refusal)
    expect(dialog.get_by_role("alert").first).to_contain_text("Refused by the policy")
    expect(url).to_have_value("https://example.com/healthz")  # what was typed is kept
    expect(dialog).to_be_visible()
    shot(page, "correction-policy-denied.png")
    assert execution(live_server, ex_id)["status"] == "waiting_decision"

    # corrected again, to a host the policy allows: sent, and the step runs
    url.fill(f"{live_server.base_url}/healthz")
    expect(field).not_to_contain_text(refusal)
    page.keyboard.press("Control+Enter")
    expect(dialog).to_be_hidden()
    expect_finished(page)
    assert page_errors(errors) == []
