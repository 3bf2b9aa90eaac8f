"""Why a pending job waits, and whether it ever runs: one rule per kind of reason.

The registry runs these rules as one ``FirstOf`` for PENDING (and requeued-held) jobs, in
the order they are defined here: the first that applies is the job's verdict. An impossible
request comes right after the plain "will run" case because it overrides every reason
squeue gives (Slurm keeps such a job pending with Reason=Priority forever). Every reason
code Slurm prints is classified in :mod:`cockpit.diagnosis.slurm_codes`; the rules add
what the snapshot knows (the partition's limits, the nodes named, the dependency), and
:func:`by_reason` answers every other code, an unknown one included.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import replace

from cockpit.diagnosis.context import RuleContext
from cockpit.diagnosis.rules.slurm_common import (
    REQUEUED_NODE_FAIL,
    fmt_duration,
    fmt_mib,
    job_finding,
    memo,
    state_evidence,
)
from cockpit.diagnosis.rules.slurm_shape import (
    hyperthread_note,
    shape_problems,
    task_request,
    tmp_remedy,
)
from cockpit.diagnosis.slurm_codes import (
    Reason,
    base_code,
    limit_of,
    outcome_phrase,
    reason_info,
    reason_remedy,
    reason_what,
)
from cockpit.diagnosis.slurm_states import HELD_STATES, JOB_STATES, PAUSED_STATES, job_state
from cockpit.i18n import N_, _
from cockpit.model import (
    Evidence,
    Finding,
    Partition,
    Severity,
    SlurmJob,
    SlurmNode,
    Subject,
)

STATES = frozenset({"PENDING"}) | HELD_STATES
PAUSED = PAUSED_STATES

_NEVER_REASONS = {"PartitionConfig", "PartitionNodeLimit", "PartitionTimeLimit"}


def _base(reason: str) -> str:
    """The reason's code: ``ReqNodeNotAvail, UnavailableNodes:c1`` -> ``ReqNodeNotAvail``."""
    return base_code(reason)


def _launch_failed(reason: str) -> bool:
    low = reason.lower()
    return "launch_failed_requeued_held" in low or "launch failed requeued held" in low


def _remedy(r: Reason, job: SlurmJob) -> str:
    """The code's remedy with the job's own values filled in."""
    values = defaultdict(
        lambda: "<?>",
        id=job.job_id,
        part=job.partition or "<p>",
        user=job.user or "<user>",
        account=job.account or "<account>",
        qos=job.qos or "<qos>",
    )
    return reason_remedy(r).format_map(values)


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


def partition_nodes(part: Partition | None, name: str, ctx: RuleContext) -> list[SlurmNode]:
    """The nodes of a partition: its node list, else (a bundle without ``scontrol show
    partition``) the nodes whose ``Partitions=`` name it. Cached per snapshot."""
    by_part = memo(ctx, "partition_nodes")
    got = by_part.get(name)
    if got is None:
        nodes = ctx.nodes
        if part is not None and part.nodes:
            got = [nodes[n] for n in part.nodes if n in nodes]
        else:
            got = [n for n in ctx.snapshot.nodes if name in n.partitions]
        by_part[name] = got
    return got


def impossible_request(job: SlurmJob, part: Partition | None, ctx: RuleContext) -> list[str]:
    """Why the request can never fit the partition, each with both numbers (empty = it can)."""
    cpt, tmp = task_request(job, ctx.artifacts.commands)
    if part is None:
        # no partition record (a bundle): the nodes that say they are in it still decide
        # a task's CPUs and --tmp
        if not (cpt or tmp) or not job.partition:
            return []
        return shape_problems(cpt, tmp, partition_nodes(None, job.partition, ctx))
    # ~50k pending jobs at a big site ask for a few hundred distinct shapes: one answer per shape
    shapes = memo(ctx, "impossible")
    key = (
        part.name,
        job.cpus,
        job.node_count,
        job.min_memory_mib,
        job.mem_per_cpu,
        job.time_limit_s,
        cpt,
        tmp,
    )
    got = shapes.get(key)
    if got is None:
        got = shapes[key] = tuple(_impossible(job, part, ctx, cpt, tmp))
    return list(got)


