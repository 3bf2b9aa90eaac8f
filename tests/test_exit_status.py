"""One exit-status scheme for every command (README "Exit status"): 0 fine, 1 something to act
on, 2 a usage or configuration error, 3 no source answered; scan-log answers as grep does."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from tests.cli_support import run_cockpit


def _dead_config(tmp_path) -> str:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = tmp_path / "dead.toml"
    cfg.write_text(
        f'[clusters.dead]\ntransport = "ssh"\nhost = "127.0.0.1"\nport = {port}\n'
        'user = "nobody"\ninsecure_ignore_host_key = true\nconnect_timeout = 2\n'
    )
    return str(cfg)


def _run(tmp_path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    return run_cockpit(*argv, timeout=120, env=env)


@pytest.mark.parametrize(
    "argv",
    [
        ["snapshot"],
        ["incidents"],
        ["watch", "--once"],
        ["check-config"],
        ["diagnose", "42", "--cluster", "dead"],
    ],
    ids=lambda a: a[0],
)
def test_no_source_answering_is_status_3_for_every_command(tmp_path, argv):
    res = _run(tmp_path, *argv, "--config", _dead_config(tmp_path))
    assert res.returncode == 3, (res.returncode, res.stdout[-500:], res.stderr[-500:])
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["snapshot", "--demo"], 0),
        (["incidents", "--demo"], 1),  # the demo has critical incidents open
        (["diagnose", "--demo", "48101"], 1),  # a job that never runs: critical
        (["snapshot", "--config", "/nonexistent/cockpit.toml"], 2),
        (["check-config", "--config", "/nonexistent/cockpit.toml"], 2),
        (["incidents", "--no-such-option"], 2),
    ],
    ids=["snapshot-ok", "incidents-found", "diagnose-critical", "missing-config",
         "check-config-missing", "usage"],
)  # fmt: skip
def test_each_commands_status_follows_the_one_scheme(tmp_path, argv, status):
    res = _run(tmp_path, *argv)
    assert res.returncode == status, (res.returncode, res.stderr[-500:])
    assert "Traceback" not in res.stderr
