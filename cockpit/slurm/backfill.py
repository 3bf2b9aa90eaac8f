"""Jobs that failed while no poll looked: one batched sacct per poll, since a cursor.

squeue lists an ended job for MinJobAge seconds (300 by default). A job that ends and ages
out between two polls, or while no cockpit runs (the night before a 9:00 start), is never in
squeue when the cockpit asks. slurmdbd still has it: each poll asks ``sacct -a -X -S <since>
-E now --state=<failure states>`` once for the whole cluster, and the jobs it names that
squeue does not list join the snapshot as ended jobs, so the engine diagnoses them and they
become incidents like any other.

:class:`Backfill` holds the cursor (the start of the next window, one overlap before the last
good query so a job recorded late by slurmdbd still falls inside) and the jobs found, each
kept in the snapshot for ``hours`` after it was first found, the newest ``cap`` at most.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from cockpit.diagnosis.slurm_states import FAILED_STATES, JOB_STATES
from cockpit.errors import ParseError
from cockpit.model import SlurmJob
from cockpit.slurm import hostlist
from cockpit.slurm.commands import BACKFILL_FIELDS, SEP
from cockpit.slurm.parse import (
    parse_duration_s,
    parse_exit_code,
    parse_req_mem,
    parse_time,
)
from cockpit.slurm.paths import JobOwner
from cockpit.slurm.versions import sacct_folds_exit

# sacct --state takes base states only (it rejects the LAUNCH_FAILED flag): the failure
# states of the engine that are base states. CANCELLED is an operator's or user's choice and
# PREEMPTED is requeued or cancelled by policy; neither is alerted on.
BACKFILL_STATES: tuple[str, ...] = tuple(
    sorted(s for s in FAILED_STATES if s in JOB_STATES and not JOB_STATES[s].flag)
)
DEFAULT_HOURS = 12.0  # looked back on a first start, with no cursor remembered
DEFAULT_CAP = 500  # failed jobs kept at most (the newest by End)
RESUME_MAX = timedelta(days=7)  # a cursor older than this is cut here (store retention)
OFF_RETRY = timedelta(minutes=10)  # accounting disabled: asked again this much later
_NULLS = {"", "None", "none", "(null)", "Unknown", "N/A"}


MAX_VALUE_BYTES = 64 << 10  # a SubmitLine or job name spread over lines, at most this long


def split_rows(text: str, ncols: int) -> tuple[list[list[str]], list[str]]:
    """Rows of ``sacct -P --delimiter=\\x1f`` output: (fields per row, warnings).

    Only LF ends a row, and a value may hold one (a ``--wrap`` SubmitLine, a job name): a line
    continues the row before it when that row still lacks fields, or when it is complete and
    the line has no separator at all (the rest of the last field).
    """
    rows: list[list[str]] = []
    glued = 0  # bytes glued onto the last row: output that is not sacct's must not go quadratic
    for line in text.removesuffix("\n").split("\n"):
        fields = line.removesuffix("\r").split(SEP)
        prev = rows[-1] if rows else None
        room = prev is not None and glued + len(line) <= MAX_VALUE_BYTES
        if room and len(prev) < ncols and len(prev) + len(fields) - 1 <= ncols:
            prev[-1] += "\n" + fields[0]
            prev.extend(fields[1:])
            glued += len(line)
        elif not line.strip():
            continue
        elif room and len(prev) == ncols and len(fields) == 1:
            prev[-1] += "\n" + fields[0]
            glued += len(line)
        else:
            rows.append(fields)
            glued = 0
    good: list[list[str]] = []
    warnings: list[str] = []
    for i, r in enumerate(rows, 1):
        if len(r) != ncols:
            warnings.append(f"sacct: row {i} has {len(r)} fields, expected {ncols}")
        else:
            good.append(r)
    return good, warnings


def _int(v: str) -> int | None:
    v = v.strip()
    return int(v) if v.isdigit() and len(v) < 11 else None


def _job(c: dict[str, str], tz: tzinfo, folded: bool = False) -> tuple[SlurmJob, JobOwner | None]:
    job_id = c["JobID"].strip()
    if not job_id or not (job_id[0].isdigit() and all(ch.isalnum() or ch in "_+" for ch in job_id)):
        raise ValueError(f"bad JobID {job_id!r}")
    state_raw = c["State"].strip()
    state = state_raw.split(" ", 1)[0].upper()
    if not state.replace("_", "").isalpha():
        raise ValueError(f"bad State {state_raw!r}")
    node_list = c["NodeList"].strip()
    node_list = "" if node_list in _NULLS or node_list == "None assigned" else node_list
    try:
        nodes = hostlist.expand(node_list) if node_list else ()
    except ParseError:
        nodes = ()
    mem, per_cpu = parse_req_mem(c["ReqMem"])
    work_dir = c["WorkDir"]
    reason = c["Reason"].strip()
    job = SlurmJob(
        job_id=job_id,
        name=c["JobName"],
        user=c["User"].strip(),
        partition=c["Partition"].strip(),
        state=state,
        reason=reason if reason not in _NULLS else "None",
        cpus=_int(c["AllocCPUS"]) or None,
        node_count=len(nodes) or None,
        nodes=nodes,
        node_list=node_list,
        min_memory_mib=mem,
        mem_per_cpu=per_cpu,
        time_limit_s=parse_duration_s(c["Timelimit"]),
        elapsed_s=parse_duration_s(c["Elapsed"]),
        submit_time=parse_time(c["Submit"], tz),
        start_time=parse_time(c["Start"], tz),
        end_time=parse_time(c["End"], tz),
        work_dir="" if work_dir in _NULLS else work_dir,
        exit_code=parse_exit_code(c["ExitCode"], folded),
    )
    uid = _int(c["UID"])
    owner = JobOwner(job.user, uid, _int(c["GID"])) if uid is not None else None
    return job, owner


def is_placeholder(c: dict[str, str]) -> bool:
    """sacct's transient row for a job whose record slurmdbd has not completed (``JobName``
    ``allocation`` with no partition, or a ``ReqMem`` of ``?``), or a step row (``.batch``,
    ``.extern``) that ``-X`` should have left out: never a job of its own."""
    job_id = c.get("JobID", "").strip()
    if "." in job_id:
        return True
    name, partition = c.get("JobName", "").strip(), c.get("Partition", "").strip()
    if name in {"allocation", "batch", "extern"} and not partition:
        return True
    return c.get("ReqMem", "").strip().endswith("?")


def parse_backfill(
    text: str, tz: tzinfo, version: str = ""
) -> tuple[list[tuple[SlurmJob, JobOwner | None]], list[str]]:
    """``sacct_backfill_argv`` output -> ([(job, its owner)], warnings); a bad row is skipped
    with a warning, never the whole answer. ``version``: sacct's release (exit codes folded
    before 25.11: :func:`~cockpit.slurm.parse.parse_exit_code`)."""
    folded = sacct_folds_exit(version)
    rows, warnings = split_rows(text, len(BACKFILL_FIELDS))
    out: list[tuple[SlurmJob, JobOwner | None]] = []
    for i, r in enumerate(rows, 1):
        c = dict(zip(BACKFILL_FIELDS, r, strict=True))
        if is_placeholder(c):
            continue  # slurmdbd's stand-in for a record still being written: not a job
        try:
            out.append(_job(c, tz, folded))
        except (ValueError, ParseError, OverflowError) as exc:
            warnings.append(f"sacct backfill: row {i} skipped: {exc}")
    return out, warnings


def sacct_time(at: datetime, tz: tzinfo) -> str:
    """``-S`` as sacct reads it: the cluster's local time, to the second."""
    return at.astimezone(tz).strftime("%Y-%m-%dT%H:%M:%S")


