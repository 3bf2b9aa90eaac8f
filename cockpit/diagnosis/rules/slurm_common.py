"""What the Slurm rule families share: finding and evidence builders, per-snapshot memos,
and the wording of Slurm values (durations, memory, exit codes, node reasons).

The checks follow the Alibaba E-HPC / SchedMD troubleshooting order: scheduler first
(squeue reason, scontrol, sacct, slurmctld.log), then the node (slurmd.log, dmesg,
journal), then the application's own output. Evidence carries that order in
``Evidence.tier`` (0, 1, 2). Every title reads as a one-line verdict in a table row
("never runs: 64 CPUs > MaxCPUsPerNode 48").
"""

from __future__ import annotations

import re

from cockpit.diagnosis.context import RuleContext
from cockpit.diagnosis.label_words import label_words
from cockpit.diagnosis.logscan import ScanHit
from cockpit.diagnosis.patterns import classify
from cockpit.diagnosis.rightsize import mem_for_peak, time_for_peak
from cockpit.diagnosis.slurm_states import ENDED_STATES
from cockpit.i18n import N_, _
from cockpit.model import (
    AcctRecord,
    Evidence,
    ExitCode,
    Finding,
    LogText,
    Severity,
    SlurmJob,
    Subject,
    positional_constructor,
)
from cockpit.units import hms

SIGNALS = {
    1: "SIGHUP",
    2: "SIGINT",
    3: "SIGQUIT",
    4: "SIGILL",
    5: "SIGTRAP",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    10: "SIGUSR1",
    11: "SIGSEGV",
    12: "SIGUSR2",
    13: "SIGPIPE",
    14: "SIGALRM",
    15: "SIGTERM",
    24: "SIGXCPU",
    25: "SIGXFSZ",
    31: "SIGSYS",
}
# What ended a program, by signal: the headline's prose after the fact.
SIGNAL_MEANING = {
    1: N_("hang-up: the session it belonged to went away"),
    2: N_("interrupted"),
    4: N_("illegal instruction (built for another CPU?)"),
    6: N_("the program aborted itself"),
    7: N_("bus error, often after memory pressure or a truncated file"),
    8: N_("arithmetic error (floating point exception)"),
    9: N_("killed (out of memory, scancel -s KILL or a node failure)"),
    11: N_("segmentation fault in the program"),
    13: N_("broken pipe: what it wrote to went away"),
    15: N_("terminated (time limit, scancel or preemption)"),
    24: N_("CPU time limit exceeded"),
    25: N_("file size limit exceeded"),
}
# A sacct before 25.11 printed exit 128+N as N:0 (ExitCode.folded): N:0 for these N is read
# as "N or 128+N", the shell's report of a child killed by that signal (which is far more
# common than a program choosing to exit 6, 7, 9, 11 or 15)
FOLDED_SIGNALS = frozenset({6, 7, 9, 11, 15})
EXIT_MEANING = {
    1: N_("a generic error from the program"),
    2: N_("misuse of a shell builtin or bad arguments"),
    126: N_("the command is not executable (permissions)"),
    127: N_("command not found"),
    137: N_("128+9: killed by SIGKILL"),
    139: N_("128+11: segmentation fault"),
    143: N_("128+15: terminated by SIGTERM"),
}

# Built by the 10k per poll at a big site (a finding per pending job): the frozen __init__ is
# half of their cost. Positional, every field: (kind, source, id, name); (where, text, line,
# path, offset, tier); Finding's ten in declaration order.
new_subject = positional_constructor(Subject)
new_evidence = positional_constructor(Evidence)
_new_finding = positional_constructor(Finding)


# --------------------------------------------------------------------------- per-snapshot memos


def memo(ctx: RuleContext, name: str) -> dict:
    """A dict in the snapshot's rule cache (one per ``name``), for answers shared by many jobs.
    Not ``setdefault(name, {})``: that allocates a dict per call, per job on the hot path."""
    d = ctx.cache.get(name)
    if d is None:
        d = ctx.cache[name] = {}
    return d


def _job_subject(job_id: str, ctx: RuleContext) -> Subject:
    return new_subject("job", ctx.snapshot.source, job_id, "")


