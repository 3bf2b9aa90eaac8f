"""Site-wide Slurm findings: the controller unreachable, backfill starvation, a surge of
pending and cancelled jobs, and log files no job or node of the snapshot claims."""

from __future__ import annotations

import bisect
import dataclasses
import re
import statistics
from collections import Counter
from collections.abc import Iterator
from itertools import compress
from operator import attrgetter

from cockpit.diagnosis.context import RuleContext, clip, log_evidence
from cockpit.diagnosis.rules.slurm_common import (
    GPU_OOM_REMEDY,
    NODE_CHECKS,
    log_cause_text,
    log_where,
    node_check,
    state_evidence,
    tier_for,
)
from cockpit.diagnosis.rules.slurm_shape import submit_fact
from cockpit.i18n import N_, _
from cockpit.model import Evidence, Finding, SlurmJob, Snapshot, Subject

STARVE_S = 3600  # a large job pending this long while smaller, later jobs start = starvation
SURGE_PENDING = 50  # the fixed floor, with no history: this many pending ...
SURGE_CANCELLED = 20  # ... and this many cancelled in the last hour
SURGE_WINDOW_S = 3600  # the rolling baseline: PENDING counts of the polls this far back
SURGE_MIN_SAMPLES = 3  # fewer polls than this: no baseline yet (the floor applies)
# ... nor polls covering less than this: three polls a second apart are not the site's normal
# queue (the floor's surge came and went after the third poll)
SURGE_MIN_SPAN_S = 900
SURGE_FACTOR = 2.0  # a spike is at least this times the recent median ...
SURGE_SPIKE_MIN = 20  # ... and this many jobs above it


