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
    socketio.run(app, host=settings.host, port=settings.port, allow_unsafe_werkzeug=True,
                 use_reloader=False, log_output=settings.log_level == "DEBUG")


if __name__ == "__main__":
    main()