def _impossible(
    job: SlurmJob, part: Partition, ctx: RuleContext, cpt: int | None, tmp: int | None
) -> list[str]:
    out: list[str] = []
    nodes = max(job.node_count or 1, 1)
    cpus_per_node = math.ceil(job.cpus / nodes) if job.cpus else None
    big_cpu, big_mem = _largest(ctx).get(part.name, (None, None))
    if cpus_per_node and part.max_cpus_per_node and cpus_per_node > part.max_cpus_per_node:
        out.append(f"{cpus_per_node} CPUs > MaxCPUsPerNode {part.max_cpus_per_node}")
    elif cpus_per_node and big_cpu and cpus_per_node > big_cpu:
        out.append(
            # both numbers first: at 80 columns the verdict cell keeps "64 CPUs per node > 2"
            _("{cpus} CPUs per node > {big} (largest {partition} node)").format(
                cpus=cpus_per_node, big=big_cpu, partition=part.name
            )
        )
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
                _("{mem} memory > MaxMemPerNode {limit}").format(
                    mem=fmt_mib(mem), limit=fmt_mib(part.max_mem_per_node_mib)
                )
            )
        elif big_mem and mem > big_mem:
            out.append(
                _("{mem} memory per node > {big} (largest node's RealMemory)").format(
                    mem=fmt_mib(mem), big=fmt_mib(big_mem)
                )
            )
    if job.time_limit_s and part.max_time_s and job.time_limit_s > part.max_time_s:
        out.append(
            f"--time {fmt_duration(job.time_limit_s)} > MaxTime {fmt_duration(part.max_time_s)}"
        )
    # per task and per node (--tmp): after the job-wide numbers; a task too wide for a node
    # is the same fact as too many CPUs per node when the job already says that
    cpu_said = any("CPUs" in w for w in out)
    out += [
        w
        for w in shape_problems(cpt, tmp, partition_nodes(part, part.name, ctx))
        if not (cpu_said and w.startswith("--cpus-per-task"))
    ]
    if part.max_nodes and nodes > part.max_nodes:
        out.append(_("{nodes} nodes > MaxNodes {limit}").format(nodes=nodes, limit=part.max_nodes))
    elif part.total_nodes and nodes > part.total_nodes:
        out.append(
            _("{nodes} nodes > the partition's {total} nodes").format(
                nodes=nodes, total=part.total_nodes
            )
        )
    return out


# --------------------------------------------------------------------------- rules


def _will_run(job: SlurmJob, ctx: RuleContext) -> tuple[str, str, str] | None:
    """(code, cause, text) when the job's reason is a plain "will run" one (Priority,
    Resources, BeginTime, Licenses...); None otherwise. Cached per (reason, state)."""
    reasons = memo(ctx, "will_run_reason")
    key = (job.reason or "", job.state)
    if key not in reasons:
        r = reason_info(key[0])
        plain = r.outcome == "runs" and (
            r.label != "pending_qos_limit" or r.code == "JobArrayTaskLimit"
        )
        ok = plain and job.state == "PENDING" and not _launch_failed(key[0])
        reasons[key] = (r.code, r.label, reason_what(r)) if ok else None
    return reasons[key]


