"""Regressions found by breaking Cockpit as an on-call operator would (dying servers, hostile input)."""

from __future__ import annotations

import asyncio

import pytest

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
