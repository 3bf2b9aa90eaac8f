"""Evidence for the subjects that need it, so verdicts name causes, not symptoms.

A poll alone says a job FAILED with NonZeroExitCode; the cause (``command not found``,
a missing library, ``Connection refused`` in slurmd.log) is in sacct rows and logs.
This module picks the subjects worth that cost (failed jobs, unhealthy nodes, troubled
training jobs), fetches their artifacts through the source with bounded concurrency,
and re-runs the engine per subject with its evidence. One implementation serves the TUI
hub, ``cockpit incidents`` and ``cockpit diagnose --demo``.

Controller cost stays bounded: a subject is fetched once per *fingerprint* (a finished
job's state and end time do not change, so its evidence is fetched once, not every poll;
a fetch that failed is tried again after 1, 2, 4 ... polls),
and at most ``budget`` new subjects are fetched per poll (``first_budget`` on the first, so
the cockpit opens with named causes); the rest wait for the next poll. A source with a
batch fetch (``SlurmSource.evidence``) runs ONE ``sacct -j ID1,ID2,...`` for all the jobs
picked in a poll, then one ``scontrol show job`` and log range reads per job; the sacct
history that sizes an OUT_OF_MEMORY/TIMEOUT remedy is drill-down only. On a real cluster
squeue keeps finished jobs only for MinJobAge (300 s by default), so in steady state this
is one evidence fetch per newly failed job.
"""

from __future__ import annotations

import logging
import operator
import threading
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from cockpit.diagnosis.slurm_states import ENDED_STATES, FAILED_STATES, FAST_FAIL_S
from cockpit.model import Artifacts, Snapshot, Subject

if TYPE_CHECKING:
    from cockpit.diagnosis.engine import Diagnosis
    from cockpit.source import Source

