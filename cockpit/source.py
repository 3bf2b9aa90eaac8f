"""What every source offers the app and the CLI.

A source does I/O only: ``poll()`` returns an immutable Snapshot (never raises for
remote trouble: the Snapshot carries a SourceError), ``artifacts()`` fetches the
on-demand evidence for one subject (sacct rows, log ranges, events) for the engine.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from cockpit.model import Artifacts, LogLocation, Snapshot, SourceKind, Subject
from cockpit.transport import FileStat


@runtime_checkable
class Source(Protocol):
    name: str
    kind: SourceKind
    interval: float  # seconds between polls

    async def poll(self) -> Snapshot:
        """One collection. Failures become ``Snapshot(error=SourceError(...))``."""
        ...

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        """Evidence for one subject, fetched on demand (drill-down, diagnose CLI).

        Cached until the next poll. Failures are reported as warnings, never raised.
        """
        ...

    def log_locations(self, subject: Subject, snapshot: Snapshot) -> list[tuple[str, LogLocation]]:
        """Named logs for a subject: [("stdout", loc), ("slurmctld.log", loc), ...]."""
        ...

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Bytes of a log served by this source (local, SSH, demo, API preview)."""
        ...

    async def stat(self, path: str) -> FileStat: ...

    async def close(self) -> None: ...
