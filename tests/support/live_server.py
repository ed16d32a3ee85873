"""Runs the real Coach server (`python wsgi.py`) as a subprocess for end-to-end tests.

    with LiveServer(tmp_path) as server:          # started, /healthz answered
        server.post("/api/workflows", json={...})
        server.kill(); server.restart()           # same database, same port
        server.kill_mcp()                         # SIGKILL to its MCP process, which wsgi.py starts again

`python wsgi.py` starts Coach's MCP process (asgi.py) beside the web process, on a port of its own (mcp_port) that
stays the same across restarts; /mcp on the server's port is proxied to it.

The server's stdout and stderr go to files in the given folder (never pipes, which fill up and stall
the server); a server that does not come up raises with the tail of its stderr.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import requests

from config import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def free_port(host: str = "127.0.0.1") -> int:
    """An ephemeral port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return "(no output captured)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty)"


class LiveServerError(RuntimeError):
    """The server did not start (or died): the message holds its stderr tail."""


class LiveServer:
    """The real server process on 127.0.0.1 and a free port.

    folder         where the logs, the instance dir, the data dir and (by default) the SQLite file go
    database_url   COACH_DATABASE_URL; default sqlite:///<folder>/coach.db
    demo           COACH_DEMO ("0": no demo workflows)
    async_mode     COACH_ASYNC_MODE; default the caller's COACH_ASYNC_MODE, else "threading"
    env            more environment variables for the server (they win over the defaults above)
    root           the checkout whose wsgi.py runs (default this one; the benches compare another revision's)
    python         the interpreter that runs it (default this one's; a revision on other pinned libraries needs its own)

    Inherited COACH_* variables are dropped (a developer's shell must not point a test at their own
    database), except COACH_ASYNC_MODE which picks the default mode.
    """

    host = "127.0.0.1"
    # a migrated SQLite file (tests/conftest.py sets it for the session): a server's own new file starts as a copy,
    # which saves the migrations at each start (the server still checks that the schema is at head)
    sqlite_template: Path | None = None
    admin_email = "admin@live.test"
    admin_password = "live-password-1"
    startup_timeout = 60.0  # two processes start (wsgi.py and the MCP process it starts), on a machine that may be busy
    stop_timeout = 5.0

    def __init__(
        self,
        folder: str | os.PathLike,
        database_url: str | None = None,
        *,
        demo: str | bool = "0",
        async_mode: str | None = None,
        env: Mapping[str, str] | None = None,
        port: int | None = None,
        root: str | os.PathLike | None = None,
        python: str | None = None,
    ):
        self.folder = Path(folder)
        self.python = python or sys.executable
        self.root = Path(root) if root is not None else REPO_ROOT
        self.folder.mkdir(parents=True, exist_ok=True)
        self.instance_dir = self.folder / "instance"
        self.data_dir = self.folder / "data"
        self.own_sqlite = None if database_url else self.folder / "coach.db"
        self.database_url = database_url or f"sqlite:///{self.own_sqlite}"
        self.demo = ("1" if demo else "0") if isinstance(demo, bool) else str(demo)
        self.async_mode = async_mode or os.environ.get("COACH_ASYNC_MODE") or Settings().async_mode
        self.extra_env = dict(env or {})
        self.port = port
        self.mcp_port: int | None = None
        self.stdout_path = self.folder / "server.stdout.log"
        self.stderr_path = self.folder / "server.stderr.log"
        self.process: subprocess.Popen | None = None
        self.starts = 0
        self.http = requests.Session()
        self.http.trust_env = False  # never send 127.0.0.1 through a proxy from the environment
        self.token: str | None = None  # a bearer token of the first admin, made on the first start

    # -- addresses -------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self.port is None:
            raise LiveServerError("the server has no port yet: call start() first")
        return f"http://{self.host}:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + (path if path.startswith("/") else "/" + path)

    def workspace_data_dir(self) -> Path:
        """The data folder of the one workspace these tests write files in (<data>/<workspace id>/)."""
        folders = [p for p in self.data_dir.iterdir() if p.is_dir()]
        assert len(folders) == 1, f"expected one workspace folder in {self.data_dir}, found {folders}"
        return folders[0]

    # -- process ---------------------------------------------------------------------------------------
    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COACH_")}
        self.instance_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        no_proxy = ",".join(p for p in (env.get("NO_PROXY") or env.get("no_proxy"), "127.0.0.1,localhost") if p)
        env.update(
            {
                "COACH_HOST": self.host,
                "COACH_PORT": str(self.port),
                "COACH_MCP_PORT": str(self.mcp_port),
                "COACH_DATABASE_URL": self.database_url,
                "COACH_INSTANCE_DIR": str(self.instance_dir),
                "COACH_DATA_DIR": str(self.data_dir),
                # the demo's Service check and the tests call this server on loopback, refused by default
                "COACH_OUTBOUND_ALLOW": "127.0.0.1",
                "COACH_DEMO": self.demo,
                "COACH_ASYNC_MODE": self.async_mode,
                "COACH_LOG_LEVEL": "WARNING",
                # decisions on risky calls run at once unless a test sets a window (extra_env)
                "COACH_UNDO_WINDOW_S": "0",
                "COACH_ADMIN_EMAIL": self.admin_email,
                "COACH_ADMIN_PASSWORD": self.admin_password,
                "PYTHONUNBUFFERED": "1",
                "NO_PROXY": no_proxy,
                "no_proxy": no_proxy,
            }
        )
        env.update({k: str(v) for k, v in self.extra_env.items()})
        return env

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> LiveServer:
        if self.running:
            raise LiveServerError(f"already running (pid {self.process.pid})")
        if self.port is None:
            self.port = free_port(self.host)
        if self.mcp_port is None:
            self.mcp_port = free_port(self.host)
        self.starts += 1
        if self.own_sqlite is not None and self.sqlite_template is not None and not self.own_sqlite.exists():
            shutil.copy(self.sqlite_template, self.own_sqlite)
        banner = f"\n===== start #{self.starts} on port {self.port} =====\n".encode()
        with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
            out.write(banner)
            err.write(banner)
            out.flush()
            err.flush()
            # the child has its own copies of the descriptors; ours close when the with-block ends
            self.process = subprocess.Popen(
                [self.python, "wsgi.py"],
                cwd=self.root,
                env=self.environment(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
            )
        deadline = time.monotonic() + self.startup_timeout
        while True:
            code = self.process.poll()
            if code is not None:
                self.process = None
                raise LiveServerError(
                    f"the server exited with code {code} before answering /healthz; stderr tail:\n{self.stderr_tail()}"
                )
            try:
                if self.http.get(self.url("/healthz"), timeout=1).status_code == 200:
                    self._authenticate()
                    return self
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise LiveServerError(
                    f"/healthz did not answer within {self.startup_timeout:.0f} s on "
                    f"{self.base_url}; stderr tail:\n{self.stderr_tail()}"
                )
            time.sleep(0.05)

    def _authenticate(self) -> None:
        """Log in as the first admin and keep a bearer token for every later request and socket client."""
        if self.token is None:
            login = requests.Session()
            login.trust_env = False
            answer = login.post(
                self.url("/api/auth/login"),
                json={"email": self.admin_email, "password": self.admin_password},
                timeout=10,
            )
            answer.raise_for_status()
            made = login.post(
                self.url("/api/auth/tokens"),
                json={"name": "live tests"},
                headers={"X-CSRF-Token": answer.json()["csrf_token"]},
                timeout=10,
            )
            made.raise_for_status()
            self.token = made.json()["token"]
        self.http.headers["Authorization"] = f"Bearer {self.token}"

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after 5 s. Returns the exit code (None when it was not running)."""
        proc, self.process = self.process, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(self.stop_timeout)
        return proc.returncode

    def kill(self) -> int | None:
        """SIGKILL at once, as a crash would: nothing gets a chance to clean up."""
        proc, self.process = self.process, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        proc.wait(self.stop_timeout)
        return proc.returncode

    @property
    def mcp_url(self) -> str:
        """The MCP process's own address (what several machines' proxy routes /mcp to)."""
        return f"http://{self.host}:{self.mcp_port}"

    def mcp_pid(self) -> int:
        """The pid of the MCP process the web process started (its one child running asgi.py)."""
        if self.process is None:
            raise LiveServerError("the server is not running")
        pid = self.process.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        for child in children:
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except FileNotFoundError:
                continue
            if any(part.endswith(b"asgi.py") for part in command):
                return int(child)
        raise LiveServerError(f"the server (pid {pid}) has no MCP process among its children {children}")

    def kill_mcp(self, timeout: float = 30.0) -> None:
        """SIGKILL to the MCP process, as a crash would; returns once the web process has started a new one and it
        answers (its /healthz)."""
        old = self.mcp_pid()
        os.kill(old, signal.SIGKILL)

        def again() -> bool:
            try:
                if self.mcp_pid() == old:
                    return False
                return self.http.get(self.mcp_url + "/healthz", timeout=1).status_code == 200
            except (LiveServerError, requests.RequestException):
                return False

        self.wait_for(again, timeout=timeout, message="the MCP process started again")

    def restart(self) -> LiveServer:
        """Stop (if running) and start again on the same database and port."""
        if self.running:
            self.stop()
        return self.start()

    def stderr_tail(self, lines: int = 40) -> str:
        return _tail(self.stderr_path, lines)

    def stdout_tail(self, lines: int = 40) -> str:
        return _tail(self.stdout_path, lines)

    def __enter__(self) -> LiveServer:
        try:
            return self.start()
        except BaseException:  # a start that failed half-way (its process up, its login refused) is ended too
            self.__exit__()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
        self.http.close()

    # -- HTTP helpers ----------------------------------------------------------------------------------
    def request(self, method: str, path: str, json: Any = None, timeout: float = 10, **kwargs) -> requests.Response:
        return self.http.request(method, self.url(path), json=json, timeout=timeout, **kwargs)

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, json: Any = None, **kwargs) -> requests.Response:
        return self.request("POST", path, json=json, **kwargs)

    def login(self, email: str, password: str) -> tuple[requests.Session, dict]:
        """A new HTTP session (no proxies from the environment) logged in as `email`: (session, the login answer)."""
        http = requests.Session()
        http.trust_env = False
        answer = http.post(self.url("/api/auth/login"), json={"email": email, "password": password}, timeout=10)
        assert answer.status_code == 200, answer.text
        return http, answer.json()

    def wait_for(
        self, predicate: Callable[[], T], timeout: float = 30.0, interval: float = 0.05, message: str = "condition"
    ) -> T:
        """Poll `predicate` until it returns something truthy (returned) or `timeout` passes (AssertionError).

        A dead server fails at once, with its stderr tail, instead of waiting out the timeout.
        """
        deadline = time.monotonic() + timeout
        last: Any = None
        while True:
            last = predicate()
            if last:
                return last
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(
                    f"the server died (code {self.process.returncode}) while waiting for "
                    f"{message}; stderr tail:\n{self.stderr_tail()}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"{message} not reached within {timeout} s (last value: {last!r})")
            time.sleep(interval)

    def __repr__(self) -> str:
        state = f"pid {self.process.pid}" if self.running else "stopped"
        return f"<LiveServer {self.base_url if self.port else '(no port)'} {state}>"
