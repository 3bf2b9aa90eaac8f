"""The contract between a platform (Slurm, ModelArts, the demo) and the rest of the cockpit.

A source does I/O only: ``poll()`` returns an immutable Snapshot (never raises for
remote trouble: the Snapshot carries a SourceError), ``artifacts()`` fetches the
on-demand evidence for one subject (sacct rows, log ranges, events) for the engine.

Optional capabilities have defaults here instead of being probed with ``getattr``
(harlequin's adapter contract): a source that cannot batch evidence inherits the
per-subject fallback; one without job history or name search raises
:class:`Unsupported`, which callers treat as "this platform has none".
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cockpit.model import AcctRecord, Artifacts, LogLocation, Snapshot, SourceKind, Subject
from cockpit.transport import FileStat

if TYPE_CHECKING:
    from cockpit.actions import Action, ActionResult


class Unsupported(NotImplementedError):
    """The source's platform has no such capability (no sacct history on ModelArts)."""


class Source(ABC):
    name: str
    kind: SourceKind
    interval: float  # seconds between polls
    # fetch evidence for failed subjects on every poll; False: only for what is opened
    background_evidence: bool = True
    # guarded actions (cockpit.actions) allowed by this source's config (allow_actions)
    allow_actions: bool = False

    @abstractmethod
    async def poll(self) -> Snapshot:
        """One collection. Failures become ``Snapshot(error=SourceError(...))``."""

    @abstractmethod
    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        """Evidence for one subject, fetched on demand (drill-down, diagnose CLI).

        Failures are reported as warnings in the Artifacts, never raised.
        """

    @abstractmethod
    def log_locations(self, subject: Subject, snapshot: Snapshot) -> list[tuple[str, LogLocation]]:
        """Named logs for a subject: [("stdout", loc), ("slurmctld.log", loc), ...]."""

    @abstractmethod
    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Bytes of a log served by this source (local, SSH, demo, API preview)."""

    @abstractmethod
    async def stat(self, path: str) -> FileStat: ...

    async def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections; the default holds none."""

    async def evidence(
        self,
        subjects: Iterable[Subject],
        snapshot: Snapshot,
        *,
        concurrency: int = 4,
        timeout: float = 30.0,
    ) -> dict[Subject, Artifacts | BaseException]:
        """Background evidence for many subjects at once; a failed subject maps to its exception.

        The default calls :meth:`artifacts` per subject, ``concurrency`` at a time. Sources
        that can batch (Slurm: one sacct for all jobs) override it.
        """
        sem = asyncio.Semaphore(concurrency)
        out: dict[Subject, Artifacts | BaseException] = {}

        async def one(subject: Subject) -> None:
            async with sem:
                try:
                    out[subject] = await asyncio.wait_for(
                        self.artifacts(subject, snapshot), timeout
                    )
                except Exception as exc:  # noqa: BLE001 - one subject's failure must not stop the rest
                    out[subject] = exc

        await asyncio.gather(*(one(s) for s in subjects))
        return out

    # the poller's resume_from still under way (the store opening, cockpit.store.opening):
    # a source that looks back for what ended waits for it before it looks
    resuming: Awaitable[None] | None = None

    def resume_from(self, at: datetime | None) -> None:  # noqa: B027 - optional hook
        """Look for what ended while no cockpit ran from ``at`` on (the store's cursor for this
        source; None: nothing remembered). The default: a platform with no such look-back."""

    def cursor(self) -> datetime | None:
        """How far this source has looked (what to remember for the next start's
        :meth:`resume_from`); None: nothing to remember."""
        return None

    def show_queue_first(self) -> None:  # noqa: B027 - optional hook
        """A long-running poller's first poll: show the live queue now and bring what a
        look-back (sacct) finds with the next poll. The default looks back at nothing."""

    def complete_first_poll(self, wait_s: float) -> None:  # noqa: B027 - optional hook
        """A one-shot head's only poll (``snapshot``, ``incidents``, ``watch --once``): wait
        up to ``wait_s`` for the look-back instead of leaving it to a next poll that never
        comes, so every head's one poll shows the same jobs. The default looks back at nothing."""

    def use_risk(self, settings: Any) -> None:  # noqa: B027 - optional hook
        """Sample running jobs for the at-risk rules (``cockpit.slurm.risk``) within
        ``settings`` (config ``[risk]``). The default: a platform with no such samples."""

    def use_store(self, store: Any) -> None:  # noqa: B027 - optional hook
        """Where evidence captured at first sight is kept (``cockpit.store``'s Store), for a
        subject the platform has since forgotten. The default does not use it."""

    async def history(self, user: str, name: str, days: int = 30) -> list[AcctRecord]:
        """Past runs of ``user``'s job ``name`` (right-sizing). Raises :class:`Unsupported`."""
        raise Unsupported(f"{self.name}: no job history")

    async def find_job(self, name_or_id: str) -> list[tuple[str, str]]:
        """(job id, name) of jobs matching a name or id. Raises :class:`Unsupported`."""
        raise Unsupported(f"{self.name}: no job search")

    async def run_action(self, action: Action) -> ActionResult:
        """Run a confirmed :class:`~cockpit.actions.Action` (drain a node, cancel a job, stop a
        training job). Only called when ``allow_actions`` is set. Raises :class:`Unsupported`."""
        raise Unsupported(f"{self.name}: no actions")
