"""Right-sizing ``--mem`` and ``--time`` from a job's sacct history.

Input: :class:`AcctRecord` rows from ``sacct_history_argv(user, name)`` (or
``sacct -j``): job rows carry ReqMem / Elapsed / Timelimit, step rows (``batch``,
``0``...) carry MaxRSS, so rows are grouped by job id first. Suggestions follow the
guides: ``--mem`` = peak MaxRSS × 1.2 rounded up to a unit a human would type,
``--time`` = longest Elapsed × 1.3 rounded up to 5 / 15 / 60-minute steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cockpit.i18n import _, ngettext
from cockpit.model import AcctRecord
from cockpit.units import hms

MEM_FACTOR = 1.2
TIME_FACTOR = 1.3
# A run that ended (not COMPLETED, not TIMEOUT) sooner than this failed at start: how long
# it ran says nothing about how long the work needs, so it never sizes --time.
SHORT_RUN_S = 300
_LIVE = {"RUNNING", "PENDING", "REQUEUED", "SUSPENDED", "CONFIGURING", "COMPLETING"}


@dataclass(frozen=True, slots=True)
class RightSize:
    """A suggestion with its evidence. Memory in MiB, times in seconds; None = no data.

    ``mem_arg`` / ``time_arg`` are ready to paste (``--mem=6G``, ``--time=01:30:00``).
    ``runs`` counts finished runs used; ``oom_runs`` / ``timeout_runs`` ended at the
    limit, so their real need was higher than what was measured (see ``notes``).
    """

    runs: int
    mem_mib: int | None = None
    mem_arg: str = ""
    mem_peak_mib: int | None = None
    mem_p95_mib: int | None = None
    req_mem_mib: int | None = None  # the latest run's request
    time_s: int | None = None
    time_arg: str = ""
    elapsed_max_s: int | None = None
    elapsed_p95_s: int | None = None
    timelimit_s: int | None = None  # the latest run's limit
    oom_runs: int = 0
    timeout_runs: int = 0
    notes: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        """One line for a finding or the job screen."""
        parts = []
        if self.mem_arg:
            parts.append(
                _("{arg} (peak {peak}, p95 {p95})").format(
                    arg=self.mem_arg, peak=fmt_mem(self.mem_peak_mib), p95=fmt_mem(self.mem_p95_mib)
                )
            )
        if self.time_arg:
            parts.append(
                _("{arg} (longest {longest}, p95 {p95})").format(
                    arg=self.time_arg,
                    longest=fmt_duration(self.elapsed_max_s),
                    p95=fmt_duration(self.elapsed_p95_s),
                )
            )
        if not parts:
            return _("no usable history")
        return ngettext("from {n} run: {parts}", "from {n} runs: {parts}", self.runs).format(
            n=self.runs, parts=", ".join(parts)
        )


SIZED_STATES = frozenset(
    {"OUT_OF_MEMORY", "TIMEOUT"}
)  # ends whose remedy (--mem / --time) history sizes


def sizing_subject(job: object, acct: Sequence[AcctRecord]) -> tuple[str, str] | None:
    """(user, job name) whose past runs size the remedy of a job that ended OUT_OF_MEMORY or
    TIMEOUT, else None. ``job``: the squeue ``SlurmJob`` or None; ``acct``: its sacct rows,
    whose job row's state wins over squeue's (squeue may already show the job gone or requeued).
    """
    head = next((r for r in acct if r.step == ""), None)
    state = (
        head.state if head is not None and head.state in SIZED_STATES else getattr(job, "state", "")
    )
    if state not in SIZED_STATES:
        return None
    user = getattr(job, "user", "") or (head.user if head else "")
    name = getattr(job, "name", "") or (head.job_name if head else "")
    return user, name


def round_mem_mib(mib: float) -> int:
    """Round up to 256 MiB below 1 GiB, 512 MiB below 4 GiB, 1 GiB below 64 GiB, then 4 GiB."""
    for limit, step in ((1024, 256), (4096, 512), (65536, 1024)):
        if mib <= limit:
            return max(step, math.ceil(mib / step) * step)
    return math.ceil(mib / 4096) * 4096


def mem_for_peak(peak_mib: float) -> int:
    """The ``--mem`` (MiB) for a measured peak: MEM_FACTOR (1.2) x peak, rounded up by
    :func:`round_mem_mib`. The one rule shared by history right-sizing and the engine's OOM
    remedy."""
    return round_mem_mib(peak_mib * MEM_FACTOR)


def time_for_peak(elapsed_s: float) -> int:
    """The ``--time`` (seconds) for a measured longest run: TIME_FACTOR (1.3) x, rounded up by
    :func:`round_time_s`. Shared with the engine's TIMEOUT remedy."""
    return round_time_s(elapsed_s * TIME_FACTOR)


def round_time_s(seconds: float) -> int:
    """Round up to 5 minutes up to 1 h, 15 minutes up to 6 h, whole hours beyond."""
    for limit, step in ((3600, 300), (6 * 3600, 900)):
        if seconds <= limit:
            return max(step, math.ceil(seconds / step) * step)
    return math.ceil(seconds / 3600) * 3600


