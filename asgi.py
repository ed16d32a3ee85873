"""Coach's MCP process: `python asgi.py` serves the MCP gateway (/mcp) and the MCP servers' client pool on uvicorn.

`python wsgi.py` (`make run`) starts it beside the web process; several machines run it on their own
(config/cluster/Procfile). Its settings are the web process's (the same COACH_* variables, the same database):
COACH_MCP_PORT is the port it listens on, COACH_WEB_URL the web process it sends the events to push,
COACH_MCP_TOKEN the internal routes' bearer token. No gevent, no eventlet: one asyncio loop, worker threads for the
blocking database work (docs/design.md "Processes").
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

import uvicorn

from api.mcp_process import create_app
from config import Settings


async def _orphaned(parent: int) -> None:
    """Ends this process when the web process that started it is gone (even killed with SIGKILL: nothing else would
    tell): its port must be free for the next start."""
    while os.getppid() == parent:
        await asyncio.sleep(0.5)
    logging.getLogger("coach.mcp").warning("the web process %d is gone: the MCP process stops", parent)
    os._exit(0)


def main() -> None:
    settings = Settings.from_env()
    logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if not settings.mcp_token:
        sys.exit("COACH_MCP_TOKEN is not set: the internal routes need it (python wsgi.py makes one per start)")
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.resolved_mcp_port,
        log_level=settings.log_level.lower(),
        access_log=settings.log_level == "DEBUG",
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    parent = os.environ.get("COACH_MCP_PARENT_PID")

    async def serve() -> None:
        if parent and parent.isdigit():
            watcher = asyncio.create_task(_orphaned(int(parent)))
        await server.serve()
        if parent:
            watcher.cancel()
        if not server.started:  # the port is taken, or the start-up failed (its reason is logged above)
            sys.exit(3)

    print(f"Coach's MCP process is serving on http://{settings.host}:{settings.resolved_mcp_port}", flush=True)
    asyncio.run(serve())


if __name__ == "__main__":
    main()
