"""A lead authors workflows in the web app (CodeMirror, the server's errors on their lines, versions compared,
templates, delete) and starts a run whose variables the server refuses on the field."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


BROKEN = """name: Greeter
description: Greets someone.
variables:
  who: {type: string, default: world}
steps:
  - id: greet
    tool: echo
    params: {message: "hi {{ vars.who }}"}
  - id: shout
    tool: megaphone
"""


def editor_text(page: Page) -> str:
    return page.locator(".cm-content").inner_text()


def replace_text(page: Page, text: str) -> None:
    """Select everything in the editor and put `text` in its place, as a paste does (no auto-indent)."""
    page.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


def test_a_lead_creates_fixes_edits_compares_and_deletes_a_workflow_in_the_editor(live_server, page):
    log_in(page, live_server)
    page.goto(live_server.url("/workflows"))
    page.get_by_role("link", name="New workflow").click()
    expect(page.get_by_role("heading", name="New workflow", level=1)).to_be_visible()
    expect(page.locator(".cm-editor")).to_be_visible()

    # a template: the demo's refund review, as written
    page.get_by_label("Template").select_option(label="Refund review")
    page.get_by_role("button", name="Use template").click()
    expect(page.locator(".cm-content")).to_contain_text("name: Refund review")

    # the server's 422 lands on its line: the unknown tool is on line 10
    replace_text(page, BROKEN)
    page.get_by_role("button", name="Create workflow").click()
    problems = page.get_by_role("alert").filter(has_text="nothing was saved")
    expect(problems).to_contain_text("line 10")
    expect(problems).to_contain_text("unknown tool 'megaphone'")
    expect(page.locator(".cm-lint-marker-error")).to_have_count(1)
    marked = page.locator(".cm-line").filter(has=page.locator(".cm-lintRange-error"))
    expect(marked).to_have_text("    tool: megaphone")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "workflow-editor.png"), full_page=True)

    # switch to JSON and back: the same definition
    page.get_by_label("JSON").check()
    expect(page.locator(".cm-content")).to_contain_text('"name": "Greeter"')
    page.get_by_label("YAML").check()
    replace_text(page, BROKEN.replace("megaphone", "echo\n    params: {message: HI}"))
    page.get_by_role("button", name="Create workflow").click()
    expect(page.get_by_role("heading", name="Greeter", level=1)).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="Created Greeter.")).to_be_visible()
    workflow_id = page.url.rstrip("/").rsplit("/", 1)[1]

    # edit: a new version
    page.get_by_role("link", name="Edit", exact=True).click()
    expect(page.locator(".cm-content")).to_contain_text("tool: echo")
    replace_text(page, BROKEN.replace("megaphone", "echo\n    params: {message: HELLO}").replace("Greets", "Welcomes"))
    page.get_by_role("button", name="Save new version").click()
    expect(page.get_by_role("status").filter(has_text="Saved version 2.")).to_be_visible()
    assert live_server.get(f"/api/workflows/{workflow_id}").json()["latest_version"] == 2

    # the two versions side by side
    page.get_by_role("link", name="Compare versions").click()
    expect(page.get_by_role("heading", name="Compare versions of Greeter")).to_be_visible()
    diff = page.get_by_test_id("version-diff")
    expect(diff.locator(".cm-mergeViewEditor")).to_have_count(2)
    expect(diff.locator(".cm-changedLine").first).to_be_visible()
    expect(diff).to_contain_text("message: HI")
    expect(diff).to_contain_text("message: HELLO")
    page.screenshot(path=str(SCREENSHOTS / "workflow-diff.png"), full_page=True)

    # delete, after a confirmation that starts on Cancel
    page.get_by_role("link", name="← Greeter").click()
    page.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog", name="Delete Greeter?")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    dialog.get_by_role("button", name="Delete workflow").click()
    expect(page).to_have_url(re.compile(r"/workflows$"))
    expect(page.get_by_role("status").filter(has_text="Deleted Greeter.")).to_be_visible()
    assert live_server.get(f"/api/workflows/{workflow_id}").status_code == 404


TYPOS = """name: Greeter
steps:
  - id: fetch
    tool: ecoh
    params: {message: hi}
  - id: report
    tool: echo
    depends_on: [fetsh]
    params: {message: done}