log = logging.getLogger(__name__)

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
        by_id = _jobs_view(snap.jobs)[0]
        found.update(
            (("job", i), ("job", j.state, j.end_time))
            for i in ids
            if (j := by_id.get(i)) is not None
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

    Failed jobs (``slurm_states.FAILED_STATES``; not CANCELLED: a user's decision), jobs
    that COMPLETED within ``FAST_FAIL_S`` (a script whose commands failed at once still exits
    0), unhealthy nodes (DRAIN/DOWN), training jobs that are not quietly Running/Completed.
    """
    failed = list(_jobs_view(snap.jobs)[1])
    # failures and sick nodes first: quick COMPLETED jobs (arrays of short tasks) only get
    # what budget is left
    quick = [j for j in failed if j.state == "COMPLETED"]
    out = [Subject("job", snap.source, j.job_id) for j in failed if j.state != "COMPLETED"]
    out += [Subject("node", snap.source, n.name) for n in snap.nodes if _node_wants(n)]
    out += [
        Subject("training_job", snap.source, t.job_id, name=t.name)
        for t in snap.training_jobs
        if _training_job_wants(t)
    ]
    out += [Subject("job", snap.source, j.job_id) for j in quick]
    return out


_VIEWS: list[tuple] = []  # (rows, by id, wanting evidence) of the last few row tuples
_VIEWS_LOCK = threading.Lock()


def _jobs_view(jobs: tuple) -> tuple[dict, list]:
    """(job id -> row (the last of a repeated id), the rows :func:`_job_wants`, most recent
    end first) of a poll's rows: kept while the next poll hands the same row objects (a 100k
    queue is walked once, not by every evidence lookup of every poll)."""
    with _VIEWS_LOCK:
        for v in _VIEWS:
            rows = v[0]
            if rows is jobs or (len(rows) == len(jobs) and all(map(operator.is_, rows, jobs))):
                return v[1], v[2]
    by_id = dict(zip(map(_job_id, jobs), jobs, strict=True))
    failed = [j for j in jobs if _job_wants(j)]
    failed.sort(key=lambda j: j.end_time.timestamp() if j.end_time else 0.0, reverse=True)
    with _VIEWS_LOCK:
        _VIEWS.insert(0, (jobs, by_id, failed))
        del _VIEWS[1:]  # one source's (another's: a walk, as before); little memory held
    return by_id, failed


_job_id = operator.attrgetter("job_id")


# Which rows' evidence can change a verdict (evidence_subjects, _wants_evidence)
def _job_wants(j) -> bool:
    if j.state == "COMPLETED":
        return j.elapsed_s is not None and j.elapsed_s < FAST_FAIL_S
    if j.state == "PENDING":
        return _requeued_look(j)
    return j.state in FAILED_STATES


def _requeued_look(j) -> bool:
    """A pending job that looks requeued after a failure: slurmctld resets its submit time
    to the requeue and holds it for the credential lifetime (begin = submit + 121 s by
    default), Reason=None then BeginTime. slurmctld.log says which node failed under it."""
    if j.reason not in ("BeginTime", "None", "") or j.start_time is None or j.submit_time is None:
        return False
    return 60 <= (j.start_time - j.submit_time).total_seconds() <= 600


def _ended(j) -> bool:
    """By its state (parsers normalise ``CANCELLED by 0``): squeue's end time of a running
    job is when its time limit runs out."""
    return j.state in ENDED_STATES


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


def subject_findings(snap: Snapshot, arts: Artifacts, subject: Subject, now: datetime) -> Diagnosis:
    """One subject's findings, diagnosed with its artifacts in the context of the whole
    snapshot (with the rule errors of that diagnosis): the same verdict the dashboard gives
    the subject once it has these artifacts."""
    from cockpit.diagnosis.engine import diagnose

    return diagnose(snap, arts, now=now, focus=subject)


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


RETRY_CAP_POLLS = 16  # a failed fetch is retried after 1, 2, 4 ... polls, at most this many
MAX_SUBJECTS = 2000  # evidence held per source, whatever the queue holds
MAX_BYTES = 64 << 20  # and the bytes of it (log excerpts dominate)
# answers, not failures: asking again gets the same (a path the job's user may not read, an
# output file the job never wrote)
ANSWERS = ("not read:", "No such file or directory", "Is a directory", "not a regular file")


def artifacts_size(arts: Artifacts) -> int:
    """Roughly the bytes ``arts`` holds (what the cache's byte bound counts)."""
    size = sum(len(x.data) for x in arts.logs)
    size += sum(len(k) + len(v) for k, v in arts.commands.items())
    return size + 256 * (len(arts.acct) + len(arts.history))


def fetch_errors(arts: Artifacts) -> list[str]:
    """The failures recorded in ``arts`` (``error: <what>`` commands) that asking again later
    may get past (a connection blip, a timeout), not the ``ANSWERS``."""
    return [
        f"{k.removeprefix('error: ')}: {v}"
        for k, v in arts.commands.items()
        if k.startswith("error: ") and not any(a in v for a in ANSWERS)
    ]


class _Failed:
    """A subject whose last fetch failed: when to ask again, and why."""

    __slots__ = ("print", "attempts", "retry_at", "error")

    def __init__(self, fp: tuple, attempts: int, retry_at: int, error: str) -> None:
        self.print, self.attempts, self.retry_at, self.error = fp, attempts, retry_at, error


# Subjects whose evidence a head's first round fetches: the same for the TUI and the one-shot
# heads (incidents, snapshot, watch --once), so a fresh TUI names the causes the CLI names
# instead of showing symptoms for minutes while its per-poll budget catches up.
FIRST_ROUND_EVIDENCE = 200


class EvidenceCache:
    """Per-source evidence, fetched once per subject fingerprint, again only after a failure.

    ``budget`` bounds new fetches per :meth:`refresh` (controller load per interval: one
    sacct for all of them, then per job one ``scontrol show job`` and log range reads),
    ``first_budget`` the first refresh;
    ``concurrency`` bounds simultaneous fetches; ``timeout`` (seconds) bounds each one.

    A fetch that failed (raised, or recorded ``error:`` commands: an SSH blip) is not final:
    an ended job's fingerprint never changes, so it would keep symptom-only verdicts for ever.
    The subject is fetched again on the next poll, then after 2, 4 ... polls (at most
    ``RETRY_CAP_POLLS``); meanwhile its last good artifacts stay and :meth:`warnings` names the
    failure. Held evidence is bounded by ``max_subjects`` and ``max_bytes`` (oldest first out)
    and forgets subjects that left the queue, whether or not anything is fetched in the
    background.
    """

    def __init__(
        self,
        budget: int = 4,
        concurrency: int = 4,
        timeout: float = 30.0,
        first_budget: int | None = FIRST_ROUND_EVIDENCE,
        max_subjects: int = MAX_SUBJECTS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.budget = budget
        self.first_budget = budget if first_budget is None else first_budget
        self._refreshed = False
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_subjects = max_subjects
        self.max_bytes = max_bytes
        self._store: dict[Subject, tuple[tuple, Artifacts]] = {}  # oldest first
        self._sizes: dict[Subject, int] = {}
        self._bytes = 0
        self._failed: dict[Subject, _Failed] = {}
        self._round = 0  # refreshes so far: the clock of the retry backoff
        self.memo: dict = {}  # (subject, fingerprint) -> evidence-backed findings of ended jobs
        self.errors: list[str] = []
        # ended jobs an operator opened that the background round does not fetch (a COMPLETED
        # job that ran a while): their drill-down evidence is kept while squeue still lists
        # them, so the dashboard row says what the drill-down said
        self._opened: dict[Subject, None] = {}

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._store)

    def cached(self, snap: Snapshot) -> dict[Subject, Artifacts]:
        """Evidence still valid for ``snap`` (no I/O); forgets subjects ``snap`` no longer
        needs evidence for (with ``evidence = "drill-down"`` this is the only pruning)."""
        live = evidence_subjects(snap)
        if self._opened:
            ended = {j.job_id for j in snap.jobs if _ended(j)}
            self._opened = {s: None for s in dict(self._opened) if s.id in ended}
            wanted = set(live)
            live = live + [s for s in self._opened if s not in wanted]
        self.prune(live)
        store = self._store
        held = [s for s in live if s in store]
        prints = _fingerprints(snap, held)
        return {s: store[s][1] for s in held if store[s][0] == prints[s]}

    def prune(self, live: Iterable[Subject]) -> None:
        """Keep only the subjects in ``live``. Swaps in new dicts (never deletes in place):
        ``cached`` runs in a thread while a drill-down may ``remember`` on the event loop."""
        live = set(live)
        store = dict(self._store)
        if all(s in live for s in store) and all(s in live for s in dict(self._failed)):
            return
        self._store = {s: v for s, v in store.items() if s in live}
        self._sizes = {s: n for s, n in dict(self._sizes).items() if s in self._store}
        self._bytes = sum(self._sizes.values())
        self._failed = {s: f for s, f in dict(self._failed).items() if s in live}
        self.memo = {k: v for k, v in dict(self.memo).items() if k[0] in self._store}

    def _due(self, subject: Subject, fp: tuple) -> bool:
        held = self._store.get(subject)
        failed = self._failed.get(subject)
        if failed is not None and failed.print == fp:
            return self._round >= failed.retry_at
        return held is None or held[0] != fp

    def missing(self, snap: Snapshot) -> list[Subject]:
        """Subjects needing a fetch (new, changed, or failed and due again), at most ``budget``
        of them, most recent failures first."""
        subjects = evidence_subjects(snap)
        prints = _fingerprints(snap, subjects)
        todo = [s for s in subjects if self._due(s, prints[s])]
        return todo[: self.budget if self._refreshed else max(self.budget, self.first_budget)]

    def warnings(self) -> list[str]:
        """One line per subject whose evidence could not be fetched (retried on later polls)."""
        return [f"evidence for {s.id}: {f.error} (retrying)" for s, f in self._failed.items()]

    def lookup(self, snap: Snapshot, subject: Subject) -> Artifacts | None:
        """The subject's evidence if it is still valid for ``snap`` (no I/O), else None (also
        while its last fetch failed: a drill-down then fetches it again)."""
        if subject in self._failed:
            return None
        hit = self._store.get(subject)
        return hit[1] if hit is not None and hit[0] == _fingerprint(snap, subject) else None

    def remember(self, snap: Snapshot, subject: Subject, arts: Artifacts) -> None:
        """Keep artifacts fetched elsewhere (a drill-down) as the subject's evidence, when it is
        one of ``snap``'s evidence subjects (the poller then does not fetch it again) or an
        ended job (kept while it is listed, so its row shows the drill-down's verdict)."""
        opened = subject.kind == "job" and any(
            j.job_id == subject.id and _ended(j) for j in snap.jobs
        )
        if _wants_evidence(snap, subject) or opened:
            if opened and not _wants_evidence(snap, subject):
                self._opened[subject] = None
                while len(self._opened) > self.max_subjects:
                    self._opened.pop(next(iter(self._opened)))
            fp = _fingerprint(snap, subject)
            if fetch_errors(arts) and subject in self._store:
                return  # a failed drill-down fetch must not replace good evidence
            self._put(subject, fp, arts)
            if not fetch_errors(arts):
                self._failed.pop(subject, None)

    def _put(self, subject: Subject, fp: tuple, arts: Artifacts) -> None:
        self._bytes -= self._sizes.pop(subject, 0)
        self._store.pop(subject, None)  # re-inserted last: eviction goes oldest first
        self._store[subject] = (fp, arts)
        self.memo.pop((subject, fp), None)  # findings diagnosed from the artifacts replaced
        self._sizes[subject] = size = artifacts_size(arts)
        self._bytes += size
        while len(self._store) > 1 and (
            len(self._store) > self.max_subjects or self._bytes > self.max_bytes
        ):
            old = next(iter(self._store))
            del self._store[old]
            self._bytes -= self._sizes.pop(old, 0)
            self._failed.pop(old, None)

    def _keep(self, subject: Subject, fp: tuple, got: Artifacts | BaseException) -> str | None:
        """Store one fetch's outcome; returns its failure, if any."""
        if isinstance(got, BaseException):
            error = str(got) or type(got).__name__
        else:
            errors = fetch_errors(got)
            error = "; ".join(errors) if errors else None
            held = self._store.get(subject)
            # partial evidence beats none, but never replaces what a good fetch brought
            if error is None or held is None or held[0] != fp or subject in self._failed:
                self._put(subject, fp, got)
        if error is None:
            self._failed.pop(subject, None)
            return None
        if subject not in self._store:
            self._put(subject, fp, Artifacts())
        prev = self._failed.get(subject)
        attempts = prev.attempts + 1 if prev is not None and prev.print == fp else 1
        delay = min(2 ** (attempts - 1), RETRY_CAP_POLLS)
        # missing() runs before the next refresh counts its round: due after ``delay`` polls
        self._failed[subject] = _Failed(fp, attempts, self._round + delay - 1, error)
        return error

    async def refresh(
        self, source: Source, snap: Snapshot, subjects: Iterable[Subject] | None = None
    ) -> dict[Subject, Artifacts]:
        """Fetch the missing evidence; return all valid evidence.

        Through ``source.evidence(subjects, snap, concurrency=, timeout=)``: one call for all
        subjects (``SlurmSource`` runs one sacct; the default fetches per subject). Never
        raises: a subject whose fetch fails keeps its last good artifacts (if any), is fetched
        again after a backoff, and the failure is kept in ``errors``.
        """
        todo = list(subjects) if subjects is not None else self.missing(snap)
        self.errors = []
        self._round += 1
        prints = _fingerprints(snap, todo)  # one pass over the queue, not one per subject
        if todo:
            try:
                got = await source.evidence(
                    todo, snap, concurrency=self.concurrency, timeout=self.timeout
                )
            except Exception as exc:  # noqa: BLE001 - a source bug must not stop polling
                got = dict.fromkeys(todo, exc)
            for subject in todo:
                error = self._keep(subject, prints[subject], got.get(subject, Artifacts()))
                if error is not None:
                    self.errors.append(f"{source.name}: evidence for {subject}: {error}")
        self._refreshed = True
        return self.cached(snap)
