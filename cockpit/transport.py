"""How the cockpit reaches a cluster: run a command, read a byte range, stat a file.

One async interface (:class:`Transport`) with LocalTransport (asyncio subprocesses),
SshTransport (asyncssh, one connection per cluster) and the demo's in-memory one.
Errors are typed (:class:`TransportError` subclasses) so sources can show them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class CommandResult:
    """Outcome of :meth:`Transport.run`. ``stdout``/``stderr`` are raw bytes."""

    argv: tuple[str, ...]
    stdout: bytes
    stderr: bytes
    exit_status: int


@dataclass(frozen=True, slots=True)
class FileStat:
    size: int  # bytes
    mtime: float  # seconds since the epoch
    # owner, group and st_mode, for reading a path only where a job's user could;
    # None: this transport cannot tell (the demo's in-memory files)
    uid: int | None = None
    gid: int | None = None
    mode: int | None = None


def _file_stat(st: Any) -> FileStat:
    return FileStat(st.st_size, st.st_mtime, st.st_uid, st.st_gid, st.st_mode)


class TransportError(Exception):
    """Base of every transport failure; ``kind`` matches SourceError.kind."""

    kind = "unreachable"

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.where = where


class ConnectError(TransportError):
    kind = "unreachable"


class AuthError(TransportError):
    kind = "auth"


class HostKeyError(TransportError):
    kind = "host_key"


class CommandTimeout(TransportError):
    kind = "timeout"


class CommandNotFound(TransportError):
    kind = "command"


class RemoteFileError(TransportError):
    """A file could not be read (missing, permission); ``where`` is the path."""

    kind = "command"


@runtime_checkable
class Transport(Protocol):
    name: str

    async def run(self, argv: list[str] | tuple[str, ...], timeout: float = 30.0) -> CommandResult:
        """Run argv (never through a shell locally; ``shlex.join`` over SSH).

        Raises CommandNotFound, CommandTimeout, ConnectError/AuthError/HostKeyError.
        A non-zero exit is *not* an error: callers read ``exit_status``.
        """
        ...

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes of ``path`` from byte ``offset``. Raises RemoteFileError."""
        ...

    async def stat(self, path: str) -> FileStat:
        """Size, mtime, owner and mode of ``path``. Raises RemoteFileError."""
        ...

    async def lstat(self, path: str) -> FileStat:
        """:meth:`stat` of ``path`` itself when it is a symbolic link. Raises RemoteFileError."""
        ...

    async def close(self) -> None: ...


# --------------------------------------------------------------------------- implementations

# asyncssh logs connection chatter at INFO; the TUI draws on stderr, so keep it quiet.
_ASYNCSSH_LOG = logging.getLogger("asyncssh")
_ASYNCSSH_LOG.addHandler(logging.NullHandler())
_ASYNCSSH_LOG.propagate = False

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"


def _where(argv: list[str] | tuple[str, ...]) -> str:
    return " ".join(argv[:3])


class LocalTransport:
    """Commands as local subprocesses (never a shell); files read directly.

    A command that exceeds ``timeout`` is killed (its whole process group) and
    raises CommandTimeout.
    """

    def __init__(self, name: str = "local", env: dict[str, str] | None = None) -> None:
        self.name = name
        # variables laid over the cockpit's environment for every command: PATH with a
        # version lab's wrappers first (lab/version-up.sh), SLURM_CONF of another cluster
        self._env = {**os.environ, **env} if env else None

    async def run(self, argv: list[str] | tuple[str, ...], timeout: float = 30.0) -> CommandResult:
        argv = tuple(argv)
        if self._env is not None and "/" not in argv[0]:
            # the child's PATH decides which squeue runs, not the cockpit's
            found = shutil.which(argv[0], path=self._env.get("PATH"))
            argv = (found, *argv[1:]) if found else argv
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                env=self._env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # so a timeout can kill children too
            )
        except FileNotFoundError:
            raise CommandNotFound(f"{argv[0]}: command not found", where=argv[0]) from None
        except PermissionError as exc:
            raise CommandNotFound(f"{argv[0]}: {exc.strerror}", where=argv[0]) from None
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            _kill_group(proc)
            await proc.wait()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise CommandTimeout(
                f"{_where(argv)} did not answer within {timeout:g} s", where=_where(argv)
            ) from None
        return CommandResult(argv, out, err, proc.returncode if proc.returncode is not None else -1)

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        return await asyncio.to_thread(_read_local, path, offset, length)

    async def stat(self, path: str) -> FileStat:
        return await self._stat(os.stat, path)

    async def lstat(self, path: str) -> FileStat:
        return await self._stat(os.lstat, path)

    async def _stat(self, fn: Callable[[str], Any], path: str) -> FileStat:
        try:
            st = await asyncio.to_thread(fn, path)
        except OSError as exc:
            raise RemoteFileError(f"{path}: {exc.strerror}", where=path) from None
        return _file_stat(st)

    async def close(self) -> None:
        return None


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


