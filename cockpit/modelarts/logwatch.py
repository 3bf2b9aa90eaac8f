"""Running training jobs' logs, a few a poll: what ``training_log_silent`` needs to say a log
went quiet (:mod:`cockpit.diagnosis.rules.modelarts_risk`).

A Running job's list entry does not move while it trains, so the poll reads nothing of it
(:mod:`cockpit.modelarts.jobcache`); its log preview (one request of up to 5 MB each) is read
here within a budget per poll. :func:`pick` chooses: first the jobs whose log was already
unchanged for half the silence threshold at their last read (at most half the budget, so a
silent log is confirmed, and its warning cleared, within a poll or two), then the jobs never
read (longest running first), then the rest, the oldest read first: a round robin over every
Running job. Per job is kept the preview's digest and size (``full_size`` when the API gives
it), when that first changed to what it is, when it was last read, and its last 2 KB (the
last line for the finding; the full text goes to the source's bounded preview cache only).
Pure but for the clock values it is handed. :class:`PreviewCache` holds the full previews
read lately, for the log viewer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cockpit.diagnosis.startup_log import last_line
from cockpit.model import RiskSettings, TrainingJob
from cockpit.model import training_log_path as log_path
from cockpit.modelarts.jobcache import Entry, phase

PREVIEWS_MAX = 64  # log previews held (each up to 5 MB) ...
PREVIEW_BYTES_MAX = 32 << 20  # ... and their characters together
READS_PER_POLL = 5  # default [modelarts.NAME] running_log_reads: requests per poll, at most
TAIL_CHARS = 2048  # of a preview kept per job (10k running jobs: ~20 MB)


@dataclass(frozen=True, slots=True)
class LogSeen:
    """One Running job's log preview as its reads left it."""

    task: str
    digest: str
    size: int
    changed_at: datetime  # the first read that saw the preview as it is now
    checked_at: datetime  # the latest read
    tail: str
    first_line: int  # line number of ``tail``'s first line in the preview
    written: datetime | None = None  # the last line's own timestamp, when it has one
    quiet_s: float = 0.0  # seconds the log was unchanged as of the latest read (at least)


def _quiet(changed: datetime, checked: datetime, written: datetime | None) -> float:
    since = changed
    if written is not None and written <= checked:
        since = written  # as the rule reads it (modelarts_startup.written_at)
    return max(0.0, (checked - since).total_seconds())


def preview_text(answer: Any) -> tuple[str, int]:
    """(text, size in bytes) of a ``logs_preview`` answer; size is ``full_size`` when given
    (a log larger than the preview still grows there), else the text's."""
    if not isinstance(answer, dict):
        return "", 0
    text = answer.get("content", answer.get("context"))
    text = text if isinstance(text, str) else ""
    full = answer.get("full_size")
    size = full if isinstance(full, int) and not isinstance(full, bool) else -1
    return text, size if size >= 0 else len(text.encode("utf-8", "replace"))


def tail_of(text: str, limit: int = TAIL_CHARS) -> tuple[str, int]:
    """(the last ``limit`` characters of ``text`` from a line start where one is near, the line
    number of its first line)."""
    if len(text) <= limit:
        return text, 1
    cut = len(text) - limit
    nl = text.find("\n", cut, len(text) - 1)
    if nl != -1:
        cut = nl + 1
    return text[cut:], text.count("\n", 0, cut) + 1


def observe(prev: LogSeen | None, task: str, answer: Any, now: datetime) -> LogSeen:
    """The record after reading ``answer`` (a ``logs_preview`` JSON) at ``now``."""
    text, size = preview_text(answer)
    digest = hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()
    same = prev is not None and (prev.task, prev.digest, prev.size) == (task, digest, size)
    if same:
        assert prev is not None
        quiet = _quiet(prev.changed_at, now, prev.written)
        return dataclasses.replace(prev, checked_at=now, quiet_s=quiet)
    tail, first = tail_of(text)
    got = last_line(tail)
    written = got[2] if got else None
    return LogSeen(task, digest, size, now, now, tail, first, written, _quiet(now, now, written))


