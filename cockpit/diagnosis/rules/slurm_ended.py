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
from cockpit.diagnosis.rules.slurm_advice import env_phrase, env_remedy, history, mem_advice
from cockpit.diagnosis.rules.slurm_common import (
    acct_evidence,
    exit_fact,
    exit_meaning,
    explain_exit,
    fmt_duration,
    job_finding,
    job_row,
    log_cause_text,
    log_hits,
    log_where,
    max_rss,
    mem_usage,
    node_check,
    req_mem,
    state_evidence,
    suggest_time_s,
    tier_for,
)
from cockpit.diagnosis.rules.slurm_pending import impossible_request
from cockpit.diagnosis.slurm_codes import REASONS, base_code, reason_remedy, reason_what
from cockpit.diagnosis.slurm_states import ENDED_STATES, FAST_FAIL_S, job_state
from cockpit.i18n import N_, _, ngettext
from cockpit.model import AcctRecord, Evidence, ExitCode, Finding, LogText, Severity, SlurmJob

STATES = ENDED_STATES

_ENV_CAUSES = {"command_not_found", "missing_shared_library", "module_load_failed"}
_RAISED = re.compile(r"RaisedSignal:(\d+)")


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
    # sacct's job row is the authority on an ended job's exit; squeue's may be a raw status
    ec = (row.exit_code if row is not None and not row.placeholder else None) or job.exit_code
    if (ec is None or not (ec.code or ec.signal)) and (m := _RAISED.match(job.reason or "")):
        ec = ExitCode(0, int(m.group(1)))  # squeue's RaisedSignal:11(Segmentation fault)
    ev = [state_evidence(job, ctx), *acct_evidence(rows)]
    hits = log_hits(job.job_id, ctx)
    strong = [
        (lt, h)
        for lt, h in hits
        if h.strong and h.label not in {"application_error", "cancelled_by_user"}
    ]
    ev.extend(log_evidence(lt, h, tier_for(lt, h)) for lt, h in hits[:4])
    facts = _Ended(
        rows,
        row,
        ec,
        tuple(ev),
        hits,
        strong,
        [h.label for _, h in strong],
        explain_exit(ec, job.state),
    )
    ctx.cache["ended_facts"] = (job, facts)
    return facts


def _oom(job: SlurmJob, ctx: RuleContext, f: _Ended, confidence: float) -> Finding:
    rss = max_rss(f.rows)
    req = req_mem(job, f.rows)
    usage = mem_usage(rss, req)
    if job.state == "OUT_OF_MEMORY":
        lead = "OUT_OF_MEMORY"
    elif job.state == "COMPLETED":
        lead = _("exit 0, but a process ran out of memory")
    else:
        lead = _("{fact}, out of memory").format(fact=exit_fact(f.ec))
    title = lead + (f": {usage}" if usage else "")
    if job.node_list:
        title = _("{what} on {nodes}").format(what=title, nodes=job.node_list)
    return job_finding(
        job,
        ctx,
        "oom_killed",
        _completed_sev(job, "critical"),
        title,
        _(
            "The job (or one of its steps) used more memory than it asked for and the cgroup / "
            "kernel OOM killer ended it. Later 'Killed', 'Bus error' or 'CANCELLED' lines are the "
            "consequence."
        ),
        mem_advice(job, rss, req, ctx),
        list(f.ev),
        confidence,
    )


def _fast(job: SlurmJob, row: AcctRecord | None) -> bool:
    el = row.elapsed_s if row and row.elapsed_s is not None else job.elapsed_s
    return el is not None and el < FAST_FAIL_S


def _failed(job: SlurmJob, f: _Ended) -> bool:
    """FAILED, or ended with a non-zero exit code or a signal (but not COMPLETED)."""
    ec = f.ec
    return job.state == "FAILED" or bool(
        ec is not None and (ec.code or ec.signal) and job.state != "COMPLETED"
    )


