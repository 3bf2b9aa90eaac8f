"""Slurm rules: why a job is pending or dead, why a node is drained, site-wide patterns.

The checks follow the Alibaba E-HPC / SchedMD troubleshooting order: scheduler first
(squeue reason, scontrol, sacct, slurmctld.log), then the node (slurmd.log, dmesg,
journal), then the application's own output. Evidence carries that order in
``Evidence.tier`` (0, 1, 2). Every title reads as a one-line verdict in a table row
("never runs: 64 CPUs > MaxCPUsPerNode 48").

Cost: one ``@rule("job")`` dispatches on the job state, so a RUNNING job costs one
dict lookup; site-wide aggregates (largest node per partition, backfill candidates) are
computed once per snapshot in ``ctx.cache``.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterator

from cockpit.diagnosis.engine import RuleContext, log_evidence, rule
from cockpit.diagnosis.patterns import classify
from cockpit.model import (
    AcctRecord,
    Evidence,
    Finding,
    LogText,
    Partition,
    Severity,
    SlurmJob,
    SlurmNode,
    Snapshot,
    Subject,
    positional_constructor,
)
from cockpit.units import hms

SIGNALS = {1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
           11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
FAST_FAIL_S = 60  # a job that dies within a minute failed to start, not to compute
STARVE_S = 3600  # a large job pending this long while smaller, later jobs start = starvation
SURGE_PENDING = 50
SURGE_CANCELLED = 20

_WILL_RUN = {
    "Resources": ("pending_resources", "waiting for free resources; will run when nodes free up"),
    "Priority": ("pending_priority", "higher-priority jobs are ahead; will run"),
    "Dependency": ("pending_dependency", "waiting for its dependency to finish; will run"),
    "BeginTime": ("pending_dependency", "waiting for its --begin time; will run"),
    "JobArrayTaskLimit": ("pending_qos_limit", "array task limit (%N) reached; will run as tasks finish"),
}
_NEVER_REASONS = {"PartitionConfig", "PartitionNodeLimit", "PartitionTimeLimit"}
_HELD = {"JobHeldUser", "JobHeldAdmin", "held"}


# --------------------------------------------------------------------------- helpers


# Built by the 10k per poll at a big site (a finding per pending job): the frozen __init__ is
# half of their cost. Positional, every field: (kind, source, id, name); (where, text, line,
# path, offset, tier); Finding's ten in declaration order.
_new_subject = positional_constructor(Subject)
_new_evidence = positional_constructor(Evidence)
_new_finding = positional_constructor(Finding)


def _memo(ctx: RuleContext, name: str) -> dict:
    """A dict in the snapshot's rule cache (one per ``name``), for answers shared by many jobs.
    Not ``setdefault(name, {})``: that allocates a dict per call, per job on the hot path."""
    d = ctx.cache.get(name)
    if d is None:
        d = ctx.cache[name] = {}
    return d


def _job_subject(job_id: str, ctx: RuleContext) -> Subject:
    return _new_subject("job", ctx.snapshot.source, job_id, "")


def _node_subjects(job: SlurmJob, ctx: RuleContext) -> tuple[Subject, ...]:
    if not job.nodes:  # every pending job
        return ()
    # one shared (immutable) Subject per node and node list, not one per finding
    by_list = _memo(ctx, "node_subjects")
    got = by_list.get(job.nodes)
    if got is None:
        by_node = _memo(ctx, "node_subject")
        src = ctx.snapshot.source
        got = by_list[job.nodes] = tuple(by_node.get(n) or by_node.setdefault(n, Subject("node", src, n))
                                         for n in job.nodes)
    return got


def fmt_mib(mib: float) -> str:
    """Human memory as Slurm flags take it: 1536 -> '1.5G', 800 -> '800M'."""
    if mib >= 1024:
        g = mib / 1024
        return f"{g:.0f}G" if g == int(g) else f"{g:.1f}G"
    return f"{int(mib)}M"


def suggest_mem_mib(max_rss_mib: float) -> int:
    """1.2 x MaxRSS rounded up (MiB): :func:`cockpit.diagnosis.rightsize.mem_for_peak`, so the OOM
    remedy and the history right-sizing never disagree."""
    from cockpit.diagnosis.rightsize import mem_for_peak

    return mem_for_peak(max_rss_mib)


def mem_usage(max_rss_mib: int | None, req_mem_mib: int | None) -> str:
    """'MaxRSS 64.1G of ReqMem 64G', or only the known half ('ReqMem 64G'); '' when neither is known."""
    if max_rss_mib and req_mem_mib:
        return f"MaxRSS {fmt_mib(max_rss_mib)} of ReqMem {fmt_mib(req_mem_mib)}"
    if max_rss_mib:
        return f"MaxRSS {fmt_mib(max_rss_mib)}"
    return f"ReqMem {fmt_mib(req_mem_mib)}" if req_mem_mib else ""


def fmt_duration(s: int | None) -> str:
    """Slurm's own [D-]HH:MM:SS."""
    return hms(s)


def suggest_time_s(elapsed_s: int, max_s: int | None) -> int:
    """1.3 x what it used, rounded up (:func:`cockpit.diagnosis.rightsize.time_for_peak`, the same rule as
    the history right-sizing), capped at the partition MaxTime."""
    from cockpit.diagnosis.rightsize import time_for_peak

    want = time_for_peak(elapsed_s)
    return min(want, max_s) if max_s else want


def explain_exit(job_ec) -> str:
    """'ExitCode 0:9': first number the application's status, second the signal."""
    if job_ec is None:
        return ""
    code, sig = job_ec.code, job_ec.signal
    if sig:
        name = SIGNALS.get(sig, f"signal {sig}")
        extra = {9: " (killed: out of memory, scancel -s KILL or a node failure)",
                 15: " (terminated: time limit, scancel or preemption)",
                 11: " (segmentation fault in the program)", 7: " (bus error, often after memory pressure)",
                 6: " (the program aborted itself)"}.get(sig, "")
        return f"ExitCode {code}:{sig}: ended by {name}{extra}."
    if code == 0:
        return "ExitCode 0:0: the program exited normally."
    meaning = {1: "a generic error from the program", 2: "misuse of a shell builtin or bad arguments",
               126: "the command is not executable (permissions)", 127: "command not found",
               137: "128+9: killed by SIGKILL", 139: "128+11: segmentation fault",
               143: "128+15: terminated by SIGTERM"}.get(code, "an error status from the program")
    return f"ExitCode {code}:0: the program exited with status {code} ({meaning})."


