"""The exact Slurm command lines the cockpit runs (one place: SlurmSource and the demo use them).

Delimited output with ASCII Unit Separator (``\\x1f``): it cannot occur in a Slurm field,
works from Slurm 17 to 26, and is several times cheaper on the controller than ``--json``
(whose schema also changes between releases).
"""

from __future__ import annotations

import re

from cockpit.slurm.versions import has_sluid

SEP = "\x1f"

# (squeue -o code, SlurmJob field it fills) in output order
SQUEUE_FIELDS: tuple[tuple[str, str], ...] = (
    ("%i", "job_id"),
    ("%P", "partition"),
    ("%j", "name"),
    ("%u", "user"),
    ("%T", "state"),
    ("%r", "reason"),
    ("%C", "cpus"),
    ("%D", "node_count"),
    ("%N", "node_list"),
    ("%m", "min_memory"),
    ("%l", "time_limit"),
    ("%M", "elapsed"),
    ("%V", "submit_time"),
    ("%S", "start_time"),
    ("%e", "end_time"),
    ("%Z", "work_dir"),
    ("%a", "account"),
    ("%q", "qos"),
    ("%E", "dependency"),
    ("%Q", "priority"),
    ("%k", "comment"),
    ("%o", "command"),
    # TRES per node (GRES: gres/gpu:a100:2), N/A when none; every version since 21.08
    ("%b", "gres"),
)
SQUEUE_FORMAT = SEP.join(code for code, _ in SQUEUE_FIELDS)
SQUEUE_ARGV: tuple[str, ...] = ("squeue", "--noheader", "--states=all", "-o", SQUEUE_FORMAT)
# 26.05+: the SLUID too (an older squeue prints %s as nothing useful: not asked there)
SQUEUE_FIELDS_SLUID: tuple[tuple[str, str], ...] = (*SQUEUE_FIELDS, ("%s", "sluid"))
SQUEUE_ARGV_SLUID: tuple[str, ...] = (
    *SQUEUE_ARGV[:-1],
    SEP.join(code for code, _ in SQUEUE_FIELDS_SLUID),
)
# What the cockpit asked before %b: recordings and captures made then have 22 columns
SQUEUE_FIELDS_V1: tuple[tuple[str, str], ...] = SQUEUE_FIELDS[:-1]
# the layouts a header-less output may have, by column count
SQUEUE_LAYOUTS: dict[int, tuple[tuple[str, str], ...]] = {
    len(f): f for f in (SQUEUE_FIELDS_V1, SQUEUE_FIELDS, SQUEUE_FIELDS_SLUID)
}
# 23.11+: ids and states only, served from the controller's job state cache (no job table
# lock, no job records packed): the cheap question "did anything change?" between full reads
SQUEUE_STATES_ARGV: tuple[str, ...] = (
    "squeue",
    "--only-job-state",
    "--noheader",
    "--states=all",
    "-o",
    f"%i{SEP}%T",
)
VERSION_ARGV: tuple[str, ...] = ("scontrol", "--version")
# slurm.conf as the controller runs it: where the daemons' logs are (SlurmctldLogFile, ...)
CONFIG_ARGV: tuple[str, ...] = ("scontrol", "show", "config")
DEFAULT_CTLD_LOG = "/var/log/slurm/slurmctld.log"
DEFAULT_SLURMD_LOG = "/var/log/slurm/slurmd.log"
_LOG_FILE_RE = re.compile(r"^\s*(SlurmctldLogFile|SlurmdLogFile)\s*=\s*(\S+)\s*$", re.MULTILINE)


def parse_log_files(text: str) -> dict[str, str]:
    """``scontrol show config``'s SlurmctldLogFile and SlurmdLogFile, where set to a path
    (``(null)``: syslog; none kept)."""
    return {k: v for k, v in _LOG_FILE_RE.findall(text) if v.startswith("/")}


def squeue_argv(version: str) -> tuple[str, ...]:
    """The full squeue of a Slurm release (``cockpit.slurm.versions``)."""
    return SQUEUE_ARGV_SLUID if has_sluid(version) else SQUEUE_ARGV


NODES_ARGV: tuple[str, ...] = ("scontrol", "show", "node", "-o")
PARTITIONS_ARGV: tuple[str, ...] = ("scontrol", "show", "partition", "-o")

SACCT_FIELDS: tuple[str, ...] = (
    "JobID",
    "JobName",
    "Partition",
    "User",
    "State",
    "ExitCode",
    "ReqMem",
    "MaxRSS",
    "Elapsed",
    "Timelimit",
    "NodeList",
    "Reason",
    "Start",
    "End",
)


