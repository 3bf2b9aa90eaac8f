"""Before it fails: running jobs at risk, said while there is still time to act.

Site rules (they read the clock, which job rules never do): a running job past
:data:`NEAR_LIMIT` of its time limit is a warning naming when Slurm will kill it and what
to do before then. The finding stays the same object while its facts do (the kill time comes
from the job's start, not from the clock), so its incident is not rewritten every poll.

The source's risk probe (``Snapshot.risk``, :mod:`cockpit.slurm.risk`: sstat and a stat of
stdout, sampled within a budget) gives two more: a job whose resident memory reached
``memory_near`` of its request (critical at ``memory_critical``, or once it climbs past the
figure it was first named at), and a job whose stdout has not grown for ``log_silent_s`` (per
partition). Their titles name absolute figures and times, never an age, for the same reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from itertools import compress
from operator import attrgetter

from cockpit.diagnosis.context import RuleContext, clip
from cockpit.diagnosis.rules.slurm_common import fmt_duration, fmt_mib, suggest_mem_mib
from cockpit.model import (
    Evidence,
    Finding,
    JobMemory,
    JobOutput,
    RiskSettings,
    SlurmJob,
    Snapshot,
    Subject,
)

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


def _running(snap: Snapshot, ids: set[str]) -> dict[str, SlurmJob]:
    return {j.job_id: j for j in snap.jobs if j.job_id in ids and j.state == "RUNNING"}


def memory_near_request(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """RUNNING jobs whose sampled resident memory reached ``memory_near`` of their request:
    the OOM kill to come, with the --mem that would hold."""
    probe = snap.risk
    if snap.kind != "slurm" or probe is None or not probe.memory:
        return
    st = probe.settings
    near = {
        m.job_id: m for m in probe.memory if m.used_kib >= st.memory_near * m.request_mib * 1024
    }
    if not near:
        return
    jobs = _running(snap, set(near))
    for jid, m in near.items():
        j = jobs.get(jid)
        if j is not None:
            yield _memory_finding(j, m, snap.source, st)


def _memory_finding(j: SlurmJob, m: JobMemory, source: str, st: RiskSettings) -> Finding:
    used_mib = m.used_kib / 1024
    pct = int(100 * m.used_kib / (m.request_mib * 1024))
    climbed = m.near_kib is not None and m.used_kib > m.near_kib
    critical = m.used_kib >= st.memory_critical * m.request_mib * 1024 or climbed
    hold = suggest_mem_mib(max(used_mib, m.request_mib))
    what = "MaxRSS" if m.tasks_per_node == 1 else f"{m.tasks_per_node} tasks' RSS"
    where = f" on {m.node}" if m.node else ""
    per = "per node " if (j.node_count or 1) > 1 or j.mem_per_cpu else ""
    climb = (
        f", up from {fmt_mib(m.near_kib / 1024)} when first named at risk"
        if climbed and m.near_kib is not None
        else ""
    )
    explanation = (
        f"Job {j.job_id}'s step {m.step} holds {fmt_mib(used_mib)} resident{where} ({what}), "
        f"{pct} % of the {fmt_mib(m.request_mib)} it asked for {per}".rstrip()
        + f"{climb}. Past the request the cgroup's OOM killer ends the step "
        "(OUT_OF_MEMORY), with whatever it has not written out lost."
    )
    return Finding(
        "memory_near_request",
        "critical" if critical else "warning",
        Subject("job", source, j.job_id),
        f"memory near its request: MaxRSS {fmt_mib(used_mib)} of --mem {fmt_mib(m.request_mib)}"
        f" ({pct} %)" + (", still climbing" if climbed else ""),
        explanation=explanation,
        remedy=(
            "A running job's memory cannot be raised (scontrol update MinMemoryNode= is "
            "refused once it runs): let it checkpoint and resubmit with "
            f"--mem={fmt_mib(hold)} (1.2x its peak), or free memory in the job if it can. "
            f"Before it starts, an operator can raise a pending copy: scontrol update "
            f"JobId=<id> MinMemoryNode={hold}."
        ),
        evidence=(
            Evidence(
                "sstat",
                f"JobID={j.job_id}.{m.step} MaxRSS={m.max_rss_kib}K"
                + (f" MaxRSSNode={m.node}" if m.node else "")
                + f" ReqMem={m.request_mib}M",
                tier=0,
            ),
        ),
        # a risk, not a cause: a failure's finding ranks before it
        confidence=0.5,
        first_seen=j.start_time,
    )


def job_output_silent(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """RUNNING jobs whose stdout, once written to, has not grown for ``log_silent_s`` (per
    partition): a hang, a deadlock, a rendezvous that never came, while it holds its nodes."""
    probe = snap.risk
    if snap.kind != "slurm" or probe is None or not probe.outputs:
        return
    st = probe.settings
    now = ctx.now.timestamp()
    jobs = _running(snap, {o.job_id for o in probe.outputs})
    for o in probe.outputs:
        j = jobs.get(o.job_id)
        # an empty file says nothing: many jobs never print (they log to files of their own)
        if (
            j is None
            or not o.size
            or now - o.modified_at.timestamp() < st.silent_after(j.partition)
        ):
            continue
        yield _silent_finding(j, o, snap.source, st, ctx.now.tzinfo)


def _silent_finding(j: SlurmJob, o: JobOutput, source: str, st: RiskSettings, tz) -> Finding:
    since = o.modified_at.astimezone(tz)
    after = int(st.silent_after(j.partition))
    name = o.path.rsplit("/", 1)[-1]
    holds = f"{j.node_count} node(s)" if j.node_count else "its allocation"
    gres = f" and {j.gres}" if j.gres else ""
    last = f" (last: {clip(o.last_line, 60)})" if o.last_line else ""
    return Finding(
        "job_output_silent",
        "warning",
        Subject("job", source, j.job_id),
        f"no output since {since:%H:%M}{last}",
        explanation=(
            f"Job {j.job_id} is RUNNING but its stdout {name} has not grown since "
            f"{since:%Y-%m-%d %H:%M:%S} (threshold {fmt_duration(after)}"
            + (f" for partition {j.partition}" if j.partition else "")
            + f"), while it holds {holds}{gres}: a hang (a deadlock, a rendezvous or a mount "
            "that never answered) burns the allocation until the time limit."
        ),
        remedy=(
            f"Look at what it does now: sstat -j {j.job_id} (CPU moving?), py-spy dump or gdb "
            f"on its node ({j.node_list or 'see squeue'}); a job that only writes at the end "
            "is fine. If it hangs, scancel it rather than wait for the TIMEOUT."
        ),
        evidence=(
            Evidence(
                name,
                o.last_line or f"{o.size} bytes, unchanged since {since:%H:%M:%S}",
                line=o.line_no or None,
                path=o.path,
                tier=2,
            ),
        ),
        confidence=0.4,
        first_seen=o.modified_at + timedelta(seconds=after),
    )