def _job_row(rows: list[AcctRecord]) -> AcctRecord | None:
    for r in rows:
        if not r.step:
            return r
    return rows[0] if rows else None


def _max_rss(rows: list[AcctRecord]) -> int | None:
    vals = [r.max_rss_mib for r in rows if r.max_rss_mib]
    return max(vals) if vals else None


def _req_mem(job: SlurmJob, rows: list[AcctRecord]) -> int | None:
    for r in rows:
        if r.req_mem_mib and not r.placeholder:
            return r.req_mem_mib
    if job.min_memory_mib:
        return job.min_memory_mib * (job.cpus or 1) if job.mem_per_cpu else job.min_memory_mib
    return None


def _acct_evidence(rows: list[AcctRecord]) -> list[Evidence]:
    out = []
    for r in rows[:4]:
        jid = r.job_id + (f".{r.step}" if r.step else "")
        parts = [f"{jid} {r.state}" + (f" by {r.cancelled_by}" if r.cancelled_by else "")]
        if r.exit_code is not None:
            parts.append(f"ExitCode={r.exit_code}")
        if r.req_mem_mib:
            parts.append(f"ReqMem={fmt_mib(r.req_mem_mib)}")
        if r.max_rss_mib is not None:
            parts.append(f"MaxRSS={fmt_mib(r.max_rss_mib)}")
        if r.elapsed_s is not None:
            parts.append(f"Elapsed={fmt_duration(r.elapsed_s)}")
        if r.timelimit_s is not None:
            parts.append(f"Timelimit={fmt_duration(r.timelimit_s)}")
        out.append(Evidence("sacct", " ".join(parts), tier=0))
    return out


def _state_evidence(job: SlurmJob, ctx: RuleContext) -> Evidence:
    """The job's squeue line as scontrol spells it: ``JobId=4 JobState=PENDING Reason=Priority ...``."""
    # Everything after the job id repeats across thousands of jobs: built once per distinct tail.
    tails = _memo(ctx, "ev_tails")
    key = (job.state, job.reason, job.exit_code, job.partition, job.node_list)
    tail = tails.get(key)
    if tail is None:
        bits = ["", f"JobState={job.state}", f"Reason={job.reason or 'None'}"]
        if job.exit_code is not None:
            bits.append(f"ExitCode={job.exit_code}")
        if job.partition:
            bits.append(f"Partition={job.partition}")
        if job.node_list:
            bits.append(f"NodeList={job.node_list}")
        tail = tails[key] = " ".join(bits)
    return _new_evidence("squeue", "JobId=" + job.job_id + tail, None, "", None, 0)


def _log_hits(job_id: str, ctx: RuleContext) -> list[tuple[object, object]]:
    """(log, first strong hit) per log of the job, scheduler logs first, then node, then app."""
    out = []
    for lt in ctx.logs_for(job_id):
        h = ctx.scan(lt)
        if h is not None:
            out.append((lt, h))
    out.sort(key=lambda p: (p[1].strong is False, _LOG_TIER.get(p[0].kind, 2)))
    return out


_LOG_TIER = {"slurmctld": 0, "command": 0, "slurmd": 1, "journal": 1, "dmesg": 1}


def _tier_for(log, hit) -> int:
    return min(hit.tier, _LOG_TIER.get(log.kind, 2)) if log.kind in _LOG_TIER else max(hit.tier, 2)


def _ev_sorted(ev: list[Evidence]) -> tuple[Evidence, ...]:
    if len(ev) == 1:  # the common case (a pending job's squeue line): nothing to sort or dedupe
        return (ev[0],)
    seen, out = set(), []
    for e in sorted(ev, key=lambda e: e.tier):
        k = (e.where, e.line, e.text)
        if k not in seen:
            seen.add(k)
            out.append(e)
    return tuple(out[:12])


def _finding(job: SlurmJob, ctx: RuleContext, cause: str, sev: Severity, title: str, explanation: str,
             remedy: str, evidence: list[Evidence], confidence: float = 0.85) -> Finding:
    return _new_finding(
        cause, sev, _job_subject(job.job_id, ctx), title, explanation, remedy, _ev_sorted(evidence), confidence,
        job.end_time or job.submit_time, _node_subjects(job, ctx) + _user_subject(job, ctx, cause),
    )


def _user_subject(job: SlurmJob, ctx: RuleContext, cause: str) -> tuple[Subject, ...]:
    # per-user causes: correlate() folds one user's many jobs into one incident by this
    if cause in {"pending_qos_limit", "cancelled_by_user"} and job.user:
        return (Subject("user", ctx.snapshot.source, job.user),)
    return ()


# --------------------------------------------------------------------------- per-partition aggregates


def _largest(ctx: RuleContext) -> dict[str, tuple[int | None, int | None]]:
    """partition -> (most CPUs on one node, most RealMemory MiB on one node); once per snapshot."""
    agg = ctx.cache.get("largest")
    if agg is None:
        agg = {}
        for p in ctx.snapshot.partitions:
            cpus = [ctx.nodes[n].cpus_total for n in p.nodes if n in ctx.nodes and ctx.nodes[n].cpus_total]
            mems = [ctx.nodes[n].real_memory_mib for n in p.nodes if n in ctx.nodes and ctx.nodes[n].real_memory_mib]
            agg[p.name] = (max(cpus) if cpus else None, max(mems) if mems else None)
        ctx.cache["largest"] = agg
    return agg


