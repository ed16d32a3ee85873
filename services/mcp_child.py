"""`python wsgi.py` starts Coach's MCP process (asgi.py) beside itself and keeps it running: one command (`make run`)
serves everything, and Ctrl-C (or SIGTERM) stops both.

- prepare(): before the app is made, the environment both processes share: a bearer token for the internal routes
  made for this start (COACH_MCP_TOKEN, unless set), and the MCP process's address (COACH_MCP_URL).
- McpChild.start(): the process, with the same settings (its port COACH_MCP_PORT, default COACH_PORT + 100); it
  ends itself when this process is gone, even after a SIGKILL (COACH_MCP_PARENT_PID).
- watch(), in a background task of the async mode: a crash is printed and the process started again (the held
  calls, the decisions and the forwarding state are in the database: nothing is lost); one that keeps crashing at
  start stops everything, saying so.

With COACH_MCP_URL set, the MCP process is someone else's (several machines: config/cluster/Procfile) and nothing is
started here.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

from config import Settings

ROOT = Path(__file__).resolve().parents[1]
RESTARTS = 5  # crashes within RESTART_WINDOW_S that stop everything
RESTART_WINDOW_S = 30.0
READY_S = 60.0


def prepare(environ=os.environ) -> bool:
    """Whether this process starts the MCP process (COACH_MCP_URL unset); sets the shared variables."""
    if environ.get("COACH_MCP_URL"):
        return False
    if not environ.get("COACH_MCP_TOKEN"):
        environ["COACH_MCP_TOKEN"] = secrets.token_urlsafe(32)
    settings = Settings.from_env(dict(environ))
    environ["COACH_MCP_URL"] = settings.resolved_mcp_url
    environ.setdefault("COACH_WEB_URL", settings.resolved_web_url)
    return True


class McpChild:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.process: subprocess.Popen | None = None
        self.stopping = False
        self.crashes: list[float] = []

    def start(self) -> McpChild:
        env = {**os.environ, "COACH_MCP_PARENT_PID": str(os.getpid())}
        self.process = subprocess.Popen([sys.executable, str(ROOT / "asgi.py")], cwd=ROOT, env=env)
        return self

    def wait_ready(self, timeout: float = READY_S) -> None:
        """Until the MCP process answers /healthz (its start-up migrates nothing; it imports, connects, listens)."""
        import httpx

        url = self.settings.resolved_mcp_url + "/healthz"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise SystemExit(f"Coach's MCP process exited with code {self.process.returncode} at start-up")
            try:
                if httpx.get(url, timeout=1.0, trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"Coach's MCP process did not answer {url} within {timeout:g}s")

    def watch(self) -> None:
        """Runs as long as the web process (a background task): a crash of the MCP process is printed, the process
        started again."""
        while not self.stopping:
            process = self.process
            if process is None:
                return
            code = process.wait()
            if self.stopping:
                return
            now = time.monotonic()
            self.crashes = [t for t in self.crashes if now - t < RESTART_WINDOW_S] + [now]
            if len(self.crashes) >= RESTARTS:
                print(
                    f"Coach's MCP process exited with code {code} {RESTARTS} times in {RESTART_WINDOW_S:g}s: stopping",
                    file=sys.stderr,
                    flush=True,
                )
                os.kill(os.getpid(), signal.SIGTERM)
                return
            print(f"Coach's MCP process exited with code {code}: starting it again", file=sys.stderr, flush=True)
            time.sleep(0.2)
            self.start()

    def stop(self, grace: float = 3.0) -> None:
        """SIGTERM, then SIGKILL after `grace`; waits without the async mode's help (it may run in a signal
        handler)."""
        self.stopping = True
        process = self.process
        if process is None:
            return
        try:
            os.kill(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if _gone(process.pid):
                return
            _sleep(0.05)
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _gone(pid: int) -> bool:
    try:
        done, _status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # reaped already (gevent's SIGCHLD handler, or Popen.wait)
        return True
    return done == pid


def _sleep(seconds: float) -> None:
    from services.offload import patched_by

    if patched_by() == "gevent":
        from gevent import monkey

        monkey.get_original("time", "sleep")(seconds)
    elif patched_by() == "eventlet":
        from eventlet import patcher

        patcher.original("time").sleep(seconds)
    else:
        time.sleep(seconds)


def stop_on_signals(child: McpChild) -> None:
    """SIGTERM and SIGINT (Ctrl-C) stop the MCP process, then this one (as SIGTERM's default action would)."""

    def stop(signum, _frame) -> None:
        child.stop()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
