"""The 1.x-era MCP peers of the live tests: a venv of their own (.venv-mcp1, requirements-mcp1.txt, made by
`make setup-dev`), since Coach runs on mcp 2.x and they pin mcp 1.x. Its Python runs the reference servers
mcp-server-time and mcp-server-git and tests/support/mcp1_server.py (1.x-era upstreams: the initialize handshake),
and tests/support/mcp1_agent.py (a 1.x-era agent of the gateway)."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
MCP1_VENV = REPO_ROOT / ".venv-mcp1"
MCP1_PYTHON = MCP1_VENV / "bin" / "python"


@functools.cache
def mcp1_has(module: str) -> bool:
    """Whether .venv-mcp1 exists and its Python imports `module`."""
    if not MCP1_PYTHON.is_file():
        return False
    return subprocess.run([str(MCP1_PYTHON), "-c", f"import {module}"], capture_output=True, timeout=60).returncode == 0


def mcp1_server_command() -> list[str]:
    """The command line of the 1.x-era upstream over stdio (tests/support/mcp1_server.py)."""
    return [str(MCP1_PYTHON), str(REPO_ROOT / "tests" / "support" / "mcp1_server.py"), "old"]