def impossible_request(job: SlurmJob, part: Partition | None, ctx: RuleContext) -> list[str]:
    """Why the request can never fit the partition, each with both numbers (empty = it can)."""
    if part is None:
        return []
    # ~50k pending jobs at a big site ask for a few hundred distinct shapes: one answer per shape
    memo = _memo(ctx, "impossible")
    key = (part.name, job.cpus, job.node_count, job.min_memory_mib, job.mem_per_cpu, job.time_limit_s)
    got = memo.get(key)
    if got is None:
        got = memo[key] = tuple(_impossible(job, part, ctx))
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
            out.append(f"--mem-per-cpu {fmt_mib(mem)} > MaxMemPerCPU {fmt_mib(part.max_mem_per_cpu_mib)}")
        mem = mem * cpus_per_node
    if mem:
        if part.max_mem_per_node_mib and mem > part.max_mem_per_node_mib:
            out.append(f"{fmt_mib(mem)} memory > MaxMemPerNode {fmt_mib(part.max_mem_per_node_mib)}")
        elif big_mem and mem > big_mem:
            out.append(f"{fmt_mib(mem)} memory per node > largest node's RealMemory {fmt_mib(big_mem)}")
    if job.time_limit_s and part.max_time_s and job.time_limit_s > part.max_time_s:
        out.append(f"--time {fmt_duration(job.time_limit_s)} > MaxTime {fmt_duration(part.max_time_s)}")
    if part.max_nodes and nodes > part.max_nodes:
        out.append(f"{nodes} nodes > MaxNodes {part.max_nodes}")
    elif part.total_nodes and nodes > part.total_nodes:
        out.append(f"{nodes} nodes > the partition's {part.total_nodes} nodes")
    return out


# --------------------------------------------------------------------------- job rules


@rule("job")
def job_rules(job: SlurmJob, ctx: RuleContext) -> Iterator[Finding]:
    """Dispatch on the job state: RUNNING and COMPLETED jobs without artifacts cost nothing."""
    handler = _BY_STATE.get(job.state)
    if handler is None:
        return iter(())
    return handler(job, ctx)


def _will_run(reason: str, ctx: RuleContext) -> tuple[str, str, str] | None:
    """(base reason, cause, text) when ``reason`` is a plain "will run" one (Priority, Resources,
    ...) that only an impossible request overrides; None otherwise. Cached per reason string."""
    memo = _memo(ctx, "will_run_reason")
    if reason not in memo:
        base = reason.split(",")[0].strip()
        wr = _WILL_RUN.get(base)
        held = "launch_failed_requeued_held" in reason or reason == "launch failed requeued held"
        memo[reason] = (base, *wr) if wr is not None and not held else None
    return memo[reason]


def _pending(job: SlurmJob, ctx: RuleContext) -> Iterator[Finding]:
    reason = job.reason or ""
    part = ctx.partitions.get(job.partition)
    wr = _will_run(reason, ctx)
    if wr is not None and not impossible_request(job, part, ctx):
        # The common case at a big site (tens of thousands of jobs waiting their turn): the same
        # finding as the general path's last branch below, without walking the other branches.
        yield _will_run_finding(job, ctx, wr)
        return
    ev = [_state_evidence(job, ctx)]
    base = reason.split(",")[0].strip()
    why = impossible_request(job, part, ctx)
    if why or base in _NEVER_REASONS:
        if not why:
            why = [{"PartitionTimeLimit": "time limit above the partition MaxTime",
                    "PartitionNodeLimit": "node count outside the partition MinNodes/MaxNodes",
                    "PartitionConfig": "request does not fit the partition configuration"}.get(base, base)]
        if part is not None:
            ev.append(Evidence("scontrol show partition",
                               f"PartitionName={part.name} MaxCPUsPerNode={part.max_cpus_per_node or 'UNLIMITED'} "
                               f"MaxMemPerNode={fmt_mib(part.max_mem_per_node_mib) if part.max_mem_per_node_mib else 'UNLIMITED'} "
                               f"MaxTime={fmt_duration(part.max_time_s)} TotalNodes={part.total_nodes}", tier=0))
        yield _finding(job, ctx, "pending_partition_limit", "critical", f"never runs: {why[0]}",
                       f"Job {job.job_id} can never start in partition {job.partition}: " + "; ".join(why)
                       + f" (Reason={reason or 'None'}). Slurm keeps it pending instead of rejecting it.",
                       "Lower the request to fit (e.g. --cpus-per-task / --mem / --time within the limits shown) "
                       f"or submit to a partition that allows it: scontrol update JobId={job.job_id} Partition=<p>, "
                       f"or scancel {job.job_id} and resubmit.", ev, 0.95)
        return
    if base in {"PartitionDown", "PartitionInactive"}:
        yield _finding(job, ctx, "pending_partition_down", "warning",
                       f"never runs until partition {job.partition} is UP ({base})",
                       f"Partition {job.partition} is {'DOWN' if base == 'PartitionDown' else 'INACTIVE'}: "
                       "it accepts jobs but starts none.",
                       f"Ask the admins (scontrol update PartitionName={job.partition} State=UP) or move the job: "
                       f"scontrol update JobId={job.job_id} Partition=<other>.", ev, 0.9)
        return
    if base == "DependencyNeverSatisfied":
        dep = job.dependency or "its dependency"
        yield _finding(job, ctx, "dependency_failed", "warning", f"never runs: dependency {dep} can't be met",
                       f"The job it depends on ended in a way the dependency type excludes ({dep}); "
                       "Slurm will not start this job.",
                       f"scancel {job.job_id} and resubmit after fixing the parent, or drop the dependency: "
                       f"scontrol update JobId={job.job_id} Dependency=", ev, 0.95)
        return
    if "launch_failed_requeued_held" in reason or reason == "launch failed requeued held":
        yield _finding(job, ctx, "pending_launch_failed_held", "warning",
                       "held: batch launch failed, requeued with priority 0",
                       "The batch script could not be launched on the allocated node, so Slurm requeued the job "
                       "and held it; it never runs until released.",
                       "Check slurmd.log on the batch host (spool dir, prolog, munge), then "
                       f"scontrol release {job.job_id}.", ev, 0.95)
        return
    if base.startswith("ReqNodeNotAvail"):
        names = reason.split("UnavailableNodes:", 1)[-1].strip() if "UnavailableNodes:" in reason else ""
        ev.extend(Evidence("scontrol show node", f"{n.name} State={n.state_label} Reason={n.reason}", tier=0)
                  for n in ctx.snapshot.nodes if n.is_unhealthy and n.name in names)
        yield _finding(job, ctx, "pending_node_unavailable", "warning",
                       "waits for unavailable nodes" + (f": {names}" if names else ""),
                       "The job asks for specific nodes (or a reservation) that are down, drained or reserved.",
                       f"Drop --nodelist/--reservation: scontrol update JobId={job.job_id} ReqNodeList= "
                       "or wait for the nodes to return.", ev, 0.85)
        return
    if base.startswith(("QOS", "Assoc")) or base in {"MaxJobsPerUser", "AssocGrpJobsLimit"}:
        per_job = "PerJob" in base or "MinCpu" in base or "MaxWall" in base
        sev: Severity = "warning"  # the "never runs without a change" group: someone must act
        title = (f"never runs: exceeds a per-job {('QOS' if base.startswith('QOS') else 'association')} limit ({base})"
                 if per_job else f"held by a QOS/association limit ({base}); runs only as your other jobs end")
        yield _finding(job, ctx, "pending_qos_limit", sev, title,
                       f"Reason={base}: " + ("the request exceeds a per-job limit; it never runs as submitted."
                                              if per_job else "your running usage is at a group/user limit; "
                                              "it starts when your other jobs finish."),
                       "sacctmgr show qos format=Name,MaxTRESPerJob,MaxWall,MaxJobsPU,GrpTRES; "
                       + (f"shrink the request or use another --qos (scontrol update JobId={job.job_id} QOS=<q>)."
                          if per_job else "wait, or cancel some of your running jobs."), ev, 0.85)
        return
    if base in _HELD:
        yield _finding(job, ctx, "pending_held", "warning", f"held ({base}); never runs until released",
                       "The job was held (scontrol hold, or by an admin).",
                       f"scontrol release {job.job_id}", ev, 0.9)
        return
    # A "will run" reason (Priority, Resources, ...) returned at the top of this function.