def controller_unreachable(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """The poll failed because slurmctld did not answer."""
    err = snap.error
    if err is None or snap.kind != "slurm":
        return
    msg = err.message
    if err.kind in {"unreachable", "timeout"} or re.search(
        r"Unable to contact slurm controller|Socket timed out|Connection refused|slurm_load", msg
    ):
        yield Finding(
            root_cause="controller_unreachable",
            severity="critical",
            subject=Subject("cluster", snap.source, snap.source),
            title=_("controller unreachable: {msg}").format(msg=clip(msg, 80)),
            explanation=_(
                "slurmctld did not answer (down, overloaded, or the network/munge between us and "
                "it). The tables show the last good data."
            ),
            remedy=_(
                "scontrol ping; systemctl status slurmctld munge on the controller; sdiag for RPC "
                "overload; check the backup controller (SlurmctldHost)."
            ),
            evidence=(Evidence(err.where or "poll", msg, tier=0, quoted=True),),
            confidence=0.9,
            first_seen=snap.taken_at,
        )


def backfill_starvation(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """A large job pending long while smaller jobs submitted after it keep starting."""
    now = ctx.now.timestamp()
    for j, n_later in starvation_candidates(snap.jobs):
        waited = now - j.submit_time.timestamp()  # type: ignore[union-attr]
        if waited >= STARVE_S:
            yield starvation_finding(j, n_later, waited, snap.source, ctx)


def starvation_candidates(jobs: tuple[SlurmJob, ...]) -> list[tuple[SlurmJob, int]]:
    """(job, later jobs started) of each large job pending on Resources or Priority while at
    least three jobs of its partition submitted after it run, in queue order: what
    :func:`backfill_starvation` reads besides the clock (so a poller may keep it while the
    rows are the same objects)."""
    # rebuilt whenever a job starts or ends (100k rows at a big site): the states and
    # reasons are sorted out in C, the loops see only running jobs and waiting ones
    states = list(map(_state, jobs))
    started: dict[str, list[float]] = {}
    cpus: list[int] = []
    for j in compress(jobs, map("RUNNING".__eq__, states)):
        if j.submit_time is not None:
            started.setdefault(j.partition, []).append(j.submit_time.timestamp())
            if j.cpus:
                cpus.append(j.cpus)
    if not started:
        return []
    for v in started.values():
        v.sort()
    cpus.sort()
    median = cpus[len(cpus) // 2] if cpus else 1
    least = max(4 * median, 8)
    pending = list(compress(jobs, map("PENDING".__eq__, states)))
    out = []
    for j in compress(pending, map(_STARVE_REASONS.__contains__, map(_reason, pending))):
        if j.submit_time is None:
            continue
        if (j.cpus or 0) < least and (j.node_count or 1) < 2:
            continue
        later = started.get(j.partition)
        if not later:
            continue
        n_later = len(later) - bisect.bisect_right(later, j.submit_time.timestamp())
        if n_later >= 3:
            out.append((j, n_later))
    return out


_reason = attrgetter("reason")
_STARVE_REASONS = frozenset({"Resources", "Priority"})


def starvation_finding(
    j: SlurmJob,
    n_later: int,
    waited: float,
    source: str,
    ctx: RuleContext,
    like: Finding | None = None,
) -> Finding:
    """The starvation finding of a candidate that has waited ``waited`` seconds. Its text
    says the whole hours waited, not the minutes: a text that changed every minute made a new
    finding, a new incident body and a store write for each starved job every minute (the
    drill-down's pending time is drawn live). ``like``: this function's finding for the same
    row (``j``, the same object) at another count: its subject, remedy and squeue line are
    this one's (at a busy site the count of later jobs moves every poll for hundreds)."""
    hours = int(waited // 3600)
    if like is not None and like.subject.id == j.job_id and like.subject.source == source:
        subject, remedy, evidence = like.subject, like.remedy, like.evidence
    else:
        subject, remedy, evidence = (
            Subject("job", source, j.job_id),
            _(
                "Give it a realistic --time so backfill can plan around it; admins: check "
                "bf_window/bf_max_job_test (sdiag), priority weights (sprio -j {job_id}), or a "
                "reservation."
            ).format(job_id=j.job_id),
            (state_evidence(j, ctx),),
        )
    return Finding(
        root_cause="backfill_starvation",
        severity="warning",
        subject=subject,
        title=_("starved: {cpus} CPUs pending {hours}h while {n_later} later jobs started").format(
            cpus=j.cpus, hours=hours, n_later=n_later
        ),
        explanation=_(
            "Job {job_id} ({cpus} CPUs, {value} node(s)) has waited over {hours} h with "
            "Reason={reason} while {n_later} smaller jobs submitted after it were started by "
            "backfill; without a reservation it may wait indefinitely."
        ).format(
            job_id=j.job_id,
            cpus=j.cpus,
            value=j.node_count or 1,
            hours=hours,
            reason=j.reason,
            n_later=n_later,
        ),
        remedy=remedy,
        evidence=evidence,
        confidence=0.6,
        first_seen=j.submit_time,
    )


def pending_baseline(history: tuple, now_ts: float) -> tuple[float, int, float] | None:
    """(median PENDING count, samples, minutes covered) of the polls within
    :data:`SURGE_WINDOW_S` before now; None with fewer than :data:`SURGE_MIN_SAMPLES` or
    covering less than :data:`SURGE_MIN_SPAN_S`."""
    recent = [(t.timestamp(), c) for t, c in history if now_ts - t.timestamp() <= SURGE_WINDOW_S]
    if len(recent) < SURGE_MIN_SAMPLES:
        return None
    span_s = now_ts - min(t for t, _ in recent)
    if span_s < SURGE_MIN_SPAN_S:
        return None
    span_min = span_s / 60
    return statistics.median(c for _, c in recent), len(recent), span_min


def surge_of(pending: int, baseline: float | None) -> bool:
    """A spike: at least :data:`SURGE_FACTOR` times the recent median and
    :data:`SURGE_SPIKE_MIN` jobs above it (a queue going from 3 to 9 is not a surge)."""
    if baseline is None:
        return False
    return pending >= SURGE_FACTOR * baseline and pending - baseline >= SURGE_SPIKE_MIN


_state = attrgetter("state")


def priority_surge(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """PENDING jobs spiking against the site's recent polls (a rolling median passed in as
    ``Snapshot.pending_history``), or, with no history (the first polls, a bundle), the fixed
    floor: many pending together with many cancellations in the last hour."""
    states = list(map(_state, snap.jobs))  # counted in C: a 100k-job queue every poll
    pending = states.count("PENDING")
    if pending < SURGE_SPIKE_MIN:
        return
    now_ts = ctx.now.timestamp()
    base = pending_baseline(snap.pending_history, now_ts)
    recent = now_ts - 3600
    cancelled = sum(
        1
        for j in compress(snap.jobs, map("CANCELLED".__eq__, states))
        if j.end_time and j.end_time.timestamp() >= recent
    )
    spike = surge_of(pending, base[0] if base else None)
    floor = pending >= SURGE_PENDING and cancelled >= SURGE_CANCELLED
    if base is not None and not spike and pending < SURGE_FACTOR * base[0]:
        # the site's normal queue is this long: the fixed floor would be a false alarm
        floor = False
    if not (spike or floor):
        return
    counts = f"PENDING={pending} " + _("CANCELLED(last hour)={n}").format(n=cancelled)
    evidence = [Evidence("squeue", counts, tier=0)]
    if base is not None:
        median, n, span = base
        evidence.append(
            Evidence(
                "poll history",
                _(
                    "median PENDING {median:g} over the last {span:.0f} min ({n} polls); "
                    "now {pending} ({ratio:.1f}x)"
                ).format(
                    median=median, span=span, n=n, pending=pending, ratio=pending / max(median, 1)
                ),
                tier=0,
            )
        )
    # who and which QOS the pending jobs belong to: a surge usually has one source
    by = Counter((j.user, j.qos or "-") for j in snap.jobs if j.state == "PENDING").most_common(3)
    evidence.append(
        Evidence(
            "squeue",
            _("most pending: {users}").format(
                users=", ".join(f"{u} qos={q}: {c}" for (u, q), c in by)
            ),
            tier=0,
        )
    )
    if spike and base is not None:
        ratio = pending / max(base[0], 1)
        title = _(
            "surge: {pending} jobs pending, {ratio:.1f}x the recent median {median:g}"
        ).format(pending=pending, ratio=ratio, median=base[0])
        explanation = _(
            "PENDING jumped to {pending} against a median of {median:g} over the last "
            "{span:.0f} min: a burst of submissions (a workflow or array fanning out), users "
            "resubmitting, or a QOS/priority change holding work back."
        ).format(pending=pending, median=base[0], span=base[2])
    else:
        title = _("surge: {pending} jobs pending, {cancelled} cancelled in the last hour").format(
            pending=pending, cancelled=cancelled
        )
        explanation = _(
            "Many pending jobs together with many recent cancellations: users resubmitting "
            "or a QOS/priority change pushing work around."
        )
    top = by[0][0] if by else ("<user>", "<qos>")
    yield Finding(
        root_cause="priority_qos_surge",
        severity="warning",
        subject=Subject("cluster", snap.source, snap.source),
        title=title,
        explanation=explanation,
        remedy=_(
            "squeue -t PD -o '%u %q %r' | sort | uniq -c | sort -rn | head; sprio -l | head; "
            "sacctmgr show qos {value} (recent changes); ask {top} whether the burst is intended."
        ).format(value=top[1] if top[1] != "-" else "", top=top[0]),
        evidence=tuple(evidence),
        confidence=0.6 if spike else 0.5,
        first_seen=snap.taken_at,
    )


_ENV_REMEDY = N_(
    "Preflight on the compute node: srun -w <node> bash -lc 'which <cmd>; ldd $(which <cmd>)'; "
    "load the same modules/containers in the batch script."
)


def _gpu_stack_message(text: str) -> bool:
    """An exception line that only carries the GPU stack's own words, ones that name no cause
    (``RuntimeError: CUDA error: unknown error``, ``cuDNN error: CUDNN_STATUS_INTERNAL_ERROR``):
    the GPU's or its libraries' failure, not the program's own exception."""
    from cockpit.diagnosis.catalogue import domain_of as catalogue_domain

    return catalogue_domain(text) == "accelerator"


def unattributed_logs(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """Logs no job/node of the snapshot claims (bundle files, sbatch output): one finding per
    file whose first red error names a cause. ModelArts job files are left to the ModelArts
    rules."""
    if not ctx.logs:  # no log to read: not worth the ids of a 100k-job queue
        return
    jobs = ctx.cache.get("job_ids")
    if jobs is None:
        jobs = ctx.cache["job_ids"] = {j.job_id for j in snap.jobs}
    for sid, logs in ctx.logs.items():
        if sid and (sid in jobs or sid in ctx.nodes):
            continue
        for lt in logs:
            h = ctx.scan(lt)
            if h is None:
                continue
            # weak lines that still name what happened: a bare Killed, a crash signal, a
            # program's own exception with its message ("ValueError: bad shape", C++'s what())
            if not h.strong and h.pattern not in {
                "bare_killed",
                "crash",
                "py_exception",
                "cxx_uncaught_what",
                "launcher_child_sigkill",
                "launcher_child_sigbus",
                "launcher_child_crash",
                "exit_status_crash_signal",
                "launcher_ssh_unreachable",  # ssh (exit 255) could not reach a node to launch
                "srun_step_waiting",  # steps waiting inside the allocation: said, as a warning
            }:
                continue
            if h.pattern == "py_exception" and _gpu_stack_message(h.text):
                continue  # the unrecognised failure routes it to the accelerator domain
            if h.label == "cancelled_by_user" and lt.data.rfind(b"--deadline", 0, h.offset) >= 0:
                # srun/salloc given --deadline and cancelled while it waited: Slurm removed it
                # because it could no longer end before its deadline (state DEADLINE)
                h = dataclasses.replace(h, label="deadline_reached")
            if lt.kind in {"slurmd", "journal", "dmesg"} and sid:
                kind = "node"
            else:
                kind = "job" if sid else "file"
            subject = Subject(kind, snap.source, sid or lt.name)
            text, remedy = log_cause_text(h.label)
            if remedy == "env":
                remedy = _(_ENV_REMEDY)
            if h.label in NODE_CHECKS and h.label.startswith("node_"):
                what, check = node_check(h.label)
                text, remedy = what, check.format(n=sid or "<node>", u=_("see reason"))
            remedy = remedy or _(_REMEDY_BY_LABEL.get(h.label, N_("See the evidence line.")))
            if h.label.startswith("submit_rejected") and (fact := submit_fact(h.text)):
                text = fact  # the message and the request it refused, not the label
            yield Finding(
                root_cause=h.label,
                severity=h.severity if h.strong else "warning",
                subject=subject,
                title=clip(f"{text} ({log_where(lt, h.line)})"),
                explanation=_("First red error in {lt}: {value}").format(
                    lt=_("{file} line {line}").format(file=lt.name, line=n)
                    if (n := lt.file_line(h.line)) is not None
                    else lt.name,
                    value=h.text.strip()[:300],
                ),
                remedy=remedy,
                evidence=(log_evidence(lt, h, tier_for(lt, h)),),
                confidence=0.8 if h.strong else 0.35,
                first_seen=None,
            )


# label -> remedy, for causes a bare log file names (no job or node to say more about)
_REMEDY_BY_LABEL = {
    "deadline_reached": N_(
        "Give --deadline more room than --time (the job must be able to start and still end "
        "before it), or drop --deadline, and resubmit."
    ),
    "submit_rejected_policy": N_(
        "Request within the partition/QOS/account limits (sacctmgr show "
        "assoc user=$USER; scontrol show partition) or ask for the limit/allocation to be raised."
    ),
    "submit_rejected_unsatisfiable": N_(
        "Ask for what a node has: sinfo -o '%P %c %m %G' shows "
        "CPUs/memory/GPUs per node; lower --mem/--cpus-per-task/--gres to fit."
    ),
    "controller_unreachable": N_(
        "scontrol ping; systemctl status slurmctld munge on the controller. When sacct or "
        "sacctmgr cannot reach the database (persistent connection, 'Problem talking to the "
        "database'): systemctl status slurmdbd (port 6819) and its MySQL/MariaDB."
    ),
    "auth_failed": N_(
        "munge -n | ssh <node> unmunge on both ends (the same /etc/munge/munge.key, "
        "clocks within a few minutes: timedatectl), then systemctl restart munge slurmd; for "
        "slurmrestd, a fresh token (scontrol token)."
    ),
    "preempted": N_(
        "Resubmit with --requeue (or --signal to checkpoint first), or run under a QOS "
        "or partition that is not preemptible (sacctmgr show qos format=name,preempt)."
    ),
    "job_launch_failed": N_(
        "On the node: the cgroup hierarchy (ls /sys/fs/cgroup/cpuset/slurm; "
        "a cpuset with no CPUs or memory nodes gives ENOSPC), cgroup.conf, then scontrol update "
        "NodeName=<node> State=RESUME once slurmd restarts cleanly."
    ),
    "pending_launch_failed_held": N_(
        "Check slurmd.log on the batch host, then scontrol release <jobid>."
    ),
    # srun's steps waiting inside their allocation (no job record to say more)
    "pending_resources": N_(
        "The job's srun steps wait for CPUs, memory or GPUs its earlier steps hold: start them "
        "with --overlap (SLURM_OVERLAP=1) or give each step only its share (--exact, -n, -c, "
        "--mem); a job waiting in the queue runs when the cluster frees them."
    ),
    "dependency_failed": N_(
        "scancel the job and resubmit once the parent succeeds, or clear the dependency."
    ),
    "pending_partition_limit": N_(
        "Fit the request to the partition limits (scontrol show partition)."
    ),
    "time_limit": N_("Resubmit with a longer --time (within the partition MaxTime)."),
    "gpu_out_of_memory": GPU_OOM_REMEDY,
    "oom_killed": N_(
        "Resubmit with --mem about 1.2 x MaxRSS (sacct -j <id> -o MaxRSS), or use less memory."
    ),
    "cancelled_by_user": N_(
        "Nothing failed; ask who cancelled it (slurmctld.log REQUEST_KILL_JOB)."
    ),
    "application_error": N_("Read the program's first error above; fix input/code and resubmit."),
    "image_pull_failed": N_(
        "Check the image path/tag and log in to the registry (docker login / SWR credentials)."
    ),
    "storage_mount_failed": N_(
        "Check the volume/bucket and the mount helper on the node (dmesg, CSI plugin logs)."
    ),
    "scheduling_constraint_unsatisfied": N_(
        "Make the job's node selector/labels match a real node (kubectl get nodes --show-labels)."
    ),
    "queued_insufficient_resources": N_(
        "Wait, pick a smaller flavour, another region, or a dedicated pool."
    ),
    "container_entrypoint_failed": N_(
        "Run the boot command in the image locally; check the interpreter and paths."
    ),
    "storage_access_denied": N_("Grant the job's agency/IAM user read/write on the bucket."),
    "storage_connection_error": N_("Check the OBS endpoint and network (VPC endpoint, DNS)."),
}
