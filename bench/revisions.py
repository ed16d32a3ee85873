"""Another revision's checkout for a bench's `--against`: its server measured beside this one's in the same run."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def checkout(revision: str, folder: str) -> Iterator[Path | None]:
    """A detached worktree of `revision` in `folder` for as long as the block runs (None without a revision)."""
    if not revision:
        yield None
        return
    path = Path(folder) / "against"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(path), revision], cwd=ROOT, check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)