def _will_run_finding(job: SlurmJob, ctx: RuleContext, wr: tuple[str, str, str]) -> Finding:
    # Tens of thousands of "will run" jobs at a big site share a handful of (reason, expected
    # start) pairs: their title and explanation are built once per snapshot and shared.
    texts = _memo(ctx, "will_run_text")
    base = wr[0]
    key = (base, job.start_time)
    got = texts.get(key)
    if got is None:
        _, cause, text = wr
        start = f"; expected start {job.start_time:%Y-%m-%d %H:%M}" if job.start_time else ""
        got = texts[key] = (cause, f"{text}{start}", f"Reason={base}: {text}.")
    cause, title, explanation = got
    return _finding(job, ctx, cause, "info", title, explanation,
                    "Nothing to fix; `squeue --start -j " + job.job_id + "` shows the estimate.",
                    [_state_evidence(job, ctx)], 0.6)


def _fast(job: SlurmJob, row: AcctRecord | None) -> bool:
    el = row.elapsed_s if row and row.elapsed_s is not None else job.elapsed_s
    return el is not None and el < FAST_FAIL_S


def _env_remedy(job: SlurmJob) -> str:
    node = job.nodes[0] if job.nodes else "<node>"
    return (f"Preflight on the compute node, not the login node: srun -p {job.partition or '<p>'} -w {node} "
            "bash -lc 'which <cmd>; ldd $(which <cmd>) | grep \"not found\"; module list'. "
            "Load the same modules in the batch script (or use a container), then resubmit.")


_CMD = re.compile(r"(?:: line \d+|: \d+)?: ([^:\s]+): (?:command not found|not found|No such file or directory)")
_LIB = re.compile(r"loading shared libraries: ([^:\s]+)")


def _env_phrase(cause: str, text: str) -> str:
    """'run_analysis: command not found on the compute node' from the hit line."""
    if cause == "command_not_found" and (m := _CMD.search(text)):
        return f"{m.group(1).rsplit('/', 1)[-1]}: command not found on the compute node"
    if cause == "missing_shared_library" and (m := _LIB.search(text)):
        return f"{m.group(1)} missing on the compute node"
    return ""


GPU_OOM_REMEDY = ("Reduce the per-device memory: a smaller batch size with gradient accumulation to keep the "
                  "effective batch, activation (gradient) checkpointing, mixed precision, or shard the model over "
                  "more GPUs (--gpus). Check nvidia-smi (npu-smi info on Ascend) on the node for other processes "
                  "holding device memory.")
_ENV_CAUSES = {"command_not_found", "missing_shared_library", "module_load_failed"}
_LOG_CAUSE_TEXT = {
    "command_not_found": ("a command was not found on the compute node", "env"),
    "missing_shared_library": ("a shared library is missing on the compute node", "env"),
    "module_load_failed": ("loading an environment module failed", "env"),
    "mpi_pmi_mismatch": ("MPI and Slurm's PMI plugin don't fit",
                         "Launch with srun --mpi=pmix (or pmi2) matching how MPI was built: srun --mpi=list; "
                         "ompi_info | grep -i pmi."),
    "mpi_network_error": ("the nodes could not talk to each other (MPI/network)",
                          "Check slurmd.log on the nodes for 'error: connect', the firewall between nodes "
                          "and the interface MPI uses (OMPI_MCA_btl_tcp_if_include / UCX_NET_DEVICES)."),
    "nccl_communication_error": ("NCCL collective communication failed",
                                 "Rerun with NCCL_DEBUG=INFO; pin NCCL_SOCKET_IFNAME / NCCL_IB_HCA to the right "
                                 "interface; check MTU and the link between the nodes."),
    "cuda_driver_mismatch": ("the CUDA runtime needs a newer GPU driver than the node has",
                             "Compare nvidia-smi (driver) with the CUDA version of the build/container; use a "
                             "build for the node's CUDA or ask for a driver upgrade."),
    "dependency_install_failed": ("Python/conda dependencies could not be installed (index unreachable or package missing)",
                                  "Install them before the job (a venv/conda env on shared storage, or a container); "
                                  "compute nodes often have no internet: pin a reachable mirror via pip config / "
                                  "PIP_INDEX_URL, and check the package name and version."),
    "gpu_out_of_memory": ("GPU/NPU memory exhausted (device memory, not host RAM: --mem does not help)",
                          GPU_OOM_REMEDY),
    "gpu_not_available": ("no usable GPU was visible to the job",
                          "Request GPUs (--gres=gpu:N or --gpus=N) and check nvidia-smi on the node."),
    "gpu_hardware_error": ("a GPU hardware fault (Xid/ECC)",
                           "Drain the node (scontrol update NodeName=<n> State=DRAIN Reason='GPU Xid'), "
                           "run nvidia-smi -q -d ECC,PAGE_RETIREMENT and the vendor diagnostics before reuse."),
    "disk_full": ("a filesystem ran out of space",
                  "df -h <output dir>; clean up or write to scratch; check the controller's StateSaveLocation."),
    "disk_quota_exceeded": ("the disk quota (bytes or files) was exceeded",
                            "Check quota -s / lfs quota -h / mmlsquota (the files column too); delete or archive "
                            "small files."),
    "time_limit": ("it hit its time limit", ""),
    "oom_killed": ("it ran out of memory", ""),
    "storage_read_only": ("it wrote to a read-only filesystem", "Write outputs to a writable directory."),
    "input_path_not_found": ("an input path does not exist", "Check the path spelling and that the data exists."),
}


