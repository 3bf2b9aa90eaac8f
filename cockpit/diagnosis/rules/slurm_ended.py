"""Why an ended job ended: one rule per kind of end (out of memory, time limit, cancelled,
node failure, a cause named by its logs, a bad exit), plus "completed normally".

The registry runs these rules as one ``FirstOf`` for ended jobs, in the order they are
defined here: the first that applies is the job's verdict. The order is the precedence of
causes over their symptoms: an OOM kill or a time limit explains the errors printed after
it, and a cause named by a log line explains a non-zero exit.

What every rule reads of a job (its sacct rows, first log hits, evidence) is gathered once
per job by :func:`_facts`, so trying the rules in turn costs a lookup each.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from cockpit.diagnosis.context import RuleContext, log_evidence
from cockpit.diagnosis.logscan import ScanHit
from cockpit.diagnosis.rightsize import RightSize, fmt_mem, suggest
from cockpit.diagnosis.rules.slurm_common import (
    LOG_CAUSE_TEXT,
    acct_evidence,
    explain_exit,
    fmt_duration,
    fmt_mib,
    job_finding,
    job_row,
    log_hits,
    log_where,
    max_rss,
    mem_usage,
    req_mem,
    state_evidence,
    suggest_mem_mib,
    suggest_time_s,
    tier_for,
)
from cockpit.model import AcctRecord, Evidence, ExitCode, Finding, LogText, SlurmJob

STATES = frozenset(
    {
        "FAILED",
        "OUT_OF_MEMORY",
        "TIMEOUT",
        "CANCELLED",
        "NODE_FAIL",
        "BOOT_FAIL",
        "COMPLETED",
        "DEADLINE",
    }
)
FAST_FAIL_S = 60  # a job that dies within a minute failed to start, not to compute

_ENV_CAUSES = {"command_not_found", "missing_shared_library", "module_load_failed"}


class _Ended(NamedTuple):
    """What the rules read of one ended job (a tuple: built for every ended job, cheaply)."""

    rows: list[AcctRecord]  # sacct, job row first
    row: AcctRecord | None  # the job row
    ec: ExitCode | None
    ev: tuple[Evidence, ...]  # squeue line, sacct rows, first log hits
    hits: list[tuple[LogText, ScanHit]]  # first hit per log, strong first
    strong: list[tuple[LogText, ScanHit]]  # strong hits that name a cause
    labels: list[str]  # their labels
    exit_text: str  # explain_exit(ec)


def _facts(job: SlurmJob, ctx: RuleContext) -> _Ended:
    """The job's facts, computed by the first rule that asks. The engine runs one job's rules
    one after another, so keeping only the last job's facts is enough."""
    got = ctx.cache.get("ended_facts")
    if got is not None and got[0] is job:
        return got[1]
    rows = ctx.acct_for(job.job_id)
    row = job_row(rows)
    ec = job.exit_code or (row.exit_code if row else None)
    ev = [state_evidence(job, ctx), *acct_evidence(rows)]
    hits = log_hits(job.job_id, ctx)
    strong = [
        (lt, h)
        for lt, h in hits
        if h.strong and h.label not in {"application_error", "cancelled_by_user"}
    ]
    ev.extend(log_evidence(lt, h, tier_for(lt, h)) for lt, h in hits[:4])
    facts = _Ended(
        rows, row, ec, tuple(ev), hits, strong, [h.label for _, h in strong], explain_exit(ec)
    )
    ctx.cache["ended_facts"] = (job, facts)
    return facts


# --------------------------------------------------------------------------- advice


def _history(ctx: RuleContext) -> RightSize | None:
    """Right-sizing from ``Artifacts.history`` (past runs of the same user + name, fetched for
    OOM/TIMEOUT jobs), computed once per diagnose; None without history."""
    if not ctx.artifacts.history:
        return None
    if "rightsize" not in ctx.cache:
        ctx.cache["rightsize"] = suggest(ctx.artifacts.history)
    return ctx.cache["rightsize"]


