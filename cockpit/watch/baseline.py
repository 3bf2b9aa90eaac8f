"""ModelArts init-log baselines: how a good start looked, to diff a stuck one against.

For each training job that reached Running, the first 50 lines of its startup log
(``TrainingJob.log_preview``) are kept per (pool, image) in a JSON file. For a job
stuck in Initializing, :func:`diff_against_baseline` lines its log up with the
closest good run: which steps it passed, where it stopped, what should have come
next, and how long each step took then and now (when lines carry timestamps).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import platformdirs

from cockpit.diagnosis.startup_log import TIMESTAMP, line_time, strip_time
from cockpit.model import Artifacts, StartupDiff, Subject, TrainingJob
from cockpit.text import strip_ansi

KEEP_LINES = 50
PER_KEY = 3  # most recent good runs kept per (pool, image)


@dataclass(frozen=True, slots=True)
class Baseline:
    """First lines of a good run's startup log. ``captured_at`` is ISO 8601 UTC."""

    job_id: str
    name: str
    pool: str
    image: str
    captured_at: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StepDiff:
    """One line of the aligned logs.

    ``status``: ``passed`` (in both), ``missing`` (the good run had it, the stuck one
    has not reached it), ``extra`` (only in the stuck log: often the error).
    ``then_s`` / ``now_s``: seconds since the previous timestamped line in the good /
    stuck log; None without timestamps.
    """

    text: str
    status: str
    then_s: float | None = None
    now_s: float | None = None


@dataclass(frozen=True, slots=True)
class BaselineDiff:
    """Where a stuck startup stopped compared with ``baseline``.

    ``last_passed`` is the last baseline line the stuck log reached (None: not even
    the first), ``next_expected`` the baseline lines that should come next,
    ``stalled_s`` how long the stuck log has been silent since its last timestamp
    (needs ``now``), ``then_next_s`` how long the good run took for that next step.
    """

    baseline_job_id: str
    steps: tuple[StepDiff, ...]
    passed: int
    total: int
    last_passed: str | None
    next_expected: tuple[str, ...]
    stalled_s: float | None = None
    then_next_s: float | None = None

    @property
    def summary(self) -> str:
        if self.passed == self.total:
            return f"reached every step of good run {self.baseline_job_id}"
        where = f"after {self.last_passed!r}" if self.last_passed else "before the first step"
        nxt = f"; the good run went on with {self.next_expected[0]!r}" if self.next_expected else ""
        took = f" ({self.then_next_s:.0f}s then" if self.then_next_s is not None else ""
        if took:
            took += f", silent {self.stalled_s:.0f}s now)" if self.stalled_s is not None else ")"
        return (
            f"stopped {where} (step {self.passed}/{self.total} "
            f"of good run {self.baseline_job_id}){nxt}{took}"
        )


_TS = TIMESTAMP  # the engine's (cockpit.diagnosis.startup_log): one notion of a line's time
# Variable parts that differ between two good runs: timestamps, numbers, hex ids, paths under /tmp.
_VARIABLE = (
    (_TS, "<ts>"),
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I),
        "<uuid>",
    ),
    (re.compile(r"\b[0-9a-f]{12,}\b", re.I), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
    (re.compile(r"\s+"), " "),
)


def normalise(line: str) -> str:
    """A line with its run-specific parts masked, for matching two runs' logs."""
    s = strip_ansi(line).strip()
    for pat, rep in _VARIABLE:
        s = pat.sub(rep, s)
    return s


def _durations(lines: Sequence[str]) -> list[float | None]:
    """Seconds since the previous timestamped line, per line (None without a timestamp)."""
    out: list[float | None] = []
    prev: datetime | None = None
    for ln in lines:
        t = line_time(ln)
        if t is None:
            out.append(None)
            continue
        out.append((t - prev).total_seconds() if prev is not None else 0.0)
        prev = t
    return out


def diff_against_baseline(
    stuck_log_lines: Sequence[str], baseline: Baseline, now: datetime | None = None
) -> BaselineDiff:
    """Align a stuck job's startup log with a good run's (pure; ``now`` for the silence)."""
    base = list(baseline.lines)
    stuck = [ln for ln in stuck_log_lines if ln.strip()][: max(KEEP_LINES * 2, len(base))]
    nb, ns = [normalise(x) for x in base], [normalise(x) for x in stuck]
    db, ds = _durations(base), _durations(stuck)
    sm = difflib.SequenceMatcher(a=nb, b=ns, autojunk=False)
    steps: list[StepDiff] = []
    passed_idx: list[int] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                passed_idx.append(i1 + k)
                steps.append(StepDiff(stuck[j1 + k], "passed", db[i1 + k], ds[j1 + k]))
            continue
        steps += [StepDiff(stuck[j], "extra", None, ds[j]) for j in range(j1, j2)]
        steps += [StepDiff(base[i], "missing", db[i], None) for i in range(i1, i2)]
    last = max(passed_idx) if passed_idx else None
    nxt_start = 0 if last is None else last + 1
    next_expected = tuple(base[nxt_start : nxt_start + 3])
    stalled = None
    if now is not None:
        times = [t for t in (line_time(x) for x in stuck) if t is not None]
        if times:
            stalled = max(0.0, (now - times[-1]).total_seconds())
    # time the good run spent reaching its next timestamped line
    then_next = next((d for d in db[nxt_start:] if d is not None), None) if next_expected else None
    return BaselineDiff(
        baseline_job_id=baseline.job_id,
        steps=tuple(steps),
        passed=len(passed_idx),
        total=len(base),
        last_passed=base[last] if last is not None else None,
        next_expected=next_expected,
        stalled_s=stalled,
        then_next_s=then_next,
    )