def _history(ctx: RuleContext):  # -> RightSize | None
    """Right-sizing from ``Artifacts.history`` (past runs of the same user + name, fetched for
    OOM/TIMEOUT jobs), computed once per diagnose; None without history."""
    from cockpit.diagnosis.rightsize import suggest

    if not ctx.artifacts.history:
        return None
    if "rightsize" not in ctx.cache:
        ctx.cache["rightsize"] = suggest(ctx.artifacts.history)
    return ctx.cache["rightsize"]


def _mem_advice(job: SlurmJob, rss: int | None, req: int | None, ctx: RuleContext) -> str:
    """One ``--mem`` value with its basis: the sacct history peak when there is one (it includes
    this run), else 1.2 x this run's MaxRSS, else 1.2 x ReqMem (cgroup OOM kills often leave
    MaxRSS empty, and a job killed at its limit needed at least that)."""
    from cockpit.diagnosis.rightsize import fmt_mem

    rs = _history(ctx)
    peak, basis, note = None, "", ""
    if rss and rss >= 0.9 * (req or 0):  # MaxRSS ~ ReqMem: the measured peak is the basis (issue 3)
        peak, basis = rss, f"MaxRSS {fmt_mib(rss)}"
    elif req:
        peak, basis = req, f"ReqMem {fmt_mib(req)}"
        note = (" MaxRSS was not recorded (common after a cgroup OOM kill), so this is sized on the request."
                if not rss else f" Its sampled MaxRSS {fmt_mib(rss)} is below the limit it was killed at, so this "
                "is sized on the request.")
    if rs is not None and rs.mem_peak_mib and rs.mem_peak_mib >= (peak or 0):
        name = next((r.job_name for r in ctx.artifacts.history if r.step == "" and r.job_name), job.name)
        peak = rs.mem_peak_mib
        basis = f"peak MaxRSS {fmt_mib(peak)} of {rs.runs} run{'s' if rs.runs != 1 else ''} of {name!r} in sacct history"
        note = (" Runs that ended OUT_OF_MEMORY count at their ReqMem, so this is a floor: check MaxRSS after the next run."
                if rs.oom_runs else "")
    if not peak:
        return (f"Resubmit with a larger --mem (sacct -j {job.job_id} -o JobID,ReqMem,MaxRSS shows what it "
                "used; ask for about 1.2 x MaxRSS).")
    return (f"Resubmit with --mem={fmt_mem(suggest_mem_mib(peak))} (1.2 x {basis}, rounded up), or reduce the "
            f"memory the program holds (batch size, data loaded at once).{note} "
            f"sacct -j {job.job_id} -o JobID,ReqMem,MaxRSS,State shows per-step use.")


def _oom(job: SlurmJob, ctx: RuleContext, rows: list[AcctRecord], ev: list[Evidence], conf: float) -> Finding:
    rss = _max_rss(rows)
    req = _req_mem(job, rows)
    usage = mem_usage(rss, req)
    title = "out of memory" + (f": {usage}" if usage else "") + (f" on {job.node_list}" if job.node_list else "")
    return _finding(job, ctx, "oom_killed", "critical", title,
                    "The job (or one of its steps) used more memory than it asked for and the cgroup / kernel OOM "
                    "killer ended it. Later 'Killed', 'Bus error' or 'CANCELLED' lines are the consequence.",
                    _mem_advice(job, rss, req, ctx), ev, conf)


