"""The app factory: settings, extensions, blueprints, CLI. Importing this module starts nothing."""

from __future__ import annotations

import functools
import logging
from typing import Literal

import click
from flask import Flask, request
from flask_socketio import SocketIO

from api import (
    action_links,
    agents,
    approvals,
    auth,
    authentication,
    coaching,
    correction_packs,
    errors,
    executions,
    frontend,
    gateway_tools,
    health,
    llm_provider,
    metrics,
    plans,
    policies,
    queue,
    regions,
    replay,
    routing,
    security,
    slack,
    sockets,
    tool_servers,
    triggers,
    users,
    workflows,
    workspace,
)
from api import (
    audit as audit_api,
)
from api import (
    notices as notices_api,
)
from api import (
    notifications as notifications_api,
)
from api.base import Api
from config import Settings
from services.container import Services
from services.db import retrying
from services.migrate import upgrade

log = logging.getLogger(__name__)


AsyncMode = Literal["threading", "eventlet", "gevent", "gevent_uwsgi"]
# COACH_ASYNC_MODE's values, as Flask-SocketIO's async_mode
_ASYNC_MODES: dict[str, AsyncMode] = {
    "threading": "threading",
    "eventlet": "eventlet",
    "gevent": "gevent",
    "gevent_uwsgi": "gevent_uwsgi",
}


def _async_mode(settings: Settings) -> AsyncMode:
    mode = _ASYNC_MODES.get(settings.async_mode)
    if mode is None:  # what Socket.IO itself would answer
        raise ValueError(f"Invalid async_mode specified: COACH_ASYNC_MODE={settings.async_mode!r}")
    return mode


def create_app(settings: Settings | None = None, *, migrate: bool = True, recover: bool | None = None) -> Flask:
    settings = settings or Settings.from_env()
    logging.basicConfig(level=settings.log_level)
    security.check_secret(settings)
    app = Flask(__name__, static_folder=None)
    app.config.update(security.cookie_config(settings))
    app.session_interface = security.SessionInterface()
    app.config.update(
        SECRET_KEY=settings.secret_key,
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        JSON_SORT_KEYS=False,
        API_TITLE="Coach",
        API_VERSION="1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/api",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="docs",
        OPENAPI_SWAGGER_UI_URL="/api/docs/assets/",
        # how a caller authenticates (docs/auth.md): a bearer token, or the session cookie with the CSRF header on
        # writes; /api/docs gets an Authorize button, and its page sends the CSRF header (api/templates/swagger_ui.html)
        API_SPEC_OPTIONS={
            "components": {
                "securitySchemes": {
                    "bearerAuth": {
                        "type": "http",
                        "scheme": "bearer",
                        "description": "a token from POST /api/auth/tokens",
                    },
                    "cookieAuth": {
                        "type": "apiKey",
                        "in": "cookie",
                        "name": security.SESSION_COOKIE,
                        "description": "the web app's session, from POST /api/auth/login",
                    },
                    "csrfToken": {
                        "type": "apiKey",
                        "in": "header",
                        "name": security.CSRF_HEADER,
                        "description": f"with the session cookie, on writes: the value of the "
                        f"{security.CSRF_COOKIE} cookie (double submit)",
                    },
                }
            },
            "security": [{"bearerAuth": []}, {"cookieAuth": [], "csrfToken": []}],
        },
    )
    # Socket.IO's Origin check: the configured public origins, else the request's own origin (None). Never []
    # (python-engineio turns the check off for an empty list) nor "*": a page of another site could open a
    # connection with the victim's cookie.
    socketio = SocketIO(
        app,
        async_mode=_async_mode(settings),
        message_queue=settings.message_queue or None,
        # None: the request's own origin (python-engineio's default); types-Flask-SocketIO's annotation leaves it out
        cors_allowed_origins=security.socket_origins(settings),  # type: ignore[arg-type]
    )
    services = Services.build(settings, socketio)
    if migrate:
        upgrade(services.db)
    app.extensions["coach"] = services
    app.extensions["coach_default_workspace"] = services.default_workspace_id()
    _bootstrap_admin(services, app.extensions["coach_default_workspace"])

    errors.register(app)
    app.before_request(authentication.authenticate_request)
    app.after_request(authentication.set_csrf_cookie)
    api = Api(app)
    api.register_blueprint(auth.blp)
    api.register_blueprint(users.blp)
    api.register_blueprint(workflows.blp)
    api.register_blueprint(executions.blp)
    api.register_blueprint(coaching.blp)
    api.register_blueprint(queue.blp)
    api.register_blueprint(metrics.blp)
    api.register_blueprint(correction_packs.blp)
    api.register_blueprint(policies.blp)
    api.register_blueprint(audit_api.blp)
    api.register_blueprint(workspace.blp)
    api.register_blueprint(llm_provider.blp)
    api.register_blueprint(slack.blp)
    api.register_blueprint(slack.hook_blp)
    api.register_blueprint(approvals.blp)
    api.register_blueprint(plans.blp)
    api.register_blueprint(notices_api.blp)
    api.register_blueprint(tool_servers.blp)
    api.register_blueprint(tool_servers.tools_blp)
    api.register_blueprint(agents.blp)
    api.register_blueprint(triggers.blp)
    api.register_blueprint(triggers.hooks_blp)
    api.register_blueprint(notifications_api.blp)
    app.register_blueprint(action_links.blp)  # /act/<token>: email links, no session (api/action_links.py)
    api.register_blueprint(gateway_tools.blp)
    api.register_blueprint(gateway_tools.metrics_blp)
    api.register_blueprint(replay.blp)
    api.register_blueprint(regions.blp)
    app.register_blueprint(health.blp)
    app.register_blueprint(frontend.blp)
    security.register(app, settings)  # after the blueprints: it hashes Swagger UI's inline script at start
    triggers.limit_deliveries(app, app.extensions["coach_login_limiter"], settings)
    routing.register(app)  # after the blueprints: a path's methods are its most specific route's (OPTIONS, 405)
    sockets.register(socketio)
    _retry_transient_errors(app)
    # /mcp and the MCP process's events (api/mcp_proxy.py): the gateway and the MCP servers' sessions live in Coach's
    # MCP process (asgi.py), this one runs no asyncio loop
    from api.mcp_proxy import McpMiddleware

    mcp = McpMiddleware(app.wsgi_app, settings, services.notifier, socketio.start_background_task)
    app.extensions["coach_mcp"] = mcp
    services.closing.append(mcp.close)
    # WSGI middleware as Flask documents it (wrapping app.wsgi_app), which Flask's types, declaring a method, refuse
    app.wsgi_app = mcp  # type: ignore[method-assign]

    from services import cli

    cli.register(app)

    if recover is None:
        # `flask --app wsgi <command>` builds this app too, maybe beside a live server whose executions it must
        # not take over: under the CLI, only a server it starts (`flask run`) recovers, at its first request
        recover = click.get_current_context(silent=True) is None
        if not recover:
            _recover_at_first_request(app, services)
    if recover:
        _recover(services)
    return app