# --------------------------------------------------------------------------- headlines


def _lead(job: SlurmJob, f: _Ended) -> str:
    """The fact a headline starts with: ``SIGSEGV (signal 11)``, ``exit 127`` (``within
    seconds`` when it died at once); ``exit 0, but`` for a COMPLETED job."""
    if job.state == "COMPLETED" and not (f.ec and (f.ec.code or f.ec.signal)):
        return _(_BUT)
    fact = exit_fact(f.ec)
    return _("{fact} within seconds").format(fact=fact) if _fast(job, f.row) else fact


_BUT = N_("exit 0, but")


def _headline(job: SlurmJob, f: _Ended, cause: str) -> str:
    """The cause first, the exit after it: at 80 columns two jobs that died of different
    causes must not both read "exit 127 within s…". A COMPLETED job keeps ``exit 0, but``
    first: that it succeeded is what makes the line surprising."""
    lead = _lead(job, f)
    return f"{lead}: {cause}" if lead == _(_BUT) else f"{cause} ({lead})"


def _completed_sev(job: SlurmJob, sev: Severity) -> Severity:
    """A COMPLETED job whose output names a problem: worth a look, not a failure."""
    return "warning" if job.state == "COMPLETED" else sev


# --------------------------------------------------------------------------- rules


def rejected_at_submit(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """FAILED at submission (sbatch said "Requested node configuration is not available"):
    Slurm keeps a FAILED record with Reason=BadConstraints and no node. Never ran: not a
    crash, and its exit code means nothing."""
    code = base_code(job.reason or "")
    if job.state != "FAILED" or job.nodes or job.node_list:
        return None
    if code not in _SUBMIT_REJECTS:
        return _never_placed(job, ctx)
    f = _facts(job, ctx)
    ran = f.row.elapsed_s if f.row is not None and f.row.elapsed_s is not None else job.elapsed_s
    if ran:
        return None
    r = REASONS[code]
    label = (
        "submit_rejected_unsatisfiable" if code == "BadConstraints" else "submit_rejected_policy"
    )
    why = impossible_request(job, ctx.partitions.get(job.partition), ctx)
    return (
        job_finding(
            job,
            ctx,
            label,
            "warning",
            _("rejected at submit: {code}; {why}").format(
                code=code, why=why[0] if why else reason_what(r)
            ),
            _(
                "Slurm refused job {job_id} when it was submitted (Reason={code}: {what}); "
                "sbatch printed the error and the job never ran. The FAILED record and its "
                "exit code are bookkeeping, not a crash."
            ).format(
                job_id=job.job_id,
                code=code,
                what=reason_what(r) + (f": {'; '.join(why)}" if why else ""),
            ),
            _(
                "Ask for what a node of the partition has: sinfo -p {partition} -o '%P %c %m %f "
                "%G' (CPUs, memory, features, GPUs); lower --mem/--cpus-per-task/--gres/"
                "--constraint and resubmit."
            ).format(partition=job.partition or "<p>"),
            list(f.ev),
            0.9,
        ),
    )


def _never_placed(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """The same refusal once slurmctld forgot the job (MinJobAge): sacct keeps a FAILED
    record whose Reason is None, with no node, no run time and no step, and ExitCode 1:0.
    Read as its exit code, it was "exit 1 within seconds: a generic error" of a program that
    never started, grouped with real failures."""
    f = _facts(job, ctx)
    if f.row is None or len(f.rows) > 1 or f.row.elapsed_s != 0 or f.row.node_list:
        return None  # steps, a node or a run time: it was placed somewhere
    why = impossible_request(job, ctx.partitions.get(job.partition), ctx)
    return (
        job_finding(
            job,
            ctx,
            "submit_rejected_unsatisfiable",
            "warning",
            _("rejected at submit: never placed on a node; {why}").format(
                why=why[0] if why else _("sacct keeps no reason")
            ),
            _(
                "sacct shows job {job_id} FAILED with no node, no run time and no step: Slurm "
                "refused it before it ran anywhere (a request no node of the partition can "
                "hold, such as BadConstraints; squeue's Reason is gone once slurmctld forgets "
                "the job). Its exit code is bookkeeping, not a crash."
            ).format(job_id=job.job_id)
            + (f" {'; '.join(why)}." if why else ""),
            _(
                "Ask for what a node of the partition has: sinfo -p {partition} -o '%P %c %m %f "
                "%G' (CPUs, memory, features, GPUs); lower --mem/--cpus-per-task/--gres/"
                "--constraint and resubmit."
            ).format(partition=job.partition or "<p>"),
            list(f.ev),
            0.7,
        ),
    )


_SUBMIT_REJECTS = frozenset(
    {"BadConstraints", "InvalidAccount", "InvalidQOS", "AccountNotAllowed", "QOSNotAllowed"}
)


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
    lead = "TIMEOUT" if job.state in {"TIMEOUT", "FAILED", "CANCELLED"} else _lead(job, f)
    if el is not None:
        title = _("{lead} after {elapsed}").format(lead=lead, elapsed=fmt_duration(el)) + (
            f" (Timelimit {fmt_duration(tl)})" if tl else ""
        )
    elif tl:
        title = _("{lead}: hit its time limit {limit}").format(lead=lead, limit=fmt_duration(tl))
    else:
        title = _("{lead}: hit its time limit").format(lead=lead)
    longest, basis = max(el or 0, tl or 0), _("this run's Timelimit, a floor")
    rs = history(ctx)
    if rs is not None and rs.elapsed_max_s and rs.elapsed_max_s >= longest:
        longest = rs.elapsed_max_s
        basis = ngettext(
            "the longest of {n} run in sacct history, {longest}",
            "the longest of {n} runs in sacct history, {longest}",
            rs.runs,
        ).format(n=rs.runs, longest=fmt_duration(longest))
    new = suggest_time_s(longest, part.max_time_s if part else None)
    cap = ""
    if part and part.max_time_s:
        cap = "; " + _("partition MaxTime {limit}").format(limit=fmt_duration(part.max_time_s))
    return (
        job_finding(
            job,
            ctx,
            "time_limit",
            _completed_sev(job, "critical"),
            title,
            _(
                "Slurm cancelled the job when its time limit ran out (TIMEOUT; the batch step "
                "shows CANCELLED 0:15 = SIGTERM). Application errors printed after that are the "
                "consequence. "
            )
            + f.exit_text,
            _(
                "Resubmit with --time={time} (1.3 x {basis}, rounded up{cap}), or "
                "checkpoint and restart in pieces."
            ).format(time=fmt_duration(new), basis=basis, cap=cap),
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
    who = f"uid {by}" if by else _("a user or admin")
    return (
        job_finding(
            job,
            ctx,
            "cancelled_by_user",
            "info",
            _("cancelled by {who}").format(who=who),
            _("The job was cancelled (scancel) by {who}, not by a limit or a failure. ").format(
                who=who
            )
            + f.exit_text,
            _(
                "sacct -j {job_id} -o JobID,State,End shows when; ask the owner / check the "
                "slurmctld.log REQUEST_KILL_JOB line for who."
            ).format(job_id=job.job_id),
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
    boot = job.state == "BOOT_FAIL"
    title = (
        _("{state}: node {nodes} did not boot for the job")
        if boot
        else _("{state}: node {nodes} failed under the job")
    ).format(state=job.state, nodes=job.node_list or "?")
    return (
        job_finding(
            job,
            ctx,
            "node_boot_failed" if boot else "node_not_responding",
            "critical",
            title + (f" ({why})" if why else ""),
            (
                _(
                    "The node(s) allocated to the job failed to boot or power up (power saving "
                    "ResumeTimeout, a cloud node, a reboot for node features), so Slurm ended the "
                    "job before it ran. The job is a victim, not the cause."
                )
                if boot
                else _(
                    "The node running the job stopped answering (crash, reboot, network) and "
                    "Slurm killed the job. The job is a victim, not the cause."
                )
            ),
            (
                _(
                    "Resubmit (or sbatch --requeue); check the node: scontrol show node {nodes}, "
                    "slurmd.log and dmesg/journal on it and the ResumeProgram/ResumeTimeout log "
                    "before resuming."
                )
                if boot
                else _(
                    "Resubmit (or sbatch --requeue); check the node: scontrol show node {nodes}, "
                    "slurmd.log and dmesg/journal on it before resuming."
                )
            ).format(nodes=job.node_list),
            ev,
            0.9,
        ),
    )


def ended_by_state(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """PREEMPTED, DEADLINE, a failed launch (LAUNCH_FAILED, GETENV_FAILED, RECONFIG_FAIL):
    the state itself names why it ended."""
    st = job_state(job.state)
    if st is None or job.state not in _STATE_VERDICTS:
        return None
    f = _facts(job, ctx)
    if f.strong:
        return None  # its logs name something more precise
    sev, remedy = _STATE_VERDICTS[job.state]
    return (
        job_finding(
            job,
            ctx,
            st.label,
            sev,
            f"{job.state}: {_(st.what)}",
            _("Job {job_id} ended {state}: {what}. ").format(
                job_id=job.job_id, state=job.state, what=_(st.what)
            )
            + f.exit_text,
            _(remedy).format(id=job.job_id, node=job.nodes[0] if job.nodes else "<node>"),
            list(f.ev),
            0.85,
        ),
    )


_LAUNCH_REMEDY = N_(
    "Read slurmd.log on {node} around the job's start (spool dir, prolog, munge, the script's "
    "interpreter, --get-user-env), then resubmit."
)
_STATE_VERDICTS: dict[str, tuple[Severity, str]] = {
    "PREEMPTED": (
        "warning",
        N_(
            "Preemption is policy, not a fault: resubmit with --requeue (it restarts when "
            "preempted), checkpoint, or use a QOS/partition that is not preemptible "
            "(scontrol show partition: PreemptMode; sacctmgr show qos: Preempt)."
        ),
    ),
    "DEADLINE": (
        "warning",
        N_(
            "Resubmit with a later --deadline or a shorter --time (sacct -j {id} -o "
            "Submit,Start,End,Timelimit shows how close it was)."
        ),
    ),
    "LAUNCH_FAILED": ("critical", _LAUNCH_REMEDY),
    "GETENV_FAILED": ("critical", _LAUNCH_REMEDY),
    "RECONFIG_FAIL": (
        "critical",
        N_(
            "Its nodes failed to reconfigure (node features, a reboot): check slurmctld.log and "
            "the node's slurmd.log, then resubmit."
        ),
    ),
}


def log_cause(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """The first strong error line of its logs names the cause (command not found, NCCL,
    disk full, ...); on a COMPLETED job, a warning that its output has that error."""
    f = _facts(job, ctx)
    if not f.strong:
        return None
    lt, h = f.strong[0]
    cause = h.label
    text, remedy = log_cause_text(cause)
    if remedy == "env" or cause in _ENV_CAUSES:
        remedy = env_remedy(job, h.text)
    elif remedy == "node" and node_check(cause)[1]:
        node = job.nodes[0] if job.nodes else "<node>"
        remedy = node_check(cause)[1].format(n=node, u=_("see the node's reason"))
    title = _headline(job, f, env_phrase(cause, h.text) or text)
    done = job.state == "COMPLETED"
    return (
        job_finding(
            job,
            ctx,
            cause,
            _completed_sev(job, "critical"),
            title,
            (
                _(
                    "The job COMPLETED with exit 0 (its script's last command succeeded), but its "
                    "output has an error that likely means part of the work did not run: "
                )
                if done
                else ""
            )
            + f"{h.text.strip()[:200]} ({log_where(lt, h.line)}). "
            + f.exit_text,
            (remedy or _("See the evidence line."))
            + (
                " "
                + _("Add `set -euo pipefail` to the batch script so a failing step fails the job.")
                if done
                else ""
            ),
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
            _headline(job, f, _("command not found on the compute node")),
            _(
                "Exit status 127 is the shell's 'command not found': the program or one it calls "
                "is not on PATH on the compute node. "
            )
            + f.exit_text,
            env_remedy(job),
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


def ended_by_reason(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """FAILED with a reason that names a Slurm-side cause (JobLaunchFailure, SystemFailure,
    InactiveLimit, a burst buffer failure, DeadLine) and no log naming another."""
    code = base_code(job.reason or "")
    r = REASONS.get(code)
    if r is None or r.label not in _REASON_LABELS or not _failed(job, _facts(job, ctx)):
        return None
    f = _facts(job, ctx)
    if r.label == "job_launch_failed" and f.ec is not None and 0 < f.ec.signal <= 31:
        # Slurm 22.05 says JobLaunchFailure for a batch script killed by a signal (SIGSEGV,
        # an OverMemoryKill): the program ran, and the signal is what ended it. A number past
        # the standard signals (0:53 on the lab for a script that could not start) is Slurm's
        # own launch error code, not a signal: the launch failure is the cause
        return None
    node = job.nodes[0] if job.nodes else "<node>"
    return (
        job_finding(
            job,
            ctx,
            r.label,
            "critical",
            f"{code}: {reason_what(r)}",
            _("Job {job_id} ended {state} with Reason={code}: {what}. ").format(
                job_id=job.job_id, state=job.state, code=code, what=reason_what(r)
            )
            + f.exit_text,
            # the launch remedy names the batch host: here it is the job's first node
            _(_LAUNCH_ON).format(node=node)
            if r.remedy == _LAUNCH
            else reason_remedy(r).replace("{id}", job.job_id),
            list(f.ev),
            0.8,
        ),
    )


_REASON_LABELS = frozenset({"job_launch_failed", "inactive_limit", "deadline_reached"})
_LAUNCH = REASONS["JobLaunchFailure"].remedy
_LAUNCH_ON = N_(
    "slurmd.log on {node} (spool dir, prolog, munge, the script's interpreter); then resubmit."
)


def nonzero_exit(job: SlurmJob, ctx: RuleContext) -> tuple[Finding, ...] | None:
    """Failed with no cause named anywhere: the exit (signal or status) and the first weak
    error line."""
    f = _facts(job, ctx)
    if not _failed(job, f):
        return None
    ev = list(f.ev)
    weak = next(
        ((lt, h) for lt, h in f.hits if not h.strong or h.label == "application_error"), None
    )
    if weak:
        ev.append(log_evidence(weak[0], weak[1]))
    fast = _fast(job, f.row)
    return (
        job_finding(
            job,
            ctx,
            "application_error",
            "critical",
            f"{_lead(job, f)}: {exit_meaning(f.ec)}",
            f.exit_text
            + (
                " "
                + _(
                    "Failing this fast usually means the environment or input is wrong, not the "
                    "computation."
                )
                if fast
                else ""
            ),
            _(
                "Read the first error in the job output (cockpit scan-log <stdout>); "
                "sacct -j {job_id} -o JobID,State,ExitCode shows which step failed."
            ).format(job_id=job.job_id)
            + (
                " "
                + _(
                    "A crash by signal: run it under gdb/valgrind, or ulimit -c unlimited for a "
                    "core file."
                )
                if f.ec is not None and f.ec.signal in {4, 6, 7, 8, 11}
                else ""
            ),
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
            _("completed normally (exit 0:0)"),
            _("The job completed; any warnings in its output did not stop it. ") + f.exit_text,
            _("Nothing to do."),
            list(f.ev),
            0.5,
        ),
    )