def _ended(job: SlurmJob, ctx: RuleContext) -> Iterator[Finding]:
    """FAILED, OUT_OF_MEMORY, TIMEOUT, CANCELLED, NODE_FAIL, COMPLETED (with artifacts)."""
    rows = ctx.acct_for(job.job_id)
    row = _job_row(rows)
    state = job.state
    ec = job.exit_code or (row.exit_code if row else None)
    ev = [_state_evidence(job, ctx), *_acct_evidence(rows)]
    hits = _log_hits(job.job_id, ctx)
    strong = [(lt, h) for lt, h in hits if h.strong and h.label not in {"application_error", "cancelled_by_user"}]
    ev.extend(log_evidence(lt, h, _tier_for(lt, h)) for lt, h in hits[:4])
    labels = [h.label for _, h in strong]
    exit_text = explain_exit(ec)

    if state == "OUT_OF_MEMORY" or "oom_killed" in labels:
        yield _oom(job, ctx, rows, ev, 0.95)
        return
    if state == "TIMEOUT" or "time_limit" in labels or job.reason == "TimeLimit":
        el = (row.elapsed_s if row and row.elapsed_s is not None else job.elapsed_s)
        tl = (row.timelimit_s if row and row.timelimit_s else job.time_limit_s)
        part = ctx.partitions.get(job.partition)
        nums = f": Elapsed {fmt_duration(el)} >= Timelimit {fmt_duration(tl)}" if el is not None and tl else ""
        longest, basis = max(el or 0, tl or 0), "this run's Timelimit, a floor"
        rs = _history(ctx)
        if rs is not None and rs.elapsed_max_s and rs.elapsed_max_s >= longest:
            longest = rs.elapsed_max_s
            basis = f"the longest of {rs.runs} run{'s' if rs.runs != 1 else ''} in sacct history, {fmt_duration(longest)}"
        new = suggest_time_s(longest, part.max_time_s if part else None)
        cap = f"; partition MaxTime {fmt_duration(part.max_time_s)}" if part and part.max_time_s else ""
        yield _finding(job, ctx, "time_limit", "critical", f"hit its time limit{nums}",
                       "Slurm cancelled the job when its time limit ran out (TIMEOUT; the batch step shows "
                       "CANCELLED 0:15 = SIGTERM). Application errors printed after that are the consequence. "
                       + exit_text,
                       f"Resubmit with --time={fmt_duration(new)} (1.3 x {basis}, rounded up{cap}), or checkpoint "
                       "and restart in pieces.",
                       ev, 0.95)
        return
    if state == "CANCELLED" and not strong:
        by = row.cancelled_by if row else ""
        who = f"uid {by}" if by else "a user or admin"
        # a person's decision, not a fault: shown on the job, no incident of its own
        yield _finding(job, ctx, "cancelled_by_user", "info", f"cancelled by {who}",
                       f"The job was cancelled (scancel) by {who}, not by a limit or a failure. " + exit_text,
                       f"sacct -j {job.job_id} -o JobID,State,End shows when; ask the owner / check the "
                       "slurmctld.log REQUEST_KILL_JOB line for who.", ev, 0.9)
        return
    if state in {"NODE_FAIL", "BOOT_FAIL"}:
        nodes = [ctx.nodes[n] for n in job.nodes if n in ctx.nodes]
        why = "; ".join(f"{n.name} {n.state_label} {n.reason}".strip() for n in nodes if n.is_unhealthy)
        ev.extend(Evidence("scontrol show node", f"{n.name} State={n.state_label} Reason={n.reason}", tier=0)
                  for n in nodes if n.is_unhealthy)
        yield _finding(job, ctx, "node_not_responding", "critical",
                       f"{state}: node {job.node_list or '?'} failed under the job" + (f" ({why})" if why else ""),
                       "The node running the job stopped answering (crash, reboot, network) and Slurm killed "
                       "the job. The job is a victim, not the cause.",
                       f"Resubmit (or sbatch --requeue); check the node: scontrol show node {job.node_list}, "
                       "slurmd.log and dmesg/journal on it before resuming.", ev, 0.9)
        return
    if strong:
        lt, h = strong[0]
        cause = h.label
        text, remedy = _LOG_CAUSE_TEXT.get(cause, (h.label.replace("_", " "), ""))
        if remedy == "env" or cause in _ENV_CAUSES:
            remedy = _env_remedy(job)
        fast = " within seconds" if _fast(job, row) else ""
        title = f"failed{fast}: {_env_phrase(cause, h.text) or text}"
        yield _finding(job, ctx, cause, "critical", title,
                       f"{h.text.strip()[:200]} ({_log_where(lt, h.line)}). " + exit_text,
                       remedy or "See the evidence line.", ev, 0.9)
        return
    if state == "FAILED" or (ec is not None and (ec.code or ec.signal) and state != "COMPLETED"):
        if ec is not None and ec.code == 127:
            yield _finding(job, ctx, "command_not_found", "critical",
                           "failed: exit 127, command not found on the compute node",
                           "Exit status 127 is the shell's 'command not found': the program or one it calls "
                           "is not on PATH on the compute node. " + exit_text, _env_remedy(job), ev, 0.85)
            return
        rss, req = _max_rss(rows), _req_mem(job, rows)
        if ec is not None and ec.signal == 9 and rss and req and rss >= 0.9 * req:
            yield _oom(job, ctx, rows, ev, 0.8)
            return
        weak = next(((lt, h) for lt, h in hits if not h.strong or h.label == "application_error"), None)
        if weak:
            ev.append(log_evidence(weak[0], weak[1]))
        fast = " within seconds" if _fast(job, row) else ""
        yield _finding(job, ctx, "application_error", "critical",
                       f"failed{fast}: {('exit ' + str(ec)) if ec else 'non-zero exit'}",
                       exit_text + (" Failing this fast usually means the environment or input is wrong, "
                                    "not the computation." if fast else ""),
                       f"Read the first error in the job output (cockpit scan-log <stdout>); sacct -j {job.job_id} "
                       "-o JobID,State,ExitCode shows which step failed.", ev, 0.6)
        return
    if state == "COMPLETED" and (rows or hits):
        yield _finding(job, ctx, "no_failure", "info", "completed normally (exit 0:0)",
                       "The job completed; any warnings in its output did not stop it. " + exit_text,
                       "Nothing to do.", ev, 0.5)


_BY_STATE = {
    "PENDING": _pending,
    "FAILED": _ended, "OUT_OF_MEMORY": _ended, "TIMEOUT": _ended, "CANCELLED": _ended,
    "NODE_FAIL": _ended, "BOOT_FAIL": _ended, "COMPLETED": _ended, "DEADLINE": _ended,
}


# --------------------------------------------------------------------------- node rules

