"""SshTransport against an in-process asyncssh server: no root, no lab, no sshd.

The server listens on 127.0.0.1 (a free port), trusts one client key generated into
tmp, serves SFTP rooted at a tmp directory and runs commands with ``sh -c`` in it.
What an operator would notice: command output and exit status, log bytes and owner/mode,
a connection dropped mid-read as a typed error followed by a working next call, and an
unknown host key refused with a message naming its fingerprint.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import asyncssh
import pytest

from cockpit.transport import (
    ConnectError,
    HostKeyError,
    RemoteFileError,
    SshTransport,
    TransportError,
)


class _Site:
    """The server's state: its connections (to drop them) and a gate holding slow reads."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.conns: list[asyncssh.SSHServerConnection] = []
        self.hold_reads = False
        self.read_started = asyncio.Event()
        self.gate = asyncio.Event()


def _server_factory(site: _Site):
    class Server(asyncssh.SSHServer):
        def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
            site.conns.append(conn)

    return Server


def _sftp_factory(site: _Site):
    class RootedSFTP(asyncssh.SFTPServer):
        def __init__(self, chan: asyncssh.SSHServerChannel) -> None:
            super().__init__(chan, chroot=os.fsencode(site.root))

        async def read(self, file_obj, offset: int, size: int):  # type: ignore[override]
            if site.hold_reads:
                site.read_started.set()
                await site.gate.wait()  # until the test drops the connection
            return super().read(file_obj, offset, size)

    return RootedSFTP


def _process_factory(site: _Site):
    async def handle(process: asyncssh.SSHServerProcess) -> None:
        proc = await asyncio.create_subprocess_exec(
            "sh",
            "-c",
            process.command or "true",
            cwd=site.root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        process.stdout.write(out)
        process.stderr.write(err)
        process.exit(proc.returncode or 0)

    return handle


@pytest.fixture
async def ssh_site(tmp_path: Path):
    root = tmp_path / "remote"
    (root / "logs").mkdir(parents=True)
    host_key = asyncssh.generate_private_key("ssh-ed25519")
    client_key = asyncssh.generate_private_key("ssh-ed25519")
    key_path = tmp_path / "id_ed25519"
    client_key.write_private_key(str(key_path))
    key_path.chmod(0o600)
    site = _Site(root)
    acceptor = await asyncssh.create_server(
        _server_factory(site),
        "127.0.0.1",
        0,
        server_host_keys=[host_key],
        authorized_client_keys=asyncssh.import_authorized_keys(
            client_key.export_public_key().decode()
        ),
        sftp_factory=_sftp_factory(site),
        process_factory=_process_factory(site),
        encoding=None,
    )
    port = acceptor.sockets[0].getsockname()[1]
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{port} {host_key.export_public_key().decode()}")
    transports: list[SshTransport] = []

    def transport(known_hosts: Path = known) -> SshTransport:
        t = SshTransport(
            "127.0.0.1",
            port,
            "operator",
            str(key_path),
            str(known_hosts),
            connect_timeout=5,
            ssh_config=False,
            file_timeout=10,
        )
        transports.append(t)
        return t

    site.transport = transport  # type: ignore[attr-defined]
    site.port = port  # type: ignore[attr-defined]
    yield site
    site.gate.set()
    for t in transports:
        await t.close()
    acceptor.close()
    await acceptor.wait_closed()


async def test_runs_a_command_with_quoted_arguments_and_its_exit_status(ssh_site):
    t = ssh_site.transport()
    res = await t.run(["printf", "%s|", "job name; rm -rf /", "$HOME"])
    # shlex.join on the way: the remote shell saw three words, ran nothing else
    assert res.stdout == b"job name; rm -rf /|$HOME|" and res.exit_status == 0
    res = await t.run(["sh", "-c", "echo boom >&2; exit 3"])
    assert (res.stderr, res.exit_status) == (b"boom\n", 3)
    assert t.connects == 1  # one connection reused across commands


async def test_reads_byte_ranges_and_stats_owner_group_and_mode(ssh_site):
    log = ssh_site.root / "logs" / "slurm-42.out"
    log.write_bytes(b"step 1 ok\nslurmstepd: error: Detected 1 oom_kill event\n")
    log.chmod(0o640)
    (ssh_site.root / "logs" / "latest.out").symlink_to("slurm-42.out")
    t = ssh_site.transport()
    assert await t.read_range("/logs/slurm-42.out", 10, 10) == b"slurmstepd"
    assert await t.read_range("/logs/slurm-42.out", 0, 1 << 20) == log.read_bytes()
    st = await t.stat("/logs/slurm-42.out")
    real = log.stat()
    assert (st.size, st.uid, st.gid) == (real.st_size, real.st_uid, real.st_gid)
    assert stat.S_ISREG(st.mode) and stat.S_IMODE(st.mode) == 0o640
    # stat follows the link, lstat sees the link itself (what job paths check)
    assert stat.S_ISREG((await t.stat("/logs/latest.out")).mode)
    assert stat.S_ISLNK((await t.lstat("/logs/latest.out")).mode)
    with pytest.raises(RemoteFileError) as ei:
        await t.read_range("/logs/slurm-43.out", 0, 100)
    assert "/logs/slurm-43.out" in str(ei.value)
    with pytest.raises(RemoteFileError, match="Is a directory"):
        await t.read_range("/logs", 0, 100)


async def test_a_connection_dropped_mid_read_is_a_typed_error_then_reconnects(ssh_site):
    (ssh_site.root / "logs" / "slurm-7.out").write_bytes(b"x" * 4096)
    t = ssh_site.transport()
    assert (await t.run(["true"])).exit_status == 0
    ssh_site.hold_reads = True
    read = asyncio.create_task(t.read_range("/logs/slurm-7.out", 0, 4096))
    await asyncio.wait_for(ssh_site.read_started.wait(), 10)
    ssh_site.conns[-1].abort()  # the network goes away under the read
    with pytest.raises(TransportError) as ei:
        await asyncio.wait_for(read, 10)
    assert isinstance(ei.value, ConnectError), repr(ei.value)
    assert "connection lost" in str(ei.value)
    ssh_site.hold_reads = False
    # the next call opens a new connection by itself
    assert await t.read_range("/logs/slurm-7.out", 0, 8) == b"x" * 8
    assert (await t.run(["echo", "back"])).stdout == b"back\n"
    assert t.connects == 2


async def test_an_unknown_host_key_is_refused_naming_its_fingerprint(ssh_site, tmp_path):
    other = asyncssh.generate_private_key("ssh-ed25519")
    wrong = tmp_path / "known_hosts.other"
    wrong.write_text(f"[127.0.0.1]:{ssh_site.port} {other.export_public_key().decode()}")
    t = ssh_site.transport(known_hosts=wrong)
    with pytest.raises(HostKeyError) as ei:
        await t.run(["true"])
    msg = str(ei.value)
    assert "not trusted" in msg and str(wrong) in msg
    assert "SHA256:" in msg  # the fingerprint to check with the cluster's admins
    assert t.connects == 0
    # an empty known_hosts trusts nothing either (never "trust on first use")
    empty = tmp_path / "known_hosts.empty"
    empty.write_text("")
    with pytest.raises(HostKeyError):
        await ssh_site.transport(known_hosts=empty).run(["true"])
