"""Settings → LLM provider in Chromium against the real server and a scripted OpenAI-compatible server (issue 31,
item 8): running the demo's agent workflow with no provider says what to do and links to the setting; an admin sets
the provider there, presses Test and reads the model's answer, then runs the agent demo to its end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import expect

from tests.browser.coaching_support import collect_errors
from tests.browser.conftest import FRONTEND_DIST, WAIT_MS, log_in
from tests.browser.test_dashboards import save_screenshot
from tests.support.live_server import REPO_ROOT, LiveServer

pytestmark = pytest.mark.browser

DEMO = REPO_ROOT / "demo"
TOTAL = 1200.50 + 830.00 + 2999.99 + 410.25


@pytest.fixture
def server(tmp_path: Path):
    """No COACH_LLM_*: the server has no provider of its own."""
    if not (FRONTEND_DIST / "index.html").is_file():
        pytest.fail(f"{FRONTEND_DIST}/index.html is missing: build the web app first")
    with LiveServer(
        tmp_path / "server",
        demo="0",
        env={"COACH_FRONTEND_DIST": str(FRONTEND_DIST), "COACH_LLM_BASE_URL": "", "COACH_LLM_MODEL": ""},
    ) as live:
        yield live


def test_an_admin_sets_the_provider_tests_it_and_runs_the_agent_demo(server, llm, page):
    # the demo's agent workflow and its data, as `flask demo` loads them
    answer = server.post("/api/workflows", json=yaml.safe_load((DEMO / "invoice_agent.yaml").read_text()))
    assert answer.status_code == 201, answer.text
    workspace = server.get("/api/auth/me").json()["workspace_id"]
    folder = server.data_dir / workspace
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(DEMO / "data" / "invoices.csv", folder / "invoices.csv")
    llm.script("connection test", [{"content": "Hello! The scripted model is listening."}])
    llm.script(
        "Summarise the invoices",
        [
            {
                "content": "Reading the file.",
                "tool_calls": [{"name": "file_read", "arguments": {"path": "invoices.csv"}}],
            },
            {"content": json.dumps({"rows": 4, "total": TOTAL}) + " STAGE_COMPLETE"},
        ],
    )

    log_in(page, server)
    errors = collect_errors(page)

    # no provider anywhere: the run is refused with what to do, and a link to the setting
    page.get_by_role("link", name="Workflows").first.click()
    page.get_by_role("button", name="Run Invoice summary (agent)").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Mode").select_option("normal")
    dialog.get_by_role("button", name="Start run").click()
    alert = dialog.get_by_role("alert")
    expect(alert).to_contain_text("This workflow needs an LLM provider")
    expect(alert).to_contain_text("set an LLM provider in Settings → LLM provider")
    assert server.get("/api/executions/").json()["items"] == []  # no run was made to fail
    alert.get_by_role("link", name="Open Settings → LLM provider").click()

    # Settings → LLM provider: set it, see the key is not shown again, press Test, read the answer
    section = page.locator("#llm-provider")
    expect(section.get_by_role("heading", name="LLM provider")).to_be_visible()
    expect(section).to_contain_text("No provider is set")
    form = section.get_by_role("form", name="LLM provider")
    form.get_by_label("Base URL").fill(llm.base_url)
    form.get_by_label("Model").fill("scripted-model")
    form.get_by_label("API key").fill("sk-browser-secret")
    form.get_by_role("button", name="Save").click()
    expect(section).to_contain_text("Agent steps use this workspace's provider")
    expect(form.get_by_label("API key")).to_have_value("")
    expect(form.get_by_label("API key")).to_have_attribute("placeholder", "A key is stored: leave empty to keep it")
    form.get_by_role("button", name="Test").click()
    expect(section.get_by_role("status").filter(has_text="The provider answered")).to_contain_text(
        "Hello! The scripted model is listening."
    )
    tested = llm.for_goal("connection test")
    assert tested and tested[0]["headers"]["authorization"] == "Bearer sk-browser-secret"
    assert "sk-browser-secret" not in page.content()
    # the docs' picture shows a provider's address, not this run's port
    page.evaluate(
        """(url) => { const input = document.querySelector('#llm-provider input[type=url]');
        Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, url); }""",
        "http://127.0.0.1:11434/v1",
    )
    section.scroll_into_view_if_needed()
    save_screenshot(page, "llm-provider.png")
    page.reload()  # the real URL back (the picture's was typed into the page only)

    # the agent demo now runs, on this workspace's provider, to its end
    page.get_by_role("link", name="Workflows").first.click()
    page.get_by_role("button", name="Run Invoice summary (agent)").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Mode").select_option("normal")
    dialog.get_by_role("button", name="Start run").click()
    page.wait_for_url("**/executions/*")
    expect(page.get_by_text("Completed").first).to_be_visible(timeout=2 * WAIT_MS)  # an agent run: model and tools
    runs = llm.for_goal("Summarise the invoices")
    assert runs and all(r["body"]["model"] == "scripted-model" for r in runs)
    assert [e for e in errors if "status of 409" not in e] == []  # the refused start is the only failed request
