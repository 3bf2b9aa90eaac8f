"""One supervised poller per source: poll, run the pipeline, publish, feed alerting; repeat.

The loop waits the source's interval between polls (or until ``r`` wakes it), backs off
after failures but never past two intervals, and honours a throttled API's ``Retry-After``.
A poller never dies: a failure at any stage is caught and shown on the source's status
line, and the next poll runs. Before this poll's data is published a failure is the
source's error (the last good data stays, marked stale); after it, a warning on the data
just published (an alerting bug must not make good data look stale).

Per poll: the snapshot is published first with the evidence already held (no I/O), so the
panes update at once; then the evidence of new failures is fetched in the background
(bounded per poll, see :class:`~cockpit.runtime.evidence.EvidenceCache`) and the snapshot
is published again with verdicts that name causes. Alerting runs after that round, so an
alert names the cause ("bwa-mem2: command not found"), not the first pass's symptom.

With a store (``hub.store``, :mod:`cockpit.store`) each poll ends by syncing the source's
incidents into it and reading back the open ones (:mod:`cockpit.runtime.lifecycle`), in a
thread: incidents outlive the poll that saw them. A failed poll is an incident of its own
(``source_unreachable``, keyed by the source and the outage's start), resolved when the source
answers again. The evidence fetched for a new failure is saved to the store, and the time of
each good poll is the source's cursor (what a restarted cockpit backfills from).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable

from cockpit import gcpolicy
from cockpit.model import Artifacts, Finding, Snapshot, SourceError, Subject
from cockpit.runtime import lifecycle, pipeline
from cockpit.runtime.pipeline import Analysis, StageError
from cockpit.runtime.state import HubState, HubUpdated, SourceState

log = logging.getLogger(__name__)

MAX_BACKOFF_STEPS = 6
RESETTLE_ROUNDS = 3  # incident correlations in a thread before settling on the UI thread
FALLBACK_DELAY_S = 60.0  # when even the delay cannot be computed (a source with a bad interval)

Analyse = Callable[..., Analysis]


class Poller:
    """Polls ``st.source`` and publishes into ``hub``.

    ``analyse`` is the pipeline (:func:`cockpit.runtime.pipeline.analyse` or a stand-in with
    its signature); ``wake`` set means "poll now" (the ``r`` key).
    """

    def __init__(self, st: SourceState, hub: HubState, analyse: Analyse = pipeline.analyse) -> None:
        self.st = st
        self.hub = hub
        self.analyse = analyse
        self.wake = asyncio.Event()
        self.stage = "poll"  # what the poll is doing: names the stage in a failure's message
        self._published: Snapshot | None = None  # this poll's data, once on screen
        self._notes: list[str] = []  # this poll's warnings from stages after its publish

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Poll forever; returns only by cancellation."""
        # the queue on screen first: the next poll brings what the backfill found
        self.st.source.show_queue_first()
        store = self.hub.store
        if store is not None and not getattr(store, "ready", True):
            # the store still opening (cockpit.store.opening): the queue does not wait for
            # it; the source's first backfill waits for the cursor instead
            self.st.source.resuming = asyncio.ensure_future(self.resume())
        else:
            await self.resume()
        while True:
            # cleared before the poll, not after: an r (or a replay step) pressed while a
            # slow poll runs asks for one more poll, it is not swallowed by that poll's end
            self.wake.clear()
            try:
                await self.poll_once()
                delay = self.next_delay()
            except Exception:  # poll_once shows its own failures: this is the last defence
                log.exception("poller %s", self.st.name)
                delay = FALLBACK_DELAY_S
            try:
                await asyncio.wait_for(self.wake.wait(), timeout=delay)
            except TimeoutError:
                pass

    async def resume(self) -> None:
        """Tell the source the last poll the store remembers, so it can look back for what
        ended meanwhile (``Source.resume_from``: sacct for jobs that failed while no cockpit
        was open)."""
        store = self.hub.store
        if store is None:
            return
        try:
            at = await asyncio.to_thread(store.cursor, self.st.name)
            self.st.source.use_store(store)  # evidence kept at first sight, for forgotten jobs
            self.st.source.resume_from(at)
        except Exception:  # a backfill that cannot start must not stop polling
            if getattr(store, "error", None) is not None:
                return  # a store that could not be opened: the app ends on it, saying why
            log.exception("resume_from for %s failed", self.st.name)

    def next_delay(self) -> float:
        """Seconds until the next poll: the interval, or a backoff after failures."""
        st = self.st
        interval = max(1.0, float(st.source.interval))
        if st.error is None:
            return interval
        # Back off, but never past two intervals: a source that comes back must show fresh
        # data within two intervals (the SSH transport's own backoff is capped the same way).
        delay = min(interval * (2 ** min(st.failures - 1, MAX_BACKOFF_STEPS)), 2 * interval)
        if st.error.retry_after_s:
            delay = max(delay, float(st.error.retry_after_s))
        return delay

    # ------------------------------------------------------------------ one poll

    async def poll_once(self) -> None:
        """Poll, diagnose off the UI thread, publish, then the evidence round. Never raises."""
        st, hub = self.st, self.hub
        self._published = None
        self._notes = []
        try:
            now = hub.clock()
            st.last_attempt = now
            started = time.monotonic()
            snap = await self._poll(now)
            st.polls += 1
            hub.polled(st, snap, time.monotonic() - started)
            if snap.error is not None:
                await self._failed(snap)
            else:
                await self._good(snap)
        except Exception as exc:  # a bug in any stage: show it, keep polling
            self._crashed(exc)
        hub.first_round_check()

    async def _poll(self, now) -> Snapshot:
        self.stage = "poll"
        st = self.st
        try:
            return await st.source.poll()
        except Exception as exc:  # a source must not kill its poller; show it instead
            log.debug("poll %s raised", st.name, exc_info=True)
            error = SourceError("server", f"{type(exc).__name__}: {exc}")
            return Snapshot(source=st.name, kind=st.source.kind, taken_at=now, error=error)

    async def _failed(self, snap: Snapshot) -> None:
        """The source answered with an error: show it, keep the last good data."""
        assert snap.error is not None
        st = self.st
        self.hub.fail(st, snap.error)
        self.stage = "store"
        start = await asyncio.to_thread(self._outage_start, snap)
        if st.outage is None or st.outage.first_seen != start:
            st.outage = lifecycle.outage_incident(st.name, st.source.kind, start, snap.error)
        await self._watch(snap, ())  # an outage is an alert too
        await self._remember(snap.taken_at, answered=False)
        self.hub.post(HubUpdated(st.name))

    def _outage_start(self, snap: Snapshot):  # -> datetime, in a thread (the store may block)
        """When this outage began: shared with every cockpit on the store (the watcher asks the
        store, so the outage alert and the incident agree), else this cockpit's first failure."""
        st, hub = self.st, self.hub
        if st.outage is not None and st.outage.first_seen is not None:
            return st.outage.first_seen
        msg = snap.error.message if snap.error is not None else ""
        if hub.watcher is not None:
            return hub.watcher.outage_start(st.name, snap.taken_at, msg)
        if hub.store is not None:
            return hub.store.open_outage(st.name, snap.taken_at, msg)
        return snap.taken_at

    async def _remember(self, now, answered: bool = True) -> None:
        """The source's incidents (and its outage) into the store, the open ones back; the
        channels hear of incidents that ended. In a thread: the store may be a network away."""
        st, hub = self.st, self.hub
        incidents = (*hub.incidents, *((st.outage,) if st.outage is not None else ()))
        watcher = hub.watcher
        if watcher is not None:
            self.stage = "alerting"
            await asyncio.to_thread(watcher.incidents, st.name, incidents, now)
        if hub.store is None:
            return
        self.stage = "store"
        hub.remembered = await asyncio.to_thread(
            lifecycle.remember, hub.store, st.name, incidents, now, tuple(hub.states), answered
        )
        hub.generation += 1

    async def _good(self, polled: Snapshot) -> None:
        st, hub = self.st, self.hub
        if polled.kind == "slurm":  # PENDING counts of earlier polls: a surge is against them
            from cockpit.watch.surge import PENDING_HISTORY

            polled = await asyncio.to_thread(PENDING_HISTORY.observe, polled)
        if st.outage is not None:  # it answers again: the outage incident resolves
            st.outage = None
            if hub.store is not None and hub.watcher is None:  # else the watcher closes it
                await asyncio.to_thread(hub.store.close_outage, st.name, polled.taken_at)
        if st.snapshot is None and hub.draws_rows:  # queue first: rows, then the verdicts
            self.stage = "views"
            rows = await asyncio.to_thread(pipeline.queue_first, polled, hub.clock())
            hub.publish(st, polled, rows)
            hub.post(HubUpdated(st.name))
        if hub.publish_snapshots and hub.store is not None:  # the team's TUIs follow it
            self.stage = "store"
            await asyncio.to_thread(hub.store.publish, polled)
        # First publish with the evidence already known (no I/O), then fetch what is missing
        # (new failures only, bounded per poll) and publish again with verdicts naming causes.
        # cached() and missing() walk the whole queue: off the UI thread, for a big site.
        self.stage = "evidence"
        cached = await asyncio.to_thread(st.evidence.cached, polled)
        snap = await self._apply(polled, cached)
        # drill-down results belong to the previous snapshot (history_cache: see history())
        st.artifact_cache.clear()
        self.stage = "evidence"
        # evidence for new failures in the background, unless the cluster wants it on
        # drill-down only (it costs the controller an sacct per poll)
        background = st.source.background_evidence
        missing = await asyncio.to_thread(st.evidence.missing, snap) if background else ()
        settled = not missing
        hub.post(HubUpdated(st.name, hub.new_critical(st.name, hub.incidents, settled=settled)))
        if missing:
            evidence = await st.evidence.refresh(st.source, snap, missing)
            # nothing came (every fetch failed: a connection blip): the verdicts would not
            # change, and the next poll's publish names the failures (retried with backoff)
            got_some = len(st.evidence.errors) < len(missing)
            if got_some and st.snapshot is snap:  # no newer poll overtook this one
                # from the snapshot as polled: the first pass's warnings were its own
                await self._apply(polled, evidence)
                fresh = hub.new_critical(st.name, hub.incidents, settled=True)
                hub.post(HubUpdated(st.name, fresh))
            if hub.store is not None:  # first capture kept: what scontrol said while it could
                got = {s: evidence[s] for s in missing if s in evidence}
                self.stage = "store"
                await asyncio.to_thread(_save_evidence, hub.store, st.name, got, polled.taken_at)
        # alerting after the evidence round: the alert names the cause the dashboard shows
        await self._feed(self._published or snap)
        # how far the source looked back (its sacct backfill): the next start resumes there
        cursor = st.source.cursor() if hub.store is not None else None
        if cursor is not None:
            await asyncio.to_thread(hub.store.set_cursor, st.name, cursor)
        await self._remember(polled.taken_at)
        hub.post(HubUpdated(st.name))
        st.settled = True
        if len(polled.jobs) + len(polled.training_jobs) >= gcpolicy.TRIM_JOBS:
            # the poll's temporaries (parse, diagnosis, store sync) are freed by now: their
            # heap pages go back before the next poll's pile on top of them (peak RSS)
            await asyncio.to_thread(gcpolicy.trim_heap)

    async def _apply(self, snap: Snapshot, evidence: dict[Subject, Artifacts]) -> Snapshot:
        """Run the pipeline in a thread, bring the incidents up to date, publish; returns the
        snapshot published (``snap`` with the pipeline's warnings and this poll's notes)."""
        st, hub = self.st, self.hub
        self.stage = "analysis"
        if hub.baselines is not None and snap.kind == "modelarts":
            # stuck starts vs good runs: the diff is evidence of their findings and alerts
            from cockpit.watch.baseline import with_startup_diffs

            store = hub.baselines.store
            evidence = await asyncio.to_thread(
                with_startup_diffs, evidence, snap, store, hub.clock()
            )
        basis = hub.basis(st, None)
        a = await asyncio.to_thread(
            self.analyse, snap, hub.clock(), evidence, st.evidence.memo, basis
        )
        self.stage = "incidents"
        a = await self._settle_incidents(a)
        # evidence that could not be fetched (retried on later polls) is said, not hidden
        notes = (*a.warnings, *st.evidence.warnings(), *self._notes)
        snap = pipeline.with_warnings(snap, notes)
        self.stage = "publish"
        hub.publish(st, snap, a)
        self._published = snap
        return snap

    async def _settle_incidents(self, a: Analysis) -> Analysis:
        """``a`` with incidents over what every source holds *now*.

        Another source that published while the pipeline ran makes them stale: correlate
        again, in a thread (a 100k-job site takes most of a second).
        """
        if a.incidents is None:  # correlating failed in the pipeline: it would fail again
            return a
        st, hub = self.st, self.hub
        for _ in range(RESETTLE_ROUNDS):
            basis = hub.basis(st, a.findings)
            if a.basis is not None and pipeline.same_basis(a.basis, basis):
                return a
            try:
                incidents, counted = await asyncio.to_thread(pipeline.incident_stage, basis)
            except Exception as exc:
                return _without_incidents(a, exc)
            a = dataclasses.replace(a, incidents=incidents, basis=basis, tally=counted)
        # sources kept overtaking each other: settle it here, on the UI thread, once
        try:
            incidents, counted = pipeline.incident_stage(hub.basis(st, a.findings))
        except Exception as exc:
            return _without_incidents(a, exc)
        return dataclasses.replace(a, incidents=incidents, tally=counted)

    async def _feed(self, snap: Snapshot) -> Snapshot:
        """Alerting and baselines from the poll just published; their failures become
        warnings on it. Returns the snapshot now published."""
        st, hub = self.st, self.hub
        warning = await self._watch(snap, st.findings)
        if warning:
            snap = self._annotate(snap, warning)
        if hub.baselines is not None and snap.kind == "modelarts":
            self.stage = "baselines"
            try:  # startup logs of jobs that reached Running, for the Initializing diff
                await hub.baselines.observe(st.source, snap, hub.clock())
            except Exception as exc:  # a baseline bug must not stop polling
                log.exception("baselines for %s failed", st.name)
                snap = self._annotate(snap, f"baselines failed: {exc}")
        return snap

    async def _watch(self, snap: Snapshot, findings: tuple[Finding, ...]) -> str | None:
        """Alerting (cockpit.watch): transitions -> rules -> history -> notify, off the UI
        thread. Returns what went wrong, if anything."""
        watcher = self.hub.watcher
        if watcher is None:
            return None
        self.stage = "alerting"
        try:
            # storage (df of the cluster's storage_paths) only from a good poll: a failed one
            # has none, and "no data" must not read as "all filesystems gone"
            storage = snap.storage if snap.ok and snap.storage else None
            await asyncio.to_thread(
                watcher.observe, snap, findings, self.hub.clock(), storage, (), self.hub.incidents
            )
        except Exception as exc:  # an alerting bug must not stop polling
            log.exception("alerting for %s failed", snap.source)
            return f"alerting failed: {exc}"
        return None

    def _annotate(self, snap: Snapshot, warning: str) -> Snapshot:
        self._notes.append(warning)  # kept by the evidence round's publish
        snap = self.hub.annotate(self.st, snap, warning)
        if self._published is not None:
            self._published = snap
        return snap

    def _crashed(self, exc: Exception) -> None:
        """A stage raised: before this poll's publish, the source's error (old data stays,
        stale); after it, a warning on the data published."""
        st, hub = self.st, self.hub
        if isinstance(exc, StageError):
            message = str(exc)
        else:
            message = f"{self.stage} failed: {type(exc).__name__}: {exc}"
        if self.stage == "store" and getattr(hub.store, "error", None) is not None:
            # a store that could not be opened (a newer schema): the app ends on it and says
            # why in one line; this poll's use of it is not a second failure to report
            log.debug("%s: %s", st.name, message, exc_info=exc)
        else:
            log.error("%s: %s", st.name, message, exc_info=exc)
        try:
            if self._published is not None:
                self._annotate(self._published, message)
                st.settled = True  # its data is on screen: the first round need not wait
            else:
                hub.fail(st, SourceError("internal", message))
            hub.post(HubUpdated(st.name))
        except Exception:  # showing the failure failed too: the log has it, polling goes on
            log.exception("%s: reporting a failed poll", st.name)


def _save_evidence(store, source: str, got: dict[Subject, Artifacts], now) -> None:
    for subject, arts in got.items():
        store.save_evidence(source, subject, arts, now)


def _without_incidents(a: Analysis, exc: Exception) -> Analysis:
    """``a`` keeping the hub's current incidents, with the correlation's failure as a warning."""
    log.error("correlating incidents failed", exc_info=exc)
    warning = f"incidents failed: {exc}"
    return dataclasses.replace(a, incidents=None, basis=None, warnings=(*a.warnings, warning))
