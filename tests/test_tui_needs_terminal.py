"""`cockpit | cat`, `cockpit > file`, cron: the TUI refuses in one line naming the commands
made for text, instead of filling the pipe with escape codes or waiting for keys."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _run(*args: str, **kw) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.setdefault("XDG_STATE_HOME", "/tmp/cockpit-piped-state")
    return subprocess.run(
        [sys.executable, "-m", "cockpit", *args],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
        **kw,
    )


@pytest.mark.parametrize("args", [("--demo",), ()])
def test_the_tui_with_stdout_piped_refuses_in_one_line(args):
    res = _run(*args, stdin=subprocess.DEVNULL)
    assert res.returncode == 2
    assert res.stdout == b""  # nothing in the pipe: no escape codes, no half-drawn screen
    err = res.stderr.decode()
    assert b"\x1b" not in res.stderr and len(err.strip().splitlines()) == 1, err
    assert "needs a terminal" in err and "stdout is piped or redirected" in err
    assert "cockpit snapshot" in err and "cockpit incidents" in err


def test_the_commands_it_suggests_work_in_a_pipe():
    res = _run("snapshot", "--demo", stdin=subprocess.DEVNULL)
    assert res.returncode == 0 and res.stdout and b"\x1b[" not in res.stdout


def test_each_stream_is_checked(monkeypatch):
    """stdout a terminal but stdin from /dev/null (cron): refused too, naming stdin."""
    from cockpit.commands import tui
    from cockpit.errors import UserError

    class Tty:
        def isatty(self) -> bool:
            return True

    class Pipe:
        def isatty(self) -> bool:
            return False

    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setattr(sys, "stderr", Tty())
    monkeypatch.setattr(sys, "stdin", Pipe())
    with pytest.raises(UserError, match="stdin is piped or redirected"):
        tui.require_terminal()
    monkeypatch.setattr(sys, "stdin", Tty())
    tui.require_terminal()  # all three terminals: the TUI runs