def _node_subjects(job: SlurmJob, ctx: RuleContext) -> tuple[Subject, ...]:
    if not job.nodes:  # every pending job
        return ()
    # one shared (immutable) Subject per node and node list, not one per finding
    by_list = memo(ctx, "node_subjects")
    got = by_list.get(job.nodes)
    if got is None:
        by_node = memo(ctx, "node_subject")
        src = ctx.snapshot.source
        got = by_list[job.nodes] = tuple(
            by_node.get(n) or by_node.setdefault(n, Subject("node", src, n)) for n in job.nodes
        )
    return got


def _user_subject(job: SlurmJob, ctx: RuleContext, cause: str) -> tuple[Subject, ...]:
    # per-user causes: correlate() folds one user's many jobs into one incident by this
    if cause in {"pending_qos_limit", "cancelled_by_user"} and job.user:
        return (Subject("user", ctx.snapshot.source, job.user),)
    return ()


# --------------------------------------------------------------------------- findings and evidence


def job_finding(
    job: SlurmJob,
    ctx: RuleContext,
    cause: str,
    sev: Severity,
    title: str,
    explanation: str,
    remedy: str,
    evidence: list[Evidence],
    confidence: float = 0.85,
) -> Finding:
    """A finding about ``job``: related to its nodes (and its user for per-user causes)."""
    return _new_finding(
        cause,
        sev,
        _job_subject(job.job_id, ctx),
        title,
        explanation,
        remedy,
        ev_sorted(evidence),
        confidence,
        # squeue's end time of a pending or running job is an estimate (start + limit)
        (job.end_time if job.state in ENDED_STATES else None) or job.submit_time,
        _node_subjects(job, ctx) + _user_subject(job, ctx, cause),
    )


def ev_sorted(ev: list[Evidence]) -> tuple[Evidence, ...]:
    """Evidence by tier (scheduler, node, application), duplicates dropped, at most 12."""
    if len(ev) == 1:  # the common case (a pending job's squeue line): nothing to sort or dedupe
        return (ev[0],)
    seen, out = set(), []
    for e in sorted(ev, key=lambda e: e.tier):
        k = (e.where, e.line, e.text)
        if k not in seen:
            seen.add(k)
            out.append(e)
    return tuple(out[:12])


def state_evidence(job: SlurmJob, ctx: RuleContext) -> Evidence:
    """The job's squeue line (sacct's, for a job squeue no longer lists) as scontrol spells
    it: ``JobId=4 JobState=PENDING Reason=...``."""
    # Everything after the job id repeats across thousands of jobs: built once per distinct tail.
    tails = memo(ctx, "ev_tails")
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
    # a job slurmctld already forgot is sacct's record, not a line squeue printed
    acct_only = ctx.cache.get("acct_only")
    if acct_only is None:
        acct_only = ctx.cache["acct_only"] = frozenset(ctx.snapshot.acct_only)
    where = "sacct" if job.job_id in acct_only else "squeue"
    return new_evidence(where, "JobId=" + job.job_id + tail, None, "", None, 0, False)


def acct_evidence(rows: list[AcctRecord]) -> list[Evidence]:
    """The first sacct rows (job, then steps) as one evidence line each."""
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


LOG_TIER = {"slurmctld": 0, "command": 0, "slurmd": 1, "journal": 1, "dmesg": 1}


def log_hits(job_id: str, ctx: RuleContext) -> list[tuple[LogText, ScanHit]]:
    """(log, first hit) per log of the job: strong hits first, then scheduler logs, node, app."""
    out = []
    for lt in ctx.logs_for(job_id):
        h = ctx.scan(lt)
        if h is not None:
            out.append((lt, h))
    out.sort(key=lambda p: (p[1].strong is False, LOG_TIER.get(p[0].kind, 2)))
    return out


def tier_for(log: LogText, hit: ScanHit) -> int:
    """A hit's tier as evidence: daemon logs keep theirs (at most the log's), others are app."""
    return min(hit.tier, LOG_TIER.get(log.kind, 2)) if log.kind in LOG_TIER else max(hit.tier, 2)


def log_where(lt: LogText, line: int, sep: str = ":") -> str:
    """``slurm-4.out:12``: the file's own line number (an excerpt maps it back); the name
    alone when unknown."""
    n = lt.file_line(line)
    return lt.name if n is None else f"{lt.name}{sep}{n}"


# --------------------------------------------------------------------------- sacct rows


