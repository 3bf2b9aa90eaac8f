"""Transports (local always; SSH with the lab's loopback sshd) and SlurmSource over a fake one."""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.model import Subject
from cockpit.slurm.commands import NODES_ARGV, PARTITIONS_ARGV, SQUEUE_ARGV
from cockpit.slurm.source import SlurmSource
from cockpit.transport import (
    AuthError,
    CommandNotFound,
    CommandResult,
    CommandTimeout,
    ConnectError,
    FileStat,
    HostKeyError,
    LocalTransport,
    RemoteFileError,
    SshTransport,
)

LAB = Path(__file__).parent / "fixtures" / "lab"

# --------------------------------------------------------------------------- local


async def test_local_run_no_shell():
    res = await LocalTransport().run(["echo", "a b; $(id)"])
    assert res.stdout == b"a b; $(id)\n" and res.exit_status == 0


async def test_local_nonzero_is_not_an_error():
    res = await LocalTransport().run(
        [sys.executable, "-c", "import sys; sys.stderr.write('bad'); sys.exit(3)"]
    )
    assert res.exit_status == 3 and res.stderr == b"bad"


async def test_local_timeout_kills():
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout):
        await LocalTransport().run(["sleep", "30"], timeout=0.5)
    assert time.monotonic() - t0 < 5


async def test_local_not_found():
    with pytest.raises(CommandNotFound):
        await LocalTransport().run(["no-such-command-xyz"])


async def test_local_read_range_and_stat(tmp_path):
    p = tmp_path / "f.log"
    p.write_bytes(b"0123456789")
    t = LocalTransport()
    assert await t.read_range(str(p), 3, 4) == b"3456"
    assert (await t.stat(str(p))).size == 10
    with pytest.raises(RemoteFileError):
        await t.stat(str(tmp_path / "missing"))


# --------------------------------------------------------------------------- SSH (lab sshd)


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.lab
async def test_ssh_run_quoting_reuse_and_files(lab_ssh):
    t = SshTransport(
        lab_ssh.ssh_host,
        lab_ssh.ssh_port,
        lab_ssh.ssh_user,
        lab_ssh.ssh_key,
        lab_ssh.ssh_known_hosts,
        ssh_config=False,
    )
    try:
        results = await asyncio.gather(*(t.run(["echo", "a b; $(id) `x`"]) for _ in range(6)))
        assert all(r.stdout == b"a b; $(id) `x`\n" for r in results)
        assert t.connects == 1  # one connection, many channels
        st = await t.stat(lab_ssh.ctld_log)
        data = await t.read_range(lab_ssh.ctld_log, 0, 64)
        assert st.size > 0 and data.startswith(b"[")
        with pytest.raises(RemoteFileError):
            await t.read_range("/no/such/file", 0, 10)
        with pytest.raises(CommandTimeout):
            await t.run(["sleep", "10"], timeout=0.5)
        t._conn.close()  # the connection drops: next call reconnects
        await asyncio.sleep(0.1)
        assert (await t.run(["true"])).exit_status == 0 and t.connects == 2
    finally:
        await t.close()


