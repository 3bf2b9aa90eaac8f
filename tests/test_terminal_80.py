"""The commands in an 80-column terminal (a real pty, as in a tmux pane): `diagnose` folds an
explanation, remedy or evidence line under its own text, never at column 0 where it reads as
a new finding; `snapshot` drops the columns least needed before a state or reason is cut."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
HEADS = ("CRITICAL", "WARNING", "INFO", "first red error", "where it shows", "note:")


def _in_terminal(argv: list[str], cols: int = 80) -> str:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env |= {"TERM": "xterm-256color", "XDG_STATE_HOME": "/tmp/cockpit-tty-state"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit", *argv], stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    return ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r", "")


@pytest.mark.parametrize("argv", [["diagnose", "48101", "--demo"], ["diagnose", "--demo"]])
def test_folded_lines_hang_under_their_text_at_80_columns(argv):
    out = _in_terminal(argv)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert any(ln.startswith("CRITICAL") for ln in lines), out[:500]
    assert max(len(ln) for ln in lines) <= 80
    stray = [ln for ln in lines if not ln.startswith(" ") and not ln.startswith(HEADS)]
    # the overview's counts (of incidents, of informational findings) head what follows
    stray = [ln for ln in stray if "incident(s)" not in ln and "finding(s)" not in ln]
    assert not stray, stray[:5]
    # the deciding figures survive the fold
    assert "MaxCPUsPerNode" in out and "48" in out


def test_snapshot_drops_columns_before_it_cuts_a_state_or_a_reason():
    out = _in_terminal(["snapshot", "--demo"])
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    cn022 = next(ln for ln in lines if ln.split()[:1] == ["cn022"])
    assert "IDLE+DRAIN+INVALID_REG" in cn022 and "Low RealMemory" in cn022
    cn013 = next(ln for ln in lines if ln.split()[:1] == ["cn013"])
    assert "Kill task failed" in cn013
    assert not any("…" in ln for ln in lines)
    # and says what it left out
    assert any("not shown at this width" in ln and "Mem alloc/total" in ln for ln in lines)
    cpu = next(ln for ln in lines if ln.split()[:1] == ["cpu*"])
    assert "48" in cpu.split()  # the partition's MaxCPUsPerNode, the demo's deciding limit


@pytest.mark.parametrize("argv", [["watch", "--demo", "--once"], ["alerts", "--demo"]])
def test_alert_lines_fold_under_their_head_at_80_columns(argv, tmp_path):
    """`watch --once` and `alerts` printed one long line per alert and the terminal cut it
    mid-word at column 80 ('…@demo-hpc  n' / 'ode cn013 entered DRAIN')."""
    out = _in_terminal(argv)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert lines and max(len(ln) for ln in lines) <= 80
    stray = [ln for ln in lines if not ln.startswith((" ", "20", "cockpit:", "no alerts"))]
    assert not stray, stray[:5]
    assert any("cn013" in ln for ln in lines) or argv[0] == "alerts"
