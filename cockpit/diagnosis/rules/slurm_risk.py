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
from cockpit.i18n import _, language
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
    source, lang = snap.source, language()
    made = _NEAR_MADE.get(source, {})
    kept: dict[tuple, Finding] = {}
    for j in compress(jobs, map("RUNNING".__eq__, map(_state, jobs))):
        limit = j.time_limit_s
        if not limit or limit < MIN_LIMIT_S:
            continue
        start = _started(j, now)
        if start is None or now - start < NEAR_LIMIT * limit:
            continue
        # everything the finding says: the same facts give last poll's finding itself
        key = (lang, j.job_id, j.partition, int(start), limit, tz)
        f = made.get(key)
        if f is None:
            f = _near(j, source, start, limit, tz)
        kept[key] = f
        yield f
    _NEAR_MADE[source] = kept  # this poll's only: jobs that ended are not kept


# source -> (language, job id, partition, start, limit, zone) -> the finding made last poll:
# at 10k jobs ~250 running jobs are near their limit, and formatting their findings anew each
# poll (dates, durations, three translated texts) was a quarter of the site rules' time
_NEAR_MADE: dict[str, dict[tuple, Finding]] = {}


def _near(j: SlurmJob, source: str, start: float, limit: int, tz) -> Finding:
    start_at = datetime.fromtimestamp(int(start), tz)
    kill_at = start_at + timedelta(seconds=limit)
    part = (
        " (" + _("partition {partition}").format(partition=j.partition) + ")" if j.partition else ""
    )
    return Finding(
        "time_limit_near",
        "warning",
        Subject("job", source, j.job_id),
        _("near its time limit: killed at {time} (TimeLimit {limit})").format(
            time=f"{kill_at:%H:%M}", limit=fmt_duration(limit)
        ),
        explanation=_(
            "Job {job_id} has run past {pct} of its time limit {limit}{part}: Slurm ends it "
            "at {when} (TIMEOUT, SIGTERM then SIGKILL), with whatever it has not written out lost."
        ).format(
            job_id=j.job_id,
            pct=f"{int(NEAR_LIMIT * 100)} %",
            limit=fmt_duration(limit),
            part=part,
            when=f"{kill_at:%Y-%m-%d %H:%M:%S}",
        ),
        remedy=_(
            "Before {time}: raise the limit if the site allows it (an operator: "
            "scontrol update JobId={job_id} TimeLimit=+01:00:00, within the partition's "
            "MaxTime), or have the job checkpoint now (sbatch --signal=B:USR1@300 for next "
            "time) and resubmit from the checkpoint."
        ).format(time=f"{kill_at:%H:%M}", job_id=j.job_id),
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
    what = "MaxRSS" if m.tasks_per_node == 1 else _("{n} tasks' RSS").format(n=m.tasks_per_node)
    where = " " + _("on {node}").format(node=m.node) if m.node else ""
    per_node = (j.node_count or 1) > 1 or j.mem_per_cpu
    climb = (
        ", " + _("up from {mem} when first named at risk").format(mem=fmt_mib(m.near_kib / 1024))
        if climbed and m.near_kib is not None
        else ""
    )
    explanation = (
        _(
            "Job {job_id}'s step {step} holds {used} resident{where} ({what}), "
            "{pct} of the {req} it asked for per node{climb}. Past the request the cgroup's "
            "OOM killer ends the step (OUT_OF_MEMORY), with whatever it has not written out lost."
        )
        if per_node
        else _(
            "Job {job_id}'s step {step} holds {used} resident{where} ({what}), "
            "{pct} of the {req} it asked for{climb}. Past the request the cgroup's "
            "OOM killer ends the step (OUT_OF_MEMORY), with whatever it has not written out lost."
        )
    ).format(
        job_id=j.job_id,
        step=m.step,
        used=fmt_mib(used_mib),
        where=where,
        what=what,
        pct=f"{pct} %",
        req=fmt_mib(m.request_mib),
        climb=climb,
    )
    return Finding(
        "memory_near_request",
        "critical" if critical else "warning",
        Subject("job", source, j.job_id),
        (
            _("memory near its request: MaxRSS {used} of --mem {req} ({pct} %)").format(
                used=fmt_mib(used_mib), req=fmt_mib(m.request_mib), pct=pct
            )
            if not m.mem_per_cpu_mib
            else _(
                "memory near its request: MaxRSS {used} of {req} per node "
                "(--mem-per-cpu {per_cpu}) ({pct} %)"
            ).format(
                used=fmt_mib(used_mib),
                req=fmt_mib(m.request_mib),
                per_cpu=fmt_mib(m.mem_per_cpu_mib),
                pct=pct,
            )
        )
        + (", " + _("still climbing") if climbed else ""),
        explanation=explanation,
        remedy=_(
            "A running job's memory cannot be raised (scontrol update MinMemoryNode= is "
            "refused once it runs): let it checkpoint and resubmit with "
            "--mem={mem} (1.2x its peak), or free memory in the job if it can. "
            "Before it starts, an operator can raise a pending copy: scontrol update "
            "JobId=<id> MinMemoryNode={hold}."
        ).format(mem=fmt_mib(hold), hold=hold),
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
    holds = _("{n} node(s)").format(n=j.node_count) if j.node_count else _("its allocation")
    gres = " " + _("and {gres}").format(gres=j.gres) if j.gres else ""
    last = " (" + _("last: {line}").format(line=clip(o.last_line, 60)) + ")" if o.last_line else ""
    return Finding(
        "job_output_silent",
        "warning",
        Subject("job", source, j.job_id),
        _("no output since {time}").format(time=f"{since:%H:%M}") + last,
        explanation=(
            _(
                "Job {job_id} is RUNNING but its stdout {name} has not grown since {when} "
                "(threshold {threshold} for partition {partition}), while it holds {holds}{gres}: "
                "a hang (a deadlock, a rendezvous or a mount that never answered) burns the "
                "allocation until the time limit."
            )
            if j.partition
            else _(
                "Job {job_id} is RUNNING but its stdout {name} has not grown since {when} "
                "(threshold {threshold}), while it holds {holds}{gres}: "
                "a hang (a deadlock, a rendezvous or a mount that never answered) burns the "
                "allocation until the time limit."
            )
        ).format(
            job_id=j.job_id,
            name=name,
            when=f"{since:%Y-%m-%d %H:%M:%S}",
            threshold=fmt_duration(after),
            partition=j.partition,
            holds=holds,
            gres=gres,
        ),
        remedy=_(
            "Look at what it does now: sstat -j {job_id} (CPU moving?), py-spy dump or gdb "
            "on its node ({nodes}); a job that only writes at the end "
            "is fine. If it hangs, scancel it rather than wait for the TIMEOUT."
        ).format(job_id=j.job_id, nodes=j.node_list or _("see squeue")),
        evidence=(
            Evidence(
                name,
                o.last_line
                or _("{size} bytes, unchanged since {time}").format(
                    size=o.size, time=f"{since:%H:%M:%S}"
                ),
                line=o.line_no or None,
                path=o.path,
                tier=2,
                quoted=bool(o.last_line),  # its last line as written, else our summary
            ),
        ),
        confidence=0.4,
        first_seen=o.modified_at + timedelta(seconds=after),
    )
