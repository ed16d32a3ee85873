"""CLI commands: `flask --app wsgi <command>`."""

from __future__ import annotations

import click
from flask import Flask


def register(app: Flask) -> None:
    @app.cli.command("migrate")
    def migrate_command():
        """Bring the database schema up to date."""
        from services.migrate import upgrade

        upgrade(app.extensions["coach"].db)
        click.echo("schema is up to date")

    @app.cli.command("demo")
    def demo_command():
        """Load the demo workflows and data (idempotent)."""
        from services import demo

        created = demo.load(app.extensions["coach"], app.extensions["coach_default_workspace"])
        click.echo(f"demo workflows created: {created or 'none (already there)'}")

    @app.cli.command("create-workspace")
    @click.argument("slug")
    @click.option("--name", default=None, help="display name (default: the slug)")
    def create_workspace_command(slug, name):
        """Create a workspace."""
        from core.errors import CoachError
        from services import workspaces

        try:
            with app.extensions["coach"].command() as uow:
                ws = workspaces.create(uow.session, slug, name)
                click.echo(f"workspace {ws.slug} created ({ws.id})")
        except CoachError as exc:
            raise click.ClickException(exc.message) from None

    @app.cli.command("create-user")
    @click.argument("email")
    @click.option(
        "--password",
        prompt=True,
        hide_input=True,
        confirmation_prompt=True,
        help="at least 8 characters (asked for when not given)",
    )
    @click.option("--workspace", "workspace_slug", default="default", show_default=True)
    @click.option("--role", type=click.Choice(["operator", "lead", "admin"]), default="operator", show_default=True)
    @click.option("--name", default="")
    def create_user_command(email, password, workspace_slug, role, name):
        """Create a user (or give an existing one a role) in a workspace."""
        from core.errors import CoachError
        from services.models.users import User
        from services.users import service as users

        try:
            with app.extensions["coach"].command() as uow:
                ws = users.find_workspace(uow.session, workspace_slug)
                if ws is None:
                    raise click.ClickException(f"no workspace {workspace_slug!r}: create it with create-workspace")
                user = uow.session.query(User).filter(
                    User.email == email.strip().lower()
                ).one_or_none() or users.create_user(uow.session, email, password, name)
                users.set_role(uow.session, user, ws, role)
                click.echo(f"{user.email} is {role} in {ws.slug}")
        except CoachError as exc:
            raise click.ClickException(f"{exc.message}: {exc.details}") from None
