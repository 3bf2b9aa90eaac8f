"""Site-wide Slurm findings: the controller unreachable, backfill starvation, a surge of
pending and cancelled jobs, and log files no job or node of the snapshot claims."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from cockpit.diagnosis.context import RuleContext, log_evidence
from cockpit.diagnosis.rules.slurm_common import (
    GPU_OOM_REMEDY,
    LOG_CAUSE_TEXT,
    NODE_CHECKS,
    clip,
    log_where,
    state_evidence,
    tier_for,
)
from cockpit.model import Evidence, Finding, Snapshot, Subject

STARVE_S = 3600  # a large job pending this long while smaller, later jobs start = starvation
SURGE_PENDING = 50
SURGE_CANCELLED = 20


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
            title=f"controller unreachable: {msg[:80]}",
            explanation="slurmctld did not answer (down, overloaded, or the network/munge between "
            "us and it). The tables show the last good data.",
            remedy="scontrol ping; systemctl status slurmctld munge on the controller; sdiag for "
            "RPC overload; check the backup controller (SlurmctldHost).",
            evidence=(Evidence(err.where or "poll", msg, tier=0),),
            confidence=0.9,
            first_seen=snap.taken_at,
        )


def backfill_starvation(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """A large job pending long while smaller jobs submitted after it keep starting."""
    started: dict[str, list[float]] = {}
    cpus: list[int] = []
    for j in snap.jobs:
        if j.state == "RUNNING" and j.submit_time is not None:
            started.setdefault(j.partition, []).append(j.submit_time.timestamp())
            if j.cpus:
                cpus.append(j.cpus)
    if not started:
        return
    for v in started.values():
        v.sort()
    cpus.sort()
    median = cpus[len(cpus) // 2] if cpus else 1
    now = ctx.now.timestamp()
    for j in snap.jobs:
        if (
            j.state != "PENDING"
            or j.reason not in {"Resources", "Priority"}
            or j.submit_time is None
        ):
            continue
        waited = now - j.submit_time.timestamp()
        big = (j.cpus or 0) >= max(4 * median, 8) or (j.node_count or 1) >= 2
        if waited < STARVE_S or not big:
            continue
        later = started.get(j.partition, [])
        n_later = len(later) - bisect.bisect_right(later, j.submit_time.timestamp())
        if n_later < 3:
            continue
        yield Finding(
            root_cause="backfill_starvation",
            severity="warning",
            subject=Subject("job", snap.source, j.job_id),
            title=f"starved: {j.cpus} CPUs pending {int(waited // 3600)}h while {n_later} later "
            "jobs started",
            explanation=f"Job {j.job_id} ({j.cpus} CPUs, {j.node_count or 1} node(s)) has waited "
            f"{int(waited // 60)} min with Reason={j.reason} while {n_later} smaller jobs "
            "submitted after it were started by backfill; without a reservation it may wait "
            "indefinitely.",
            remedy="Give it a realistic --time so backfill can plan around it; admins: check "
            f"bf_window/bf_max_job_test (sdiag), priority weights (sprio -j {j.job_id}), or a "
            "reservation.",
            evidence=(state_evidence(j, ctx),),
            confidence=0.6,
            first_seen=j.submit_time,
        )


def priority_surge(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """Many pending jobs together with many cancellations in the last hour."""
    pending = sum(1 for j in snap.jobs if j.state == "PENDING")
    if pending < SURGE_PENDING:
        return
    recent = ctx.now.timestamp() - 3600
    cancelled = sum(
        1
        for j in snap.jobs
        if j.state == "CANCELLED" and j.end_time and j.end_time.timestamp() >= recent
    )
    if cancelled < SURGE_CANCELLED:
        return
    yield Finding(
        root_cause="priority_qos_surge",
        severity="warning",
        subject=Subject("cluster", snap.source, snap.source),
        title=f"surge: {pending} jobs pending, {cancelled} cancelled in the last hour",
        explanation="Many pending jobs together with many recent cancellations: users resubmitting "
        "or a QOS/priority change pushing work around.",
        remedy="squeue -t PD -o '%u %q %r' | sort | uniq -c | sort -rn | head; sprio -l | head; "
        "check recent sacctmgr QOS changes.",
        evidence=(
            Evidence("squeue", f"PENDING={pending} CANCELLED(last hour)={cancelled}", tier=0),
        ),
        confidence=0.5,
        first_seen=snap.taken_at,
    )


_ENV_REMEDY = (
    "Preflight on the compute node: srun -w <node> bash -lc 'which <cmd>; ldd $(which <cmd>)'; "
    "load the same modules/containers in the batch script."
)


def unattributed_logs(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """Logs no job/node of the snapshot claims (bundle files, sbatch output): one finding per
    file whose first red error names a cause. ModelArts job files are left to the ModelArts
    rules."""
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
            if not h.strong and h.pattern not in {"bare_killed", "crash"}:
                continue
            if h.label == "application_error" and h.strong is False and h.pattern != "crash":
                continue
            if lt.kind in {"slurmd", "journal", "dmesg"} and sid:
                kind = "node"
            else:
                kind = "job" if sid else "file"
            subject = Subject(kind, snap.source, sid or lt.name)
            text, remedy = LOG_CAUSE_TEXT.get(h.label, (h.label.replace("_", " "), ""))
            if remedy == "env":
                remedy = _ENV_REMEDY
            if h.label in NODE_CHECKS and h.label.startswith("node_"):
                what, check = NODE_CHECKS[h.label]
                text, remedy = what, check.format(n=sid or "<node>", u="see reason")
            remedy = remedy or _REMEDY_BY_LABEL.get(h.label, "See the evidence line.")
            yield Finding(
                root_cause=h.label,
                severity=h.severity if h.strong else "warning",
                subject=subject,
                title=clip(f"{text} ({log_where(lt, h.line)})"),
                explanation=f"First red error in {log_where(lt, h.line, ' line ')}: "
                f"{h.text.strip()[:300]}",
                remedy=remedy,
                evidence=(log_evidence(lt, h, tier_for(lt, h)),),
                confidence=0.8 if h.strong else 0.35,
                first_seen=None,
            )


# label -> remedy, for causes a bare log file names (no job or node to say more about)
_REMEDY_BY_LABEL = {
    "submit_rejected_policy": "Request within the partition/QOS/account limits (sacctmgr show "
    "assoc user=$USER; scontrol show partition) or ask for the limit/allocation to be raised.",
    "submit_rejected_unsatisfiable": "Ask for what a node has: sinfo -o '%P %c %m %G' shows "
    "CPUs/memory/GPUs per node; lower --mem/--cpus-per-task/--gres to fit.",
    "controller_unreachable": "scontrol ping; systemctl status slurmctld munge on the controller.",
    "pending_launch_failed_held": "Check slurmd.log on the batch host, then scontrol release "
    "<jobid>.",
    "dependency_failed": "scancel the job and resubmit once the parent succeeds, or clear the "
    "dependency.",
    "pending_partition_limit": "Fit the request to the partition limits (scontrol show partition).",
    "time_limit": "Resubmit with a longer --time (within the partition MaxTime).",
    "gpu_out_of_memory": GPU_OOM_REMEDY,
    "oom_killed": "Resubmit with --mem about 1.2 x MaxRSS (sacct -j <id> -o MaxRSS), or use less "
    "memory.",
    "cancelled_by_user": "Nothing failed; ask who cancelled it (slurmctld.log REQUEST_KILL_JOB).",
    "application_error": "Read the program's first error above; fix input/code and resubmit.",
    "image_pull_failed": "Check the image path/tag and log in to the registry (docker login / SWR "
    "credentials).",
    "storage_mount_failed": "Check the volume/bucket and the mount helper on the node (dmesg, CSI "
    "plugin logs).",
    "scheduling_constraint_unsatisfied": "Make the job's node selector/labels match a real node "
    "(kubectl get nodes --show-labels).",
    "queued_insufficient_resources": "Wait, pick a smaller flavour, another region, or a dedicated "
    "pool.",
    "container_entrypoint_failed": "Run the boot command in the image locally; check the "
    "interpreter and paths.",
    "storage_access_denied": "Grant the job's agency/IAM user read/write on the bucket.",
    "storage_connection_error": "Check the OBS endpoint and network (VPC endpoint, DNS).",
}