@dataclass
class Backfill:
    """The cursor and the failed jobs found by the backfill of one cluster (mutable: the
    source's own state, touched on the event loop only)."""

    hours: float = DEFAULT_HOURS
    cap: int = DEFAULT_CAP
    cursor: datetime | None = None  # the last good query reached up to here
    resumed: datetime | None = None  # the store's cursor, before the first query
    off_until: datetime | None = None  # accounting disabled: not asked before this
    off_reason: str = ""
    jobs: dict[str, tuple[SlurmJob, datetime]] = field(default_factory=dict)  # id -> (job, found)

    def since(self, now: datetime, overlap: timedelta) -> datetime:
        """Start of the next window: the last good query (or the store's cursor) less the
        overlap, else ``hours`` back; never more than RESUME_MAX back."""
        last = self.cursor
        if last is None:
            # anchored at the first ask: a window that fails is asked again from the same start.
            # The store's cursor only ever reaches further back: one a TUI beside this one keeps
            # fresh would leave this cockpit's queue without the failures of the last hours
            # that the other's lists (on the lab: 4 jobs against 66 on one store)
            window = now - timedelta(hours=self.hours) + overlap
            self.resumed = min(self.resumed, window) if self.resumed is not None else window
            last = self.resumed
        return max(last - overlap, now - RESUME_MAX)

    def record(self, found: list[tuple[SlurmJob, JobOwner | None]], now: datetime) -> list[str]:
        """Remember the jobs of a good query run at ``now`` and move the cursor; warnings."""
        self.cursor = now
        self.off_until = None
        self.off_reason = ""
        for job, _ in found:
            old = self.jobs.pop(job.job_id, None)
            self.jobs[job.job_id] = (job, old[1] if old else now)
        if len(self.jobs) <= self.cap:
            return []
        total = len(self.jobs)
        newest = sorted(
            self.jobs.items(),
            key=lambda kv: kv[1][0].end_time or kv[1][1],
            reverse=True,
        )[: self.cap]
        self.jobs = dict(newest)
        return [f"sacct backfill: {total} failed jobs found, only the {self.cap} newest are shown"]

    def visible(
        self, queue: tuple[SlurmJob, ...] | list[SlurmJob], now: datetime
    ) -> list[SlurmJob]:
        """The remembered failed jobs squeue does not list, oldest finds dropped after
        ``hours``. A job squeue lists as active again (requeued) is forgotten here."""
        horizon = now - timedelta(hours=self.hours)
        listed = {j.job_id: j for j in queue if j.job_id in self.jobs}
        for jid, j in listed.items():
            if j.is_active:
                del self.jobs[jid]
        for jid in [k for k, (_, found) in self.jobs.items() if found < horizon]:
            del self.jobs[jid]
        return [job for jid, (job, _) in self.jobs.items() if jid not in listed]


def with_jobs(jobs: tuple[SlurmJob, ...], extra: list[SlurmJob]) -> tuple[SlurmJob, ...]:
    """The queue plus the backfilled jobs (appended; the queue's own order kept)."""
    return (*jobs, *extra) if extra else jobs
