"""How the cockpit reaches a cluster: run a command, read a byte range, stat a file.

One async interface (:class:`Transport`) with LocalTransport (asyncio subprocesses),
SshTransport (asyncssh, one connection per cluster) and the demo's in-memory one.
Errors are typed (:class:`TransportError` subclasses) so sources can show them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


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
        """Size and mtime of ``path``. Raises RemoteFileError."""
        ...

    async def close(self) -> None: ...
