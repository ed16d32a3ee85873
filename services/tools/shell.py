"""shell.run: start an allow-listed program (argv, never a shell string) inside the workspace's data folder."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from typing import Any

from config import Settings
from core.tools import ToolContext, ToolError

from .basic import budget, seconds_text, truncate_text
from .files import confine, tool_root


def _child_env(ctx: ToolContext | None = None) -> dict[str, str]:
    # The server's own settings (secret key, database and SQL URLs) are not the child's business. What the child
    # gets of Coach's: the step run's idempotency key (the same when the run is tried again after a crash), so a
    # script can do its effect once (README "Effects").
    env = {k: v for k, v in os.environ.items() if not k.startswith("COACH_")}
    if ctx is not None and ctx.idempotency_key:
        env["COACH_IDEMPOTENCY_KEY"] = ctx.idempotency_key
    return env


def _kill_tree(proc: subprocess.Popen) -> None:
    # The child's own children share its session; killing only the child would leave them
    # holding the output pipes open, and communicate() would then wait on them.
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


class ShellRunTool:
    # it stops by itself at ctx.deadline, so the engine runs it without a watchdog thread
    honours_deadline = True

    name = "shell.run"
    description = (
        "Runs an allow-listed command (COACH_SHELL_ALLOW) as an argv list, without a shell, "
        "in the workspace's data folder; returns the exit code, stdout and stderr."
    )
    risk = "destructive"
    params_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "cwd": {"type": "string", "minLength": 1},
            "timeout_s": {"type": "number", "exclusiveMinimum": 0},
            "stdin": {"type": "string"},
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def __init__(self, settings: Settings):
        self.settings = settings

    def _executable(self, program: str) -> str:
        base = os.path.basename(program.replace("\\", "/"))
        if base not in self.settings.shell_allow:
            allowed = ", ".join(self.settings.shell_allow) or "nothing"
            raise ToolError(
                f"command {base!r} is not allow-listed; allowed: {allowed} (set COACH_SHELL_ALLOW to change this)"
            )
        found = shutil.which(base)
        if found is None:
            raise ToolError(f"command {base!r} is allow-listed but not found on PATH")
        # Allow-listing is by name, so a path must lead to the same program PATH would pick;
        # otherwise any binary renamed to an allowed name could be started.
        if program != base and os.path.realpath(program) != os.path.realpath(found):
            raise ToolError(f"{program!r} is not the allow-listed {base!r} ({found}); give the bare name")
        return found

    def run(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        argv = params.get("command")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise ToolError("command must be a non-empty list of strings (argv), not a shell string")
        executable = self._executable(argv[0])
        root = tool_root(self.settings, ctx, self.name, create=True)
        if params.get("cwd"):
            cwd, rel = confine(root, params["cwd"])
            if not cwd.is_dir():
                raise ToolError(f"cwd {rel!r} is not a folder in the workspace's data folder")
        else:
            cwd = root
        timeout = budget(ctx, params.get("timeout_s"))
        stdin = params.get("stdin")

        try:
            proc = subprocess.Popen(
                [executable, *argv[1:]],
                cwd=cwd,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_child_env(ctx),
                start_new_session=True,
            )
        except OSError as exc:
            raise ToolError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None
        try:
            out, err = proc.communicate(stdin.encode("utf-8") if stdin is not None else None, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_tree(proc)
            proc.communicate()
            raise ToolError(f"{argv[0]} timed out after {seconds_text(timeout)}") from None
        except BaseException:
            _kill_tree(proc)
            proc.wait()
            raise
        return {"returncode": proc.returncode, "stdout": truncate_text(out), "stderr": truncate_text(err)}