def _mem_advice(job: SlurmJob, rss: int | None, req: int | None, ctx: RuleContext) -> str:
    """One ``--mem`` value with its basis: the sacct history peak when there is one (it
    includes this run), else 1.2 x this run's MaxRSS, else 1.2 x ReqMem (cgroup OOM kills
    often leave MaxRSS empty, and a job killed at its limit needed at least that)."""
    rs = _history(ctx)
    peak, basis, note = None, "", ""
    if rss and rss >= 0.9 * (req or 0):  # MaxRSS ~ ReqMem: the measured peak is the basis
        peak, basis = rss, f"MaxRSS {fmt_mib(rss)}"
    elif req:
        peak, basis = req, f"ReqMem {fmt_mib(req)}"
        note = (
            " MaxRSS was not recorded (common after a cgroup OOM kill), so this is sized on the "
            "request."
            if not rss
            else f" Its sampled MaxRSS {fmt_mib(rss)} is below the limit it was killed at, so "
            "this is sized on the request."
        )
    if rs is not None and rs.mem_peak_mib and rs.mem_peak_mib >= (peak or 0):
        name = next(
            (r.job_name for r in ctx.artifacts.history if r.step == "" and r.job_name), job.name
        )
        peak = rs.mem_peak_mib
        runs = f"{rs.runs} run{'s' if rs.runs != 1 else ''}"
        basis = f"peak MaxRSS {fmt_mib(peak)} of {runs} of {name!r} in sacct history"
        note = (
            " Runs that ended OUT_OF_MEMORY count at their ReqMem, so this is a floor: check "
            "MaxRSS after the next run."
            if rs.oom_runs
            else ""
        )
    if not peak:
        return (
            f"Resubmit with a larger --mem (sacct -j {job.job_id} -o JobID,ReqMem,MaxRSS shows "
            "what it used; ask for about 1.2 x MaxRSS)."
        )
    return (
        f"Resubmit with --mem={fmt_mem(suggest_mem_mib(peak))} (1.2 x {basis}, rounded up), or "
        f"reduce the memory the program holds (batch size, data loaded at once).{note} sacct -j "
        f"{job.job_id} -o JobID,ReqMem,MaxRSS,State shows per-step use."
    )


def _oom(job: SlurmJob, ctx: RuleContext, f: _Ended, confidence: float) -> Finding:
    rss = max_rss(f.rows)
    req = req_mem(job, f.rows)
    usage = mem_usage(rss, req)
    title = (
        "out of memory"
        + (f": {usage}" if usage else "")
        + (f" on {job.node_list}" if job.node_list else "")
    )
    return job_finding(
        job,
        ctx,
        "oom_killed",
        "critical",
        title,
        "The job (or one of its steps) used more memory than it asked for and the cgroup / kernel "
        "OOM killer ended it. Later 'Killed', 'Bus error' or 'CANCELLED' lines are the "
        "consequence.",
        _mem_advice(job, rss, req, ctx),
        list(f.ev),
        confidence,
    )


def _fast(job: SlurmJob, row: AcctRecord | None) -> bool:
    el = row.elapsed_s if row and row.elapsed_s is not None else job.elapsed_s
    return el is not None and el < FAST_FAIL_S


def _env_remedy(job: SlurmJob) -> str:
    node = job.nodes[0] if job.nodes else "<node>"
    return (
        "Preflight on the compute node, not the login node: "
        f"srun -p {job.partition or '<p>'} -w {node} "
        "bash -lc 'which <cmd>; ldd $(which <cmd>) | grep \"not found\"; module list'. Load the "
        "same modules in the batch script (or use a container), then resubmit."
    )


_CMD = re.compile(
    r"(?:: line \d+|: \d+)?: ([^:\s]+): (?:command not found|not found|No such file or directory)"
)
_LIB = re.compile(r"loading shared libraries: ([^:\s]+)")


def _env_phrase(cause: str, text: str) -> str:
    """'run_analysis: command not found on the compute node' from the hit line."""
    if cause == "command_not_found" and (m := _CMD.search(text)):
        return f"{m.group(1).rsplit('/', 1)[-1]}: command not found on the compute node"
    if cause == "missing_shared_library" and (m := _LIB.search(text)):
        return f"{m.group(1)} missing on the compute node"
    return ""


