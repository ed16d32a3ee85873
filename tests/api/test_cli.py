"""CLI commands (`flask --app wsgi ...`), through Flask's CLI runner on the test app."""

import pytest

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


def test_create_workspace_then_a_user_who_can_log_in_there(app):
    runner = app.test_cli_runner()
    made = runner.invoke(args=["create-workspace", "ops", "--name", "Ops team"])
    assert made.exit_code == 0 and "workspace ops created" in made.output
    user = runner.invoke(
        args=["create-user", "ann@ops.test", "--password", "secret-123", "--workspace", "ops", "--role", "lead"]
    )
    assert user.exit_code == 0 and "ann@ops.test is lead in ops" in user.output
    login = app.test_client().post("/api/auth/login", json={"email": "ann@ops.test", "password": "secret-123"})
    assert login.status_code == 200
    assert [(w["slug"], w["role"]) for w in login.get_json()["workspaces"]] == [("ops", "lead")]


def test_create_user_in_an_unknown_workspace_fails_with_a_clear_message(app):
    result = app.test_cli_runner().invoke(
        args=["create-user", "x@y.test", "--password", "secret-123", "--workspace", "nowhere"]
    )
    assert result.exit_code != 0 and "no workspace 'nowhere'" in result.output


def test_create_user_with_a_bad_email_and_short_password_names_both(app):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["create-user", "not-an-email", "--password", "short"])
    assert result.exit_code != 0
    assert "email" in result.output and "password" in result.output


def test_a_second_workspace_with_the_same_slug_is_refused(app):
    runner = app.test_cli_runner()
    assert runner.invoke(args=["create-workspace", "ops"]).exit_code == 0
    again = runner.invoke(args=["create-workspace", "ops"])
    assert again.exit_code != 0 and "already exists" in again.output


def test_a_cli_command_beside_a_live_server_leaves_its_running_steps_alone(api, settings):
    """`flask --app wsgi <command>` builds an app on the server's database; it must not take over the server's
    executions (a step the server is running would run twice)."""
    import os
    import subprocess
    import sys
    import time

    from tests.support.live_server import REPO_ROOT

    api.allow("shell.run")
    ex_id = api.start(api.workflow([{"id": "slow", "tool": "shell.run", "params": {"command": ["sleep", "8"]}}])["id"])[
        "execution_id"
    ]
    deadline = time.monotonic() + 30
    while (step := api.ok("GET", f"/api/executions/{ex_id}")["steps"][0])["status"] != "running":
        assert time.monotonic() < deadline, step
        time.sleep(0.02)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COACH_")}
    env.update(
        COACH_DATABASE_URL=settings.database_url,
        COACH_INSTANCE_DIR=settings.instance_dir,
        COACH_DATA_DIR=settings.data_dir,
        COACH_DEMO="0",
        COACH_ASYNC_MODE="threading",
        COACH_SHELL_ALLOW="sleep",
        COACH_LOG_LEVEL="WARNING",
    )
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "migrate"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    after = api.ok("GET", f"/api/executions/{ex_id}")
    # still the server's first run of the step (on a loaded machine the command may outlast the 8 s sleep): taken
    # over, it would have gone back to pending and started again
    assert after["steps"][0]["status"] in ("running", "succeeded"), after
    assert after["steps"][0]["started_at"] == step["started_at"]
    finished = api.settle(ex_id, timeout=30)
    assert finished["status"] == "completed" and finished["steps"][0]["started_at"] == step["started_at"]
