"""The workflow editor's help from the definition format (GET /api/workflows/schema): completion of a step's fields
by its type and of a field's values, and the schema's problems marked on their line while one types."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in
from tests.browser.test_authoring import replace_text

pytestmark = pytest.mark.browser

START = """name: Sign-off
steps:
  - id: total
    tool: echo
  - id: sign_off
    type: approval
"""


def completions(page: Page):
    return page.locator(".cm-tooltip-autocomplete li")


def test_the_editor_completes_a_steps_fields_and_values_from_the_schema_and_marks_what_it_refuses(live_server, page):
    log_in(page, live_server)
    page.goto(live_server.url("/workflows/new"))
    expect(page.locator(".cm-editor")).to_be_visible()
    replace_text(page, START)
    page.keyboard.press("Control+End")

    # the approval step's own fields, as one types a key under it
    page.keyboard.insert_text("    quo")
    page.keyboard.press("Control+Space")
    expect(completions(page).first).to_be_visible()
    expect(completions(page)).to_contain_text(["quorum"])
    completions(page).filter(has_text="quorum").click()
    expect(page.locator(".cm-line").last).to_have_text("    quorum: ")

    # the values of a field with a fixed set of them: on_timeout's
    page.keyboard.insert_text("2\n    on_timeout: ")
    page.keyboard.press("Control+Space")
    expect(completions(page)).to_have_text(["approve", "reject", "fail"])
    page.keyboard.press("Escape")

    # every step type as a new step's type, each an option
    page.keyboard.insert_text("reject\n  - id: think\n    type: ")
    page.keyboard.press("Control+Space")
    expect(completions(page)).to_have_text(["action", "decision", "validation", "human_input", "approval", "agent"])
    page.keyboard.press("Escape")

    # what the schema refuses is marked on its line as one types, before any save: an agent step without its goal
    page.keyboard.insert_text("agent\n    max_tool_iterations: 0\n")
    marked = page.locator(".cm-line").filter(has=page.locator(".cm-lintRange-error"))
    expect(marked).to_have_text(["  - id: think", "    max_tool_iterations: 0"])
    page.locator(".cm-lint-marker-error").first.hover()
    expect(page.locator(".cm-tooltip-lint")).to_contain_text("steps[2]")

    # fixed, nothing is marked; the server's check on save still is the judge
    page.keyboard.press("Control+End")
    replace_text(page, START + "    quorum: 2\n")
    expect(page.locator(".cm-lintRange-error")).to_have_count(0)
    page.get_by_role("button", name="Create workflow").click()
    expect(page.get_by_role("heading", name="Sign-off", level=1)).to_be_visible()
