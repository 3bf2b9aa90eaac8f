"""SFTP stat and read have deadlines: a hung sftp-server (a stuck NFS mount, a FIFO) must not
hold a log read, and with it the evidence round, for ever."""

from __future__ import annotations

import asyncio
import time

import pytest

from cockpit.transport import CommandTimeout, SshTransport


class HungSftp:
    """An SFTP session whose server never answers."""

    def __init__(self) -> None:
        self.exited = False

    async def stat(self, path):
        await asyncio.sleep(3600)

    lstat = stat

    def open(self, path, mode):
        raise AssertionError("stat never answered: nothing may be opened")

    def exit(self) -> None:
        self.exited = True


@pytest.mark.parametrize("call", ["stat", "lstat", "read_range"])
async def test_a_hung_sftp_call_raises_a_timeout_and_drops_the_session(call):
    t = SshTransport("lab.example", file_timeout=0.2)
    sftp = HungSftp()
    t._sftp = sftp

    async def client():
        return t._sftp

    t._sftp_client = client
    args = ("/var/log/slurm/slurmctld.log", 0, 10) if call == "read_range" else ("/x",)
    started = time.monotonic()
    with pytest.raises(CommandTimeout) as err:
        await getattr(t, call)(*args)
    assert time.monotonic() - started < 2
    assert "no answer to sftp" in str(err.value) and "within 0.2 s" in str(err.value)
    assert sftp.exited and t._sftp is None  # the next call opens a fresh session