def sacct_argv(job_ids: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Accounting rows (job and steps) for the given, already validated job ids."""
    return (
        "sacct",
        "-P",
        f"--delimiter={SEP}",
        "-n",
        "-j",
        ",".join(job_ids),
        "-o",
        ",".join(SACCT_FIELDS),
    )


def sacct_history_argv(user: str, name: str | None, days: int = 30) -> tuple[str, ...]:
    """Past runs of one user's job name (right-sizing --mem/--time from history).

    No ``-X``: MaxRSS is only recorded on step rows (``ID.batch``, ``ID.0``); the job
    rows carry ReqMem, Elapsed and Timelimit. ``rightsize.suggest`` groups them by job.
    ``name`` None: all the user's jobs (for a name sacct would split, filtered by the caller).
    """
    return (
        "sacct",
        "-P",
        f"--delimiter={SEP}",
        "-n",
        "-u",
        user,
        *(("--name", name) if name is not None else ()),
        "-S",
        f"now-{days}days",
        "-o",
        ",".join(SACCT_FIELDS),
    )


def scontrol_job_argv(job_id: str) -> tuple[str, ...]:
    return ("scontrol", "show", "job", "-o", job_id)


def df_argv(paths: list[str] | tuple[str, ...], inodes: bool = False) -> tuple[str, ...]:
    return ("df", "-Pi" if inodes else "-P", "--", *paths)


# ---------------------------------------------------------------- after the queue forgets
# slurmctld drops an ended job MinJobAge seconds after its end (300 s by default); from then on
# only slurmdbd knows it. These are the sacct calls that stand in for squeue and scontrol.

# One row per job (-X) that ended in a failure state inside a time window (the backfill of a
# poll: jobs that ended and aged out between two polls, or while no cockpit ran). With --state,
# sacct selects by the time the job entered the state: its End for these.
BACKFILL_FIELDS: tuple[str, ...] = (
    "JobID",
    "JobIDRaw",
    "JobName",
    "Partition",
    "User",
    "UID",
    "GID",
    "State",
    "ExitCode",
    "ReqMem",
    "Elapsed",
    "Timelimit",
    "NodeList",
    "Reason",
    "Submit",
    "Start",
    "End",
    "WorkDir",
    # the CPUs it held: squeue's CPUS column once slurmctld forgot it (N/CPU, --mem-per-cpu)
    "AllocCPUS",
)


def sacct_backfill_argv(since: str, states: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Every user's jobs (``-a``; allocations only, ``-X``) that entered one of ``states``
    between ``since`` (``YYYY-MM-DDTHH:MM:SS``, the cluster's local time) and now."""
    return (
        "sacct",
        "-a",
        "-X",
        "-P",
        f"--delimiter={SEP}",
        "-n",
        "-S",
        since,
        "-E",
        "now",
        f"--state={','.join(states)}",
        "-o",
        ",".join(BACKFILL_FIELDS),
    )


# What sacct still knows of one job's files: where it ran and how it was submitted. SubmitLine
# comes last: a --wrap may hold newlines, which sacct prints as they are (continuation lines).
# StdOut/StdErr (Slurm 24.05+) are asked only when ``sacct --helpformat`` lists them.
DETAIL_FIELDS: tuple[str, ...] = ("JobID", "JobIDRaw", "JobName", "User", "UID", "GID", "NodeList")
DETAIL_OPTIONAL: tuple[str, ...] = ("WorkDir", "StdOut", "StdErr", "SubmitLine")

SACCT_HELPFORMAT_ARGV: tuple[str, ...] = ("sacct", "--helpformat")


def sacct_detail_argv(job_id: str, fields: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return ("sacct", "-X", "-P", f"--delimiter={SEP}", "-n", "-j", job_id, "-o", ",".join(fields))


def sacct_script_argv(job_id: str) -> tuple[str, ...]:
    """The batch script as slurmdbd stored it (``AccountingStoreFlags=job_script``; else
    sacct prints ``NONE``)."""
    return ("sacct", "-B", "-j", job_id)


# ---------------------------------------------------------------- before it fails
# Running jobs sampled for risk (cockpit.slurm.risk). sstat takes a job list and, with -a, prints
# every running step of each; it has no --delimiter before 24.05 and its '|' cannot occur in
# these fields (ids, sizes, node lists, durations). 22.05, 24.11 and 26.05 accept the same.
SSTAT_FIELDS: tuple[str, ...] = (
    "JobID",
    "MaxRSS",
    "MaxRSSNode",
    "AveRSS",
    "NTasks",
    "Nodelist",
    "AveCPU",
)


def sstat_argv(job_ids: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Every running step of the given, already validated job ids, one line each."""
    return (
        "sstat",
        "-a",
        "-n",
        "-P",
        "-j",
        ",".join(job_ids),
        "--format=" + ",".join(SSTAT_FIELDS),
    )


def squeue_outputs_argv(job_ids: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The StdOut pattern (``%j`` unresolved) and owner of the given jobs, one line each:
    ``-O`` is the only squeue format with StdOut; the path comes last (it may hold a '|').
    ``JobArrayID``: an array task as the queue names it (28_0); ``JobID`` prints its own id."""
    return _running_jobs_argv(job_ids, "JobArrayID:|,UserID:|,GroupID:|,StdOut:0")


def squeue_alloc_argv(job_ids: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The TRES each given running job holds (``cpu=2,mem=400M,node=1``), one line each:
    squeue's ``%m`` prints ``--mem-per-cpu``'s figure without saying it is per CPU, so the
    memory a job may use before the OOM killer comes is only in its allocated TRES. An array
    task is named twice: as the queue does (``JobArrayID``, ``28_0``) and by its own job id
    (``JobID``, ``29``), the one sstat prints for its steps."""
    return _running_jobs_argv(job_ids, "JobArrayID:|,JobID:|,tres-alloc:0")


def _running_jobs_argv(job_ids: list[str] | tuple[str, ...], fields: str) -> tuple[str, ...]:
    """``squeue -O fields`` of the given jobs while they run (the at-risk sampler's asks)."""
    return ("squeue", "--noheader", "--states=RUNNING", "-j", ",".join(job_ids), "-O", fields)


def stat_argv(paths: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Size and modification time of many files in one command (GNU stat): ``SIZE MTIME PATH``."""
    return ("stat", "-L", "-c", "%s %Y %n", "--", *paths)
