"""Why a pending job waits, and whether it ever runs: one rule per kind of reason.

The registry runs these rules as one ``FirstOf`` for PENDING jobs, in the order they are
defined here: the first that applies is the job's verdict. An impossible request comes
right after the plain "will run" case because it overrides every reason squeue gives
(Slurm keeps such a job pending with Reason=Priority forever).
"""

from __future__ import annotations

import math

from cockpit.diagnosis.context import RuleContext
from cockpit.diagnosis.rules.slurm_common import (
    fmt_duration,
    fmt_mib,
    job_finding,
    memo,
    state_evidence,
)
from cockpit.model import Evidence, Finding, Partition, Severity, SlurmJob

STATES = frozenset({"PENDING"})

_WILL_RUN = {
    "Resources": ("pending_resources", "waiting for free resources; will run when nodes free up"),
    "Priority": ("pending_priority", "higher-priority jobs are ahead; will run"),
    "Dependency": ("pending_dependency", "waiting for its dependency to finish; will run"),
    "BeginTime": ("pending_dependency", "waiting for its --begin time; will run"),
    "JobArrayTaskLimit": (
        "pending_qos_limit",
        "array task limit (%N) reached; will run as tasks finish",
    ),
}
_NEVER_REASONS = {"PartitionConfig", "PartitionNodeLimit", "PartitionTimeLimit"}
_HELD = {"JobHeldUser", "JobHeldAdmin", "held"}


def _base(reason: str) -> str:
    """The reason's first word: ``ReqNodeNotAvail, UnavailableNodes:c1`` -> ``ReqNodeNotAvail``."""
    return reason.split(",")[0].strip()


def _launch_failed(reason: str) -> bool:
    return "launch_failed_requeued_held" in reason or reason == "launch failed requeued held"


# --------------------------------------------------------------------------- impossible requests


def _largest(ctx: RuleContext) -> dict[str, tuple[int | None, int | None]]:
    """partition -> (most CPUs on one node, most RealMemory MiB on one node); once per snapshot."""
    agg = ctx.cache.get("largest")
    if agg is None:
        agg = {}
        nodes = ctx.nodes
        for p in ctx.snapshot.partitions:
            cpus = [nodes[n].cpus_total for n in p.nodes if n in nodes and nodes[n].cpus_total]
            mems = [
                nodes[n].real_memory_mib for n in p.nodes if n in nodes and nodes[n].real_memory_mib
            ]
            agg[p.name] = (max(cpus) if cpus else None, max(mems) if mems else None)
        ctx.cache["largest"] = agg
    return agg


def impossible_request(job: SlurmJob, part: Partition | None, ctx: RuleContext) -> list[str]:
    """Why the request can never fit the partition, each with both numbers (empty = it can)."""
    if part is None:
        return []
    # ~50k pending jobs at a big site ask for a few hundred distinct shapes: one answer per shape
    shapes = memo(ctx, "impossible")
    key = (
        part.name,
        job.cpus,
        job.node_count,
        job.min_memory_mib,
        job.mem_per_cpu,
        job.time_limit_s,
    )
    got = shapes.get(key)
    if got is None:
        got = shapes[key] = tuple(_impossible(job, part, ctx))
    return list(got)


def _impossible(job: SlurmJob, part: Partition, ctx: RuleContext) -> list[str]:
    out: list[str] = []
    nodes = max(job.node_count or 1, 1)
    cpus_per_node = math.ceil(job.cpus / nodes) if job.cpus else None
    big_cpu, big_mem = _largest(ctx).get(part.name, (None, None))
    if cpus_per_node and part.max_cpus_per_node and cpus_per_node > part.max_cpus_per_node:
        out.append(f"{cpus_per_node} CPUs > MaxCPUsPerNode {part.max_cpus_per_node}")
    elif cpus_per_node and big_cpu and cpus_per_node > big_cpu:
        out.append(f"{cpus_per_node} CPUs per node > largest node's {big_cpu} CPUs in {part.name}")
    mem = job.min_memory_mib
    if mem and job.mem_per_cpu and cpus_per_node:
        if part.max_mem_per_cpu_mib and mem > part.max_mem_per_cpu_mib:
            out.append(
                f"--mem-per-cpu {fmt_mib(mem)} > MaxMemPerCPU {fmt_mib(part.max_mem_per_cpu_mib)}"
            )
        mem = mem * cpus_per_node
    if mem:
        if part.max_mem_per_node_mib and mem > part.max_mem_per_node_mib:
            out.append(
                f"{fmt_mib(mem)} memory > MaxMemPerNode {fmt_mib(part.max_mem_per_node_mib)}"
            )
        elif big_mem and mem > big_mem:
            out.append(
                f"{fmt_mib(mem)} memory per node > largest node's RealMemory {fmt_mib(big_mem)}"
            )
    if job.time_limit_s and part.max_time_s and job.time_limit_s > part.max_time_s:
        out.append(
            f"--time {fmt_duration(job.time_limit_s)} > MaxTime {fmt_duration(part.max_time_s)}"
        )
    if part.max_nodes and nodes > part.max_nodes:
        out.append(f"{nodes} nodes > MaxNodes {part.max_nodes}")
    elif part.total_nodes and nodes > part.total_nodes:
        out.append(f"{nodes} nodes > the partition's {part.total_nodes} nodes")
    return out


