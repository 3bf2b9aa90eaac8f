"""``cockpit alerts --history FILE`` on a file no history writer made: one line on stderr and
exit 2 for what cannot be read, never a traceback or a hang."""

from __future__ import annotations

import os
import subprocess
import sys

from cockpit.watch.history import AlertHistory

LINE = (
    '{"time": "2026-12-05T01:29:02+00:00", "rule": "node_unhealthy", "severity": "critical",'
    ' "subject": {"kind": "node", "source": "lab", "id": "c2"}, "title": "node c2 DRAIN",'
    ' "source": "lab"}'
)


def alerts(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    env = {**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    return subprocess.run(
        [sys.executable, "-m", "cockpit", "alerts", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_a_line_of_deeply_nested_brackets_is_skipped_not_a_traceback(tmp_path):
    path = tmp_path / "alerts.jsonl"
    path.write_text(LINE + "\n" + '{"time": ' + "[" * 100_000 + "\n" + LINE + "\n")
    history = AlertHistory(path)
    assert len(history.load(None)) == 2
    assert history.skipped == 1
    done = alerts("--history", str(path))
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0 and done.stdout.count("node c2 DRAIN") == 2
    assert "skipped 1 malformed line" in done.stderr


def test_a_named_pipe_without_a_writer_is_refused_at_once(tmp_path):
    fifo = tmp_path / "alerts.jsonl"
    os.mkfifo(fifo)
    done = alerts("--history", str(fifo), timeout=20)  # it waited for a writer forever
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"cockpit: cannot read {fifo}: not a regular file"
    ], done.stderr


def test_a_device_is_refused_not_read_until_memory_runs_out():
    done = alerts("--history", "/dev/zero", timeout=20)  # MemoryError after ~2 GB before
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip() == "cockpit: cannot read /dev/zero: not a regular file"


def test_a_folder_is_one_line(tmp_path):
    done = alerts("--history", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip() == f"cockpit: cannot read {tmp_path}: Is a directory"


def test_a_history_path_that_is_not_there_is_an_error_not_a_quiet_history(tmp_path):
    """A mistyped --history said 'no alerts' and exit 0: to a script, all quiet."""
    r = alerts("--history", str(tmp_path / "alerts.josnl"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip() == f"cockpit: {tmp_path / 'alerts.josnl'}: no such alert history"
    assert "no alerts" not in r.stdout
    real = tmp_path / "alerts.jsonl"
    real.write_text(LINE + "\n")
    r = alerts("--history", str(real))
    assert r.returncode == 0 and "node c2 DRAIN" in r.stdout, r.stdout + r.stderr