def startup_diff(
    job: TrainingJob, store: BaselineStore | None, now: datetime
) -> StartupDiff | None:
    """The engine's view of a stuck job against its closest good run (None: not Initializing,
    no startup log, or no good run of that pool/image kept yet). Pure given ``store``'s items."""
    if store is None or job.console_phase != "Initializing" or not job.log_preview.strip():
        return None
    b = store.closest_baseline(job)
    if b is None:
        return None
    d = diff_against_baseline(strip_ansi(job.log_preview).splitlines(), b, now)
    return StartupDiff(
        job_id=job.job_id,
        baseline_job_id=b.job_id,
        passed=d.passed,
        total=d.total,
        summary=d.summary,
        last_passed=strip_time(d.last_passed) if d.last_passed else None,
        next_expected=tuple(strip_time(x) for x in d.next_expected),
        then_next_s=d.then_next_s,
        stalled_s=d.stalled_s,
    )


def with_startup_diffs(
    evidence: dict, snapshot: object, store: BaselineStore | None, now: datetime
) -> dict:
    """``evidence`` (Subject -> Artifacts) with each Initializing training job's
    :class:`StartupDiff` added, so its findings, incidents and alerts carry the diff."""
    if store is None or not store.baselines or getattr(snapshot, "kind", "") != "modelarts":
        return evidence
    out = dict(evidence)
    for job in snapshot.training_jobs:  # type: ignore[attr-defined]
        d = startup_diff(job, store, now)
        if d is None:
            continue
        subject = Subject("training_job", snapshot.source, job.job_id, name=job.name)  # type: ignore[attr-defined]
        arts = out.get(subject) or Artifacts()
        out[subject] = dataclasses.replace(arts, startup_diffs=(d,))
    return out


def default_baseline_path() -> Path:
    return Path(platformdirs.user_state_dir("cockpit")) / "init-baselines.json"


def _reached_running(job: TrainingJob) -> bool:
    return (job.phase == "Running" and job.console_phase == "Running") or job.phase == "Completed"


