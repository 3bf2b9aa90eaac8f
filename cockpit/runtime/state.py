"""What the UI reads: the latest good data per source, incidents over all sources, status.

Every pane and screen reads from here, so a second pane never causes a second ``squeue``.
The pollers (:mod:`cockpit.runtime.poller`) write here only through :meth:`HubState.publish`,
on the UI thread, and only by swapping references to what the pipeline built off it: a
100k-job snapshot costs the UI thread the same O(1) as a small one. ``generation`` bumps on
every change so panes skip work when nothing changed; :class:`HubUpdated` tells the app.

Drill-downs read through here too (:meth:`HubState.artifacts`, :meth:`HubState.history`):
they fetch at most once per subject per poll and share the poller's evidence.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import is_
from typing import TYPE_CHECKING, Any

from cockpit import gcpolicy
from cockpit.model import Artifacts, Finding, Incident, Snapshot, SourceError, Subject
from cockpit.runtime.evidence import EvidenceCache, subject_findings
from cockpit.runtime.lifecycle import Remembered, open_tally
from cockpit.runtime.pipeline import Analysis, Basis, IncidentTally
from cockpit.source import Source, Unsupported
from cockpit.store.types import Ack, StoredIncident
from cockpit.widgets.rows import RowList, join_rows
from cockpit.widgets.status_entry import StatusEntry

if TYPE_CHECKING:
    from cockpit.views import Row
    from cockpit.watch.baseline import BaselineRecorder
    from cockpit.watch.watcher import Watcher

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

HISTORY_CACHE_MAX = 64  # (user, job name) pairs: the few job names an operator drilled into
HISTORY_ROWS_MAX = 100_000  # sacct rows held over all of them (~50 MB)


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class HubUpdated:
    """A source finished a poll (good or failed). ``new_critical``: incidents not seen before.

    Plain data: the core runs without Textual; the app wraps it in its own message."""

    source: str
    new_critical: tuple[Incident, ...] = ()


@dataclass
class SourceState:
    """What the hub knows about one source. ``snapshot`` is the last *good* one."""

    source: Source
    snapshot: Snapshot | None = None
    error: SourceError | None = None  # of the latest poll; None when it succeeded
    last_attempt: datetime | None = None
    findings: tuple[Finding, ...] = ()
    verdicts: dict = field(default_factory=dict)
    rows: dict[str, list[Row]] = field(default_factory=dict)  # "jobs" | "nodes" | "training"
    failures: int = 0  # polls failed in a row: the backoff and the status line's "×N"
    polls: int = 0
    # drill-down results (artifacts, findings) for the current snapshot; cleared on each poll
    artifact_cache: dict[Subject, tuple[Artifacts, tuple[Finding, ...]]] = field(
        default_factory=dict
    )
    # (user, name) -> (ended runs seen in the queue, sacct rows): see HubState.history
    history_cache: dict[tuple[str, str], tuple] = field(default_factory=dict)
    # evidence (sacct, logs) of failed jobs / sick nodes, fetched once per subject state
    evidence: EvidenceCache = field(default_factory=EvidenceCache)
    settled: bool = False  # a good poll and its evidence round have been applied
    outage: Incident | None = None  # the source cannot be read: an incident of its own

    @property
    def name(self) -> str:
        return self.source.name

    def age_s(self, now: datetime) -> float | None:
        """Seconds since the last good data was taken."""
        if self.snapshot is None:
            return None
        return (now - self.snapshot.taken_at).total_seconds()

    def stale(self, now: datetime) -> bool:
        """Last poll failed, or the good data is older than two intervals."""
        if self.error is not None:
            return True
        a = self.age_s(now)
        return a is not None and a > 2 * max(self.source.interval, 1.0)


SEEN_CRITICAL_GRACE = 20  # new_critical calls (two per poll) an absent incident stays "seen"


class HubState:
    """The state the app reads, and the only place the pollers change it.

    ``post`` delivers messages to the app (``App.post_message``; a no-op until the app starts
    the pollers). ``watcher`` (``cockpit.watch.Watcher``, alerting) and ``baselines``
    (``cockpit.watch.baseline.BaselineRecorder``, good ModelArts init logs) are set by the app
    when it has them; the pollers feed them every poll.
    """

    def __init__(self, sources: list[Source], clock: Clock | None = None) -> None:
        self.clock: Clock = clock or _utcnow
        self.states: dict[str, SourceState] = {s.name: SourceState(s) for s in sources}
        self.incidents: tuple[Incident, ...] = ()
        self.incident_tally = IncidentTally()  # counts of self.incidents, built with them
        self.generation = 0  # bumps on every applied poll; panes skip work when unchanged
        self._joined: dict[str, tuple[list, RowList]] = {}  # kind -> (sources' rows, joined)
        self.post: Callable[[HubUpdated], Any] = lambda m: None
        self.first_round = asyncio.Event()
        self.watcher: Watcher | None = None
        self.on_poll: Callable[[Snapshot, float], Any] | None = None
        # a head that draws the panes (the TUI); the headless ones (watch, the one-shot
        # commands) read verdicts and incidents only: no rows are built for them
        self.draws_rows = True
        self.publish_snapshots = False  # the team's one poller: each good poll to the store
        self.latest_taken: datetime | None = None  # the newest snapshot polled
        self.baselines: BaselineRecorder | None = None
        # the incident store (cockpit.store; None: incidents live as long as the poll) and
        # what it last answered: every open incident, gone ones included, with the acks
        self.store: Any = None
        self.remembered: Remembered | None = None
        # source -> critical incident key -> the new_critical call that last saw it
        self._seen_critical: dict[str, dict[str, int]] = {}
        self._critical_calls: dict[str, int] = {}
        self._baseline_done: set[str] = set()

    # ------------------------------------------------------------------ writing (UI thread)

    def publish(self, st: SourceState, snap: Snapshot, a: Analysis) -> None:
        """Swap in a good poll's snapshot and analysis: references only, O(1) in the snapshot's
        size. The old snapshot, findings and rows are freed on gcpolicy's reaper thread."""
        keep_incidents = a.incidents is None  # correlation failed: the current ones stay
        # the old incidents too: freeing 10k+ of them on the UI thread delays a big site's frame
        old = () if keep_incidents else (self.incidents, self.incident_tally)
        gcpolicy.release((st.snapshot, st.findings, st.verdicts, st.rows, *old))
        st.snapshot, st.error, st.failures = snap, None, 0
        st.findings, st.verdicts, st.rows = a.findings, a.verdicts, a.rows
        if a.incidents is not None:
            self.incidents, self.incident_tally = a.incidents, a.tally
        gcpolicy.settle()  # freeze what the UI thread built since the last poll
        self.generation += 1

    def polled(self, st: SourceState, snap: Snapshot, seconds: float) -> None:
        """A poll answered (good or failed) after ``seconds``, before any analysis: a head's
        hook (``cockpit watch`` counts polls for /metrics). Must not raise."""
        if self.latest_taken is None or snap.taken_at > self.latest_taken:
            self.latest_taken = snap.taken_at
        if self.on_poll is not None:
            try:
                self.on_poll(snap, seconds)
            except Exception:  # a head's counter must not fail the poll
                log.exception("on_poll for %s failed", st.name)

    def polled_clock(self) -> datetime:
        """The newest snapshot's time (a one-shot head's clock: a site's own, the demo's too),
        the wall clock before any answered."""
        return self.latest_taken or _utcnow()

    def fail(self, st: SourceState, error: SourceError) -> None:
        """A poll brought no good data: show ``error``; the last good data stays, now stale."""
        st.error = error
        st.failures += 1
        self.generation += 1

    def annotate(self, st: SourceState, snap: Snapshot, warning: str) -> Snapshot:
        """Add ``warning`` to ``snap`` if it is still ``st``'s published snapshot (a stage that
        failed after publishing: the data on screen is good, the operator should still know).
        Returns the snapshot now published, to compare against as ``snap`` was."""
        if st.snapshot is not snap or warning in snap.warnings:
            return snap
        st.snapshot = dataclasses.replace(snap, warnings=(*snap.warnings, warning))
        self.generation += 1
        return st.snapshot

    def basis(self, st: SourceState, findings: tuple[Finding, ...] | None) -> Basis:
        """Every source's findings in source order, ``st``'s replaced by ``findings`` (None: a
        placeholder the pipeline fills with the findings it computes)."""
        return tuple(findings if s is st else s.findings for s in self.states.values())

    def new_critical(
        self, source: str, incidents: tuple[Incident, ...], settled: bool = True
    ) -> tuple[Incident, ...]:
        """Critical incidents not seen before. A source's first poll (and its first evidence
        round, which sharpens labels) only sets the baseline: no bell for what was already
        wrong when the cockpit opened."""
        mine = [i for i in incidents if i.severity == "critical" and i.subject.source == source]
        seen = self._seen_critical.setdefault(source, {})
        call = self._critical_calls[source] = self._critical_calls.get(source, 0) + 1
        fresh = tuple(i for i in mine if i.key not in seen)
        seen.update((i.key, call) for i in mine)
        if len(seen) > len(mine):
            # incidents gone for a while (their jobs left the queue) are forgotten, so the set
            # follows the incidents; the grace keeps a label that flickers for a poll quiet
            self._seen_critical[source] = {
                k: c for k, c in seen.items() if call - c < SEEN_CRITICAL_GRACE
            }
        if source not in self._baseline_done:
            if settled:
                self._baseline_done.add(source)
            return ()
        return fresh

    def first_round_check(self) -> None:
        """Every source has answered once (with its evidence round) or failed once."""
        if all(s.settled or (s.polls and s.error is not None) for s in self.states.values()):
            self.first_round.set()

    # ------------------------------------------------------------------ reading

    def snapshot(self, source: str) -> Snapshot | None:
        st = self.states.get(source)
        return st.snapshot if st else None

    def rows(self, kind: str) -> list[Row]:
        """Rows of every source for one pane, concatenated in source order.

        With one source holding rows of ``kind``, its list itself (a ``RowList`` whose key
        index and search text were built off the UI thread): the table never mutates it."""
        have = [st.rows[kind] for st in self.states.values() if st.rows.get(kind)]
        if len(have) == 1:
            return have[0]
        # several: one RowList (kept while the sources' lists are the same), so the filter
        # and the cursor use its index and the clock column has the polls' time
        last = self._joined.get(kind)
        if last is not None and len(last[0]) == len(have) and all(map(is_, last[0], have)):
            return last[1]
        out = join_rows(have)
        self._joined[kind] = (have, out)
        return out

    def has_kind(self, kind: str) -> bool:
        return any(st.source.kind == kind for st in self.states.values())

    def findings_for(self, subject: Subject) -> list[Finding]:
        st = self.states.get(subject.source)
        if st is None:
            return []
        return [f for f in st.findings if f.subject == subject or subject in f.related]

    def incident_for(self, key: str) -> Incident | None:
        found = next((i for i in self.incidents if i.key == key), None)
        if found is None:
            stored = self.stored_for(key)
            found = stored.incident if stored is not None else None
        return found

    # ------------------------------------------------------------------ beyond one poll

    def outages(self) -> tuple[Incident, ...]:
        return tuple(st.outage for st in self.states.values() if st.outage is not None)

    @property
    def open_incidents(self) -> tuple[StoredIncident, ...]:
        """What the incident view lists: the store's open incidents (gone ones until acked and
        resolved); without a store, this poll's incidents and the source outages."""
        if self.remembered is not None:
            return self.remembered.incidents
        now = self.clock()
        return tuple(
            StoredIncident(i, i.first_seen or now, now) for i in (*self.outages(), *self.incidents)
        )

    @property
    def open_tally(self):  # -> IncidentTally
        if self.remembered is not None:
            return self.remembered.tally
        if not any(st.outage for st in self.states.values()):
            return self.incident_tally
        return open_tally(self.open_incidents)

    @property
    def open_list(self) -> tuple[Incident, ...]:
        """The open incidents themselves, live ones first (the dashboard strip's ▶)."""
        if self.remembered is None and not any(st.outage for st in self.states.values()):
            return self.incidents
        return tuple(s.incident for s in self.open_incidents)

    def stored_for(self, key: str) -> StoredIncident | None:
        return next((s for s in self.open_incidents if s.key == key), None)

    @property
    def acks(self) -> dict[str, Ack]:
        return self.remembered.acks if self.remembered is not None else {}

    def store_status(self) -> tuple[StatusEntry, ...]:
        """A status-line entry while the store cannot be reached (the cockpit goes on from
        memory; acks given meanwhile are written when it is back)."""
        store = self.store
        if store is None or store.available:
            return ()
        pending = getattr(store, "pending", 0)
        queued = f" ({pending} ack(s) queued)" if pending else ""
        return (StatusEntry("store", error=f"{store.last_error}{queued}", stale=True),)

    def lookup(self, subject: Subject) -> Any:
        """The model object (SlurmJob, SlurmNode, TrainingJob, Pool) for a subject, or None."""
        snap = self.snapshot(subject.source)
        if snap is None:
            return None
        items: tuple = {
            "job": snap.jobs,
            "node": snap.nodes,
            "training_job": snap.training_jobs,
            "pool": snap.pools,
            "partition": snap.partitions,
        }.get(subject.kind, ())
        ids = {"job": "job_id", "training_job": "job_id", "pool": "pool_id"}
        attr = ids.get(subject.kind, "name")
        for it in items:
            if getattr(it, attr) == subject.id or (
                subject.kind == "pool" and it.name == subject.id
            ):
                return it
        return None

    # ------------------------------------------------------------------ drill-down (I/O)

    async def artifacts(self, subject: Subject) -> tuple[Artifacts, tuple[Finding, ...]]:
        """Fetch the subject's artifacts (sacct, logs, events) and re-run the engine with them.

        At most one fetch per subject per poll: evidence the poller already holds for the
        subject's current state is reused (an ended job's is kept across polls, and a
        drill-down's fetch becomes that evidence), a fetch in flight is shared (sources that
        dedupe, like ``SlurmSource``), and the result is cached until the source's next poll.
        OUT_OF_MEMORY/TIMEOUT jobs get their sacct history (:meth:`history`, same cache) for
        the remedy. Returns (artifacts, findings for the subject). Failures come back as
        empty artifacts with the hub's plain findings.
        """
        st = self.states.get(subject.source)
        if st is None or st.snapshot is None:
            return Artifacts(), ()
        cached = st.artifact_cache.get(subject)
        if cached is not None:
            return cached
        snap = st.snapshot
        try:
            arts = st.evidence.lookup(snap, subject)
            if arts is None and self.store is not None and self.lookup(subject) is None:
                # gone from the live data (slurmctld forgot the job): what the store captured
                # when the failure was first seen
                arts = await asyncio.to_thread(self.store.evidence, subject.source, subject)
            if arts is None:
                arts = await st.source.artifacts(subject, snap)
                if not _fetch_failed(arts):
                    # the poller's evidence from now on (not the history: the dashboard's
                    # remedies must not change because someone opened a job)
                    st.evidence.remember(snap, subject, dataclasses.replace(arts, history=()))
            arts = await self._with_history(st, subject, arts)
        except Exception as exc:  # sources should not raise here; show rather than crash
            log.debug("artifacts %s failed", subject, exc_info=True)
            arts = Artifacts(commands={"error": f"{type(exc).__name__}: {exc}"})
        now = self.clock()
        try:
            mine = tuple(await asyncio.to_thread(subject_findings, snap, arts, subject, now))
        except Exception:
            log.exception("diagnosis with artifacts failed for %s", subject)
            mine = tuple(f for f in st.findings if f.subject == subject)
        # Findings about *other* subjects (the jobs on a node, the node under a job) are the
        # hub's current ones, diagnosed with their own evidence: a re-diagnosis here has only
        # this subject's artifacts and would contradict them ("non-zero exit" beside a drain).
        others = tuple(f for f in st.findings if f.subject != subject and subject in f.related)
        result = (arts, mine + others)
        if st.snapshot is snap:
            st.artifact_cache[subject] = result
        return result

    async def _with_history(self, st: SourceState, subject: Subject, arts: Artifacts) -> Artifacts:
        """``arts`` with the sacct history of an OUT_OF_MEMORY/TIMEOUT job (background evidence
        has none: it sizes the --mem/--time remedy on drill-down only)."""
        from cockpit.diagnosis.rightsize import sizing_subject

        if subject.kind != "job" or arts.history:
            return arts
        sized = sizing_subject(self.lookup(subject), arts.acct)
        if sized is None:
            return arts
        rows = await self.history(st.name, *sized)
        return dataclasses.replace(arts, history=tuple(rows)) if rows else arts

    async def history(self, source: str, user: str, name: str) -> tuple:
        """Past runs of ``user``'s job ``name`` (``Source.history``: sacct rows over 30 days).

        Cached until a run of that user + name is seen ending in the queue (squeue shows an
        ended job for MinJobAge, so no new run is missed), not refetched every poll: the job
        screen and an OOM/TIMEOUT drill-down ask for the same rows. Returns () when the source
        has no history (ModelArts) or sacct fails.
        """
        st = self.states.get(source)
        if st is None or not user or not name:
            return ()
        key = (user, name)
        snap = st.snapshot
        ended = (
            ()
            if snap is None
            else tuple(
                (j.job_id, j.state)
                for j in snap.jobs
                if j.end_time is not None and j.name == name and j.user == user
            )
        )
        hit = st.history_cache.get(key)
        if hit is not None and hit[0] == ended:
            return hit[1]
        try:
            rows = tuple(await st.source.history(user, name))
        except Unsupported:
            return ()
        except Exception:  # bad name, sacct missing, transport: nothing to size from
            log.debug("history %s/%s failed", user, name, exc_info=True)
            return ()
        st.history_cache.pop(key, None)
        st.history_cache[key] = (ended, rows)
        held = sum(len(v[1]) for v in st.history_cache.values())
        while len(st.history_cache) > 1 and (
            len(st.history_cache) > HISTORY_CACHE_MAX or held > HISTORY_ROWS_MAX
        ):  # oldest out: a prolific job name's 30 days can be tens of thousands of rows
            held -= len(st.history_cache.pop(next(iter(st.history_cache)))[1])
        return rows


def _fetch_failed(arts: Artifacts) -> bool:
    """The fetch itself failed (not just some log missing): not worth keeping as evidence."""
    return any(
        k == "error" or k.startswith(("error: sacct", "error: scontrol")) for k in arts.commands
    )
