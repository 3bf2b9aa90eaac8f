"""The app's one store: latest snapshot per source, findings, incidents, source status.

One poller per source runs in a Textual worker on the source's interval (backing off
on errors, honouring ``Retry-After``); the engine and the row projections run in a
thread so a 100k-job snapshot never blocks a keypress. Every pane and screen reads
from here, so a second pane never causes a second ``squeue``. After each poll the
hub posts :class:`HubUpdated` to the app.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from textual.message import Message

from cockpit import gcpolicy
from cockpit.runtime.evidence import EvidenceCache, diagnose_with_evidence, subject_findings
from cockpit.model import Artifacts, Finding, Incident, Snapshot, SourceError, Subject
from cockpit.source import Source
from cockpit.widgets.rows import job_rows, node_rows, training_rows
from cockpit.widgets.table import Row

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class HubUpdated(Message):
    """A source finished a poll (good or failed). ``new_critical``: incidents not seen before."""

    def __init__(self, source: str, new_critical: tuple[Incident, ...] = ()) -> None:
        super().__init__()
        self.source = source
        self.new_critical = new_critical


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
    failures: int = 0
    polls: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    artifact_cache: dict[Subject, tuple[Artifacts, tuple[Finding, ...]]] = field(default_factory=dict)
    history_cache: dict[tuple[str, str], tuple] = field(default_factory=dict)  # (user, name) -> (ended runs, sacct rows)
    # evidence (sacct, logs) of failed jobs / sick nodes, fetched once per subject state
    evidence: EvidenceCache = field(default_factory=EvidenceCache)
    settled: bool = False  # a good poll and its evidence round have been applied

    @property
    def name(self) -> str:
        return self.source.name

    def age_s(self, now: datetime) -> float | None:
        """Seconds since the last good data was taken."""
        return None if self.snapshot is None else (now - self.snapshot.taken_at).total_seconds()

    def stale(self, now: datetime) -> bool:
        """Last poll failed, or the good data is older than two intervals."""
        if self.error is not None:
            return True
        a = self.age_s(now)
        return a is not None and a > 2 * max(self.source.interval, 1.0)


@dataclass(frozen=True)
class IncidentTally:
    """Incident counts built beside the incidents, off the UI thread: ``severity`` incident
    key -> severity, ``counts`` severity -> number of incidents. The incidents strip takes the
    acknowledged ones out (a few) instead of counting 10k+ incidents on every repaint."""

    severity: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


def tally(incidents: tuple[Incident, ...]) -> IncidentTally:
    counts: dict[str, int] = {}
    for i in incidents:
        counts[i.severity] = counts.get(i.severity, 0) + 1
    return IncidentTally({i.key: i.severity for i in incidents}, counts)


@dataclass(frozen=True)
class Analysis:
    """What a poll's thread hands to the UI thread: findings, verdicts (``engine.verdicts``),
    rows per pane (``RowList``s), incidents over every source, and ``basis``: the findings
    tuples (one per source, in source order) the incidents were correlated from (None: not yet)."""

    findings: tuple[Finding, ...]
    verdicts: dict
    rows: dict[str, list[Row]]
    incidents: tuple[Incident, ...]
    basis: tuple[tuple[Finding, ...], ...] | None
    tally: IncidentTally = field(default_factory=IncidentTally)


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


class Hub:
    """Owns the pollers. ``post`` delivers messages to the app (``App.post_message``)."""

    def __init__(self, sources: list[Source], clock: Clock | None = None) -> None:
        self.clock: Clock = clock or _utcnow
        self.states: dict[str, SourceState] = {s.name: SourceState(s) for s in sources}
        self.incidents: tuple[Incident, ...] = ()
        self.incident_tally = IncidentTally()  # counts of self.incidents, built with them
        self.generation = 0  # bumps on every applied poll; panes skip work when unchanged
        self._post: Callable[[Message], Any] = lambda m: None
        self._seen_critical: set[str] = set()
        self._baseline_done: set[str] = set()
        self.first_round = asyncio.Event()
        self.watcher: Any = None  # cockpit.watch.Watcher when alerting is on (set by the app)
        self.baselines: Any = None  # cockpit.watch.baseline.BaselineRecorder: good ModelArts init logs

    # ------------------------------------------------------------------ lifecycle

    def start(self, app: Any) -> None:
        """Start one poller worker per source on ``app`` (a Textual App)."""
        self._post = app.post_message
        for st in self.states.values():
            app.run_worker(self._poll_loop(st), name=f"poll:{st.name}", group="poll", exit_on_error=False)

    def refresh_now(self) -> None:
        """``r``: poll every source now (the loops are waiting on their event)."""
        for st in self.states.values():
            st.wake.set()

    async def close(self) -> None:
        for st in self.states.values():
            try:
                await st.source.close()
            except Exception:  # closing a dead connection must not stop quitting
                log.debug("close %s failed", st.name, exc_info=True)

    async def _poll_loop(self, st: SourceState) -> None:
        while True:
            await self.poll_once(st)
            delay = self._next_delay(st)
            st.wake.clear()
            try:
                await asyncio.wait_for(st.wake.wait(), timeout=delay)
            except TimeoutError:
                pass

    def _next_delay(self, st: SourceState) -> float:
        interval = max(1.0, float(st.source.interval))
        if st.error is None:
            return interval
        # Back off, but never past two intervals: a source that comes back must show fresh
        # data within two intervals (the SSH transport's own backoff is capped the same way).
        delay = min(interval * (2 ** min(st.failures - 1, 6)), 2 * interval)
        if st.error.retry_after_s:
            delay = max(delay, float(st.error.retry_after_s))
        return delay

    # ------------------------------------------------------------------ polling

    async def poll_once(self, st: SourceState) -> None:
        """Poll one source, diagnose off-thread, publish. Never raises."""
        now = self.clock()
        st.last_attempt = now
        try:
            snap = await st.source.poll()
        except Exception as exc:  # a source must not kill its poller; show it instead
            log.debug("poll %s raised", st.name, exc_info=True)
            snap = Snapshot(
                source=st.name,
                kind=st.source.kind,
                taken_at=now,
                error=SourceError("server", f"{type(exc).__name__}: {exc}"),
            )
        st.polls += 1
        if snap.error is not None:
            st.error = snap.error
            st.failures += 1
            self.generation += 1
            await self._watch(snap, ())
            self._post(HubUpdated(st.name))
            self.first_round_check()
            return
        # First publish with the evidence already known (no I/O), then fetch what is missing
        # (new failures only, bounded per poll) and publish again with verdicts that name causes.
        # cached()/missing() walk the queue (~50 ms at 100k jobs): off the UI thread
        snap = await self._apply(st, snap, await asyncio.to_thread(st.evidence.cached, snap))
        st.artifact_cache.clear()  # findings with artifacts: until the next poll (history_cache: see history())
        await self._watch(snap, st.findings)
        if self.baselines is not None and snap.kind == "modelarts":
            try:  # startup logs of jobs that reached Running, for the Initializing diff
                await self.baselines.observe(st.source, snap, self.clock())
            except Exception:  # a baseline bug must not stop polling
                log.exception("baselines for %s failed", st.name)
        # evidence for new failures in the background, unless the cluster wants it on drill-down only
        background = getattr(st.source, "background_evidence", True)
        missing = await asyncio.to_thread(st.evidence.missing, snap) if background else ()
        self._post(HubUpdated(st.name, self._new_critical(st.name, self.incidents, settled=not missing)))
        if missing:
            evidence = await st.evidence.refresh(st.source, snap, missing)
            if st.snapshot is snap:  # no newer poll overtook this one
                await self._apply(st, snap, evidence)
                self._post(HubUpdated(st.name, self._new_critical(st.name, self.incidents, settled=True)))
        st.settled = True
        self.first_round_check()

    async def _apply(self, st: SourceState, snap: Snapshot, evidence: dict[Subject, Artifacts]) -> Snapshot:
        """Diagnose, project and correlate off the UI thread, then publish; returns the snapshot kept."""
        try:
            a = await asyncio.to_thread(
                self._analyse, snap, self.clock(), evidence, st.evidence.memo, self._basis(st, None)
            )
        except Exception as exc:  # an engine bug must not blank the cockpit
            log.exception("diagnosis of %s failed", st.name)
            rows = self._project(snap, {}, self.clock())
            snap = dataclasses.replace(snap, warnings=(*snap.warnings, f"diagnosis failed: {exc}"))
            a = Analysis((), {}, rows, (), None)
        # Incidents correlate what every source holds *now*: another source that published
        # while this thread ran makes them stale; correlate again (in a thread: ~0.6 s at 100k).
        for _ in range(3):
            basis = self._basis(st, a.findings)
            if a.basis is not None and _same(a.basis, basis):
                break
            incidents, counted = await asyncio.to_thread(self._correlate, basis)
            a = dataclasses.replace(a, incidents=incidents, basis=basis, tally=counted)
        else:  # sources kept overtaking each other: settle it here, once
            incidents, counted = self._correlate(self._basis(st, a.findings))
            a = dataclasses.replace(a, incidents=incidents, tally=counted)
        self._publish(st, snap, a)
        return snap

    def _publish(self, st: SourceState, snap: Snapshot, a: Analysis) -> None:
        """UI thread: swap references only (O(1) in the snapshot's size). The old snapshot,
        findings and rows are freed on the reaper thread, not here."""
        # the old incidents too: 10k+ of them freed here was ~4 ms of a 100k-job frame
        gcpolicy.release((st.snapshot, st.findings, st.verdicts, st.rows, self.incidents, self.incident_tally))
        st.snapshot, st.error, st.failures = snap, None, 0
        st.findings, st.verdicts, st.rows = a.findings, a.verdicts, a.rows
        self.incidents, self.incident_tally = a.incidents, a.tally
        gcpolicy.settle()  # freeze what the UI thread built since the last poll
        self.generation += 1

    def _basis(self, st: SourceState, findings: tuple[Finding, ...] | None) -> tuple:
        """Every source's findings in source order, ``st``'s replaced by ``findings`` (None: a
        placeholder :meth:`_analyse` fills with the findings it computes)."""
        return tuple(findings if s is st else s.findings for s in self.states.values())

    @staticmethod
    def _correlate(basis: tuple[tuple[Finding, ...], ...]) -> tuple[tuple[Incident, ...], IncidentTally]:
        from cockpit.diagnosis.engine import correlate

        with gcpolicy.bulk():
            incidents = tuple(correlate([f for fs in basis for f in fs]))
            return incidents, tally(incidents)

    async def _watch(self, snap: Snapshot, findings: tuple[Finding, ...]) -> None:
        """Alerting (cockpit.watch): transitions -> rules -> history -> notify, off the UI thread."""
        if self.watcher is None:
            return
        try:
            # storage (df of the cluster's storage_paths) only from a good poll: a failed one has none
            storage = snap.storage if snap.ok and snap.storage else None
            await asyncio.to_thread(self.watcher.observe, snap, findings, self.clock(), storage)
        except Exception:  # an alerting bug must not stop polling
            log.exception("alerting for %s failed", snap.source)

    def first_round_check(self) -> None:
        """Every source has answered once (with its evidence round) or failed once."""
        if all(s.settled or (s.polls and s.error is not None) for s in self.states.values()):
            self.first_round.set()

    def _new_critical(self, source: str, incidents: tuple[Incident, ...], settled: bool = True) -> tuple[Incident, ...]:
        """Critical incidents not seen before. A source's first poll (and its first evidence
        round, which sharpens labels) only sets the baseline: no bell for what was already wrong."""
        mine = [i for i in incidents if i.severity == "critical" and i.subject.source == source]
        fresh = tuple(i for i in mine if i.key not in self._seen_critical)
        self._seen_critical.update(i.key for i in mine)
        if source not in self._baseline_done:
            if settled:
                self._baseline_done.add(source)
            return ()
        return fresh

    def _analyse(
        self, snap: Snapshot, now: datetime, evidence: dict[Subject, Artifacts] | None = None,
        memo: dict | None = None, basis: tuple[tuple[Finding, ...], ...] | None = None,
    ) -> Analysis:
        """Engine, row projection and (given ``basis``, see :meth:`_basis`, with None in this
        source's slot) incidents for one snapshot. Runs in a thread."""
        from cockpit.diagnosis.engine import correlate, verdicts

        with gcpolicy.bulk():  # acyclic objects by the million: no collections while building
            findings = tuple(diagnose_with_evidence(snap, evidence or {}, now, memo))
            v = verdicts(list(findings))
            rows = self._project(snap, v, now)
            incidents: tuple[Incident, ...] = ()
            if basis is not None:
                basis = tuple(findings if fs is None else fs for fs in basis)
                incidents = tuple(correlate([f for fs in basis for f in fs]))
            counted = tally(incidents)
        return Analysis(findings, v, rows, incidents, basis, counted)

    @staticmethod
    def _project(snap: Snapshot, v: dict, now: datetime) -> dict[str, list[Row]]:
        return {
            "jobs": job_rows(snap, v, now),
            "nodes": node_rows(snap, v),
            "training": training_rows(snap, v, now),
        }

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
        out: list[Row] = []
        for rows in have:
            out.extend(rows)
        return out

    def has_kind(self, kind: str) -> bool:
        return any(st.source.kind == kind for st in self.states.values())

    def findings_for(self, subject: Subject) -> list[Finding]:
        st = self.states.get(subject.source)
        if st is None:
            return []
        return [f for f in st.findings if f.subject == subject or subject in f.related]

    def incident_for(self, key: str) -> Incident | None:
        return next((i for i in self.incidents if i.key == key), None)

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
        attr = {"job": "job_id", "training_job": "job_id", "pool": "pool_id"}.get(subject.kind, "name")
        for it in items:
            if getattr(it, attr) == subject.id or (subject.kind == "pool" and it.name == subject.id):
                return it
        return None

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
            if arts is None:
                arts = await st.source.artifacts(subject, snap)
                if not any(k == "error" or k.startswith(("error: sacct", "error: scontrol")) for k in arts.commands):
                    # the poller's evidence from now on (not the history: the dashboard's remedies
                    # must not change because someone opened a job)
                    st.evidence.remember(snap, subject, dataclasses.replace(arts, history=()))
            arts = await self._with_history(st, subject, arts)
        except Exception as exc:  # sources should not raise here; show rather than crash
            log.debug("artifacts %s failed", subject, exc_info=True)
            arts = Artifacts(commands={"error": f"{type(exc).__name__}: {exc}"})
        now = self.clock()
        try:
            findings = tuple(await asyncio.to_thread(subject_findings, snap, arts, subject, now))
        except Exception:
            log.exception("diagnosis with artifacts failed for %s", subject)
            findings = tuple(self.findings_for(subject))
        # Findings about *other* subjects (the jobs on a node, the node under a job) are the
        # hub's current ones, diagnosed with their own evidence: a re-diagnosis here has only
        # this subject's artifacts and would contradict them ("non-zero exit" beside a drain).
        others = tuple(f for f in st.findings if f.subject != subject and subject in f.related)
        findings = findings + others
        result = (arts, findings)
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
        """Past runs of ``user``'s job ``name`` (``SlurmSource.history``: sacct rows over 30 days).

        Cached until a run of that user + name is seen ending in the queue (squeue shows an
        ended job for MinJobAge, so no new run is missed), not refetched every poll: the job
        screen and an OOM/TIMEOUT drill-down ask for the same rows. Returns () when the source
        has no history (ModelArts, fakes) or sacct fails.
        """
        st = self.states.get(source)
        fetch = getattr(st.source, "history", None) if st is not None else None
        if st is None or fetch is None or not user or not name:
            return ()
        key = (user, name)
        snap = st.snapshot
        ended = () if snap is None else tuple(
            (j.job_id, j.state) for j in snap.jobs if j.end_time is not None and j.name == name and j.user == user)
        hit = st.history_cache.get(key)
        if hit is not None and hit[0] == ended:
            return hit[1]
        try:
            rows = tuple(await fetch(user, name))
        except Exception:  # bad name, sacct missing, transport: nothing to size from
            log.debug("history %s/%s failed", user, name, exc_info=True)
            return ()
        if len(st.history_cache) >= 64:  # a few job names an operator drilled into
            st.history_cache.clear()
        st.history_cache[key] = (ended, rows)
        return rows