@pytest.mark.lab
async def test_ssh_unknown_host_key_names_fingerprint(lab_ssh, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    t = SshTransport(
        lab_ssh.ssh_host,
        lab_ssh.ssh_port,
        lab_ssh.ssh_user,
        lab_ssh.ssh_key,
        str(empty),
        ssh_config=False,
    )
    with pytest.raises(HostKeyError, match=r"SHA256:\S+"):
        await t.run(["true"])
    src = SlurmSource("lab", t)
    snap = await src.poll()
    assert snap.error is not None and snap.error.kind == "host_key"


@pytest.mark.lab
async def test_ssh_refused_and_auth(lab_ssh, tmp_path):
    t = SshTransport(
        "127.0.0.1",
        _free_port(),
        "root",
        lab_ssh.ssh_key,
        lab_ssh.ssh_known_hosts,
        ssh_config=False,
    )
    with pytest.raises(ConnectError, match="refused"):
        await t.run(["true"])
    with pytest.raises(ConnectError, match="next retry"):  # backoff, no hammering
        await t.run(["true"])
    t2 = SshTransport(
        lab_ssh.ssh_host,
        lab_ssh.ssh_port,
        "nobody",
        lab_ssh.ssh_key,
        lab_ssh.ssh_known_hosts,
        ssh_config=False,
    )
    with pytest.raises(AuthError, match="permission denied"):
        await t2.run(["true"])


# ---------------------------------------------------------------- SlurmSource over a fake transport


class FakeTransport:
    name = "fake"

    def __init__(
        self, answers: dict[tuple[str, ...], CommandResult | Exception], delay: float = 0.0
    ):
        self.answers, self.delay, self.calls = answers, delay, []

    async def run(self, argv, timeout=30.0):
        self.calls.append(tuple(argv))
        await asyncio.sleep(self.delay)
        ans = self.answers.get(tuple(argv)) or self.answers.get(tuple(argv[:1]))
        if isinstance(ans, Exception):
            raise ans
        if ans is None:
            return CommandResult(tuple(argv), b"", b"", 0)
        return ans

    async def read_range(self, path, offset, length):
        return b""

    async def stat(self, path):
        return FileStat(0, 0.0)

    async def close(self):
        pass


def _ok(argv, text: str) -> CommandResult:
    return CommandResult(argv, text.encode(), b"", 0)


def _lab_answers() -> dict:
    squeue = (LAB / "overview" / "squeue_o.txt").read_text()
    return {
        SQUEUE_ARGV: _ok(SQUEUE_ARGV, squeue),
        NODES_ARGV: _ok(NODES_ARGV, (LAB / "drained" / "scontrol_show_node.txt").read_text()),
        PARTITIONS_ARGV: _ok(
            PARTITIONS_ARGV, (LAB / "drained" / "scontrol_show_partition.txt").read_text()
        ),
    }


def _clock():
    return datetime(2026, 11, 29, 20, 30, tzinfo=UTC)


async def test_source_poll_coalesces_and_counts():
    t = FakeTransport(_lab_answers(), delay=0.05)
    src = SlurmSource("lab", t, clock=_clock)
    a, b = await asyncio.gather(src.poll(), src.poll())
    assert a is b and a.ok and a.taken_at == _clock()
    assert src.command_counts == {
        "scontrol --version": 1,  # once per connection (cockpit.slurm.versions)
        "squeue": 1,
        "scontrol show node": 1,
        "scontrol show partition": 1,
        "sacct": 1,  # the backfill: failed jobs squeue no longer lists (cockpit.slurm.backfill)
        "sstat": 1,  # the at-risk sampler: its running jobs' MaxRSS, one call (slurm.risk)
        # ... and the memory they hold (squeue's MIN_MEMORY hides --mem-per-cpu), once per job
        "squeue -O": 1,
    }
    assert (
        any(n.reason == "lab: ECC errors on DIMM B2" for n in a.nodes)
        and a.slurm_version == "22.05.8"
    )


@pytest.mark.parametrize(
    ("answer", "kind", "words"),
    [
        (
            CommandResult(
                SQUEUE_ARGV,
                b"",
                b"slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n",
                1,
            ),
            "unreachable",
            "Unable to contact slurm controller",
        ),
        (
            CommandTimeout("squeue did not answer within 20 s", "squeue"),
            "timeout",
            "did not answer",
        ),
        (CommandNotFound("squeue: command not found", "squeue"), "command", "not found"),
        (ConnectError("ssh root@h:22: connection refused", "ssh"), "unreachable", "refused"),
        (CommandResult(SQUEUE_ARGV, b"total junk\n", b"", 0), "parse", "no usable row"),
    ],
)
async def test_source_failures_become_snapshot_errors(answer, kind, words):
    answers = _lab_answers()
    answers[SQUEUE_ARGV] = answer
    snap = await SlurmSource("lab", FakeTransport(answers), clock=_clock).poll()
    assert snap.error is not None and snap.error.kind == kind and words in snap.error.message
    assert snap.jobs == ()


async def test_artifacts_refuse_crafted_ids():
    src = SlurmSource("lab", FakeTransport(_lab_answers()), clock=_clock)
    snap = await src.poll()
    for bad in ("1; rm -rf /", "$(id)", "-j", "12 13"):
        with pytest.raises(ValueError):
            await src.artifacts(Subject("job", "lab", bad), snap)
    with pytest.raises(ValueError):
        await src.artifacts(Subject("node", "lab", "c1;reboot"), snap)
    with pytest.raises(ValueError):
        await src.read_range("relative/path", 0, 10)