def fmt_mem(mib: int | None) -> str:
    if mib is None:
        return "?"
    return f"{mib // 1024}G" if mib and mib % 1024 == 0 else f"{mib}M"


def fmt_duration(seconds: int | None) -> str:
    """Slurm's time format: ``[D-]HH:MM:SS``."""
    return hms(seconds, "?")


def _p95(values: Sequence[int]) -> int:
    """Nearest-rank 95th percentile."""
    s = sorted(values)
    return s[max(0, math.ceil(0.95 * len(s)) - 1)]


def suggest(records: Sequence[AcctRecord]) -> RightSize:
    """Suggest ``--mem`` and ``--time`` from finished runs in ``records``.

    Runs still PENDING/RUNNING and sacct's placeholder rows are ignored. An
    OUT_OF_MEMORY run counts its ReqMem as a lower bound of the peak; a TIMEOUT
    run its Timelimit as a lower bound of the elapsed time.
    """
    jobs: dict[str, list[AcctRecord]] = {}
    for r in records:
        if r.placeholder:
            continue
        # parsers split "4.batch" into job_id "4" + step "batch"; tolerate unsplit ids too
        jobs.setdefault(r.job_id.split(".", 1)[0], []).append(r)
    peaks, elapsed = [], []
    req_mem = limit = None
    ooms = timeouts = runs = short = 0
    for rows in jobs.values():
        head = next((r for r in rows if r.step == ""), rows[0])
        if head.state in _LIVE:
            continue
        runs += 1
        # MaxRSS 0: the accounting sampler never saw the step (it ended before the first
        # sample), not a peak of zero
        rss = [r.max_rss_mib for r in rows if r.max_rss_mib]
        peak = max(rss) if rss else None
        if head.state == "OUT_OF_MEMORY" or any(r.state == "OUT_OF_MEMORY" for r in rows):
            ooms += 1
            if head.req_mem_mib is not None:
                peak = max(peak or 0, head.req_mem_mib)
        if peak is not None:
            peaks.append(peak)
        el = head.elapsed_s
        if head.state == "TIMEOUT":
            timeouts += 1
            if head.timelimit_s is not None:
                el = max(el or 0, head.timelimit_s)
        if el is not None and head.state not in {"COMPLETED", "TIMEOUT"} and el < SHORT_RUN_S:
            short += 1  # failed at start: its Elapsed is not how long the work takes
            el = None
        if el is not None:
            elapsed.append(el)
        req_mem = head.req_mem_mib if head.req_mem_mib is not None else req_mem
        limit = head.timelimit_s if head.timelimit_s is not None else limit
    notes = []
    if ooms:
        notes.append(
            _(
                "{n} run(s) ran out of memory: their real peak is above the request, so this is "
                "a floor; check the next run's MaxRSS"
            ).format(n=ooms)
        )
    if timeouts:
        notes.append(
            _(
                "{n} run(s) hit the time limit: their real duration is unknown, so this is a floor"
            ).format(n=timeouts)
        )
    if short:
        notes.append(
            _("{n} run(s) ended within {mins} min without completing: not used for --time").format(
                n=short, mins=SHORT_RUN_S // 60
            )
        )
    if runs and not peaks:
        notes.append(_("no MaxRSS recorded (jobacct_gather disabled?): cannot size --mem"))
    mem = time = None
    if peaks:
        mem = mem_for_peak(max(peaks))
    if elapsed and max(elapsed) > 0:
        time = time_for_peak(max(elapsed))
    return RightSize(
        runs=runs,
        mem_mib=mem,
        mem_arg=f"--mem={fmt_mem(mem)}" if mem else "",
        mem_peak_mib=max(peaks) if peaks else None,
        mem_p95_mib=_p95(peaks) if peaks else None,
        req_mem_mib=req_mem,
        time_s=time,
        time_arg=f"--time={fmt_duration(time)}" if time else "",
        elapsed_max_s=max(elapsed) if elapsed else None,
        elapsed_p95_s=_p95(elapsed) if elapsed else None,
        timelimit_s=limit,
        oom_runs=ooms,
        timeout_runs=timeouts,
        notes=tuple(notes),
    )


def history_hint(records: Sequence[AcctRecord]) -> str:
    """A sentence for OOM / TIMEOUT remedies from ``Artifacts.history`` ("" without usable runs).

    ``records``: sacct rows of the same user + job name (``sacct_history_argv``), the
    failed job's own rows included (its OOM / TIMEOUT is a floor, see :func:`suggest`).
    """
    if not records:
        return ""
    rs = suggest(records)
    if not (rs.mem_arg or rs.time_arg):
        return ""
    name = next((r.job_name for r in records if r.step == "" and r.job_name), "")
    if name:
        return _("Sized from sacct history of {name} (last 30 days) {summary}.").format(
            name=repr(name), summary=rs.summary
        )
    return _("Sized from sacct history (last 30 days) {summary}.").format(summary=rs.summary)