"""


def test_the_editor_reports_every_problem_at_once_in_words_each_on_its_line(live_server, page):
    log_in(page, live_server)
    page.goto(live_server.url("/workflows/new"))
    expect(page.locator(".cm-editor")).to_be_visible()

    # a tool typo and an unknown depends_on: both in one save, each on its line, the known tools in words
    replace_text(page, TYPOS)
    page.get_by_role("button", name="Create workflow").click()
    problems = page.get_by_role("alert").filter(has_text="nothing was saved")
    expect(problems).to_contain_text("2 problems")
    expect(problems).to_contain_text("line 4 steps[0].tool: unknown tool 'ecoh': did you mean 'echo'? Known tools: ")
    expect(problems).to_contain_text("line 8 steps[1].depends_on: unknown step 'fetsh'; the steps are fetch and report")
    expect(problems).not_to_contain_text("['")
    marked = page.locator(".cm-line").filter(has=page.locator(".cm-lintRange-error"))
    expect(marked).to_have_text(["    tool: ecoh", "    depends_on: [fetsh]"])
    page.screenshot(path=str(SCREENSHOTS / "workflow-editor-problems.png"), full_page=True)

    # a YAML syntax error: in words, on its line, without the parser's "<byte string>"
    replace_text(page, TYPOS.replace("params: {message: hi}", "params: {message: hi"))
    page.get_by_role("button", name="Create workflow").click()
    expect(problems).to_contain_text("1 problem")
    expect(problems).to_contain_text("a ',' or the closing '}' is missing (the { … } that starts on line 5)")
    expect(problems).not_to_contain_text("byte string")
    expect(page.locator(".cm-lintRange-error")).to_have_count(1)

    replace_text(page, TYPOS.replace("ecoh", "echo").replace("fetsh", "fetch"))
    page.get_by_role("button", name="Create workflow").click()
    expect(page.get_by_role("heading", name="Greeter", level=1)).to_be_visible()


def test_the_start_dialog_shows_the_servers_422_on_the_variable_and_starts_once_fixed(live_server, page):
    response = live_server.post(
        "/api/workflows",
        json={
            "name": "Batch",
            "variables": {
                "count": {"type": "integer", "required": True, "description": "how many"},
                "label": "nightly",
                "dry_run": {"type": "boolean", "default": True},
            },
            "steps": [{"id": "go", "tool": "echo", "params": {"n": "{{ vars.count }}", "label": "{{ vars.label }}"}}],
        },
    )
    assert response.status_code == 201, response.text
    log_in(page, live_server)
    page.goto(live_server.url(f"/workflows/{response.json()['id']}"))
    page.get_by_role("button", name="Run Batch").click()
    dialog = page.get_by_role("dialog", name="Run “Batch”")
    expect(dialog.get_by_label("label")).to_have_value("nightly")  # a shorthand declaration's default
    expect(dialog.get_by_label("dry_run")).to_be_checked()
    expect(dialog.get_by_label("Mode")).to_have_value("coaching")
    dialog.get_by_label("count").fill("1.5")  # a number, but not an integer: the server says so
    dialog.get_by_role("button", name="Start run").click()
    count = dialog.get_by_label("count")
    expect(count).to_have_attribute("aria-invalid", "true")
    expect(dialog.get_by_role("alert")).to_contain_text("is not of type 'integer'")
    count.fill("3")
    dialog.get_by_role("button", name="Start run").click()
    expect(page).to_have_url(re.compile(r"/executions/[^/]+$"))
    execution_id = page.url.rstrip("/").rsplit("/", 1)[1]
    started = live_server.get(f"/api/executions/{execution_id}").json()
    assert started["variables"] == {"count": 3, "label": "nightly", "dry_run": True} and started["mode"] == "coaching"