_NODE_CHECKS = {
    "node_drain_kill_task_failed": (
        "processes of a job would not die when Slurm killed it (unkillable D-state I/O, a stuck epilog, "
        "a hung filesystem)",
        "Before rebooting: on the node, ps -eo pid,stat,wchan,cmd | awk '$2 ~ /D/' (stuck I/O), check the "
        "filesystem mounts and slurmd.log around the reason time; if clean: scontrol update NodeName={n} "
        "State=RESUME. Raise UnkillableStepTimeout if it recurs."),
    "node_drain_low_memory": (
        "slurmd registered less memory than slurm.conf says (RealMemory too high, or a DIMM lost)",
        "Run slurmd -C on {n}; set RealMemory in slurm.conf to that value (or a little less), scontrol "
        "reconfigure, then scontrol update NodeName={n} State=RESUME. If the node really lost memory, check "
        "dmesg/EDAC before resuming."),
    "node_drain_prolog_epilog_failed": (
        "the Prolog/Epilog script (or a SPANK plugin) failed on the node",
        "Read slurmd.log / journalctl -u slurmd on {n} for the prolog/epilog error, run the script by hand, "
        "fix it (paths, permissions), then scontrol update NodeName={n} State=RESUME."),
    "node_not_responding": (
        "slurmctld cannot reach slurmd on the node (crash, network, slurmd down)",
        "Before rebooting: ping {n}; ssh {n} systemctl status slurmd munge; check the clock (munge) and "
        "dmesg for hardware errors; then systemctl restart slurmd and scontrol update NodeName={n} State=RESUME."),
    "node_down_unexpected_reboot": (
        "the node rebooted without Slurm asking (crash, power, watchdog)",
        "Check journalctl -b -1 and dmesg on {n} (kernel panic, MCE, power), then scontrol update "
        "NodeName={n} State=RESUME."),
    "node_config_mismatch": (
        "the hardware slurmd detects differs from the node line in slurm.conf",
        "Compare slurmd -C on {n} with its NodeName line (Sockets/Cores/Threads/RealMemory); make them agree, "
        "scontrol reconfigure, then scontrol update NodeName={n} State=RESUME."),
    "node_drain_admin": (
        "an operator drained it",
        "Ask the person named in the reason ({u}); resume only when they are done: scontrol update "
        "NodeName={n} State=RESUME."),
    "gpu_hardware_error": (
        "a GPU or memory hardware fault was reported",
        "Keep it drained; run nvidia-smi -q -d ECC,PAGE_RETIREMENT / dcgmi diag on {n}; replace or reset the "
        "GPU before resuming."),
    "oom_killed": (
        "jobs keep running the node out of memory",
        "Check dmesg on {n} for oom-kill; enforce memory with cgroups (ConstrainRAMSpace=yes) so jobs, not "
        "the node, pay for it; then resume."),
    "node_drain_loop": (
        "the node drains again after every resume because jobs keep exhausting its memory",
        "Do not just resume: find the jobs (sacct -N {n} -s OOM -S now-1day), make them ask for enough "
        "--mem, enable ConstrainRAMSpace=yes, then resume."),
}
_SHORT = {"node_drain_prolog_epilog_failed": "prolog/epilog failed", "gpu_hardware_error": "GPU hardware fault",
          "oom_killed": "out of memory", "disk_full": "disk full", "node_config_mismatch": "config differs from hardware",
          "node_down_unexpected_reboot": "unexpected reboot", "node_drain_loop": "drains again after resume (OOM loop)"}
_NODE_LOG_CAUSES = {"node_drain_prolog_epilog_failed", "gpu_hardware_error", "oom_killed", "disk_full",
                    "node_config_mismatch", "node_down_unexpected_reboot"}


def classify_reason(reason: str) -> str | None:
    """Node reason text -> label (None = no recognised pattern)."""
    p = classify(reason.encode("utf-8", "replace"), "app")
    if p is None:
        return None
    return p.label if p.label.startswith("node_") or p.label == "gpu_hardware_error" else None


@rule("node")
def node_state(node: SlurmNode, ctx: RuleContext) -> Iterator[Finding]:
    if not node.is_unhealthy:
        return
    reason = node.reason or ""
    label = classify_reason(reason) if reason else None
    if label is None:
        if reason:
            label = "node_drain_admin"
        else:
            label = "node_not_responding" if node.is_down else "node_drain_admin"
    ev = [Evidence("scontrol show node", f"NodeName={node.name} State={node.state_label} Reason={reason}"
                   + (f" [{node.reason_user}@{node.reason_time:%Y-%m-%dT%H:%M:%S}]" if node.reason_user and node.reason_time else ""),
                   tier=0)]
    conf = 0.85 if reason else 0.5
    # the node's own logs often name the cause the drain reason only summarises
    for lt in ctx.logs_for(node.name):
        for h in ctx.strong_hits(lt, 20):
            if h.label in _NODE_LOG_CAUSES and h.label != label:
                if label in {"node_drain_kill_task_failed", "node_not_responding", "node_drain_admin"}:
                    label, conf = h.label, 0.9
                ev.append(log_evidence(lt, h, 1))
                break
            if h.label == label:
                ev.append(log_evidence(lt, h, 1))
                break
    ooms = ctx.cache.get("oom_by_node")
    if ooms is None:
        ooms = {}
        for j in ctx.snapshot.jobs:
            if j.state == "OUT_OF_MEMORY":
                for n in j.nodes:
                    ooms[n] = ooms.get(n, 0) + 1
        ctx.cache["oom_by_node"] = ooms
    if node.is_drain and (ooms.get(node.name, 0) >= 2 or re.search(r"\boom\b|out of memory", reason, re.I)):
        label, conf = "node_drain_loop", 0.85
        ev.append(Evidence("squeue", f"{ooms.get(node.name, 0)} jobs ended OUT_OF_MEMORY on {node.name}", tier=0))
    what, check = _NODE_CHECKS.get(label, ("", "Check slurmd.log on {n}."))
    word = "DOWN" if node.is_down else "DRAIN"
    sev: Severity = "warning" if label == "node_drain_admin" else "critical"
    yield Finding(
        root_cause=label, severity=sev, subject=Subject("node", ctx.snapshot.source, node.name),
        title=f"{word}: {reason or node.state_label}" + (f"; cause: {_SHORT.get(label, label)}"
                                                         if label != "node_drain_admin" and reason and
                                                         classify_reason(reason) != label else ""),
        explanation=f"Node {node.name} is {node.state_label}: {what}.",
        remedy=check.format(n=node.name, u=node.reason_user or "see reason"),
        evidence=_ev_sorted(ev), confidence=conf, first_seen=node.reason_time,
    )


# --------------------------------------------------------------------------- site rules


