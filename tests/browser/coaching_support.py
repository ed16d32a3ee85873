"""Helpers for the CoachingPanel's browser tests: workflows of echo steps, coaching executions, the panel."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.live_server import LiveServer

VIEWPORT = {"width": 1280, "height": 860}


def collect_errors(page: Page) -> list[str]:
    """Console errors and uncaught exceptions of `page` (a CSP violation shows here), filled as they happen."""
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def page_errors(errors: list[str]) -> list[str]:
    """Script errors and CSP violations of `collect_errors`; a refused request (the 401 before login, a 4xx a test
    provokes), which the browser logs too, is not one."""
    return [e for e in errors if not e.startswith("Failed to load resource")]


def echo_steps(*messages: str) -> list[dict]:
    """One echo step per message, each depending on the previous one (the default)."""
    return [
        {
            "id": f"step{i}",
            "name": f"Say {message}",
            "type": "action",
            "tool": "echo",
            "params": {"message": message, "index": i},
        }
        for i, message in enumerate(messages, start=1)
    ]


def create_workflow(server: LiveServer, name: str, steps: list[dict], description: str = "") -> dict:
    answer = server.post("/api/workflows", json={"name": name, "description": description or name, "steps": steps})
    assert answer.status_code == 201, answer.text
    return answer.json()


def start_coaching(server: LiveServer, workflow_id: str) -> str:
    """Starts a coaching execution and waits until its first suggestion is pending; returns its id."""
    answer = server.post("/api/executions/coaching", json={"workflow_id": workflow_id})
    assert answer.status_code == 201, answer.text
    execution_id = answer.json()["execution_id"]
    pending_suggestion(server, execution_id)
    return execution_id


def pending_suggestion(server: LiveServer, execution_id: str, timeout: float = 30) -> dict:
    def current():
        return server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]

    return server.wait_for(current, timeout=timeout, message=f"a pending suggestion in {execution_id}")


def decide_via_api(server: LiveServer, execution_id: str, suggestion_id: str, decision: str, **extra) -> dict:
    answer = server.post(
        f"/api/executions/{execution_id}/coaching/decision",
        json={"suggestion_id": suggestion_id, "decision": decision, **extra},
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def execution(server: LiveServer, execution_id: str) -> dict:
    return server.get(f"/api/executions/{execution_id}").json()


def suggestion_heading(page: Page):
    return page.get_by_role("heading", level=2, name="Suggestion:")


def expect_suggestion(page: Page, step_name: str) -> None:
    """The panel shows the suggestion for `step_name`, ready to be decided."""
    expect(page.get_by_role("heading", level=2, name=f"Suggestion: {step_name}")).to_be_visible()
    expect(page.get_by_role("button", name="Skip")).to_be_enabled()


def open_panel(page: Page, server: LiveServer, execution_id: str) -> None:
    page.goto(server.url(f"/executions/{execution_id}/coach"))
    expect(page.get_by_role("heading", level=1, name="Coaching")).to_be_visible()


def expect_finished(page: Page) -> None:
    expect(page.get_by_role("heading", level=2, name="Execution completed")).to_be_visible()


def timeline_step(page: Page, step_name: str):
    return page.get_by_role("listitem").filter(has=page.get_by_role("heading", level=3, name=step_name, exact=True))


def panel_at_hello(page: Page, server: LiveServer) -> str:
    """Logged in, the panel of a new coaching execution of "Two greetings" (hello, then bye) showing the suggestion
    for "Say hello": the execution's id."""
    from tests.browser.conftest import log_in

    wf = create_workflow(server, "Two greetings", echo_steps("hello", "bye"))
    ex_id = start_coaching(server, wf["id"])
    log_in(page, server)
    open_panel(page, server, ex_id)
    expect_suggestion(page, "Say hello")
    return ex_id


def open_pause_dialog(page: Page):
    """Shift+P on the panel: the "Pause with a question" dialog, its Question field focused."""
    page.keyboard.press("Shift+P")
    dialog = page.get_by_role("dialog", name="Pause with a question")
    expect(dialog.get_by_label("Question")).to_be_focused()
    return dialog


def resume_with_feedback(page: Page, feedback: str) -> None:
    """On a paused run's panel: `i` focuses the feedback field; the feedback typed there, Enter resumes."""
    page.keyboard.press("i")
    expect(page.get_by_label("Feedback (optional)")).to_be_focused()
    page.keyboard.type(feedback)
    page.keyboard.press("Enter")


def confirm_with_enter(page: Page, key: str, prompt) -> None:
    """Enter on an armed confirmation (frontend/src/coaching/confirmation.ts: armed for CONFIRM_WINDOW_MS, 5 s). A test
    that took a screenshot or asked the server something while it was armed may have let the window pass on a loaded
    machine: then `key` arms it again first, so that Enter confirms a prompt that is on the screen."""
    if not prompt.is_visible():
        page.keyboard.press(key)
        expect(prompt).to_be_visible()
    page.keyboard.press("Enter")