def job_row(rows: list[AcctRecord]) -> AcctRecord | None:
    for r in rows:
        if not r.step:
            return r
    return rows[0] if rows else None


def max_rss(rows: list[AcctRecord]) -> int | None:
    vals = [r.max_rss_mib for r in rows if r.max_rss_mib]
    return max(vals) if vals else None


def req_mem(job: SlurmJob, rows: list[AcctRecord]) -> int | None:
    for r in rows:
        if r.req_mem_mib and not r.placeholder:
            return r.req_mem_mib
    if job.min_memory_mib:
        return job.min_memory_mib * (job.cpus or 1) if job.mem_per_cpu else job.min_memory_mib
    return None


# --------------------------------------------------------------------------- wording of values


def fmt_mib(mib: float) -> str:
    """Human memory as Slurm flags take it: 1536 -> '1.5G', 800 -> '800M'."""
    if mib >= 1024:
        g = mib / 1024
        return f"{g:.0f}G" if g == int(g) else f"{g:.1f}G"
    return f"{int(mib)}M"


def suggest_mem_mib(max_rss_mib: float) -> int:
    """1.2 x MaxRSS rounded up (MiB): :func:`cockpit.diagnosis.rightsize.mem_for_peak`, so the
    OOM remedy and the history right-sizing never disagree."""
    return mem_for_peak(max_rss_mib)


def mem_usage(max_rss_mib: int | None, req_mem_mib: int | None) -> str:
    """'MaxRSS 64.1G of ReqMem 64G', or only the known half ('ReqMem 64G'); '' when neither
    is known."""
    if max_rss_mib and req_mem_mib:
        return _("MaxRSS {rss} of ReqMem {req}").format(
            rss=fmt_mib(max_rss_mib), req=fmt_mib(req_mem_mib)
        )
    if max_rss_mib:
        return f"MaxRSS {fmt_mib(max_rss_mib)}"
    return f"ReqMem {fmt_mib(req_mem_mib)}" if req_mem_mib else ""


def fmt_duration(s: int | None) -> str:
    """Slurm's own [D-]HH:MM:SS."""
    return hms(s)


def suggest_time_s(elapsed_s: int, max_s: int | None) -> int:
    """1.3 x what it used, rounded up (:func:`cockpit.diagnosis.rightsize.time_for_peak`, the
    same rule as the history right-sizing), capped at the partition MaxTime."""
    want = time_for_peak(elapsed_s)
    return min(want, max_s) if max_s else want


def exit_fact(ec: ExitCode | None) -> str:
    """The deciding fact of an exit, for a headline: ``SIGSEGV (signal 11)``, ``exit 127``,
    ``exit 139 (SIGSEGV)``; ``non-zero exit`` when unknown."""
    if ec is None:
        return _("non-zero exit")
    if ec.signal:
        name = SIGNALS.get(ec.signal)
        return f"{name} (signal {ec.signal})" if name else f"signal {ec.signal}"
    if ec.code > 128 and (ec.code - 128) in SIGNALS:
        return f"exit {ec.code} ({SIGNALS[ec.code - 128]})"
    if ec.folded and ec.code in FOLDED_SIGNALS:  # a pre-25.11 sacct's 9:0 may be exit 137
        return _("exit {code} or {code128} ({name})").format(
            code=ec.code, code128=ec.code + 128, name=SIGNALS[ec.code]
        )
    return f"exit {ec.code}"


def exit_meaning(ec: ExitCode | None) -> str:
    """What the exit says, in a few words (the prose after :func:`exit_fact`)."""
    if ec is None:
        return _("the program failed")
    if ec.signal:
        return _(SIGNAL_MEANING.get(ec.signal, N_("ended by a signal")))
    if ec.code > 128 and (ec.code - 128) in SIGNAL_MEANING:
        return _(SIGNAL_MEANING[ec.code - 128])
    if ec.folded and ec.code in FOLDED_SIGNALS:
        return _("if {code}: {meaning}").format(
            code=ec.code + 128, meaning=_(SIGNAL_MEANING[ec.code])
        )
    return _(EXIT_MEANING.get(ec.code, N_("an error status from the program")))


# States in which Slurm ended the job, not the program: their ExitCode 0:0 says nothing of it
# slurmctld's line when a node failed under a running job with --requeue (JobRequeue=1):
# the job's id and the node's name
REQUEUED_NODE_FAIL = re.compile(r"requeue job JobId=(\S+) due to failure of node (\S+)")

