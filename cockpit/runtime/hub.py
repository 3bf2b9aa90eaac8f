"""The hub: the one headless core every head reads (a facade over the runtime).

:class:`Hub` is the :class:`~cockpit.runtime.state.HubState` (latest good snapshot per source,
findings, verdicts, rows, incidents, status) plus one :class:`~cockpit.runtime.poller.Poller`
per source. Data flows one way: poller (I/O) -> :mod:`~cockpit.runtime.pipeline` (off the
event loop) -> state (swap-only publish) -> :class:`HubUpdated` to whoever listens.

The heads differ only in how they run it: the TUI starts the pollers as Textual workers
(:meth:`Hub.start`), ``cockpit watch`` runs them as plain asyncio tasks (:meth:`Hub.run`),
and the one-shot commands (``incidents``, ``snapshot``, ``diagnose --site``, ``watch
--once``) take one poll of every source with its evidence round (:meth:`Hub.poll_all_once`).
No head runs a pipeline of its own, so they all say the same thing about a subject. Nothing
here imports Textual.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from cockpit.model import Artifacts, Finding, Incident, Snapshot, SourceError, Subject
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

    def __init__(
        self,
        sources: list[Source],
        clock: Clock | None = None,
        evidence_budget: int | None = None,
    ) -> None:
        super().__init__(sources, clock)
        if evidence_budget is not None:  # a one-shot head: every failure's evidence at once
            from cockpit.runtime.evidence import EvidenceCache

            for st in self.states.values():
                st.evidence = EvidenceCache(
                    budget=evidence_budget, concurrency=8, first_budget=evidence_budget
                )
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

    def start(self, app: Any, post: Callable[[HubUpdated], Any] | None = None) -> None:
        """Start one poller worker per source on ``app`` (anything with Textual's
        ``run_worker``); ``post`` hands each :class:`HubUpdated` to the app."""
        if post is not None:
            self.post = post
        self._app = app
        for name in self.pollers:
            self._start_poller(name)

    def _start_poller(self, name: str) -> None:
        poller = self.pollers[name]
        self._workers[name] = self._app.run_worker(
            poller.run(), name=f"poll:{name}", group="poll", exit_on_error=False
        )

    async def run(self) -> None:
        """Headless: every source's poller until cancelled (``cockpit watch``)."""
        self.draws_rows = False
        self._app = _TaskRunner()
        for name in self.pollers:
            self._start_poller(name)
        try:
            await asyncio.gather(*(w.task for w in self._workers.values()))
        finally:
            for w in self._workers.values():
                w.task.cancel()

    async def poll_all_once(self, timeout: float | None = None) -> None:
        """One poll of every source, each with its evidence round, incidents settled over all
        of them (the one-shot heads). Like a poller's first round: the store's cursor first,
        so a backfill looks back as far as the store remembers. ``timeout``: a source whose
        poll and evidence take longer is failed with a ``timeout`` error."""
        self.draws_rows = False
        for poller in self.pollers.values():
            await poller.resume()

        async def one(poller: Poller) -> None:
            try:
                await asyncio.wait_for(poller.poll_once(), timeout)
            except TimeoutError:
                self.fail(poller.st, SourceError("timeout", f"no answer within {timeout:g} s"))

        await asyncio.gather(*(one(p) for p in self.pollers.values()))
        # sources that answered at different times: the incidents over what all now hold
        if any(st.snapshot is not None for st in self.states.values()):
            basis = tuple(st.findings for st in self.states.values())
            incidents, counted = await asyncio.to_thread(pipeline.incident_stage, basis)
            self.incidents, self.incident_tally = incidents, counted

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
        return pipeline.analyse(
            snap, now, evidence, memo, basis, carry=carry, views=self.draws_rows
        )

    def _basis(self, st: SourceState, findings: tuple[Finding, ...] | None) -> Basis:
        return self.basis(st, findings)

    def _publish(self, st: SourceState, snap: Snapshot, a: Analysis) -> None:
        self.publish(st, snap, a)

    def _new_critical(
        self, source: str, incidents: tuple[Incident, ...], settled: bool = True
    ) -> tuple[Incident, ...]:
        return self.new_critical(source, incidents, settled)

    @property
    def _post(self) -> Callable[[HubUpdated], Any]:
        return self.post

    @_post.setter
    def _post(self, post: Callable[[HubUpdated], Any]) -> None:
        self.post = post


ONE_SHOT_BACKFILL_S = 60.0  # how long a one-shot head's poll waits for the sacct backfill


async def one_shot(
    sources: list[Source],
    store: Any = None,
    evidence_budget: int = 200,
    timeout: float | None = None,
    publish: bool = False,
) -> Hub:
    """The core after one poll of every source (``incidents``, ``snapshot``, ``diagnose``
    of a site, ``watch --once``), the sources closed. Its clock is the newest snapshot's time
    (the demo's clock is not the wall clock); ``store`` keeps the incidents' lifecycle as a
    TUI on the same store would."""
    for src in sources:
        # one poll is all a one-shot head shows: a backfill sacct slow under load (past the
        # 5 s grace) made `snapshot` and `watch --once` of the same moment see different jobs
        src.complete_first_poll(ONE_SHOT_BACKFILL_S if timeout is None else max(timeout / 2, 5.0))
    hub = Hub(sources, evidence_budget=evidence_budget)
    hub.clock = hub.polled_clock
    hub.store = store
    hub.publish_snapshots = publish  # a cron `watch --once` is the team's poller too
    try:
        await hub.poll_all_once(timeout)
    finally:
        await hub.close()
    return hub


class _Task:
    """A poller run as a plain asyncio task, with the one thing the hub asks of a worker."""

    def __init__(self, coro: Any, name: str) -> None:
        self.task = asyncio.ensure_future(coro)
        self.task.set_name(name)

    @property
    def is_finished(self) -> bool:
        return self.task.done()


class _TaskRunner:
    """``run_worker`` for a head without Textual."""

    def run_worker(self, coro: Any, name: str = "", **_: Any) -> _Task:
        return _Task(coro, name)