def _failed(job: SlurmJob, f: _Ended) -> bool:
    """FAILED, or ended with a non-zero exit code or a signal (but not COMPLETED)."""
    ec = f.ec
    return job.state == "FAILED" or bool(
        ec is not None and (ec.code or ec.signal) and job.state != "COMPLETED"
    )


# --------------------------------------------------------------------------- rules


def out_of_memory(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """OUT_OF_MEMORY, or a log line of the OOM killer."""
    f = _facts(job, ctx)
    if job.state != "OUT_OF_MEMORY" and "oom_killed" not in f.labels:
        return None
    return (_oom(job, ctx, f, 0.95),)


def time_limit(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """TIMEOUT (or a log line saying so): resubmit with a longer --time, sized on history."""
    f = _facts(job, ctx)
    if job.state != "TIMEOUT" and "time_limit" not in f.labels and job.reason != "TimeLimit":
        return None
    row = f.row
    el = row.elapsed_s if row and row.elapsed_s is not None else job.elapsed_s
    tl = row.timelimit_s if row and row.timelimit_s else job.time_limit_s
    part = ctx.partitions.get(job.partition)
    nums = (
        f": Elapsed {fmt_duration(el)} >= Timelimit {fmt_duration(tl)}"
        if el is not None and tl
        else ""
    )
    longest, basis = max(el or 0, tl or 0), "this run's Timelimit, a floor"
    rs = _history(ctx)
    if rs is not None and rs.elapsed_max_s and rs.elapsed_max_s >= longest:
        longest = rs.elapsed_max_s
        runs = f"{rs.runs} run{'s' if rs.runs != 1 else ''}"
        basis = f"the longest of {runs} in sacct history, {fmt_duration(longest)}"
    new = suggest_time_s(longest, part.max_time_s if part else None)
    cap = f"; partition MaxTime {fmt_duration(part.max_time_s)}" if part and part.max_time_s else ""
    return (
        job_finding(
            job,
            ctx,
            "time_limit",
            "critical",
            f"hit its time limit{nums}",
            "Slurm cancelled the job when its time limit ran out (TIMEOUT; the batch step shows "
            "CANCELLED 0:15 = SIGTERM). Application errors printed after that are the consequence. "
            + f.exit_text,
            f"Resubmit with --time={fmt_duration(new)} (1.3 x {basis}, rounded up{cap}), or "
            "checkpoint and restart in pieces.",
            list(f.ev),
            0.95,
        ),
    )


def cancelled(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """CANCELLED with no cause in its logs: a person's decision, not a fault (info: shown on
    the job, no incident of its own)."""
    if job.state != "CANCELLED":
        return None
    f = _facts(job, ctx)
    if f.strong:
        return None
    by = f.row.cancelled_by if f.row else ""
    who = f"uid {by}" if by else "a user or admin"
    return (
        job_finding(
            job,
            ctx,
            "cancelled_by_user",
            "info",
            f"cancelled by {who}",
            f"The job was cancelled (scancel) by {who}, not by a limit or a failure. "
            + f.exit_text,
            f"sacct -j {job.job_id} -o JobID,State,End shows when; ask the owner / check the "
            "slurmctld.log REQUEST_KILL_JOB line for who.",
            list(f.ev),
            0.9,
        ),
    )


def node_failed(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """NODE_FAIL / BOOT_FAIL: the job is a victim of its node."""
    if job.state not in {"NODE_FAIL", "BOOT_FAIL"}:
        return None
    f = _facts(job, ctx)
    nodes = [ctx.nodes[n] for n in job.nodes if n in ctx.nodes]
    why = "; ".join(f"{n.name} {n.state_label} {n.reason}".strip() for n in nodes if n.is_unhealthy)
    ev = list(f.ev)
    ev.extend(
        Evidence("scontrol show node", f"{n.name} State={n.state_label} Reason={n.reason}", tier=0)
        for n in nodes
        if n.is_unhealthy
    )
    return (
        job_finding(
            job,
            ctx,
            "node_not_responding",
            "critical",
            f"{job.state}: node {job.node_list or '?'} failed under the job"
            + (f" ({why})" if why else ""),
            "The node running the job stopped answering (crash, reboot, network) and Slurm killed "
            "the job. The job is a victim, not the cause.",
            f"Resubmit (or sbatch --requeue); check the node: scontrol show node {job.node_list}, "
            "slurmd.log and dmesg/journal on it before resuming.",
            ev,
            0.9,
        ),
    )


def log_cause(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """The first strong error line of its logs names the cause (command not found, NCCL,
    disk full, ...)."""
    f = _facts(job, ctx)
    if not f.strong:
        return None
    lt, h = f.strong[0]
    cause = h.label
    text, remedy = LOG_CAUSE_TEXT.get(cause, (h.label.replace("_", " "), ""))
    if remedy == "env" or cause in _ENV_CAUSES:
        remedy = _env_remedy(job)
    fast = " within seconds" if _fast(job, f.row) else ""
    title = f"failed{fast}: {_env_phrase(cause, h.text) or text}"
    return (
        job_finding(
            job,
            ctx,
            cause,
            "critical",
            title,
            f"{h.text.strip()[:200]} ({log_where(lt, h.line)}). " + f.exit_text,
            remedy or "See the evidence line.",
            list(f.ev),
            0.9,
        ),
    )


def command_not_found_exit(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """Failed with exit status 127: the shell's "command not found"."""
    f = _facts(job, ctx)
    if not _failed(job, f) or f.ec is None or f.ec.code != 127:
        return None
    return (
        job_finding(
            job,
            ctx,
            "command_not_found",
            "critical",
            "failed: exit 127, command not found on the compute node",
            "Exit status 127 is the shell's 'command not found': the program or one it calls is "
            "not on PATH on the compute node. " + f.exit_text,
            _env_remedy(job),
            list(f.ev),
            0.85,
        ),
    )


def killed_at_memory_limit(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """Failed by SIGKILL with MaxRSS at its memory request: an OOM kill Slurm did not name."""
    f = _facts(job, ctx)
    if not _failed(job, f) or f.ec is None or f.ec.signal != 9:
        return None
    rss, req = max_rss(f.rows), req_mem(job, f.rows)
    if not (rss and req and rss >= 0.9 * req):
        return None
    return (_oom(job, ctx, f, 0.8),)


def nonzero_exit(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """Failed with no cause named anywhere: the exit code and the first weak error line."""
    f = _facts(job, ctx)
    if not _failed(job, f):
        return None
    ec = f.ec
    ev = list(f.ev)
    weak = next(
        ((lt, h) for lt, h in f.hits if not h.strong or h.label == "application_error"), None
    )
    if weak:
        ev.append(log_evidence(weak[0], weak[1]))
    fast = " within seconds" if _fast(job, f.row) else ""
    return (
        job_finding(
            job,
            ctx,
            "application_error",
            "critical",
            f"failed{fast}: {('exit ' + str(ec)) if ec else 'non-zero exit'}",
            f.exit_text
            + (
                " Failing this fast usually means the environment or input is wrong, not the "
                "computation."
                if fast
                else ""
            ),
            "Read the first error in the job output (cockpit scan-log <stdout>); "
            f"sacct -j {job.job_id} -o JobID,State,ExitCode shows which step failed.",
            ev,
            0.6,
        ),
    )


def completed(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """COMPLETED, when there is evidence to look at: say it completed normally."""
    if job.state != "COMPLETED":
        return None
    f = _facts(job, ctx)
    if not (f.rows or f.hits):
        return None
    return (
        job_finding(
            job,
            ctx,
            "no_failure",
            "info",
            "completed normally (exit 0:0)",
            "The job completed; any warnings in its output did not stop it. " + f.exit_text,
            "Nothing to do.",
            list(f.ev),
            0.5,
        ),
    )
