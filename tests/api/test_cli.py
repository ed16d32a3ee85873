"""CLI commands (`flask --app wsgi ...`), through Flask's CLI runner on the test app."""


def test_create_workspace_then_a_user_who_can_log_in_there(app):
    runner = app.test_cli_runner()
    made = runner.invoke(args=["create-workspace", "ops", "--name", "Ops team"])
    assert made.exit_code == 0 and "workspace ops created" in made.output
    user = runner.invoke(args=["create-user", "ann@ops.test", "--password", "secret-123", "--workspace", "ops",
                               "--role", "lead"])
    assert user.exit_code == 0 and "ann@ops.test is lead in ops" in user.output
    login = app.test_client().post("/api/auth/login", json={"email": "ann@ops.test", "password": "secret-123"})
    assert login.status_code == 200
    assert [(w["slug"], w["role"]) for w in login.get_json()["workspaces"]] == [("ops", "lead")]


def test_create_user_in_an_unknown_workspace_fails_with_a_clear_message(app):
    result = app.test_cli_runner().invoke(args=["create-user", "x@y.test", "--password", "secret-123",
                                                "--workspace", "nowhere"])
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
