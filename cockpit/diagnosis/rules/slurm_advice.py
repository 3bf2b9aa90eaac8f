"""What an ended job's remedies say: a --mem sized on this run and the sacct history, and the
environment preflight for a program or library missing on the compute node."""

from __future__ import annotations

import re

from cockpit.diagnosis.context import RuleContext
from cockpit.diagnosis.rightsize import RightSize, fmt_mem, suggest
from cockpit.diagnosis.rules.slurm_common import fmt_mib, suggest_mem_mib
from cockpit.i18n import _, ngettext
from cockpit.model import SlurmJob


def history(ctx: RuleContext) -> RightSize | None:
    """Right-sizing from ``Artifacts.history`` (past runs of the same user + name, fetched for
    OOM/TIMEOUT jobs), computed once per diagnose; None without history."""
    if not ctx.artifacts.history:
        return None
    if "rightsize" not in ctx.cache:
        ctx.cache["rightsize"] = suggest(ctx.artifacts.history)
    return ctx.cache["rightsize"]


def mem_advice(job: SlurmJob, rss: int | None, req: int | None, ctx: RuleContext) -> str:
    """One ``--mem`` value with its basis: the sacct history peak when there is one (it
    includes this run), else 1.2 x this run's MaxRSS, else 1.2 x ReqMem (cgroup OOM kills
    often leave MaxRSS empty, and a job killed at its limit needed at least that)."""
    rs = history(ctx)
    peak, basis, note = None, "", ""
    measured = False
    if rss and rss >= 0.9 * (req or 0):  # MaxRSS ~ ReqMem: the measured peak is the basis
        peak, basis, measured = rss, f"MaxRSS {fmt_mib(rss)}", True
    elif req:
        peak, basis = req, f"ReqMem {fmt_mib(req)}"
        note = " " + (
            _(
                "MaxRSS was not recorded (common after a cgroup OOM kill), so this is sized on "
                "the request."
            )
            if not rss
            else _(
                "Its sampled MaxRSS {rss} is below the limit it was killed at, so this is sized "
                "on the request."
            ).format(rss=fmt_mib(rss))
        )
    # the history when it shows at least this run's measured peak; sized on the request (no
    # MaxRSS recorded), only when it shows more: runs killed at their limit count at ReqMem,
    # and "peak MaxRSS" of those would be the request again under another name
    if (
        rs is not None
        and rs.mem_peak_mib
        and (rs.mem_peak_mib > (peak or 0) or (measured and rs.mem_peak_mib == peak))
    ):
        name = next(
            (r.job_name for r in ctx.artifacts.history if r.step == "" and r.job_name), job.name
        )
        peak = rs.mem_peak_mib
        basis = ngettext(
            "peak MaxRSS {peak} of {n} run of {name} in sacct history",
            "peak MaxRSS {peak} of {n} runs of {name} in sacct history",
            rs.runs,
        ).format(peak=fmt_mib(peak), n=rs.runs, name=repr(name))
        note = (
            " "
            + _(
                "Runs that ended OUT_OF_MEMORY count at their ReqMem, so this is a floor: check "
                "MaxRSS after the next run."
            )
            if rs.oom_runs
            else ""
        )
    if not peak:
        return _(
            "Resubmit with a larger --mem (sacct -j {job_id} -o JobID,ReqMem,MaxRSS shows "
            "what it used; ask for about 1.2 x MaxRSS)."
        ).format(job_id=job.job_id)
    cpus = per_cpu_request(job, ctx)
    if cpus:
        # sbatch refuses --mem beside the script's --mem-per-cpu ("mutually exclusive")
        return _(
            "Resubmit with --mem-per-cpu={mem} ({cpus} CPUs per node: 1.2 x {basis}, rounded "
            "up), or reduce the memory the program holds (batch size, data loaded at once)."
            "{note} sacct -j {job_id} -o JobID,ReqMem,MaxRSS,State shows per-step use."
        ).format(
            mem=fmt_mem(suggest_mem_mib(peak / cpus)),
            cpus=cpus,
            basis=basis,
            note=note,
            job_id=job.job_id,
        )
    return _(
        "Resubmit with --mem={mem} (1.2 x {basis}, rounded up), or "
        "reduce the memory the program holds (batch size, data loaded at once).{note} sacct -j "
        "{job_id} -o JobID,ReqMem,MaxRSS,State shows per-step use."
    ).format(mem=fmt_mem(suggest_mem_mib(peak)), basis=basis, note=note, job_id=job.job_id)


def per_cpu_request(job: SlurmJob, ctx: RuleContext) -> int | None:
    """The CPUs per node when the job asked for memory per CPU (``--mem-per-cpu``: the source
    said so, or ``scontrol show job`` printed ``MinMemoryCPU=``), else None. squeue's
    MIN_MEMORY does not say it, so the evidence's scontrol record is read too."""
    per_cpu = job.mem_per_cpu
    if not per_cpu:
        record = ctx.artifacts.commands.get(f"scontrol show job {job.job_id}", "")
        per_cpu = "MinMemoryCPU=" in record
    if not per_cpu:
        return None
    return job.cpus_per_node


def env_remedy(job: SlurmJob, hit: str = "") -> str:
    """The preflight to run on the job's node, with the program its log says is missing
    (``which fastqc``, not ``which <cmd>``) when the hit line names one."""
    node = job.nodes[0] if job.nodes else "<node>"
    m = _CMD.search(hit) if hit else None
    return _(
        "Preflight on the compute node, not the login node: "
        "srun -p {partition} -w {node} "
        "bash -lc 'which {command}; ldd $(which {command}) | grep \"not found\"; module list'. "
        "Load the same modules in the batch script (or use a container), then resubmit."
    ).format(
        partition=job.partition or "<p>",
        node=node,
        command=m.group(1).rsplit("/", 1)[-1] if m else "<cmd>",
    )


_CMD = re.compile(
    r"(?:: line \d+|: \d+)?: ([^:\s]+): (?:command not found|not found|No such file or directory)"
)
_LIB = re.compile(r"loading shared libraries: ([^:\s]+)")
# Lmod / Environment Modules naming the module: "The following module(s) are unknown:
# "cuda/12.1"", "Unable to locate a modulefile for 'openmpi/4.1'", "ModuleFile gcc/13 not found"
_MODULE = re.compile(
    r"(?:module\(s\) are unknown:|Unable to locate a modulefile for|[Mm]odule(?:File)?)"
    r"\s*[\"'`]?([A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+-]+)*)[\"'`]?"
)


def env_phrase(cause: str, text: str) -> str:
    """'run_analysis: command not found on the compute node' from the hit line."""
    if cause == "command_not_found" and (m := _CMD.search(text)):
        return _("{command}: command not found on the compute node").format(
            command=m.group(1).rsplit("/", 1)[-1]
        )
    if cause == "missing_shared_library" and (m := _LIB.search(text)):
        return _("{library} missing on the compute node").format(library=m.group(1))
    if cause == "module_load_failed" and (m := _MODULE.search(text)) and m.group(1) != "load":
        return _("module {module} could not be loaded on the compute node").format(
            module=m.group(1)
        )
    return ""
