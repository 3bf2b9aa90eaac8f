"""Output piped into less, a ticket or cron mail: one row per line, never a word per line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["XDG_STATE_HOME"] = env.get("XDG_STATE_HOME", "/tmp/cockpit-piped-state")
    return subprocess.run(
        [sys.executable, "-m", "cockpit", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_piped_incidents_are_one_line_each_with_their_fields_tab_separated():
    out = _run("incidents").stdout
    count, header, *rows = out.splitlines()
    assert count.startswith("# ") and "incident(s)" in count
    assert header.split("\t")[:4] == ["severity", "root cause", "subject", "title"]
    assert rows and all(len(r.split("\t")) == 7 for r in rows), out
    # the demo's partition-limit job: severity, cause, subject and title on the same line
    row = next(r.split("\t") for r in rows if "48101" in r)
    assert row[0] == "critical" and row[1] == "pending_partition_limit"
    assert "MaxCPUsPerNode 48" in row[3]  # whole: a pipe has no width to cut it to
    assert not any("│" in r or "┃" in r for r in rows)  # no box a script must strip


def test_piped_diagnose_does_not_fold_the_remedy():
    out = _run("diagnose", "48101").stdout
    assert any("MaxCPUsPerNode" in ln and "48" in ln for ln in out.splitlines()), out
    assert max(len(ln) for ln in out.splitlines()) > 80  # not squeezed to the default 80


@pytest.mark.parametrize(
    "argv",
    [["snapshot", "--demo"], ["watch", "--demo", "--json"]],
    ids=["snapshot", "watch-loop"],
)
def test_every_command_whose_reader_leaves_exits_141_quietly(argv):
    """`cockpit snapshot | head` exited 1 (Rich's own handler), `watch --json | head` ran on
    for ever: each now ends as a Unix tool does when its reader leaves, without a traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()  # the first line, as `head -1` reads it
    proc.stdout.close()
    assert proc.wait(timeout=90) == 141
    err = proc.stderr.read().decode()
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_piped_snapshot_keeps_every_state_and_reason_whole_at_80_columns():
    """`COLUMNS=80 cockpit snapshot | less` squeezed 11 columns to `IDLE+DR…` and a reason to
    `Kill`: piped, each row is one tab-separated line, whatever the width."""
    env = {**os.environ, "COLUMNS": "80", "XDG_STATE_HOME": "/tmp/cockpit-piped-state"}
    out = subprocess.run(
        [sys.executable, "-m", "cockpit", "snapshot", "--demo"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    ).stdout  # fmt: skip
    lines = out.splitlines()
    nodes = lines.index("# Nodes")
    assert lines[nodes + 1].split("\t")[:2] == ["Node", "State"]
    drained = [ln.split("\t") for ln in lines[nodes + 2 :] if "DRAIN" in ln and "\t" in ln]
    assert drained and all(len(r) == 8 for r in drained), drained
    assert any(r[1].endswith("DRAIN") and len(r[5]) > 10 for r in drained), drained
    assert "…" not in out and "┃" not in out


def test_piped_diagnose_never_breaks_a_line_a_grep_would_read_as_a_new_record():
    lines = _run("diagnose", "--demo").stdout.splitlines()
    # every line of a finding is indented under it or is a finding's own head
    heads = ("CRITICAL", "WARNING", "INFO", "where", "first", " ", "")
    stray = [ln for ln in lines[1:] if not ln.startswith(heads)]
    assert not stray, stray[:5]


def test_watch_once_whose_reader_left_exits_141():
    """`cockpit watch --once --demo | true` exited 1 (something fired) although nothing it
    printed was read; as the other commands, 141 when the reader left before the output."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "watch", "--once", "--demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # as `| true`: gone before the first line
    assert proc.wait(timeout=90) == 141
    assert b"Traceback" not in proc.stderr.read()
