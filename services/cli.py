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
