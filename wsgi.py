"""Entry point: `python wsgi.py` serves Coach (schema upgraded, demo loaded); servers import `app`.

The async mode must be chosen before anything else is imported: eventlet and gevent patch the stdlib.
"""

import gc

from config import Settings  # imports nothing that gevent or eventlet patch

_MODE = Settings.from_env().async_mode
if _MODE == "eventlet":
    import eventlet

    eventlet.monkey_patch()
elif _MODE == "gevent":
    from gevent import monkey

    monkey.patch_all()

from api.app import create_app  # noqa: E402

app = create_app()


def main() -> None:
    from services import demo

    services = app.extensions["coach"]
    settings = services.settings
    if settings.demo:
        created = demo.load(services, app.extensions["coach_default_workspace"])
        if created:
            print(f"Loaded demo workflows: {', '.join(created)}")
    print(f"Coach is serving on http://{settings.host}:{settings.port} ({settings.async_mode} mode)")
    if settings.admin_email:
        shown = settings.admin_password if settings.admin_password == "coach-demo" else "(COACH_ADMIN_PASSWORD)"
        print(f"Log in as {settings.admin_email} with password {shown}")
    socketio = app.extensions["socketio"]
    # everything made so far (modules, the app, SQLAlchemy's mappers, the demo) lives as long as the process: out of
    # the collector's sight, a full collection under load takes ~5 ms instead of ~90 ms, during which gevent's hub
    # (every connection) stands still
    gc.collect()
    gc.freeze()
    log_output = settings.log_level == "DEBUG"
    if settings.async_mode == "gevent":
        _serve_gevent(settings, log_output)
    else:
        socketio.run(
            app,
            host=settings.host,
            port=settings.port,
            allow_unsafe_werkzeug=True,
            use_reloader=False,
            log_output=log_output,
        )


def _serve_gevent(settings, log_output: bool) -> None:
    """What `socketio.run` does under gevent, with Nagle's algorithm off on every connection: pywsgi sends a
    response's headers and body in two writes, and with Nagle on, the body of each request but the first on a
    kept-alive connection waited for the client's delayed ACK, ~40 ms (README "Async mode")."""
    import socket

    from gevent import pywsgi
    from geventwebsocket.handler import WebSocketHandler

    class NoDelayHandler(WebSocketHandler):
        def handle(self):
            try:
                self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:  # not TCP (a Unix socket): nothing to turn off
                pass
            super().handle()

    pywsgi.WSGIServer(
        (settings.host, settings.port), app, handler_class=NoDelayHandler, log="default" if log_output else None
    ).serve_forever()


if __name__ == "__main__":
    main()
