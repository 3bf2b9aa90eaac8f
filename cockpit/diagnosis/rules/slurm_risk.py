"""Before it fails: running jobs at risk, said while there is still time to act.

Site rules (they read the clock, which job rules never do): a running job past
:data:`NEAR_LIMIT` of its time limit is a warning naming when Slurm will kill it and what
to do before then. The finding stays the same object while its facts do (the kill time comes
from the job's start, not from the clock), so its incident is not rewritten every poll.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from itertools import compress
from operator import attrgetter

from cockpit.diagnosis.context import RuleContext
from cockpit.diagnosis.rules.slurm_common import fmt_duration
from cockpit.model import Evidence, Finding, SlurmJob, Snapshot, Subject

NEAR_LIMIT = 0.9  # of the time limit: the warning's threshold
MIN_LIMIT_S = 60  # a limit shorter than this leaves no time to act on a warning

_state = attrgetter("state")


def _started(j: SlurmJob, now: float) -> float | None:
    """The job's start as a POSIX time, the same every poll: squeue's StartTime, else the
    moment its elapsed time was read minus that time."""
    if j.start_time is not None:
        return j.start_time.timestamp()
    if j.elapsed_s is not None and j.elapsed_at is not None:
        return j.elapsed_at - j.elapsed_s
    if j.elapsed_s is not None:
        return now - j.elapsed_s
    return None


def time_limit_near(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """RUNNING jobs past 90 % of their time limit: when they will be killed, and the two ways
    out (a longer limit, a checkpoint)."""
    if snap.kind != "slurm":
        return
    now = ctx.now.timestamp()
    tz = ctx.now.tzinfo
    jobs = snap.jobs
    for j in compress(jobs, map("RUNNING".__eq__, map(_state, jobs))):
        limit = j.time_limit_s
        if not limit or limit < MIN_LIMIT_S:
            continue
        start = _started(j, now)
        if start is None or now - start < NEAR_LIMIT * limit:
            continue
        yield _near(j, snap.source, start, limit, tz)


def _near(j: SlurmJob, source: str, start: float, limit: int, tz) -> Finding:
    start_at = datetime.fromtimestamp(int(start), tz)
    kill_at = start_at + timedelta(seconds=limit)
    part = f" (partition {j.partition})" if j.partition else ""
    return Finding(
        "time_limit_near",
        "warning",
        Subject("job", source, j.job_id),
        f"near its time limit: killed at {kill_at:%H:%M} (TimeLimit {fmt_duration(limit)})",
        explanation=(
            f"Job {j.job_id} has run past {int(NEAR_LIMIT * 100)} % of its time limit "
            f"{fmt_duration(limit)}{part}: Slurm ends it at {kill_at:%Y-%m-%d %H:%M:%S} "
            "(TIMEOUT, SIGTERM then SIGKILL), with whatever it has not written out lost."
        ),
        remedy=(
            f"Before {kill_at:%H:%M}: raise the limit if the site allows it (an operator: "
            f"scontrol update JobId={j.job_id} TimeLimit=+01:00:00, within the partition's "
            "MaxTime), or have the job checkpoint now (sbatch --signal=B:USR1@300 for next "
            "time) and resubmit from the checkpoint."
        ),
        evidence=(
            Evidence(
                "squeue",
                f"JobId={j.job_id} State=RUNNING StartTime={start_at:%Y-%m-%dT%H:%M:%S} "
                f"TimeLimit={fmt_duration(limit)}",
                tier=0,
            ),
        ),
        # a risk, not a cause: a failure's finding ranks before it (a bundle's head, a site's
        # first line), while it stays this job's own verdict
        confidence=0.5,
        first_seen=start_at + timedelta(seconds=int(NEAR_LIMIT * limit)),
    )
