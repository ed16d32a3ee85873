"""Entry point: `python wsgi.py` serves Coach (schema upgraded, demo loaded) and starts its MCP process (asgi.py: the
MCP gateway and the MCP servers' sessions, on uvicorn) beside it, unless COACH_MCP_URL names one; servers import
`app`.

The async mode must be chosen before anything else is imported: eventlet and gevent patch the stdlib.
"""

import gc
import os

from config import Settings  # imports nothing that gevent or eventlet patch

_MODE = Settings.from_env().async_mode
if _MODE == "eventlet":
    import eventlet

    eventlet.monkey_patch()
elif _MODE == "gevent":
    from gevent import monkey

    monkey.patch_all()

from services import mcp_child  # noqa: E402

# `python wsgi.py` starts the MCP process: the settings both share (its address, the internal token) come first
_STARTS_MCP = __name__ == "__main__" and mcp_child.prepare()
_MCP = mcp_child.McpChild(Settings.from_env()).start() if _STARTS_MCP else None
if _MCP is not None:
    mcp_child.stop_on_signals(_MCP)

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
    if _MCP is not None:
        _MCP.wait_ready()
        socketio.start_background_task(_MCP.watch)
        print(f"Coach's MCP process (gateway at /mcp) is serving on {settings.resolved_mcp_url}")
    _test_hooks()
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


def _test_hooks() -> None:
    """COACH_TEST_THREADS_FILE (tests only; nothing a client can reach): on SIGUSR1 this process writes, as JSON, every
    thread's stack (the files of its frames) there: the live test that this process runs no asyncio loop reads it."""
    path = os.environ.get("COACH_TEST_THREADS_FILE")
    if not path:
        return
    import json
    import signal
    import sys
    import traceback

    def dump(_signum, _frame) -> None:
        stacks = {
            str(ident): [frame.filename for frame in traceback.extract_stack(top)]
            for ident, top in sys._current_frames().items()
        }
        with open(path + ".tmp", "w") as out:
            json.dump(stacks, out)
        os.replace(path + ".tmp", path)

    signal.signal(signal.SIGUSR1, dump)


if __name__ == "__main__":
    main()