class BaselineStore:
    """Good startup logs per (pool, image), persisted as one JSON file.

    File shape: ``{"version": 1, "baselines": [Baseline as dict, ...]}``. A corrupt
    file is treated as empty (and replaced on the next save): baselines are a cache.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        per_key: int = PER_KEY,
        *,
        persist: bool = True,
    ) -> None:
        """``persist=False`` keeps baselines in memory only (the demo, tests): no file is used."""
        self.path = Path(path) if path is not None else default_baseline_path()
        self.per_key = per_key
        self.persist = persist
        self._items: list[Baseline] = self._load() if persist else []

    def _load(self) -> list[Baseline]:
        try:
            d = json.loads(self.path.read_text(encoding="utf-8"))
            return [Baseline(**{**b, "lines": tuple(b["lines"])}) for b in d["baselines"]]
        except (OSError, ValueError, KeyError, TypeError):
            return []

    @property
    def baselines(self) -> tuple[Baseline, ...]:
        return tuple(self._items)

    def record(self, job: TrainingJob, now: datetime | None = None) -> Baseline | None:
        """Keep ``job``'s first 50 startup lines if it reached Running and is not kept yet.

        Returns the new baseline (and saves the file), else None. Raises OSError when
        the file cannot be written.
        """
        if not _reached_running(job) or not job.log_preview.strip():
            return None
        if any(b.job_id == job.job_id for b in self._items):
            return None
        lines = tuple(ln for ln in strip_ansi(job.log_preview).splitlines() if ln.strip())[
            :KEEP_LINES
        ]
        b = Baseline(
            job.job_id,
            job.name,
            job.pool_name or job.pool_id,
            job.image,
            (now or datetime.now(UTC)).isoformat(timespec="seconds"),
            lines,
        )
        same = [x for x in self._items if (x.pool, x.image) == (b.pool, b.image)]
        drop = {x.job_id for x in same[: max(0, len(same) + 1 - self.per_key)]}
        self._items = [x for x in self._items if x.job_id not in drop] + [b]
        self.save()
        return b

    def closest_baseline(self, job: TrainingJob) -> Baseline | None:
        """Newest good run with the same pool and image, else same image, else same pool."""
        pool = job.pool_name or job.pool_id
        for match in (
            lambda b: b.pool == pool and b.image == job.image,
            lambda b: bool(job.image) and b.image == job.image,
            lambda b: bool(pool) and b.pool == pool,
        ):
            found = [b for b in self._items if match(b) and b.job_id != job.job_id]
            if found:
                # newest first; among runs captured together, the one with the longer startup log
                return max(found, key=lambda b: (b.captured_at, len(b.lines)))
        return None

    def save(self) -> None:
        if not self.persist:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(
            {"version": 1, "baselines": [asdict(b) for b in self._items]}, ensure_ascii=False
        )
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".baselines-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


class BaselineRecorder:
    """Records the startup log of each ModelArts job that reached Running (the poller calls it).

    The poller does not fetch log previews of Running jobs (they are quiet), so the
    recorder reads the first ``PREVIEW_BYTES`` of worker-0's preview through the
    source's ``read_range`` once per job, at most ``per_poll`` jobs per poll (newest
    first), so a project with hundreds of running jobs does not stall a poll.
    """

    PREVIEW_BYTES = 64 * 1024

    def __init__(self, store: BaselineStore, per_poll: int = 5) -> None:
        self.store = store
        self.per_poll = per_poll
        self.last_error = ""
        self._tried: set[str] = {b.job_id for b in store.baselines}

    async def observe(self, source: object, snapshot: object, now: datetime) -> list[Baseline]:
        """Record new good runs from a good ModelArts ``snapshot``; returns them. Never raises."""
        import asyncio
        import dataclasses

        if (
            getattr(snapshot, "kind", "") != "modelarts"
            or getattr(snapshot, "error", None) is not None
        ):
            return []
        fresh = [
            t
            for t in snapshot.training_jobs
            if _reached_running(t) and t.job_id not in self._tried and t.tasks
        ]  # type: ignore[attr-defined]
        fresh.sort(key=lambda t: t.create_time or now, reverse=True)
        out: list[Baseline] = []
        for job in fresh[: self.per_poll]:
            self._tried.add(job.job_id)
            # a Running job's preview read for silence is its tail: the start is read here
            text = job.log_preview if job.log_first_line == 1 else ""
            if not text.strip():
                from cockpit.model import training_log_path as log_path

                try:
                    data = await source.read_range(
                        log_path(job.job_id, job.tasks[0]), 0, self.PREVIEW_BYTES
                    )  # type: ignore[attr-defined]
                except Exception as exc:  # noqa: BLE001 - a missing preview only means no baseline
                    self.last_error = f"startup log of {job.name}: {exc}"
                    continue
                text = data.decode("utf-8", "replace")
            try:
                b = await asyncio.to_thread(
                    self.store.record, dataclasses.replace(job, log_preview=text), now
                )
            except OSError as exc:
                self.last_error = f"baselines: {exc}"
                continue
            if b is not None:
                out.append(b)
        return out


async def with_learned_diff(
    source: object,
    snap: object,
    arts: Artifacts,
    store: BaselineStore,
    now: datetime,
    listing: object = None,
) -> Artifacts:
    """``arts`` of a one-job snapshot (``cockpit diagnose --training-job``) with its
    :class:`StartupDiff`. When ``store`` holds no good run of the job's pool or image yet, the
    project's Running jobs of that pool or image are learned first (from ``listing``, the
    project's job list when the caller has read it, else one listing; at most
    ``BaselineRecorder.per_poll`` startup logs read). Never raises: the diff is an extra."""
    jobs = getattr(snap, "training_jobs", ())
    if len(jobs) != 1 or jobs[0].console_phase != "Initializing":
        return arts
    job = jobs[0]
    try:
        if store.closest_baseline(job) is None:
            if listing is None:
                listing = await source.poll()  # type: ignore[attr-defined]
            pool = job.pool_name or job.pool_id
            alike = tuple(
                t
                for t in listing.training_jobs
                if t.job_id != job.job_id
                and (
                    (job.image and t.image == job.image)
                    or (pool and pool in (t.pool_name, t.pool_id))
                )
            )
            await BaselineRecorder(store).observe(
                source, dataclasses.replace(listing, training_jobs=alike), now
            )
        d = startup_diff(job, store, now)
    except Exception:  # noqa: BLE001 - no baseline only means no diff
        return arts
    return arts if d is None else dataclasses.replace(arts, startup_diffs=(d,))


async def diff_for_cli(
    args: object, source: object, snap: object, arts: Artifacts, listing: object = None
) -> Artifacts:
    """:func:`with_learned_diff` with the store the config names (the demo's in memory),
    bounded by ``args.timeout``; the diagnosis goes on without a diff on any failure."""
    import asyncio

    try:
        store = BaselineStore(persist=False)  # the demo's: in memory
        if not getattr(args, "demo", False):
            from cockpit.config import load_config
            from cockpit.watch.alerts import AlertConfig

            config = load_config(getattr(args, "config", None))
            if config.has_sources:  # no config: the demo site
                cfg = AlertConfig.from_table(getattr(config, "alerts", None) or {}, config.path)
                store = BaselineStore(cfg.baselines_path or None)
        now = getattr(snap, "taken_at", None) or datetime.now(UTC)
        timeout = float(getattr(args, "timeout", 30) or 30)
        learned = with_learned_diff(source, snap, arts, store, now, listing)
        return await asyncio.wait_for(learned, timeout)
    except Exception:  # noqa: BLE001 - a config or timeout problem costs the diff, not the answer
        return arts