def _read_local(path: str, offset: int, length: int) -> bytes:
    # O_NONBLOCK: open() of a FIFO with no writer blocked its thread for ever; a few such
    # threads filled the default executor and q never returned (it waits for them).
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RemoteFileError(f"{path}: {exc.strerror}", where=path) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise RemoteFileError(f"{path}: Is a directory", where=path)
        if not stat.S_ISREG(mode):
            raise RemoteFileError(f"{path}: not a regular file (a FIFO or device)", where=path)
        return os.pread(fd, max(0, length), max(0, offset))
    except OSError as exc:
        raise RemoteFileError(f"{path}: {exc.strerror}", where=path) from None
    finally:
        os.close(fd)


class SshTransport:
    """Commands and files over one reused asyncssh connection (channels, not connections).

    * Host keys are checked against ``known_hosts`` (default ``~/.ssh/known_hosts``);
      ``insecure_ignore_host_key=True`` is the only way to skip the check.
    * ``~/.ssh/config`` is honoured when ``ssh_config`` is true (Host aliases, User,
      IdentityFile, ProxyJump).
    * argv is joined with ``shlex.join`` so remote shells see each argument literally.
    * After a drop the next call reconnects; failed connects back off exponentially
      (1, 2, 4 ... ``max_backoff`` s) and raise ConnectError meanwhile.
    * Files: SFTP on the same connection, falling back to ``tail -c``/``stat`` commands; an
      SFTP call that does not answer within ``file_timeout`` raises CommandTimeout.
    * At most ``max_channels`` commands run at once (OpenSSH's default MaxSessions is 10
      and SFTP holds one): past it sshd refuses the channel ("no more sessions").

    Errors: AuthError (permission denied, unreadable key), HostKeyError (unknown or
    changed host key; the message names the server's SHA256 fingerprint), ConnectError
    (refused, unreachable, DNS, connect timeout), CommandTimeout, CommandNotFound (127).
    """

    def __init__(
        self,
        host: str,
        port: int = 22,
        user: str | None = None,
        key: str | None = None,
        known_hosts: str | None = DEFAULT_KNOWN_HOSTS,
        connect_timeout: float = 10.0,
        *,
        ssh_config: bool = True,
        insecure_ignore_host_key: bool = False,
        name: str | None = None,
        max_backoff: float = 60.0,
        max_channels: int = 8,
        monotonic: Callable[[], float] = time.monotonic,
        file_timeout: float = 30.0,
    ) -> None:
        self.name = name or host
        self.host, self.port, self.user = host, port, user
        self.key = os.path.expanduser(key) if key else None
        self.known_hosts = os.path.expanduser(known_hosts) if known_hosts else None
        self.connect_timeout = connect_timeout
        self.ssh_config = ssh_config
        self.insecure_ignore_host_key = insecure_ignore_host_key
        self.max_backoff = max_backoff
        self.file_timeout = file_timeout  # one SFTP stat or read
        self._monotonic = monotonic
        self._conn: Any = None
        self._sftp: Any = None
        self._sftp_broken = False
        self._regular: set[str] = set()  # paths SFTP-stat'ed as regular files (read_range)
        self._lock = asyncio.Lock()
        self._channels = asyncio.Semaphore(max(1, max_channels))
        self._failures = 0
        self._retry_at = 0.0
        self._last_error: TransportError | None = None
        self.connects = 0  # how many connections were opened (tests, benchmarks)

    @property
    def target(self) -> str:
        return f"{self.user + '@' if self.user else ''}{self.host}:{self.port}"

    def _options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {
            "port": self.port,
            "connect_timeout": self.connect_timeout,
            "keepalive_interval": 30,
            "keepalive_count_max": 3,
        }
        if self.user:
            opts["username"] = self.user
        if self.key:
            opts["client_keys"] = [self.key]
        if self.insecure_ignore_host_key:
            opts["known_hosts"] = None
        else:
            # A missing known_hosts file means "nothing is trusted", never "trust all".
            path = self.known_hosts
            opts["known_hosts"] = path if path and Path(path).exists() else ([], [], [])
        if not self.ssh_config:
            opts["config"] = None
        return opts

    async def _connection(self) -> Any:
        import asyncssh

        async with self._lock:
            if self._conn is not None and not self._conn.is_closed():
                return self._conn
            self._conn, self._sftp, self._sftp_broken = None, None, False
            now = self._monotonic()
            if now < self._retry_at and self._last_error is not None:
                wait = self._retry_at - now
                raise type(self._last_error)(
                    f"{self._last_error.message} (next retry in {wait:.0f} s)",
                    where=self._last_error.where,
                )
            try:
                conn = await asyncio.wait_for(
                    asyncssh.connect(self.host, **self._options()), self.connect_timeout + 2
                )
            except TransportError as exc:
                self._note_failure(exc)
                raise
            except Exception as exc:  # asyncssh/OSError zoo -> typed errors
                err = await self._classify(exc)
                self._note_failure(err)
                raise err from None
            self._conn = conn
            self._failures, self._retry_at, self._last_error = 0, 0.0, None
            self.connects += 1
            return conn

    def _note_failure(self, err: TransportError) -> None:
        self._failures += 1
        self._last_error = err
        self._retry_at = self._monotonic() + min(self.max_backoff, 2 ** (self._failures - 1))

    async def _classify(self, exc: BaseException) -> TransportError:
        import asyncssh

        where = f"ssh {self.target}"
        if isinstance(exc, asyncssh.PermissionDenied):
            return AuthError(
                f"ssh {self.target}: permission denied (key {self.key or 'default'})", where
            )
        if isinstance(exc, asyncssh.HostKeyNotVerifiable):
            fp = await self._fingerprint()
            known = self.known_hosts or DEFAULT_KNOWN_HOSTS
            return HostKeyError(
                f"ssh {self.target}: host key {fp or '(unknown)'} is not trusted by {known} "
                f"(unknown or changed host key; verify it and add it with ssh-keyscan)",
                where,
            )
        if isinstance(exc, asyncssh.KeyImportError | asyncssh.KeyEncryptionError):
            return AuthError(f"ssh {self.target}: cannot use key {self.key}: {exc}", where)
        if isinstance(exc, ConnectionRefusedError):
            return ConnectError(f"ssh {self.target}: connection refused", where)
        if isinstance(exc, TimeoutError | asyncio.TimeoutError):
            return ConnectError(
                f"ssh {self.target}: no answer within {self.connect_timeout:g} s", where
            )
        if isinstance(exc, FileNotFoundError):
            return AuthError(f"ssh {self.target}: {exc.strerror}: {exc.filename}", where)
        if isinstance(exc, OSError):
            return ConnectError(f"ssh {self.target}: {exc.strerror or exc}", where)
        if isinstance(exc, asyncssh.DisconnectError):
            return ConnectError(f"ssh {self.target}: {exc.reason}", where)
        return ConnectError(f"ssh {self.target}: {type(exc).__name__}: {exc}", where)

    async def _fingerprint(self) -> str:
        import asyncssh

        try:
            key = await asyncio.wait_for(
                asyncssh.get_server_host_key(
                    self.host, self.port, config=None if not self.ssh_config else ()
                ),
                self.connect_timeout,
            )
        except Exception:
            return ""
        return key.get_fingerprint("sha256") if key else ""

    def _drop(self) -> None:
        conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.close()

    async def run(self, argv: list[str] | tuple[str, ...], timeout: float = 30.0) -> CommandResult:
        import asyncssh

        argv = tuple(argv)
        conn = await self._connection()
        try:
            # asyncssh's timeout starts once the channel is open; a frozen server (SIGSTOPped
            # sshd, a hung host) never answers the open, and keepalives notice only after
            # minutes. The outer bound turns that into a timeout within one command's budget.
            async with self._channels, asyncio.timeout(timeout + self.connect_timeout):
                res = await conn.run(shlex.join(argv), check=False, timeout=timeout, encoding=None)
        except asyncssh.TimeoutError:
            raise CommandTimeout(
                f"{_where(argv)} did not answer within {timeout:g} s", where=_where(argv)
            ) from None
        except TimeoutError:
            # the outer bound (asyncssh.TimeoutError, a subclass, is the command's own)
            # the connection is not answering: the next call reconnects (or fails fast)
            self._drop()
            raise CommandTimeout(
                f"ssh {self.target}: no answer to {_where(argv)} "
                f"within {timeout + self.connect_timeout:g} s "
                "(server or network not responding)",
                where=f"ssh {self.target}",
            ) from None
        except asyncssh.ChannelOpenError as exc:
            # The connection is fine (sshd's MaxSessions below max_channels): keep it and its
            # other channels.
            raise ConnectError(
                f"ssh {self.target}: channel refused: {exc.reason}", where=f"ssh {self.target}"
            ) from None
        except (asyncssh.Error, OSError) as exc:
            self._drop()  # connection lost: the next call reconnects
            raise ConnectError(
                f"ssh {self.target}: connection lost: {exc}", where=f"ssh {self.target}"
            ) from None
        stdout = res.stdout or b""
        stderr = res.stderr or b""
        status = res.exit_status if res.exit_status is not None else -1  # killed by a signal
        if status == 127 and b"not found" in stderr:
            raise CommandNotFound(f"{argv[0]}: command not found on {self.host}", where=argv[0])
        return CommandResult(argv, bytes(stdout), bytes(stderr), int(status))

    async def _sftp_client(self) -> Any:
        if self._sftp_broken:
            return None
        conn = await self._connection()
        if self._sftp is None:
            try:
                self._sftp = await conn.start_sftp_client()
            except Exception:
                self._sftp_broken = True  # no sftp subsystem: use commands
                return None
        return self._sftp

    async def _sftp_call(self, what: str, path: str, call: Any) -> Any:
        """``await call`` (an SFTP request on ``path``) within ``file_timeout``; typed errors.

        sftp-server answers one request at a time: one stuck on a hung NFS mount holds every
        later read, so a timeout also drops the SFTP session (the next call opens another).
        """
        import asyncssh

        try:
            return await asyncio.wait_for(call, self.file_timeout)
        except TimeoutError:
            sftp, self._sftp = self._sftp, None
            if sftp is not None:
                sftp.exit()
            raise CommandTimeout(
                f"ssh {self.target}: no answer to sftp {what} {path} "
                f"within {self.file_timeout:g} s",
                where=path,
            ) from None
        except asyncssh.SFTPError as exc:
            raise RemoteFileError(f"{path}: {exc.reason}", where=path) from None
        except (asyncssh.Error, OSError) as exc:
            self._drop()
            raise ConnectError(
                f"ssh {self.target}: connection lost: {exc}", where=f"ssh {self.target}"
            ) from None

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        sftp = await self._sftp_client()
        if sftp is not None:
            if path not in self._regular:
                # sftp-server is single-threaded: open() of a remote FIFO blocks it, and with
                # it every later log read on this connection, for ever. stat does not block.
                mode = (await self._sftp_call("stat", path, sftp.stat(path))).permissions
                if mode is not None and not stat.S_ISREG(mode):
                    what = (
                        "Is a directory"
                        if stat.S_ISDIR(mode)
                        else "not a regular file (a FIFO or device)"
                    )
                    raise RemoteFileError(f"{path}: {what}", where=path)
                if len(self._regular) > 1000:
                    self._regular.clear()
                self._regular.add(path)

            async def read() -> bytes:
                async with sftp.open(path, "rb") as f:
                    await f.seek(max(0, offset))
                    return bytes(await f.read(max(0, length)) or b"")

            return await self._sftp_call("read", path, read())
        script = f"tail -c +{max(0, offset) + 1} -- {shlex.quote(path)} | head -c {max(0, length)}"
        res = await self.run(["sh", "-c", script], timeout=self.file_timeout)
        # The pipeline's status is head's (0): a missing file shows only on tail's stderr.
        if (res.exit_status != 0 or res.stderr.strip()) and not res.stdout:
            raise RemoteFileError(
                f"{path}: {res.stderr.decode(errors='replace').strip()}", where=path
            )
        return res.stdout

    async def stat(self, path: str) -> FileStat:
        return await self._stat(path, follow=True)

    async def lstat(self, path: str) -> FileStat:
        return await self._stat(path, follow=False)

    async def _stat(self, path: str, follow: bool) -> FileStat:
        sftp = await self._sftp_client()
        if sftp is not None:
            call = sftp.stat(path) if follow else sftp.lstat(path)
            attrs = await self._sftp_call("stat" if follow else "lstat", path, call)
            return FileStat(
                size=int(attrs.size or 0),
                mtime=float(attrs.mtime or 0),
                uid=attrs.uid,
                gid=attrs.gid,
                mode=attrs.permissions,
            )
        argv = ["stat", *(["-L"] if follow else []), "-c", "%s %Y %u %g %f", "--", path]
        res = await self.run(argv, timeout=min(15.0, self.file_timeout))
        try:
            size, mtime, uid, gid, mode = res.stdout.split()
            return FileStat(int(size), float(mtime), int(uid), int(gid), int(mode, 16))
        except ValueError:
            raise RemoteFileError(
                f"{path}: {res.stderr.decode(errors='replace').strip()}", where=path
            ) from None

    async def close(self) -> None:
        async with self._lock:
            conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.close()
            try:
                await conn.wait_closed()
            except Exception:
                pass
