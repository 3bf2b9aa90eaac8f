"""A source that follows the store instead of polling the platform: one poller for a team.

With ``[store] follow = true`` the site's ``cockpit watch`` publishes each good poll's snapshot
to the shared store (:mod:`cockpit.store.snapshots`) and saves the evidence it fetched; each
operator's TUI reads them from there. The TUI runs the same core over the same snapshot and
evidence, so it says what the poller says, and five operators cost slurmctld one ``squeue``
per interval instead of five. Logs are read by the poller only: a follower shows the evidence
the poller kept, and the log viewer says where the file is.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from cockpit.actions import Action, ActionResult
from cockpit.model import Artifacts, LogLocation, Snapshot, SourceError, SourceKind, Subject
from cockpit.source import Source
from cockpit.transport import FileStat, RemoteFileError

NOT_HERE = "this cockpit follows the store: logs are read by the site's poller (cockpit watch)"


class FollowSource(Source):
    """``name`` as the team's poller published it to ``store``."""

    background_evidence = True  # from the store: no cost to the platform

    def __init__(
        self,
        name: str,
        kind: SourceKind,
        store: Any,
        interval: float = 30.0,
        actor: Source | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.store = store
        self.interval = interval
        # the configured source, when this follower may act: an action is this operator's,
        # run over its own connection (the poller only reads); its allow_actions still decides
        self.actor = actor
        self.allow_actions = actor is not None and actor.allow_actions
        self._at: datetime | None = None
        self._snap: Snapshot | None = None

    def _error(self, kind: str, message: str) -> Snapshot:
        return Snapshot(self.name, self.kind, datetime.now(UTC), error=SourceError(kind, message))

    async def poll(self) -> Snapshot:
        """The latest published snapshot; the same object while the poller has not published a
        newer one (the pipeline then pays for nothing)."""
        from cockpit.store.sql import StoreDown

        try:
            at = await asyncio.to_thread(self.store.published_at, self.name)
            if at is None:
                return self._error(
                    "not_found",
                    f"no poller has published {self.name} to the store yet (run `cockpit watch` "
                    "with [store] follow = true on one host)",
                )
            if self._snap is None or at != self._at:
                snap = await asyncio.to_thread(self.store.published, self.name)
                if snap is None:
                    return self._error("not_found", f"{self.name}: its published poll went away")
                self._snap, self._at = snap, at
            return self._snap
        except StoreDown as exc:
            return self._error("unreachable", str(exc))
        except ValueError as exc:  # a body this cockpit cannot read: say so, keep the last
            return self._error("parse", str(exc))

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        """What the poller captured when the failure was first seen (none: an empty one)."""
        got = await asyncio.to_thread(self.store.evidence, self.name, subject)
        return got if got is not None else Artifacts()

    def log_locations(self, subject: Subject, snapshot: Snapshot) -> list[tuple[str, LogLocation]]:
        return []

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        raise RemoteFileError(NOT_HERE, path)

    async def stat(self, path: str) -> FileStat:
        raise RemoteFileError(NOT_HERE, path)

    async def run_action(self, action: Action) -> ActionResult:
        if self.actor is None:
            return await super().run_action(action)
        return await self.actor.run_action(action)

    async def close(self) -> None:
        if self.actor is not None:
            await self.actor.close()


def following(sources: list[Source], store: Any, actions: bool = False) -> list[Source]:
    """Each configured source as a follower of ``store`` (same name, kind and interval);
    ``actions``: each may run the guarded actions its source allows, through that source."""
    return [
        FollowSource(s.name, s.kind, store, float(s.interval), s if actions else None)
        for s in sources
    ]
