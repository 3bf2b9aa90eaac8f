"""Evidence for the subjects that need it, so verdicts name causes, not symptoms.

A poll alone says a job FAILED with NonZeroExitCode; the cause (``command not found``,
a missing library, ``Connection refused`` in slurmd.log) is in sacct rows and logs.
This module picks the subjects worth that cost (failed jobs, unhealthy nodes, troubled
training jobs), fetches their artifacts through the source with bounded concurrency,
and re-runs the engine per subject with its evidence. One implementation serves the TUI
hub, ``cockpit incidents`` and ``cockpit diagnose --demo``.

Controller cost stays bounded: a subject is fetched once per *fingerprint* (a finished
job's state and end time do not change, so its evidence is fetched once, not every poll),
and at most ``budget`` new subjects are fetched per poll (``first_budget`` on the first, so
the cockpit opens with named causes); the rest wait for the next poll. A source with a
batch fetch (``SlurmSource.evidence``) runs ONE ``sacct -j ID1,ID2,...`` for all the jobs
picked in a poll, then one ``scontrol show job`` and log range reads per job; the sacct
history that sizes an OUT_OF_MEMORY/TIMEOUT remedy is drill-down only. On a real cluster
squeue keeps finished jobs only for MinJobAge (300 s by default), so in steady state this
is one evidence fetch per newly failed job.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from cockpit.model import Artifacts, Snapshot, Subject

if TYPE_CHECKING:
    from cockpit.diagnosis.engine import Diagnosis
    from cockpit.source import Source

log = logging.getLogger(__name__)

FAILED_STATES = frozenset(
    {"FAILED", "OUT_OF_MEMORY", "TIMEOUT", "NODE_FAIL", "BOOT_FAIL", "DEADLINE"}
)
QUIET_PHASES = frozenset({"Running", "Completed", "Terminated"})


def _fingerprint(snap: Snapshot, subject: Subject) -> tuple:
    """What, when it changes, makes cached evidence stale."""
    return _fingerprints(snap, (subject,))[subject]


def _fingerprints(snap: Snapshot, subjects: Iterable[Subject]) -> dict[Subject, tuple]:
    """:func:`_fingerprint` of many subjects in one pass over the snapshot (not one per subject:
    thousands of failed jobs in a 100k-job queue)."""
    subjects = list(subjects)
    want: dict[str, set[str]] = {}
    for s in subjects:
        want.setdefault(s.kind, set()).add(s.id)
    found: dict[tuple[str, str], tuple] = {}
    if ids := want.get("job"):
        found.update(
            (("job", j.job_id), ("job", j.state, j.end_time)) for j in snap.jobs if j.job_id in ids
        )
    if ids := want.get("node"):
        found.update(
            (("node", n.name), ("node", n.state, n.flags, n.reason, n.reason_time))
            for n in snap.nodes
            if n.name in ids
        )
    if ids := want.get("training_job"):
        found.update(
            (
                ("training_job", t.job_id),
                ("tj", t.phase, t.secondary_phase, len(t.events), len(t.log_preview)),
            )
            for t in snap.training_jobs
            if t.job_id in ids
        )
    gone = {"job": ("job",), "node": ("node",)}
    return {s: found.get((s.kind, s.id), gone.get(s.kind, ("tj",))) for s in subjects}


def evidence_subjects(snap: Snapshot) -> list[Subject]:
    """Subjects whose evidence can change a verdict, most recent failures first.

    Failed jobs (FAILED, OUT_OF_MEMORY, TIMEOUT, NODE_FAIL, BOOT_FAIL, DEADLINE; not
    CANCELLED: a user's decision), unhealthy nodes (DRAIN/DOWN), training jobs that are not
    quietly Running/Completed.
    """
    failed = [j for j in snap.jobs if _job_wants(j)]
    failed.sort(key=lambda j: j.end_time.timestamp() if j.end_time else 0.0, reverse=True)
    out = [Subject("job", snap.source, j.job_id) for j in failed]
    out += [Subject("node", snap.source, n.name) for n in snap.nodes if _node_wants(n)]
    out += [
        Subject("training_job", snap.source, t.job_id, name=t.name)
        for t in snap.training_jobs
        if _training_job_wants(t)
    ]
    return out


# Which rows' evidence can change a verdict (evidence_subjects, _wants_evidence)
def _job_wants(j) -> bool:
    return j.state in FAILED_STATES


def _node_wants(n) -> bool:
    return n.is_unhealthy


def _training_job_wants(t) -> bool:
    return t.phase not in QUIET_PHASES


def _wants_evidence(snap: Snapshot, subject: Subject) -> bool:
    """``subject`` is one of :func:`evidence_subjects` of ``snap`` (one lookup, not the list)."""
    if subject.kind == "job":
        return any(j.job_id == subject.id and _job_wants(j) for j in snap.jobs)
    if subject.kind == "node":
        return any(n.name == subject.id and _node_wants(n) for n in snap.nodes)
    if subject.kind == "training_job":
        return any(t.job_id == subject.id and _training_job_wants(t) for t in snap.training_jobs)
    return False


def narrow(snap: Snapshot, subject: Subject) -> Snapshot:
    """The snapshot seen by one subject's rules: its own row, the site around it."""
    if subject.kind == "job":
        return dataclasses.replace(
            snap,
            jobs=tuple(j for j in snap.jobs if j.job_id == subject.id),
            training_jobs=(),
            pools=(),
        )
    if subject.kind == "training_job":
        return dataclasses.replace(
            snap,
            training_jobs=tuple(t for t in snap.training_jobs if t.job_id == subject.id),
            jobs=(),
            nodes=(),
            partitions=(),
        )
    return dataclasses.replace(
        snap, nodes=tuple(n for n in snap.nodes if n.name == subject.id), training_jobs=(), pools=()
    )


_NOT_JOB_RULES = frozenset({"node", "partition", "training_job", "pool", "site"})


def subject_findings(snap: Snapshot, arts: Artifacts, subject: Subject, now: datetime) -> Diagnosis:
    """One subject's findings, diagnosed with its artifacts on the snapshot narrowed to it
    (with the rule errors of that diagnosis)."""
    from cockpit.diagnosis.engine import Diagnosis, diagnose

    # A node's narrowed snapshot keeps every job (its rules look at them), but job rules only
    # ever emit findings about their own job, dropped here: skip them, they would be most of
    # the cost of every DRAIN/DOWN node's diagnosis, every poll, for nothing.
    kw = {"kinds": _NOT_JOB_RULES} if subject.kind == "node" else {}
    found = diagnose(narrow(snap, subject), arts, now=now, **kw)
    mine = [f for f in found if f.subject.kind == subject.kind and f.subject.id == subject.id]
    return Diagnosis(mine, found.errors)


def diagnose_with_evidence(
    snap: Snapshot, evidence: dict[Subject, Artifacts], now: datetime, memo: dict | None = None
) -> Diagnosis:
    """The site's findings, where each subject with evidence is diagnosed with its artifacts.

    A subject's evidence-backed findings replace its snapshot-only ones (a FAILED job's
    "non-zero exit" becomes "command not found"); everything else is unchanged. ``memo``
    (kept by :class:`EvidenceCache`) remembers the findings of ended jobs per state, so their
    logs are not scanned again every poll: an ended job's evidence and verdict do not change.
    ``errors`` of the result: the rule errors of every diagnosis run here.
    """
    from cockpit.diagnosis.engine import Diagnosis, diagnose, sort_key

    site = diagnose(snap, None, now=now)
    errors = list(site.errors)
    found = {f.key: f for f in site}
    prints = (
        _fingerprints(snap, (s for s in evidence if s.kind == "job")) if memo is not None else {}
    )
    for subject, arts in evidence.items():
        if not (arts.acct or arts.logs or arts.commands):
            continue
        key = (subject, prints[subject]) if subject in prints else None
        if memo is not None and key in memo:
            mine = memo[key]
        else:
            try:
                mine = subject_findings(snap, arts, subject, now)
            except Exception:  # one subject's bad evidence must not drop the site's findings
                log.exception("diagnosis of %s with evidence failed", subject)
                continue
            errors += mine.errors
            mine = list(mine)
            if memo is not None and key is not None:
                memo[key] = mine
        if not mine:
            continue
        for key in [
            k
            for k, f in found.items()
            if f.subject.kind == subject.kind and f.subject.id == subject.id
        ]:
            del found[key]
        found.update((f.key, f) for f in mine)
    return Diagnosis(sorted(found.values(), key=sort_key), errors)


class EvidenceCache:
    """Per-source evidence, fetched at most once per subject fingerprint.

    ``budget`` bounds new fetches per :meth:`refresh` (controller load per interval: one
    sacct for all of them, then per job one ``scontrol show job`` and log range reads),
    ``first_budget`` the first refresh;
    ``concurrency`` bounds simultaneous fetches; ``timeout`` (seconds) bounds each one.
    """

    def __init__(
        self,
        budget: int = 4,
        concurrency: int = 4,
        timeout: float = 30.0,
        first_budget: int | None = 24,
    ) -> None:
        self.budget = budget
        self.first_budget = budget if first_budget is None else first_budget
        self._refreshed = False
        self.concurrency = concurrency
        self.timeout = timeout
        self._store: dict[Subject, tuple[tuple, Artifacts]] = {}
        self.memo: dict = {}  # (subject, fingerprint) -> evidence-backed findings of ended jobs
        self.errors: list[str] = []

    def cached(self, snap: Snapshot) -> dict[Subject, Artifacts]:
        """Evidence still valid for ``snap`` (no I/O)."""
        held = [s for s in evidence_subjects(snap) if s in self._store]
        prints = _fingerprints(snap, held)
        return {s: self._store[s][1] for s in held if self._store[s][0] == prints[s]}

    def missing(self, snap: Snapshot) -> list[Subject]:
        """Subjects needing a fetch, at most ``budget`` of them, most recent failures first."""
        subjects = evidence_subjects(snap)
        prints = _fingerprints(snap, [s for s in subjects if s in self._store])
        todo = [s for s in subjects if s not in prints or self._store[s][0] != prints[s]]
        return todo[: self.budget if self._refreshed else max(self.budget, self.first_budget)]

    def lookup(self, snap: Snapshot, subject: Subject) -> Artifacts | None:
        """The subject's evidence if it is still valid for ``snap`` (no I/O), else None."""
        hit = self._store.get(subject)
        return hit[1] if hit is not None and hit[0] == _fingerprint(snap, subject) else None

    def remember(self, snap: Snapshot, subject: Subject, arts: Artifacts) -> None:
        """Keep artifacts fetched elsewhere (a drill-down) as the subject's evidence, when it is
        one of ``snap``'s evidence subjects: the poller then does not fetch it again."""
        if _wants_evidence(snap, subject):
            self._store[subject] = (_fingerprint(snap, subject), arts)

    async def refresh(
        self, source: Source, snap: Snapshot, subjects: Iterable[Subject] | None = None
    ) -> dict[Subject, Artifacts]:
        """Fetch the missing evidence; return all valid evidence.

        Through ``source.evidence(subjects, snap, concurrency=, timeout=)``: one call for all
        subjects (``SlurmSource`` runs one sacct; the default fetches per subject). Never
        raises: a subject whose fetch fails is remembered with empty artifacts (so it is not
        retried every poll) and the failure is kept in ``errors``.
        """
        todo = list(subjects) if subjects is not None else self.missing(snap)
        self.errors = []
        prints = _fingerprints(snap, todo)  # one pass over the queue, not one per subject

        def keep(subject: Subject, got: Artifacts | BaseException) -> None:
            if isinstance(got, BaseException):
                self.errors.append(f"{source.name}: evidence for {subject}: {got}")
                got = Artifacts()
            self._store[subject] = (prints[subject], got)

        if todo:
            try:
                got = await source.evidence(
                    todo, snap, concurrency=self.concurrency, timeout=self.timeout
                )
            except Exception as exc:  # noqa: BLE001 - a source bug must not stop polling
                got = dict.fromkeys(todo, exc)
            for subject in todo:
                keep(subject, got.get(subject, Artifacts()))
        self._refreshed = True
        live = set(evidence_subjects(snap))
        for gone in [s for s in self._store if s not in live]:
            del self._store[gone]  # jobs that left the queue: forget, memory stays bounded
        for key in [k for k in self.memo if k[0] not in self._store]:
            del self.memo[key]
        return self.cached(snap)


async def refresh_and_diagnose(
    source: Source,
    snap: Snapshot,
    cache: EvidenceCache,
    now: datetime | None = None,
    fetch: bool = True,
) -> Diagnosis:
    """One poll's findings for the CLI commands (incidents, diagnose, watch): fetch what
    evidence ``cache`` is missing for ``snap`` through ``source`` (``fetch=False``: only what
    it already holds, no I/O), then diagnose the site with it in a thread (``now`` defaults to
    ``snap.taken_at``). A failed poll fetches nothing and gets the engine's findings about the
    failure. Never raises for evidence: fetch failures are in ``cache.errors``, rule errors in
    the result's ``errors``."""
    evidence = (
        {} if not snap.ok else await cache.refresh(source, snap) if fetch else cache.cached(snap)
    )
    return await asyncio.to_thread(
        diagnose_with_evidence, snap, evidence, now or snap.taken_at, cache.memo
    )
