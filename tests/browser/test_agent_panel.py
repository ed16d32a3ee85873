"""An operator decides an agent's tool calls on the CoachingPanel in Chromium, against the real server and a
scripted OpenAI-compatible LLM server (issue #15): the call, its arguments in the correction editor drawn from the
tool's schema, the LLM's reasoning, and the agent's conversation on the panel and on the execution page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.coaching_support import collect_errors, create_workflow, execution, open_panel, pending_suggestion
from tests.browser.conftest import FRONTEND_DIST, SCREENSHOTS, log_in
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.browser


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
        },
    ) as server:
        yield server


def test_an_agents_tool_calls_are_decided_on_the_panel_and_its_conversation_shown(agent_server, llm, page):
    llm.script(
        "open invoices",
        [
            {
                "content": "I will read the invoices file first.",
                "tool_calls": [{"name": "file_read", "arguments": {"path": "invoices.csv"}}],
            },
            {"content": "Now the echo.", "tool_calls": [{"name": "echo", "arguments": {"total": 42}}]},
            {"content": "There are 2 open invoices. STAGE_COMPLETE"},
        ],
    )
    workspace = agent_server.get("/api/auth/me").json()["workspace_id"]
    folder = agent_server.data_dir / workspace
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "open.csv").write_text("id,amount\nA,40\nB,2\n")
    wf = create_workflow(
        agent_server,
        "Agent run",
        [
            {
                "id": "analyse",
                "name": "Analyse",
                "type": "agent",
                "goal": "Count the open invoices",
                "tools": ["file.read", "echo"],
            }
        ],
    )
    started = agent_server.post("/api/executions/coaching", json={"workflow_id": wf["id"]})
    execution_id = started.json()["execution_id"]
    pending_suggestion(agent_server, execution_id)
    log_in(page, agent_server)
    errors = collect_errors(page)
    open_panel(page, agent_server, execution_id)

    heading = page.get_by_role("heading", level=2, name="Tool call: file.read (agent step Analyse)")
    expect(heading).to_be_visible()
    card = page.locator("[data-kind='tool_call']")
    expect(card).to_contain_text("The agent's reasoning")
    expect(card).to_contain_text("I will read the invoices file first.")
    expect(page.get_by_test_id("suggested-params")).to_contain_text('"path": "invoices.csv"')
    conversation = page.get_by_role("region", name="Agent conversation: analyse")
    expect(conversation).to_contain_text("LLM, turn 1")
    expect(conversation).to_contain_text("waiting for a decision")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.screenshot(path=str(SCREENSHOTS / "agent-tool-call.png"), full_page=False)

    # c: the correction editor draws the tool's parameters
    page.keyboard.press("c")
    editor = page.get_by_role("dialog", name="Correct the arguments of file.read")
    expect(editor.get_by_label("path")).to_have_value("invoices.csv")
    expect(editor.get_by_label("max_bytes")).to_be_visible()
    editor.get_by_label("path").fill("open.csv")
    editor.get_by_role("button", name="Send correction").click()
    expect(editor).to_be_hidden()

    expect(page.get_by_role("heading", level=2, name="Tool call: echo (agent step Analyse)")).to_be_visible()
    expect(conversation).to_contain_text("corrected by a person")
    expect(conversation).to_contain_text('"amount":"40"')
    page.keyboard.press("a")
    expect(page.get_by_role("heading", level=2, name="Execution completed")).to_be_visible()

    done = execution(agent_server, execution_id)
    assert done["status"] == "completed" and done["steps"][0]["output"] == {"answer": "There are 2 open invoices."}
    page.goto(agent_server.url(f"/executions/{execution_id}"))
    history = page.get_by_role("region", name="Agent conversation: analyse")
    expect(history).to_contain_text("corrected by a person")
    expect(history).to_contain_text("accepted by a person")
    expect(history).to_contain_text("There are 2 open invoices.")
    assert llm.repeats() == []
    assert errors == [], errors
