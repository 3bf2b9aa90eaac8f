"""Regressions found by breaking Cockpit as an on-call operator would (dying servers, hostile input)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from cockpit.config import load_config
from cockpit.errors import ConfigError
from cockpit.sources.transport import SshTransport


@pytest.mark.lab
async def test_ssh_many_concurrent_commands_stay_within_sshd_max_sessions(lab_ssh):
    # OpenSSH refuses the 11th channel ("no more sessions"); the transport used to call that
    # "connection lost", drop the connection and kill every command in flight -> pane STALE.
    t = SshTransport(lab_ssh.ssh_host, lab_ssh.ssh_port, lab_ssh.ssh_user, lab_ssh.ssh_key, lab_ssh.ssh_known_hosts,
                     ssh_config=False)
    try:
        results = await asyncio.gather(*(t.run(["sleep", "0.3"]) for _ in range(24)), return_exceptions=True)
        assert [getattr(r, "exit_status", r) for r in results] == [0] * 24
        assert t.connects == 1
    finally:
        await t.close()


@pytest.mark.parametrize(("line", "key"), [
    ("interval = nan", "interval"),  # passed the 5 s floor, then polled every second
    ("interval = inf", "interval"),  # never polled again
    ("command_timeout = -1", "command_timeout"),  # every command timed out at once
    ("connect_timeout = 0", "connect_timeout"),
    ("connect_timeout = nan", "connect_timeout"),
])
def test_config_rejects_non_finite_intervals_and_timeouts(tmp_path, line, key):
    p = tmp_path / "c.toml"
    p.write_text(f'[clusters.lab]\ntransport = "local"\n{line}\n')
    with pytest.raises(ConfigError, match=rf"c.toml:3: \[clusters.lab.{key}\]"):
        load_config(p)
    res = subprocess.run([sys.executable, "-m", "cockpit", "check-config", "--config", str(p)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr and key in res.stderr


def test_config_keeps_finite_intervals_and_timeouts(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[clusters.lab]\ntransport = "local"\ninterval = 7.5\ncommand_timeout = 3\nconnect_timeout = 0.5\n')
    c = load_config(p).clusters["lab"]
    assert (c.interval, c.command_timeout, c.connect_timeout) == (7.5, 3.0, 0.5)