def requeued_after_node_failure(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """A job pending again because its node failed under it: slurmctld ended its run
    (NODE_FAIL) and requeued it. squeue then shows only Reason=BeginTime (the requeue's
    short hold) or a plain wait; the run's progress is lost and its node is the cause."""
    logs = ctx.logs_for(job.job_id)
    if not logs or _will_run(job, ctx) is None:
        return None
    for lt in logs:
        if lt.kind != "slurmctld":
            continue
        lines = lt.data.decode("utf-8", "replace").splitlines()
        for i in range(len(lines) - 1, -1, -1):
            m = REQUEUED_NODE_FAIL.search(lines[i])
            if m is None or m.group(1) != job.job_id:
                continue
            node = m.group(2)
            n = ctx.nodes.get(node)
            now = f" ({n.state_label}: {n.reason})" if n is not None and n.is_unhealthy else ""
            begins = job.start_time is not None and job.start_time > ctx.now
            title = (
                _("requeued: node {node} failed under it (NODE_FAIL); runs again after {time}")
                if begins
                else _("requeued: node {node} failed under it (NODE_FAIL); runs again")
            ).format(node=node, time=f"{job.start_time:%H:%M}" if begins else "")
            ev = [
                state_evidence(job, ctx),
                Evidence(
                    lt.name,
                    lines[i].strip(),
                    line=lt.file_line(i + 1),
                    path=lt.path,
                    tier=0,
                    quoted=True,
                ),
            ]
            f = job_finding(
                job,
                ctx,
                "node_not_responding",
                "warning",
                title,
                _(
                    "Node {node}{now} stopped answering while the job ran, so slurmctld ended "
                    "that run (NODE_FAIL) and requeued the job (Reason={reason}). "
                    "The run's progress since its last checkpoint is lost; the node is the "
                    "cause, not the job."
                ).format(node=node, now=now, reason=job.reason or "None"),
                _(
                    "Nothing to do for the job unless it must not restart from scratch; check "
                    "the node: scontrol show node {node}; slurmd.log and dmesg on {node}."
                ).format(node=node),
                ev,
                0.9,
            )
            # the failed node's incident takes the job in (squeue names no node for it now)
            return (replace(f, related=(Subject("node", ctx.snapshot.source, node),)),)
    return None


def will_run(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """Waiting its turn (Priority, Resources, Dependency, ...) with a request that fits: info.

    The common case at a big site (tens of thousands of jobs), so it is first and cheap."""
    wr = _will_run(job, ctx)
    if wr is None or impossible_request(job, ctx.partitions.get(job.partition), ctx):
        return None
    # Those jobs share a handful of (reason, expected start) pairs: their title and
    # explanation are built once per snapshot and shared.
    texts = memo(ctx, "will_run_text")
    key = (wr[0], job.start_time)
    got = texts.get(key)
    if got is None:
        code, cause, what = wr
        text = _(_WILL_RUN_TEXT[code]) if code in _WILL_RUN_TEXT else _("{what}; will run")
        text = text.format(what=what)
        title = (
            _("{text}; expected start {when}").format(
                text=text, when=f"{job.start_time:%Y-%m-%d %H:%M}"
            )
            if job.start_time
            else text
        )
        got = texts[key] = (cause, title, _("Reason={code}: {text}.").format(code=code, text=text))
    cause, title, explanation = got
    remedy = _("Nothing to fix; `squeue --start -j {job_id}` shows the estimate.").format(
        job_id=job.job_id
    )
    if job.cpus_per_task and job.cpus_per_task > 1:  # scontrol rows only: squeue has no CPUs/Task
        ht = hyperthread_note(
            job.cpus_per_task,
            partition_nodes(ctx.partitions.get(job.partition), job.partition, ctx),
        )
        if ht:
            explanation += " " + ht
    evidence = [state_evidence(job, ctx)]
    return (job_finding(job, ctx, cause, "info", title, explanation, remedy, evidence, 0.6),)


_WILL_RUN_TEXT = {
    "Resources": N_("waiting for free resources; will run when nodes free up"),
    "Priority": N_("higher-priority jobs are ahead; will run"),
    "Dependency": N_("waiting for its dependency to finish; will run"),
    "BeginTime": N_("waiting for its --begin time; will run"),
    "JobArrayTaskLimit": N_("array task limit (%N) reached; will run as tasks finish"),
}


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
        said = {
            "PartitionTimeLimit": N_("time limit above the partition MaxTime"),
            "PartitionNodeLimit": N_("node count outside the partition MinNodes/MaxNodes"),
            "PartitionConfig": N_("request does not fit the partition configuration"),
        }.get(base)
        why = [_(said) if said else base]
    ev = [state_evidence(job, ctx)]
    cpt, tmp = task_request(job, ctx.artifacts.commands)
    pnodes = partition_nodes(part, job.partition, ctx) if (cpt or tmp) else []
    if pnodes and any(w.startswith(("--cpus-per-task", "--tmp")) for w in why):
        ev.append(
            Evidence(
                "scontrol show job",
                f"JobId={job.job_id} CPUs/Task={cpt or 1}"
                + (f" MinTmpDiskNode={fmt_mib(tmp)}" if tmp else ""),
                tier=0,
            )
        )
        big = max(pnodes, key=lambda n: (n.cpus_total or 0, n.tmp_disk_mib or 0))
        ev.append(
            Evidence(
                "scontrol show node",
                f"NodeName={big.name} CPUTot={big.cpus_total} Sockets={big.sockets} "
                f"CoresPerSocket={big.cores_per_socket} ThreadsPerCore={big.threads_per_core} "
                f"TmpDisk={big.tmp_disk_mib}",
                tier=0,
            )
        )
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
            _("never runs: {why}").format(why=why[0]),
            _(
                "Job {job_id} can never start in partition {partition}: {why} (Reason={reason}). "
                "Slurm keeps it pending instead of rejecting it."
            ).format(
                job_id=job.job_id,
                partition=job.partition,
                why="; ".join(why),
                reason=reason or "None",
            )
            + (f" {ht}" if (ht := hyperthread_note(cpt, pnodes)) else ""),
            (
                _(
                    "{extra}; or lower the request to fit (e.g. --cpus-per-task / --mem / --time "
                    "within the limits shown) or submit to a partition that allows it: "
                    "scontrol update JobId={job_id} Partition=<p>, or scancel {job_id} and "
                    "resubmit."
                )
                if (extra := tmp_remedy(why))
                else _(
                    "Lower the request to fit (e.g. --cpus-per-task / --mem / --time within the "
                    "limits shown) or submit to a partition that allows it: "
                    "scontrol update JobId={job_id} Partition=<p>, or scancel {job_id} and "
                    "resubmit."
                )
            ).format(extra=f"{extra[0].upper()}{extra[1:]}" if extra else "", job_id=job.job_id),
            ev,
            0.95,
        ),
    )