def pick(
    running: Iterable[tuple[str, float]],
    seen: Mapping[str, LogSeen],
    asked: Mapping[str, float],
    budget: int,
    silent_after_s: float,
) -> list[str]:
    """The job ids to read this poll, at most ``budget``, from ``running`` ((job id, started
    at)) given ``asked`` (job id -> its latest read); epoch seconds; see the module doc for
    the order."""
    if budget <= 0:
        return []
    watch: list[tuple[float, str]] = []  # quiet for half the threshold: (last asked, id)
    fresh: list[tuple[float, str]] = []  # never read: (started at, id)
    rest: list[tuple[float, str]] = []  # (last asked, id)
    half_after = silent_after_s / 2
    for jid, started in running:
        at = asked.get(jid)
        if at is None:
            fresh.append((started, jid))
            continue
        rec = seen.get(jid)
        # an empty preview says nothing (many jobs log to files of their own): no hurry
        if rec is not None and rec.size and rec.quiet_s >= half_after:
            watch.append((at, jid))
        else:
            rest.append((at, jid))
    quiet = [jid for _, jid in heapq.nsmallest(budget, watch)]
    half = math.ceil(budget / 2)
    out = quiet[:half]
    out += [jid for _, jid in heapq.nsmallest(budget - len(out), fresh)]
    out += [jid for _, jid in heapq.nsmallest(budget - len(out), rest)]
    return out + quiet[half : half + budget - len(out)]  # what the others left


class PreviewCache:
    """Log previews by path, bounded by count and size (oldest out first); :meth:`keep_jobs`
    forgets the jobs that left the list."""

    def __init__(self, max_items: int = PREVIEWS_MAX, max_chars: int = PREVIEW_BYTES_MAX) -> None:
        self.max_items, self.max_chars = max_items, max_chars
        self._items: dict[str, str] = {}
        self.chars = 0

    def __contains__(self, path: object) -> bool:
        return path in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, path: str) -> str:
        return self._items[path]

    def __setitem__(self, path: str, text: str) -> None:
        old = self._items.pop(path, None)
        self.chars -= len(old) if old is not None else 0
        self._items[path] = text
        self.chars += len(text)
        while len(self._items) > 1 and (
            len(self._items) > self.max_items or self.chars > self.max_chars
        ):
            self.chars -= len(self._items.pop(next(iter(self._items))))

    def keep_jobs(self, job_ids: Iterable[str]) -> None:
        keep = {log_path(j, "") for j in job_ids}  # "modelarts://<job>/" prefixes
        for path in [p for p in self._items if p[: p.rfind("/") + 1] not in keep]:
            self.chars -= len(self._items.pop(path))


class RunningLogs:
    """The records of one ModelArts project's Running jobs, from poll to poll."""

    def __init__(self) -> None:
        self.seen: dict[str, LogSeen] = {}
        self.asked: dict[str, float] = {}  # job -> its latest read (epoch s), answered or not
        self._merged: dict[str, tuple[TrainingJob, LogSeen, TrainingJob]] = {}

    def keep(self, running: Iterable[str]) -> None:
        """Forget the jobs no longer Running (their warnings resolve with them)."""
        live = set(running)
        for d in (self.seen, self.asked, self._merged):
            for k in [k for k in d if k not in live]:
                del d[k]

    def due(
        self, entries: Iterable[Entry], now: datetime, budget: int, risk: RiskSettings
    ) -> list[tuple[str, str]]:
        """(job id, first task) of the previews to read this poll, of the Running jobs among
        ``entries`` (the others are forgotten)."""
        running: dict[str, tuple[str, float]] = {}  # job -> (first task, started at)
        for e in entries:
            tasks = (e.item.get("status") or {}).get("tasks")
            if phase(e.item) == "Running" and isinstance(tasks, list) and tasks:
                started = e.job.start_time or e.job.create_time or now
                running[e.job.job_id] = (str(tasks[0]), started.timestamp())
        self.keep(running)
        got = pick(
            ((j, r[1]) for j, r in running.items()),
            self.seen,
            self.asked,
            budget,
            risk.log_silent_s,
        )
        return [(j, running[j][0]) for j in got]

    def record(self, job_id: str, task: str, answer: Any, now: datetime) -> None:
        """A read of ``job_id``'s preview answered ``answer`` (None: it failed)."""
        self.asked[job_id] = now.timestamp()
        if answer is not None:
            self.seen[job_id] = observe(self.seen.get(job_id), task, answer, now)

    def apply(self, job: TrainingJob) -> TrainingJob:
        """``job`` with its log as last read (the same object while neither changed)."""
        rec = self.seen.get(job.job_id)
        if rec is None:
            return job
        kept = self._merged.get(job.job_id)
        if kept is not None and kept[0] is job and kept[1] is rec:
            return kept[2]
        merged = dataclasses.replace(
            job,
            log_preview=rec.tail,
            log_task=rec.task,
            log_first_line=rec.first_line,
            log_changed_at=rec.changed_at,
            log_checked_at=rec.checked_at,
        )
        self._merged[job.job_id] = (job, rec, merged)
        return merged
