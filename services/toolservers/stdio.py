"""The stdio transport for the SDK's Client, with the server process started by os.posix_spawn, in Coach's MCP process.

The SDK's own `stdio_client` would do for the protocol (the MCP process is plain asyncio); this one is kept for what
Coach tells its users about a server that died: its exit status (`exited with status 3`, read from a status pipe of
the process's own wrapper, so that it is not lost to whoever reaps the child first) and the last lines of its stderr.
Framing is the protocol's (one JSON-RPC message per line), parsed and written by the SDK's own types
(jsonrpc_message_adapter, SessionMessage). Everything above the transport (server/discover or initialize, requests,
notifications, cancellation) is the SDK's Client.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import shutil
import signal
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

STATUS_FD = 3
# $0: the working directory, then the program and its arguments; fd 3 is the status pipe, closed for the program
WRAPPER = 'cd -- "$0" || exit 126; "$@" 3>&-; status=$?; echo "$status" >&3; exit "$status"'
LINE_LIMIT = 16 * 1024 * 1024  # one message (a tool's result) may be large
STDERR_LINES = 20


class StdioProcess:
    """The server process, started with os.posix_spawn, in a session of its own, so that stopping it stops what it
    started (npx, uvx ... start children)."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: str | None):
        program = shutil.which(command[0], path=env.get("PATH")) if os.sep not in command[0] else command[0]
        if not program:
            raise FileNotFoundError(2, "command not found", command[0])
        # a shell starts the program (in `cwd`: posix_spawn has no working directory before Python 3.13) and
        # writes its exit status to a pipe of its own, for the status not to be lost when something else in this
        # process reaps the child first (a SIGCHLD handler may reap any child)
        argv = ["/bin/sh", "-c", WRAPPER, cwd or ".", program, *command[1:]]
        child_in, self.stdin = os.pipe()
        self.stdout, child_out = os.pipe()
        self.stderr_fd, child_err = os.pipe()
        self.status_fd, child_status = os.pipe()
        os.set_blocking(self.status_fd, False)
        try:
            self.pid = os.posix_spawn(
                argv[0],
                argv,
                env,
                setsid=True,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, child_in, 0),
                    (os.POSIX_SPAWN_DUP2, child_out, 1),
                    (os.POSIX_SPAWN_DUP2, child_err, 2),
                    (os.POSIX_SPAWN_DUP2, child_status, STATUS_FD),
                ],
            )
        except BaseException:
            for fd in (self.stdin, self.stdout, self.stderr_fd, self.status_fd):
                os.close(fd)
            raise
        finally:
            for fd in (child_in, child_out, child_err, child_status):
                os.close(fd)
        self.returncode: int | None = None
        self._reported = b""
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)

    def reported(self) -> int | None:
        """The exit status the wrapper wrote, once it has."""
        if self.status_fd >= 0:
            try:
                while chunk := os.read(self.status_fd, 64):
                    self._reported += chunk
            except BlockingIOError:
                pass
            except OSError:
                pass
        text = self._reported.decode("ascii", "replace").strip()
        return int(text) if text.isdigit() and self._reported.endswith(b"\n") else None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped by someone else (a SIGCHLD handler): the wrapper said
                reported = self.reported()
                self.returncode = -1 if reported is None else reported
                return self.returncode
            if pid:
                code = os.waitstatus_to_exitcode(status)
                reported = self.reported()  # the program's own status, when the wrapper had the time to write it
                self.returncode = reported if reported is not None else code
        return self.returncode

    async def exited(self, within: float) -> bool:
        """Wait up to `within` seconds for the process to end (it closes its pipes a moment before it can be
        reaped): whether it has."""
        for _ in range(max(1, int(within / 0.01))):
            if self.poll() is not None:
                return True
            await asyncio.sleep(0.01)
        return self.poll() is not None

    def exit_status(self) -> str:
        code = self.poll()
        tail = " | ".join(self.stderr)
        state = "is running" if code is None else ("has exited" if code == -1 else f"exited with status {code}")
        return f"the server process {state}" + (f"; it said: {tail[-500:]}" if tail else "")

    def close(self) -> None:
        if self.status_fd >= 0:
            self.reported()  # kept for exit_status
            os.close(self.status_fd)
            self.status_fd = -1

    async def stop(self, grace: float = 2.0) -> None:
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.pid, sig)  # its own session: the children it started go too
            for _ in range(int(grace / 0.05)):
                if self.poll() is not None:
                    return
                await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def stdio_transport(
    command: list[str], env: dict[str, str], cwd: str | None = None
) -> AsyncIterator[tuple[Any, Any, StdioProcess]]:
    """(read_stream, write_stream, process): the first two are the transport the SDK's Client takes."""
    proc = StdioProcess(command, env, cwd)
    loop = asyncio.get_running_loop()
    stdout = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout), open(proc.stdout, "rb", 0))
    stderr = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stderr), open(proc.stderr_fd, "rb", 0))
    writer, _ = await loop.connect_write_pipe(asyncio.Protocol, open(proc.stdin, "wb", 0))

    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def pump_out() -> None:
        async with read_send:
            while True:
                try:
                    line = await stdout.readline()
                except ValueError as exc:  # a line past LINE_LIMIT
                    await read_send.send(exc)
                    continue
                if not line:
                    return  # the process closed stdout (exited): the session fails what is pending
                if not line.strip():
                    continue
                try:
                    message = jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:  # the SDK's stdio_client passes a bad line on as an exception too
                    await read_send.send(exc)
                    continue
                await read_send.send(SessionMessage(message))

    async def pump_in() -> None:
        async with write_receive:
            async for session_message in write_receive:
                data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                if writer.is_closing():
                    return
                writer.write((data + "\n").encode("utf-8"))

    async def pump_err() -> None:
        while True:
            line = await stderr.readline()
            if not line:
                return
            proc.stderr.append(line.decode("utf-8", errors="replace").rstrip())

    tasks = [asyncio.create_task(pump_out()), asyncio.create_task(pump_in()), asyncio.create_task(pump_err())]
    try:
        yield read_receive, write_send, proc
    finally:
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            writer.close()
        await proc.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        proc.close()
