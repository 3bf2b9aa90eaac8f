"""The hub: the one object the app holds for its live data (a facade over the runtime).

:class:`Hub` is the :class:`~cockpit.runtime.state.HubState` the screens read (latest good
snapshot per source, findings, rows, incidents, status) plus one
:class:`~cockpit.runtime.poller.Poller` per source, run as Textual workers. Data flows one
way: poller (I/O) -> :mod:`~cockpit.runtime.pipeline` (off the UI thread) -> state
(swap-only publish) -> :class:`HubUpdated` to the app -> panes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from textual.message import Message

from cockpit.model import Artifacts, Finding, Incident, Snapshot, Subject
from cockpit.runtime import pipeline
from cockpit.runtime.pipeline import Analysis, Basis, IncidentTally, tally
from cockpit.runtime.poller import Poller
from cockpit.runtime.state import Clock, HubState, HubUpdated, SourceState
from cockpit.source import Source

__all__ = [
    "Analysis",
    "Clock",
    "Hub",
    "HubUpdated",
    "IncidentTally",
    "SourceState",
    "tally",
]

log = logging.getLogger(__name__)


class Hub(HubState):
    """The state the app reads, and the pollers that keep it fresh."""

    def __init__(self, sources: list[Source], clock: Clock | None = None) -> None:
        super().__init__(sources, clock)
        # the pipeline is looked up on the hub at every poll, so a test or a benchmark can
        # stand in for it (``hub._analyse = ...``) after the hub is built
        self.pollers: dict[str, Poller] = {
            name: Poller(st, self, lambda *args: self._analyse(*args))
            for name, st in self.states.items()
        }
        # what each source's last pass kept, so the next pays for what changed (the hub's own:
        # two hubs in one process with a source of the same name must not share it)
        self._carries: dict[str, pipeline.Carry] = {name: pipeline.Carry() for name in self.states}
        self._app: Any = None
        self._workers: dict[str, Any] = {}  # source -> its poller's Textual worker
        self._closing = False

    # ------------------------------------------------------------------ lifecycle

    def start(self, app: Any) -> None:
        """Start one poller worker per source on ``app`` (a Textual App)."""
        self.post = app.post_message
        self._app = app
        for name in self.pollers:
            self._start_poller(name)

    def _start_poller(self, name: str) -> None:
        poller = self.pollers[name]
        self._workers[name] = self._app.run_worker(
            poller.run(), name=f"poll:{name}", group="poll", exit_on_error=False
        )

    def stopped(self) -> list[str]:
        """Sources whose poller is no longer running (cancelled, or killed by what even its
        last defence let through): only ``r`` brings them back."""
        return [n for n, w in self._workers.items() if w.is_finished]

    def refresh_now(self) -> None:
        """``r``: poll every source now. A waiting loop is woken; a poller whose worker ended
        is started again, with the same state (its data and backoff stay)."""
        for name, poller in self.pollers.items():
            if self._app is not None and not self._closing and name in self.stopped():
                log.warning("poller %s had stopped: restarting it", name)
                self._start_poller(name)
            else:
                poller.wake.set()

    async def close(self) -> None:
        self._closing = True  # the pollers are being cancelled: r must not revive them
        for st in self.states.values():
            try:
                await st.source.close()
            except Exception:  # closing a dead connection must not stop quitting
                log.debug("close %s failed", st.name, exc_info=True)

    async def poll_once(self, st: SourceState) -> None:
        """Poll one source, diagnose off-thread, publish. Never raises."""
        await self.pollers[st.name].poll_once()

    # ------------------------------------------------------------------ for tests and benchmarks

    async def _poll_loop(self, st: SourceState) -> None:
        await self.pollers[st.name].run()

    def _next_delay(self, st: SourceState) -> float:
        return self.pollers[st.name].next_delay()

    def _analyse(
        self,
        snap: Snapshot,
        now: datetime,
        evidence: dict[Subject, Artifacts] | None = None,
        memo: dict | None = None,
        basis: Basis | None = None,
    ) -> Analysis:
        """The pipeline over one snapshot (runs in a thread): :func:`pipeline.analyse`."""
        carry = self._carries.setdefault(snap.source, pipeline.Carry())
        return pipeline.analyse(snap, now, evidence, memo, basis, carry=carry)

    def _basis(self, st: SourceState, findings: tuple[Finding, ...] | None) -> Basis:
        return self.basis(st, findings)

    def _publish(self, st: SourceState, snap: Snapshot, a: Analysis) -> None:
        self.publish(st, snap, a)

    def _new_critical(
        self, source: str, incidents: tuple[Incident, ...], settled: bool = True
    ) -> tuple[Incident, ...]:
        return self.new_critical(source, incidents, settled)

    @property
    def _post(self) -> Callable[[Message], Any]:
        return self.post

    @_post.setter
    def _post(self, post: Callable[[Message], Any]) -> None:
        self.post = post
