"""Regions of the other scopes in Chromium against the real server (issue #41 item 7): a lead writes a region for an
agent step's calls of one tool (scope `<agent step>:<tool>`) on the workflow's page, after its replay over the
agent's decided calls (a scripted OpenAI-compatible LLM server makes the calls); and a region of a gateway tool for
one agent identity on the Tools page. The pages stay within 800 px."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import decide_via_api, execution, pending_suggestion
from tests.browser.conftest import FRONTEND_DIST, SCREENSHOTS, log_in
from tests.browser.test_layout import WIDEST_JS, page_width
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.browser

ACCEPTED = [20, 45, 90, 150]  # the agent's echo calls with these amounts are accepted
REJECTED = [900, 4000]  # these rejected


def _shot(page, locator, name: str) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")  # no focus ring in the docs
    locator.screenshot(path=str(SCREENSHOTS / name))


def _cells(outcome: str, *figures: int) -> re.Pattern:
    return re.compile(r"^\s*" + re.escape(outcome) + "".join(rf"\s*{n}" for n in figures) + r"\s*$")


def _fits(page, path: str) -> None:
    page.set_viewport_size({"width": 800, "height": 860})
    scroll, window = page_width(page)
    assert scroll <= window, f"{path} is {scroll} px wide in a {window} px window: {page.evaluate(WIDEST_JS)}"
    page.set_viewport_size({"width": 1280, "height": 860})


@pytest.fixture
def agent_server(tmp_path, llm):
    if not (FRONTEND_DIST / "index.html").is_file():
        pytest.fail(f"{FRONTEND_DIST}/index.html is missing: build the web app first")
    with LiveServer(
        tmp_path / "server",
        demo="0",
        env={
            "COACH_FRONTEND_DIST": str(FRONTEND_DIST),
            "COACH_LLM_BASE_URL": llm.base_url,
            "COACH_LLM_MODEL": "scripted",
            "COACH_SPOT_CHECK_RATE": "0",
        },
    ) as server:
        yield server


def _agent_call(server: LiveServer, llm, wf_id: str, amount: int, decision: str) -> None:
    """One run of the agent step: it calls echo with the amount once; the call is decided as `decision`."""
    llm.script(
        f"a refund of {amount} GBP.",
        [
            {"content": "Paying it.", "tool_calls": [{"name": "echo", "arguments": {"amount": amount}}]},
            {"content": "Done. STAGE_COMPLETE"},
        ],
    )
    started = server.post("/api/executions/coaching", json={"workflow_id": wf_id, "variables": {"amount": amount}})
    assert started.status_code == 201, started.text
    execution_id = started.json()["execution_id"]
    suggestion = pending_suggestion(server, execution_id)
    assert (suggestion["kind"], suggestion["tool"], suggestion["params"]) == ("tool_call", "echo", {"amount": amount})
    decide_via_api(server, execution_id, suggestion["suggestion_id"], decision)
    server.wait_for(
        lambda: execution(server, execution_id)["status"] in ("completed", "failed"),
        message=f"the agent run of {amount} to end",
    )


def test_a_lead_adds_a_region_for_an_agent_steps_calls_of_one_tool(agent_server: LiveServer, llm, page):
    made = agent_server.post(
        "/api/workflows",
        json={
            "name": "Agent refunds",
            "variables": {"amount": {"type": "integer"}},
            "steps": [
                {
                    "id": "pay",
                    "name": "Pay",
                    "type": "agent",
                    "goal": "Pay a refund of {{ vars.amount }} GBP.",
                    "tools": ["echo", "file.*"],
                }
            ],
        },
    )
    assert made.status_code == 201, made.text
    wf = made.json()
    for amount in ACCEPTED:
        _agent_call(agent_server, llm, wf["id"], amount, "accept")
    for amount in REJECTED:
        _agent_call(agent_server, llm, wf["id"], amount, "reject")

    log_in(page, agent_server)
    page.goto(agent_server.url(f"/workflows/{wf['id']}"))
    agent = page.get_by_role("region", name="Regions of agent step pay", exact=True)
    tool = agent.get_by_label("Tool", exact=True)
    expect(tool).to_have_value("echo")  # the tool it called: the one with decisions
    expect(tool.locator("option")).to_contain_text(["echo (6 decided)", "file.read"])
    section = agent.get_by_role("region", name="Regions of tool echo of agent step pay", exact=True)
    expect(section).to_contain_text("No region yet: every call follows the agent step's mode.")

    form = section.get_by_role("form", name="Add a region")
    form.get_by_label("Name", exact=True).focus()
    page.keyboard.type("small refunds")
    form.get_by_label("Condition", exact=True).fill("params.amount <= 200")
    form.get_by_role("button", name="Replay").press("Enter")  # keyboard, as elsewhere
    replay = form.get_by_role(
        "table", name="Replay of the condition params.amount <= 200: what reviewers decided on each outcome"
    )
    rows = replay.get_by_role("row")
    # columns: calls, accepted, corrected, rejected, done by hand, skipped
    expect(rows.filter(has_text="Would have run unattended")).to_have_text(
        _cells("Would have run unattended", 4, 4, 0, 0, 0, 0)
    )
    expect(rows.filter(has_text="Still asked")).to_have_text(_cells("Still asked", 2, 0, 0, 2, 0, 0))
    expect(form).to_contain_text("Replayed the latest 6 decided calls")

    form.get_by_role("button", name="Add the region").press("Enter")
    expect(form.get_by_role("status")).to_contain_text("Added region “small refunds”")
    table = section.get_by_role("table", name="Regions of tool echo of agent step pay, in their order")
    row = table.get_by_role("row").filter(has=page.get_by_role("rowheader", name="small refunds"))
    expect(row).to_contain_text("params.amount <= 200")
    expect(row).to_contain_text("0 decisions")
    expect(row.get_by_role("button", name="Promote region small refunds to AUTO")).to_have_attribute(
        "aria-disabled", "true"
    )
    listed = agent_server.get(f"/api/workflows/{wf['id']}/steps/pay:echo/regions").json()["items"]
    assert [(r["name"], r["when"], r["step_id"]) for r in listed] == [
        ("small refunds", "params.amount <= 200", "pay:echo")
    ]
    _shot(page, agent, "regions-agent-step.png")

    # Pin it with the keyboard: the row says so, and the server has it
    row.get_by_role("button", name="Pin region small refunds to always review").press("Enter")
    expect(row).to_contain_text("Always reviewed (pinned)")
    assert agent_server.get(f"/api/regions/{listed[0]['id']}").json()["mode"] == "always_review"

    # another tool of the step: its own scope, empty
    tool.select_option("file.read")
    other = agent.get_by_role("region", name="Regions of tool file.read of agent step pay", exact=True)
    expect(other).to_contain_text("No region yet")
    _fits(page, "the workflow page")


def test_a_lead_adds_a_gateway_tool_region_for_one_agent_identity(live_server: LiveServer, page):
    assert live_server.request("PUT", "/api/workspace/gateway", json={"builtin_tools": ["echo"]}).status_code == 200
    for name in ("claude-code", "cursor"):
        assert live_server.post("/api/agents", json={"name": name}).status_code == 201

    log_in(page, live_server)
    page.goto(live_server.url("/tools"))
    page.get_by_role("button", name="Show the regions of coach.echo").click()
    section = page.get_by_role("region", name="Regions of gateway tool coach.echo", exact=True)
    form = section.get_by_role("form", name="Add a region")
    identity = form.get_by_label("Agent identity", exact=True)
    expect(identity).to_have_value("")
    expect(identity.locator("option")).to_have_text(["Any agent identity", "claude-code", "cursor"])
    form.get_by_label("Name", exact=True).fill("greetings")
    form.get_by_label("Condition", exact=True).fill("params.message.startswith('hi')")
    identity.select_option("cursor")
    expect(form).to_contain_text("No decided call to replay yet")  # replayed as typed, over cursor's calls
    _shot(page, form, "regions-gateway-identity.png")
    form.get_by_role("button", name="Add the region").click()
    expect(form.get_by_role("status")).to_contain_text("Added region “greetings” (agent cursor's calls only)")
    table = section.get_by_role("table", name="Regions of gateway tool coach.echo, in their order")
    row = table.get_by_role("row").filter(has=page.get_by_role("rowheader", name="greetings"))
    expect(row).to_contain_text("(agent cursor only)")
    listed = live_server.get("/api/gateway/tools/coach.echo/regions").json()["items"]
    assert [(r["name"], r["identity"]) for r in listed] == [("greetings", "cursor")]

    # edited back to any identity
    row.get_by_role("button", name="Edit… region greetings").click()
    dialog = page.get_by_role("dialog", name="Edit region “greetings”")
    dialog.get_by_label("Agent identity", exact=True).select_option("")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0)
    expect(row).not_to_contain_text("(agent cursor only)")
    assert live_server.get(f"/api/regions/{listed[0]['id']}").json()["identity"] is None
    _fits(page, "/tools")