def held_state(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """REQUEUE_HOLD, SPECIAL_EXIT, RESV_DEL_HOLD: requeued and held; never runs until released."""
    st = job_state(job.state)
    if st is None or job.state not in HELD_STATES:
        return None
    return (
        job_finding(
            job,
            ctx,
            st.label,
            "warning",
            _("{state}: {what}; never runs until released").format(
                state=job.state, what=_(st.what)
            ),
            _("Job {job_id} is {state}: {what} (Reason={reason}).").format(
                job_id=job.job_id, state=job.state, what=_(st.what), reason=job.reason or "None"
            ),
            _(
                "Find why it was held (scontrol show job {job_id}; the job's output for a "
                "special exit), then scontrol release {job_id}."
            ).format(job_id=job.job_id),
            [state_evidence(job, ctx)],
            0.9,
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
            _(
                "launch failed requeued held: the batch script could not start; never runs "
                "until released"
            ),
            _(
                "The batch script could not be launched on the allocated node, so Slurm requeued "
                "the job and held it; it never runs until released."
            ),
            _(
                "Check slurmd.log on the batch host (spool dir, prolog, munge), then "
                "scontrol release {job_id}."
            ).format(job_id=job.job_id),
            [state_evidence(job, ctx)],
            0.95,
        ),
    )


def nodes_unavailable(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """ReqNodeNotAvail / Constraints: nodes it needs are down, drained, reserved or lack the
    features. Who must act depends on why: drained nodes need an admin, a reservation ends
    by itself, a --nodelist is the user's choice."""
    reason = job.reason or ""
    code = _base(reason)
    if code not in {"ReqNodeNotAvail", "Constraints"}:
        return None
    names = (
        reason.split("UnavailableNodes:", 1)[-1].strip() if "UnavailableNodes:" in reason else ""
    )
    named = [n for n in ctx.snapshot.nodes if n.is_unhealthy and n.name in _expand(names)]
    ev = [state_evidence(job, ctx)]
    ev.extend(
        Evidence("scontrol show node", f"{n.name} State={n.state_label} Reason={n.reason}", tier=0)
        for n in named
    )
    low = reason.lower()
    if "maintenance" in low:
        why, who = _("reserved for maintenance"), _("runs after the maintenance reservation ends")
    elif "reserved" in low:
        why, who = _("reserved for other jobs"), _("runs when the reservation frees them")
    elif named:
        states = sorted({n.state_label for n in named})
        why = "/".join(states)
        who = _("runs when an admin brings them back (or drop the pin)")
    elif code == "Constraints":
        why, who = _("with its features are busy or down"), _("runs when one is available")
    else:
        why, who = _("down, drained or reserved"), _("depends on why (see remedy)")
    title = (
        _("{code}: nodes {names} {why}; {who}") if names else _("{code}: nodes {why}; {who}")
    ).format(code=code, names=names, why=why, who=who)
    return (
        job_finding(
            job,
            ctx,
            "pending_node_unavailable",
            "warning",
            title,
            _(
                "Reason={reason}: {what}. Drained/down nodes return only when an "
                "admin resumes them; a reservation ends by itself; a --nodelist/--constraint "
                "the job does not need is the user's to drop."
            ).format(reason=reason, what=reason_what(reason_info(code))),
            (
                _(
                    "sinfo -R -n {names} shows why; admins: scontrol update NodeName={names} "
                    "State=RESUME when fixed. Users: scontrol update JobId={job_id} ReqNodeList= "
                    "(or Features=) to stop pinning."
                )
                if names
                else _(
                    "sinfo -R shows drained/down nodes. Users: scontrol update JobId={job_id} "
                    "ReqNodeList= (or Features=) to stop pinning."
                )
            ).format(names=names, job_id=job.job_id),
            ev,
            0.85,
        ),
    )


def _expand(names: str) -> set[str]:
    """Node names of a Slurm hostlist as squeue prints it (``c[1-2,5],gpu01``); bracket
    ranges keep their zero padding. Parsed here: the engine imports no platform code."""
    out: set[str] = set()
    for m in _HOSTS.finditer(names):
        prefix, ranges, suffix = m.group(1), m.group(2), m.group(3) or ""
        if ranges is None:
            out.add(prefix)
            continue
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                continue
            width = len(lo)
            for i in range(int(lo), int(hi or lo) + 1):
                out.add(f"{prefix}{i:0{width}d}{suffix}")
                if len(out) > 10_000:  # a hostlist squeue printed is never this big
                    return out
    return out


_HOSTS = re.compile(r"([\w.-]+?)(?:\[([\d,-]+)\]([\w.-]*))?(?=,|$|\s)")


def qos_limit(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """A QOS or association limit, with the limit named: per job (never runs as submitted),
    a spent budget (GrpTRESMins: an admin acts) or the user's/group's running usage (runs
    as their other jobs end)."""
    r = reason_info(job.reason or "")
    if r.label != "pending_qos_limit":
        return None
    lim = limit_of(r.code)
    sev: Severity = "warning"  # held by a cap: the user (and the surge view) should see it
    per = lim.per if lim is not None else ""
    if r.outcome != "runs":
        outcome = {
            "user": _("never runs as submitted"),
            "admin": _("never runs until an admin acts (or usage decays)"),
            "depends": _("scontrol show job names the limit"),
        }[r.outcome]
    elif per == "user" and job.user:
        outcome = _("runs as {user}'s running jobs end").format(user=job.user)
    elif per == "user":
        outcome = _("runs as the user's running jobs end")
    elif per == "account":
        outcome = _("runs as account {account}'s running jobs end").format(account=job.account)
    else:
        outcome = _("runs as the group's running jobs end")
    what = reason_what(r)
    title = f"{r.code}: {what}; {outcome}"
    explanation = _("Reason={code}: {what}.").format(code=r.code, what=what) + (
        " "
        + _("{scope} limit {setting}: the job is held until it fits under it.").format(
            scope=_(lim.scope), setting=lim.setting
        )
        if lim is not None
        else ""
    )
    ev = [state_evidence(job, ctx)]
    return (
        job_finding(
            job, ctx, "pending_qos_limit", sev, title, explanation, _remedy(r, job), ev, 0.85
        ),
    )


def by_reason(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """Every other reason, from the code's entry: who must act and what to do. An unknown
    code is said to be unknown (a Slurm newer than the list), not taken for "no failure"."""
    reason = job.reason or ""
    r = reason_info(reason)
    if r.outcome == "none":
        return None
    detail = _DETAIL.get(r.code, _no_detail)(job, ctx)
    what = reason_what(r)
    if r.outcome == "ended":  # requeued after it ended that way: it runs again
        title = _("{code}: requeued after {what}; will run again").format(code=r.code, what=what)
        sev: Severity = "info"
    elif r.outcome == "unknown":
        title = _("unknown reason {code}: not in Slurm 22.05-26.05's list").format(code=r.code)
        sev = "warning"
    elif r.outcome == "runs":
        title = _("{code}: {what}; will run").format(code=r.code, what=detail or what)
        sev = "info"
    else:
        phrase = outcome_phrase(r.outcome)
        if r.label == "pending_held":
            phrase = _("never runs until released")
        title = f"{r.code}: {detail or what}; {phrase}"
        sev = "warning"
    who = {
        "admin": " " + _("Only an administrator can change that."),
        "user": " " + _("The job's owner must change the request (or cancel it)."),
    }.get(r.outcome, "")
    return (
        job_finding(
            job,
            ctx,
            r.label,
            sev,
            title,
            _("Reason={code}: {what}.").format(code=reason, what=what) + who,
            _remedy(r, job),
            [state_evidence(job, ctx)],
            0.9 if r.outcome != "unknown" else 0.5,
        ),
    )


def _no_detail(job: SlurmJob, ctx: RuleContext) -> str:
    return ""


def _dependency(job: SlurmJob, ctx: RuleContext) -> str:
    dep = job.dependency or _("(see scontrol show job)")
    return _("dependency {dependency} can't be met").format(dependency=dep)


def _partition(job: SlurmJob, ctx: RuleContext) -> str:
    part = ctx.partitions.get(job.partition)
    state = "INACTIVE" if _base(job.reason or "") == "PartitionInactive" else "DOWN"
    if part is not None and part.state and part.state != "UP":
        state = part.state  # as scontrol shows it now (DOWN, INACTIVE, DRAIN)
    return _("partition {partition} is {state}").format(partition=job.partition, state=state)


_DETAIL = {
    "DependencyNeverSatisfied": _dependency,
    "PartitionDown": _partition,
    "PartitionInactive": _partition,
}


# --------------------------------------------------------------------------- job states


def paused(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """SUSPENDED / STOPPED: holds its nodes without running; resumes when resumed."""
    st = job_state(job.state)
    if st is None or job.state not in PAUSED_STATES:
        return None
    return (
        job_finding(
            job,
            ctx,
            st.label,
            "info",
            _("{state}: {what}; runs again when resumed").format(state=job.state, what=_(st.what)),
            _(
                "Job {job_id} is {state}: {what}. Gang scheduling or preemption "
                "resumes it by itself; an admin's scontrol suspend needs a scontrol resume."
            ).format(job_id=job.job_id, state=job.state, what=_(st.what)),
            _(
                "scontrol show job {job_id} (SuspendTime); an admin: scontrol resume {job_id}."
            ).format(job_id=job.job_id),
            [state_evidence(job, ctx)],
            0.8,
        ),
    )


def unknown_state(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """A job state not in Slurm 22.05-26.05's list: say so rather than nothing."""
    if job.state in JOB_STATES or job_state(job.state) is not None:
        return None
    return (
        job_finding(
            job,
            ctx,
            "unknown_slurm_code",
            "warning",
            _("unknown job state {state}: not in Slurm 22.05-26.05's list").format(state=job.state),
            _(
                "Job {job_id} is in state {state}, which this cockpit does not know "
                "(a newer Slurm, or a site patch)."
            ).format(job_id=job.job_id, state=repr(job.state)),
            _(
                "scontrol show job {job_id}; the squeue man page (JOB STATE CODES) of the "
                "cluster's Slurm version."
            ).format(job_id=job.job_id),
            [state_evidence(job, ctx)],
            0.5,
        ),
    )