@rule("site")
def controller_unreachable(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    err = snap.error
    if err is None or snap.kind != "slurm":
        return
    msg = err.message
    if err.kind in {"unreachable", "timeout"} or re.search(r"Unable to contact slurm controller|Socket timed out|"
                                                          r"Connection refused|slurm_load", msg):
        yield Finding(
            root_cause="controller_unreachable", severity="critical",
            subject=Subject("cluster", snap.source, snap.source),
            title=f"controller unreachable: {msg[:80]}",
            explanation="slurmctld did not answer (down, overloaded, or the network/munge between us and it). "
                        "The tables show the last good data.",
            remedy="scontrol ping; systemctl status slurmctld munge on the controller; sdiag for RPC overload; "
                   "check the backup controller (SlurmctldHost).",
            evidence=(Evidence(err.where or "poll", msg, tier=0),), confidence=0.9, first_seen=snap.taken_at,
        )


@rule("site")
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
        if j.state != "PENDING" or j.reason not in {"Resources", "Priority"} or j.submit_time is None:
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
            root_cause="backfill_starvation", severity="warning", subject=Subject("job", snap.source, j.job_id),
            title=f"starved: {j.cpus} CPUs pending {int(waited // 3600)}h while {n_later} later jobs started",
            explanation=f"Job {j.job_id} ({j.cpus} CPUs, {j.node_count or 1} node(s)) has waited "
                        f"{int(waited // 60)} min with Reason={j.reason} while {n_later} smaller jobs submitted after "
                        "it were started by backfill; without a reservation it may wait indefinitely.",
            remedy="Give it a realistic --time so backfill can plan around it; admins: check bf_window/bf_max_job_test "
                   f"(sdiag), priority weights (sprio -j {j.job_id}), or a reservation.",
            evidence=(_state_evidence(j, ctx),), confidence=0.6, first_seen=j.submit_time,
        )


@rule("site")
def priority_surge(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    pending = sum(1 for j in snap.jobs if j.state == "PENDING")
    if pending < SURGE_PENDING:
        return
    recent = ctx.now.timestamp() - 3600
    cancelled = sum(1 for j in snap.jobs if j.state == "CANCELLED" and j.end_time and j.end_time.timestamp() >= recent)
    if cancelled < SURGE_CANCELLED:
        return
    yield Finding(
        root_cause="priority_qos_surge", severity="warning", subject=Subject("cluster", snap.source, snap.source),
        title=f"surge: {pending} jobs pending, {cancelled} cancelled in the last hour",
        explanation="Many pending jobs together with many recent cancellations: users resubmitting or a QOS/priority "
                    "change pushing work around.",
        remedy="squeue -t PD -o '%u %q %r' | sort | uniq -c | sort -rn | head; sprio -l | head; check recent "
               "sacctmgr QOS changes.",
        evidence=(Evidence("squeue", f"PENDING={pending} CANCELLED(last hour)={cancelled}", tier=0),),
        confidence=0.5, first_seen=snap.taken_at,
    )


@rule("site")
def unattributed_logs(snap: Snapshot, ctx: RuleContext) -> Iterator[Finding]:
    """Logs no job/node of the snapshot claims (bundle files, sbatch output): one finding per file
    whose first red error names a cause. ModelArts job files are left to the ModelArts rules."""
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
            kind = "node" if lt.kind in {"slurmd", "journal", "dmesg"} and sid else ("job" if sid else "file")
            subject = Subject(kind, snap.source, sid or lt.name)
            text, remedy = _LOG_CAUSE_TEXT.get(h.label, (h.label.replace("_", " "), ""))
            if remedy == "env":
                remedy = ("Preflight on the compute node: srun -w <node> bash -lc 'which <cmd>; ldd $(which <cmd>)'; "
                          "load the same modules/containers in the batch script.")
            node_label = h.label in _NODE_CHECKS and h.label.startswith("node_")
            if node_label:
                what, check = _NODE_CHECKS[h.label]
                text, remedy = what, check.format(n=sid or "<node>", u="see reason")
            remedy = remedy or _REMEDY_BY_LABEL.get(h.label, "See the evidence line.")
            yield Finding(
                root_cause=h.label, severity=h.severity if h.strong else "warning", subject=subject,
                title=_clip(f"{text} ({_log_where(lt, h.line)})"),
                explanation=f"First red error in {_log_where(lt, h.line, ' line ')}: {h.text.strip()[:300]}",
                remedy=remedy, evidence=(log_evidence(lt, h, _tier_for(lt, h)),),
                confidence=0.8 if h.strong else 0.35, first_seen=None,
            )


def _log_where(lt: LogText, line: int, sep: str = ":") -> str:
    """``slurm-4.out:12``: the file's own line number (an excerpt maps it back); the name alone when unknown."""
    n = lt.file_line(line)
    return lt.name if n is None else f"{lt.name}{sep}{n}"


def _clip(s: str, n: int = 100) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


_REMEDY_BY_LABEL = {
    "submit_rejected_policy": "Request within the partition/QOS/account limits (sacctmgr show assoc user=$USER; "
                              "scontrol show partition) or ask for the limit/allocation to be raised.",
    "submit_rejected_unsatisfiable": "Ask for what a node has: sinfo -o '%P %c %m %G' shows CPUs/memory/GPUs per "
                                     "node; lower --mem/--cpus-per-task/--gres to fit.",
    "controller_unreachable": "scontrol ping; systemctl status slurmctld munge on the controller.",
    "pending_launch_failed_held": "Check slurmd.log on the batch host, then scontrol release <jobid>.",
    "dependency_failed": "scancel the job and resubmit once the parent succeeds, or clear the dependency.",
    "pending_partition_limit": "Fit the request to the partition limits (scontrol show partition).",
    "time_limit": "Resubmit with a longer --time (within the partition MaxTime).",
    "gpu_out_of_memory": GPU_OOM_REMEDY,
    "oom_killed": "Resubmit with --mem about 1.2 x MaxRSS (sacct -j <id> -o MaxRSS), or use less memory.",
    "cancelled_by_user": "Nothing failed; ask who cancelled it (slurmctld.log REQUEST_KILL_JOB).",
    "application_error": "Read the program's first error above; fix input/code and resubmit.",
    "image_pull_failed": "Check the image path/tag and log in to the registry (docker login / SWR credentials).",
    "storage_mount_failed": "Check the volume/bucket and the mount helper on the node (dmesg, CSI plugin logs).",
    "scheduling_constraint_unsatisfied": "Make the job's node selector/labels match a real node "
                                         "(kubectl get nodes --show-labels).",
    "queued_insufficient_resources": "Wait, pick a smaller flavour, another region, or a dedicated pool.",
    "container_entrypoint_failed": "Run the boot command in the image locally; check the interpreter and paths.",
    "storage_access_denied": "Grant the job's agency/IAM user read/write on the bucket.",
    "storage_connection_error": "Check the OBS endpoint and network (VPC endpoint, DNS).",
}