def _retry_transient_errors(app: Flask) -> None:
    """Every route is tried again, a few times, when its transaction meets a transient database error (a deadlock,
    a serialization failure, SQLite's busy database; services.db.is_transient): a client never sees one as a 500
    or a 409. A route's work is one transaction (none commits one and then starts another), so a failed try
    committed nothing. This is a route's one retry layer (services.decisions.coaching.submit does not retry inside; the
    socket's decision event has the same layer in api/sockets.py)."""
    for endpoint, view in list(app.view_functions.items()):
        app.view_functions[endpoint] = _retried(view)


def _retried(view):
    @functools.wraps(view)
    def retried(*args, **kwargs):
        return retrying(lambda: view(*args, **kwargs), tries=4, what=f"{request.method} {request.path}")

    return retried


def _recover(services) -> None:
    resumed = services.runner.scans.recover()
    if resumed:
        log.info("resumed %d executions that were running when the server stopped", resumed)
    services.runner.scans.start_deadlines()  # the server that recovers is the one that serves: it keeps deadlines
    services.runner.scans.start_leases()  # and renews its steps' leases, and takes over expired ones
    services.notifications.start()  # and sends the notification outbox (services/notifications/sender.py)


def _recover_at_first_request(app: Flask, services) -> None:
    pending = [True]

    @app.before_request
    def recover_once() -> None:
        if pending:
            pending.clear()
            _recover(services)


def _bootstrap_admin(services, workspace_id: str) -> None:
    from services.models.users import Workspace
    from services.users import service as user_service

    settings = services.settings
    if settings.admin_email and settings.admin_password:
        with services.command() as uow:
            created = user_service.bootstrap_admin(
                uow.session, settings.admin_email, settings.admin_password, uow.session.get(Workspace, workspace_id)
            )
            if created:
                log.info("created the first admin, %s, in the default workspace", created.email)
