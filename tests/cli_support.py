"""The cockpit command line as a user runs it, for tests: a fresh interpreter, text out."""

from __future__ import annotations

import subprocess
import sys


def run_cockpit(
    *argv: str, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m cockpit ARGV``: stdout and stderr captured as text, the exit status not
    checked (tests assert it), killed after ``timeout`` seconds."""
    return subprocess.run(
        [sys.executable, "-m", "cockpit", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