SLURM_ENDED = frozenset({"TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "DEADLINE"})


def explain_exit(job_ec: ExitCode | None, state: str = "") -> str:
    """'ExitCode 0:9': first number the application's status, second the signal. ``state``:
    the job's; a job Slurm ended (TIMEOUT, NODE_FAIL...) did not exit normally, whatever 0:0
    says."""
    if job_ec is None:
        return ""
    code, sig = job_ec.code, job_ec.signal
    if sig:
        name = SIGNALS.get(sig, f"signal {sig}")
        extra = {
            9: N_("killed: out of memory, scancel -s KILL or a node failure"),
            15: N_("terminated: time limit, scancel or preemption"),
            11: N_("segmentation fault in the program"),
            7: N_("bus error, often after memory pressure"),
            6: N_("the program aborted itself"),
        }.get(sig)
        if extra:
            return _("ExitCode {code}:{sig}: ended by {name} ({extra}).").format(
                code=code, sig=sig, name=name, extra=_(extra)
            )
        return _("ExitCode {code}:{sig}: ended by {name}.").format(code=code, sig=sig, name=name)
    if code == 0 and state in SLURM_ENDED:
        return _(
            "ExitCode 0:0: Slurm ended the job ({state}); the program did not exit itself."
        ).format(state=state)
    if code == 0 and state.startswith("CANCELLED"):
        # the job's 0:0 is the batch script's status before scancel's signal reached it
        return _("ExitCode 0:0: cancelled (scancel); the program did not exit itself.")
    if code == 0:
        return _("ExitCode 0:0: the program exited normally.")
    meaning = _(EXIT_MEANING.get(code, N_("an error status from the program")))
    return _("ExitCode {code}:0: the program exited with status {code} ({meaning}).").format(
        code=code, meaning=meaning
    )


def classify_reason(reason: str) -> str | None:
    """Node reason text -> label (None = no recognised pattern)."""
    p = classify(reason.encode("utf-8", "replace"), "app")
    if p is None:
        return None
    # a reason naming a full disk (slurmd's own "SlurmdSpoolDir is full") is that disk
    node_labels = {"gpu_hardware_error", "host_memory_error", "disk_full"}
    return p.label if p.label.startswith("node_") or p.label in node_labels else None


# --------------------------------------------------------------------------- causes named by logs

GPU_OOM_REMEDY = N_(
    "Reduce the per-device memory: a smaller batch size with gradient accumulation to keep the "
    "effective batch, activation (gradient) checkpointing, mixed precision, or shard the model "
    "over more GPUs (--gpus). Check nvidia-smi (npu-smi info on Ascend) on the node for other "
    "processes holding device memory."
)
# label -> (what it means, remedy): "env" = the environment preflight, "" = the rule's own
LOG_CAUSE_TEXT = {
    "auth_failed": (N_("Slurm could not authenticate a message (munge credential)"), ""),
    "preempted": (N_("preempted: cancelled to make room for a higher-priority job"), ""),
    "job_launch_failed": (N_("Slurm could not launch the step (cgroup)"), ""),
    "command_not_found": (N_("a command was not found on the compute node"), "env"),
    "missing_shared_library": (N_("a shared library is missing on the compute node"), "env"),
    "module_load_failed": (N_("loading an environment module failed"), "env"),
    "library_version_mismatch": (
        N_(
            "a library on the node is older than the program was built for (glibc/libstdc++ "
            "symbol version) or from another release of its toolkit"
        ),
        N_(
            "Use a build made for this node's OS (a conda/bioconda package, a container, or build "
            "from source on the cluster; ldd --version shows the node's glibc), or the framework "
            "release matching the installed toolkit; a user cannot upgrade the system glibc."
        ),
    ),
    "python_module_missing": (
        N_("the job's Python environment lacks a package it imports"),
        N_(
            "Activate the environment that has it inside the job script (conda activate / source "
            "venv/bin/activate after module load), or install it there; for CANN's 'init env "
            "failed', install the toolkit's Python dependencies (decorator, sympy, cffi, protobuf, "
            "attrs, pyyaml, psutil, scipy, ...) and source set_env.sh."
        ),
    ),
    "mpi_pmi_mismatch": (
        N_("MPI and Slurm's PMI plugin don't fit"),
        N_(
            "Launch with srun --mpi=pmix (or pmi2) matching how MPI was built: srun --mpi=list; "
            "ompi_info | grep -i pmi."
        ),
    ),
    "mpi_network_error": (
        N_("the nodes could not talk to each other (MPI/network)"),
        N_(
            "Check slurmd.log on the nodes for 'error: connect', the firewall between nodes and "
            "the "
            "interface MPI uses (OMPI_MCA_btl_tcp_if_include / UCX_NET_DEVICES)."
        ),
    ),
    "mpi_launch_failed": (
        N_("the MPI launcher could not start its daemons or ranks on the allocation"),
        N_(
            "Run mpirun inside the allocation (or srun --mpi=pmix) with -np no larger than the "
            "job's tasks; every node needs the same MPI install on PATH/LD_LIBRARY_PATH and must "
            "reach the launching node over TCP."
        ),
    ),
    "nccl_communication_error": (
        N_("NCCL collective communication failed"),
        N_(
            "Rerun with NCCL_DEBUG=INFO; pin NCCL_SOCKET_IFNAME / NCCL_IB_HCA to the right "
            "interface; "
            "check MTU and the link between the nodes."
        ),
    ),
    "cuda_driver_mismatch": (
        N_("the CUDA runtime needs a newer GPU driver than the node has"),
        N_(
            "Compare nvidia-smi (driver) with the CUDA version of the build/container; use a "
            "build for "
            "the node's CUDA or ask for a driver upgrade."
        ),
    ),
    "dependency_install_failed": (
        N_(
            "Python/conda dependencies could not be installed (index unreachable or package "
            "missing)"
        ),
        N_(
            "Install them before the job (a venv/conda env on shared storage, or a container); "
            "compute "
            "nodes often have no internet: pin a reachable mirror via pip config / PIP_INDEX_URL, "
            "and "
            "check the package name and version."
        ),
    ),
    "gpu_out_of_memory": (
        N_("GPU/NPU memory exhausted (device memory, not host RAM: --mem does not help)"),
        GPU_OOM_REMEDY,
    ),
    "gpu_not_available": (
        N_("no usable GPU was visible to the job"),
        N_("Request GPUs (--gres=gpu:N or --gpus=N) and check nvidia-smi on the node."),
    ),
    # a pending job's reason quoted as text (no squeue table to read the job from)
    "pending_node_unavailable": (
        N_("pending: the nodes it needs are down, drained or reserved"),
        N_(
            "sinfo -R and scontrol show reservation name the nodes and why; the job starts once "
            "they are back or the reservation ends, or change --nodelist/--time to avoid them."
        ),
    ),
    "pending_qos_limit": (
        N_("pending on a QOS/association limit"),
        N_(
            "sacctmgr show assoc user=$USER and sacctmgr show qos name the limit; lower the "
            "request "
            "or wait for the user's other jobs to end."
        ),
    ),
    "accelerator_busy": (
        N_("the GPU/NPU is held by another process or container"),
        N_(
            "Find the holder (npu-smi info / nvidia-smi on the node, docker ps for a container "
            "given the same /dev/davinciN) and stop it, or use a free device; an Ascend NPU serves "
            "one container at a time."
        ),
    ),
    "gpu_hardware_error": (
        N_("a GPU hardware fault (Xid/ECC)"),
        N_(
            "Drain the node (scontrol update NodeName=<n> State=DRAIN Reason='GPU Xid'), run "
            "nvidia-smi -q -d ECC,PAGE_RETIREMENT and the vendor diagnostics before reuse."
        ),
    ),
    "disk_full": (
        N_("a filesystem ran out of space"),
        N_(
            "df -h <output dir>; clean up or write to scratch; check the controller's "
            "StateSaveLocation."
        ),
    ),
    "shared_fs_unreachable": (
        N_("the shared file system (Lustre, NFS, GPFS) stopped answering the node or evicted it"),
        N_(
            "Check the node's network to the file system servers (lctl ping, showmount -e, "
            "mmgetstate -a) and the servers' logs; remount it, or drain the node until it is back."
        ),
    ),
    "disk_quota_exceeded": (
        N_("the disk quota (bytes or files) was exceeded"),
        N_(
            "Check quota -s / lfs quota -h / mmlsquota (the files column too); delete or archive "
            "small "
            "files."
        ),
    ),
    "time_limit": (N_("it hit its time limit"), ""),
    "node_drain_kill_task_failed": (
        N_("Kill task failed on its node: its processes would not die when killed"),
        "node",
    ),
    "node_not_responding": (N_("its node stopped responding"), "node"),
    "node_drain_prolog_epilog_failed": (N_("the node's prolog/epilog failed"), "node"),
    "node_config_mismatch": (N_("the node's hardware differs from slurm.conf"), "node"),
    "node_down_unexpected_reboot": (N_("its node rebooted unexpectedly"), "node"),
    "node_drain_low_memory": (N_("its node has less memory than slurm.conf says"), "node"),
    "host_memory_error": (N_("host memory (DIMM) errors on its node"), "node"),
    "oom_killed": (N_("it ran out of memory"), ""),
    "storage_read_only": (
        N_("it wrote to a read-only filesystem"),
        N_("Write outputs to a writable directory."),
    ),
    "storage_stale_handle": (
        N_("an NFS file handle went stale (the file was replaced or removed on the server)"),
        N_(
            "Rerun the failed jobs; write job output to local scratch and copy it at the end, "
            "never have many jobs rewrite one file on NFS (or use GPFS/Lustre for it); if "
            "every access fails, remount the filesystem on the node."
        ),
    ),
    "storage_file_lock_failed": (
        N_("the file system refused a file lock (HDF5 locks every file it opens)"),
        N_(
            "Set HDF5_USE_FILE_LOCKING=FALSE in the job before Python starts (h5py 3.5+: "
            "h5py.File(..., locking=False)), or write the file on a local disk; on errno 11 "
            "another process still holds the file open: let one writer finish first."
        ),
    ),
    "open_files_limit": (
        N_("the process ran out of file descriptors (its open-files limit)"),
        N_(
            "Raise the limit in the job script (ulimit -n up to ulimit -Hn; an admin raises the "
            "hard limit in limits.conf or slurmd's LimitNOFILE), close files the program keeps "
            "open; for PyTorch DataLoader workers "
            "torch.multiprocessing.set_sharing_strategy('file_system') or fewer workers."
        ),
    ),
    "conda_shell_not_initialised": (
        N_("conda's shell hook was never set up in the job's shell, so conda activate fails"),
        N_(
            "A batch shell does not read .bashrc: in the job script, load the site's conda "
            'module or source <conda>/etc/profile.d/conda.sh or eval "$(conda shell.bash hook)" '
            "before activating (micromamba: its own hook, the same way), or use conda run."
        ),
    ),
    "shared_memory_exhausted": (
        N_("shared memory (/dev/shm) ran out: DataLoader workers died of SIGBUS"),
        N_(
            "Give the container more /dev/shm (docker run --shm-size=8g or -v /dev/shm:/dev/shm; "
            "on Kubernetes an emptyDir with medium: Memory mounted at /dev/shm), or use fewer "
            "DataLoader workers."
        ),
    ),
    "input_path_not_found": (
        N_("an input path does not exist"),
        N_("Check the path spelling and that the data exists."),
    ),
}


def log_cause_text(label: str) -> tuple[str, str]:
    """(what ``label`` means, its remedy) in the current language; the remedy may be the
    marker "env" or "node" (the rule's own check) or "" (none). A label without an entry
    reads as its words (``some_label`` -> ``some label``)."""
    got = LOG_CAUSE_TEXT.get(label)
    if got is None:
        return label_words(label), ""
    text, remedy = got
    return _(text), (_(remedy) if remedy not in ("", "env", "node") else remedy)


def node_check(label: str, default: str = "") -> tuple[str, str]:
    """(what a node cause means, what to check on node ``{n}``; ``{u}`` who set the reason),
    in the current language; ("", ``default``) for a label without an entry."""
    got = NODE_CHECKS.get(label)
    if got is None:
        return "", _(default) if default else ""
    return _(got[0]), _(got[1])


# --------------------------------------------------------------------------- node causes

# label -> (what it means, what to check on node {n}; {u} = who set the reason)
NODE_CHECKS = {
    "node_drain_kill_task_failed": (
        N_(
            "processes of a job would not die when Slurm killed it (unkillable D-state I/O, a "
            "stuck "
            "epilog, a hung filesystem)"
        ),
        N_(
            "Before rebooting: on the node, ps -eo pid,stat,wchan,cmd | awk '$2 ~ /D/' (stuck "
            "I/O), "
            "check the filesystem mounts and slurmd.log around the reason time; if clean: scontrol "
            "update NodeName={n} State=RESUME. Raise UnkillableStepTimeout if it recurs."
        ),
    ),
    "node_drain_low_memory": (
        N_(
            "slurmd registered less memory than slurm.conf says (RealMemory too high, or a DIMM "
            "lost)"
        ),
        N_(
            "Run slurmd -C on {n}; set RealMemory in slurm.conf to that value (or a little less), "
            "scontrol reconfigure, then scontrol update NodeName={n} State=RESUME. If the node "
            "really "
            "lost memory, check dmesg/EDAC before resuming."
        ),
    ),
    "node_drain_prolog_epilog_failed": (
        N_("the Prolog/Epilog script (or a SPANK plugin) failed on the node"),
        N_(
            "Read slurmd.log / journalctl -u slurmd on {n} for the prolog/epilog error, run the "
            "script "
            "by hand, fix it (paths, permissions), then scontrol update NodeName={n} State=RESUME."
        ),
    ),
    "node_not_responding": (
        N_("slurmctld cannot reach slurmd on the node (crash, network, slurmd down)"),
        N_(
            "Before rebooting: ping {n}; ssh {n} systemctl status slurmd munge; check the clock "
            "(munge) and dmesg for hardware errors; then systemctl restart slurmd and scontrol "
            "update "
            "NodeName={n} State=RESUME."
        ),
    ),
    "node_down_unexpected_reboot": (
        N_("the node rebooted without Slurm asking (crash, power, watchdog)"),
        N_(
            "Check journalctl -b -1 and dmesg on {n} (kernel panic, MCE, power), then scontrol "
            "update "
            "NodeName={n} State=RESUME."
        ),
    ),
    "node_config_mismatch": (
        N_("the hardware slurmd detects differs from the node line in slurm.conf"),
        N_(
            "Compare slurmd -C on {n} with its NodeName line (Sockets/Cores/Threads/RealMemory); "
            "make "
            "them agree, scontrol reconfigure, then scontrol update NodeName={n} State=RESUME."
        ),
    ),
    "node_drain_admin": (
        N_("an operator drained it"),
        N_(
            "Ask the person named in the reason ({u}); resume only when they are done: scontrol "
            "update "
            "NodeName={n} State=RESUME."
        ),
    ),
    "gpu_hardware_error": (
        N_("a GPU hardware fault was reported (Xid, GPU ECC)"),
        N_(
            "Keep it drained; confirm {n} has GPUs (scontrol show node {n} | grep Gres), then on "
            "it: nvidia-smi -q -d ECC,PAGE_RETIREMENT and dcgmi diag -r 3 (npu-smi info on "
            "Ascend); reset or replace the GPU before resuming."
        ),
    ),
    "host_memory_error": (
        N_("host memory (DIMM) reported ECC / machine-check errors"),
        N_(
            "Keep it drained; on {n}: edac-util -v (or ras-mc-ctl --errors), mcelog --client / "
            "journalctl -k | grep -iE 'EDAC|mce|Hardware Error' name the DIMM; have it replaced, "
            "run a memory test, then scontrol update NodeName={n} State=RESUME."
        ),
    ),
    "node_boot_failed": (
        N_("the node did not boot or resume in time (power saving, cloud, a requested reboot)"),
        N_(
            "Check the ResumeProgram log and the node's console/BMC; once it is up: scontrol "
            "update NodeName={n} State=RESUME (ResumeTimeout in slurm.conf bounds the wait)."
        ),
    ),
    "oom_killed": (
        N_("jobs keep running the node out of memory"),
        N_(
            "Check dmesg on {n} for oom-kill; enforce memory with cgroups (ConstrainRAMSpace=yes) "
            "so "
            "jobs, not the node, pay for it; then resume."
        ),
    ),
    "node_drain_loop": (
        N_("the node drains again after every resume because jobs keep exhausting its memory"),
        N_(
            "Do not just resume: find the jobs (sacct -N {n} -s OOM -S now-1day), make them ask "
            "for "
            "enough --mem, enable ConstrainRAMSpace=yes, then resume."
        ),
    ),
}