# --------------------------------------------------------------------------- rules


def _will_run(reason: str, ctx: RuleContext) -> tuple[str, str, str] | None:
    """(base reason, cause, text) when ``reason`` is a plain "will run" one (Priority,
    Resources, ...); None otherwise. Cached per reason string."""
    reasons = memo(ctx, "will_run_reason")
    if reason not in reasons:
        base = _base(reason)
        wr = _WILL_RUN.get(base)
        reasons[reason] = (base, *wr) if wr is not None and not _launch_failed(reason) else None
    return reasons[reason]


def will_run(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """Waiting its turn (Priority, Resources, Dependency, ...) with a request that fits: info.

    The common case at a big site (tens of thousands of jobs), so it is first and cheap."""
    wr = _will_run(job.reason or "", ctx)
    if wr is None or impossible_request(job, ctx.partitions.get(job.partition), ctx):
        return None
    # Those jobs share a handful of (reason, expected start) pairs: their title and
    # explanation are built once per snapshot and shared.
    texts = memo(ctx, "will_run_text")
    base = wr[0]
    key = (base, job.start_time)
    got = texts.get(key)
    if got is None:
        _, cause, text = wr
        start = f"; expected start {job.start_time:%Y-%m-%d %H:%M}" if job.start_time else ""
        got = texts[key] = (cause, f"{text}{start}", f"Reason={base}: {text}.")
    cause, title, explanation = got
    remedy = "Nothing to fix; `squeue --start -j " + job.job_id + "` shows the estimate."
    evidence = [state_evidence(job, ctx)]
    return (job_finding(job, ctx, cause, "info", title, explanation, remedy, evidence, 0.6),)


def never_fits(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """The request exceeds what the partition allows or its largest node has (or squeue says
    PartitionConfig/NodeLimit/TimeLimit): it never runs as submitted."""
    reason = job.reason or ""
    part = ctx.partitions.get(job.partition)
    base = _base(reason)
    why = impossible_request(job, part, ctx)
    if not why and base not in _NEVER_REASONS:
        return None
    if not why:
        why = [
            {
                "PartitionTimeLimit": "time limit above the partition MaxTime",
                "PartitionNodeLimit": "node count outside the partition MinNodes/MaxNodes",
                "PartitionConfig": "request does not fit the partition configuration",
            }.get(base, base)
        ]
    ev = [state_evidence(job, ctx)]
    if part is not None:
        max_mem = fmt_mib(part.max_mem_per_node_mib) if part.max_mem_per_node_mib else "UNLIMITED"
        ev.append(
            Evidence(
                "scontrol show partition",
                f"PartitionName={part.name} MaxCPUsPerNode={part.max_cpus_per_node or 'UNLIMITED'} "
                f"MaxMemPerNode={max_mem} MaxTime={fmt_duration(part.max_time_s)} "
                f"TotalNodes={part.total_nodes}",
                tier=0,
            )
        )
    return (
        job_finding(
            job,
            ctx,
            "pending_partition_limit",
            "critical",
            f"never runs: {why[0]}",
            f"Job {job.job_id} can never start in partition {job.partition}: "
            + "; ".join(why)
            + f" (Reason={reason or 'None'}). Slurm keeps it pending instead of rejecting it.",
            "Lower the request to fit (e.g. --cpus-per-task / --mem / --time within the limits "
            "shown) or submit to a partition that allows it: "
            f"scontrol update JobId={job.job_id} Partition=<p>, or scancel {job.job_id} and "
            f"resubmit.",
            ev,
            0.95,
        ),
    )


def partition_down(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """Its partition is DOWN or INACTIVE: accepted, never started until it is UP."""
    base = _base(job.reason or "")
    if base not in {"PartitionDown", "PartitionInactive"}:
        return None
    state = "DOWN" if base == "PartitionDown" else "INACTIVE"
    return (
        job_finding(
            job,
            ctx,
            "pending_partition_down",
            "warning",
            f"never runs until partition {job.partition} is UP ({base})",
            f"Partition {job.partition} is {state}: it accepts jobs but starts none.",
            f"Ask the admins (scontrol update PartitionName={job.partition} State=UP) or move the "
            f"job: scontrol update JobId={job.job_id} Partition=<other>.",
            [state_evidence(job, ctx)],
            0.9,
        ),
    )


def dependency_never_satisfied(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """The job it depends on ended the wrong way: Slurm will never start this one."""
    if _base(job.reason or "") != "DependencyNeverSatisfied":
        return None
    dep = job.dependency or "its dependency"
    return (
        job_finding(
            job,
            ctx,
            "dependency_failed",
            "warning",
            f"never runs: dependency {dep} can't be met",
            f"The job it depends on ended in a way the dependency type excludes ({dep}); "
            "Slurm will not start this job.",
            f"scancel {job.job_id} and resubmit after fixing the parent, or drop the dependency: "
            f"scontrol update JobId={job.job_id} Dependency=",
            [state_evidence(job, ctx)],
            0.95,
        ),
    )


def launch_failed_held(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """The batch script could not start on its node: requeued and held at priority 0."""
    if not _launch_failed(job.reason or ""):
        return None
    return (
        job_finding(
            job,
            ctx,
            "pending_launch_failed_held",
            "warning",
            "held: batch launch failed, requeued with priority 0",
            "The batch script could not be launched on the allocated node, so Slurm requeued the "
            "job and held it; it never runs until released.",
            "Check slurmd.log on the batch host (spool dir, prolog, munge), then "
            f"scontrol release {job.job_id}.",
            [state_evidence(job, ctx)],
            0.95,
        ),
    )


def nodes_unavailable(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """It asks for specific nodes (or a reservation) that are down, drained or reserved."""
    reason = job.reason or ""
    if not _base(reason).startswith("ReqNodeNotAvail"):
        return None
    names = (
        reason.split("UnavailableNodes:", 1)[-1].strip() if "UnavailableNodes:" in reason else ""
    )
    ev = [state_evidence(job, ctx)]
    ev.extend(
        Evidence("scontrol show node", f"{n.name} State={n.state_label} Reason={n.reason}", tier=0)
        for n in ctx.snapshot.nodes
        if n.is_unhealthy and n.name in names
    )
    return (
        job_finding(
            job,
            ctx,
            "pending_node_unavailable",
            "warning",
            "waits for unavailable nodes" + (f": {names}" if names else ""),
            "The job asks for specific nodes (or a reservation) that are down, drained or "
            "reserved.",
            f"Drop --nodelist/--reservation: scontrol update JobId={job.job_id} ReqNodeList= "
            "or wait for the nodes to return.",
            ev,
            0.85,
        ),
    )


def qos_limit(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """A QOS or association limit: per job (never runs as submitted) or per user/group (runs
    as the user's other jobs end)."""
    base = _base(job.reason or "")
    if not (base.startswith(("QOS", "Assoc")) or base in {"MaxJobsPerUser", "AssocGrpJobsLimit"}):
        return None
    per_job = "PerJob" in base or "MinCpu" in base or "MaxWall" in base
    sev: Severity = "warning"  # never runs without a change: someone must act
    scope = "QOS" if base.startswith("QOS") else "association"
    title = (
        f"never runs: exceeds a per-job {scope} limit ({base})"
        if per_job
        else f"held by a QOS/association limit ({base}); runs only as your other jobs end"
    )
    explanation = f"Reason={base}: " + (
        "the request exceeds a per-job limit; it never runs as submitted."
        if per_job
        else "your running usage is at a group/user limit; it starts when your other jobs finish."
    )
    remedy = "sacctmgr show qos format=Name,MaxTRESPerJob,MaxWall,MaxJobsPU,GrpTRES; " + (
        f"shrink the request or use another --qos (scontrol update JobId={job.job_id} QOS=<q>)."
        if per_job
        else "wait, or cancel some of your running jobs."
    )
    ev = [state_evidence(job, ctx)]
    return (job_finding(job, ctx, "pending_qos_limit", sev, title, explanation, remedy, ev, 0.85),)


def held(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """Held by its user or an admin: never runs until released."""
    base = _base(job.reason or "")
    if base not in _HELD:
        return None
    return (
        job_finding(
            job,
            ctx,
            "pending_held",
            "warning",
            f"held ({base}); never runs until released",
            "The job was held (scontrol hold, or by an admin).",
            f"scontrol release {job.job_id}",
            [state_evidence(job, ctx)],
            0.9,
        ),
    )
