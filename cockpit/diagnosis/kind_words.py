"""Kind words: the cause an error line's own words name when no pattern holds its sentence.

Over unseen public reports (batches 15-25 of tests/fixtures/cases/SEARCH_LOG.md) most wrong
causes were lines whose words already said the kind ("invalid device ordinal", "driver … too
old", "Unable to resolve", "Unable to find address for: eth0", "task timeout", "execve(): …:
Permission denied") while no pattern held the producer's sentence: the finding stayed an
application error or an unrecognised failure. Patterns learn sentences; this table knows the
*kinds'* vocabulary, so a producer's next wording of a kind it names is still that kind.

It only ever refines a finding no rule named (``application_error``, ``unrecognised_failure``)
from the line that finding cites: a recognised cause is never overridden. Matching runs on that
one line in Python, outside the scanner's RE2 set (no cost on big logs, no DFA growth).
"""

from __future__ import annotations

import re
from dataclasses import replace

from cockpit.i18n import N_, _
from cockpit.model import Finding

# the labels a rule gives when it knows no cause: the only ones kind words may refine
GENERIC = frozenset({"application_error", "unrecognised_failure"})

# (label, the kind's words), most specific kind first: a resource or device named outright,
# then a producer's context (authentication, Slurm's daemons and launch), then the generic
# resource words (permission, missing path, network). Case-insensitive.
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(words, re.IGNORECASE))
    for label, words in (
        (
            "gpu_hardware_error",
            # not "Xid" alone: NVIDIA's Xid table (cockpit.diagnosis.xid_codes) names each code's
            # kind, and 13, 31 and 43 are the program's own faults, which it leaves generic
            r"fallen off the bus|\bGPU is lost|device handle.{0,80}unknown error"
            r"|uncorrectable ECC|\bdouble bit\b",
        ),
        (
            "cuda_driver_mismatch",
            r"driver(?: version)? (?:is |on your system is )?(?:too old|insufficient|older than)"
            r"|driver/library version mismatch|\bdriver\b.{0,60}\b(?:not compatible|incompatible)",
        ),
        (
            "gpu_out_of_memory",
            r"\b(?:CUDA|GPU|NPU|device|HBM)\b.{0,40}\bout of memory"
            r"|(?:out of|insufficient|failed to allocate) (?:device|GPU|NPU|HBM) memory",
        ),
        (
            "gpu_not_available",
            r"invalid device ordinal|no CUDA-capable device|\bno (?:available )?(?:GPU|NPU)s?\b"
            r"|\b(?:GPU|NPU|CUDA) (?:device )?(?:is |are )?(?:not available|unavailable|not found)"
            r"|\bdevices? (?:is |are )?(?:unavailable|not available)",
        ),
        ("disk_full", r"No space left on device|\bENOSPC\b|设备上没有空间"),
        ("disk_quota_exceeded", r"quota exceeded|\bEDQUOT\b|超出磁盘限额"),
        ("storage_read_only", r"Read-only file system|\bEROFS\b|只读文件系统"),
        ("storage_stale_handle", r"Stale (?:NFS )?file handle|\bESTALE\b"),
        # EIO: the file system under the job failed the call (a shared one's client lost its
        # server or was evicted)
        ("shared_fs_unreachable", r"Input/output error|\bEIO\b|输入/输出错误"),
        # a lock the file system refuses (HDF5's outer frames, fcntl/flock callers)
        (
            "storage_file_lock_failed",
            r"unable to lock (?:the )?file|No locks available|\bENOLCK\b|file locking disabled"
            r"|\b(?:f?lockf?|flock)\b.{0,60}(?:not (?:supported|implemented)|Function not impl)",
        ),
        (
            "open_files_limit",
            r"too many open files|\bE[MN]FILE\b|out of file descriptors"
            r"|(?:open[- ]files?|file descriptors?) limit|打开的文件过多",
        ),
        (
            "oom_killed",
            r"Cannot allocate memory|\bENOMEM\b|\boom[- ]kill|\bout of memory\b|无法分配内存",
        ),
        # a container runtime's own words: a bind or mount that cannot be made, then the
        # container or its image that cannot be created or opened
        (
            "storage_mount_failed",
            r"mount source\b.{0,80}(?:doesn't|does not) exist|\bwhile mounting\b.{0,80}"
            r"(?:doesn't|does not) exist|\b(?:mount|bind)(?:ing)? (?:point )?failed"
            r"|\bfailed to (?:mount|bind)\b",
        ),
        (
            "container_entrypoint_failed",
            r"container creation failed|could not (?:open|load) (?:the )?(?:container )?image"
            r"|\bcontainer (?:start|create|init)\w* failed|failed to (?:create|start) container",
        ),
        # conda/mamba's shell hook missing in this shell (before the generic command words)
        (
            "conda_shell_not_initialised",
            r"\b(?:conda|mamba) init\b|\bshell (?:hook|not initiali[sz]ed)"
            r"|configured to use '(?:conda|mamba) activate'|\b(?:conda|mamba): command not found",
        ),
        # the module system's own words (Lmod, Tcl/C environment modules)
        ("module_load_failed", r"\bmodulefile\b|\bmodule\(s\) (?:are|is) unknown\b"),
        (
            "auth_failed",
            # "authenticat" at a word's start: not ssh's option PasswordAuthentication=no
            # quoted in a launcher's command
            r"\bmunged?\b|\bcredential|\b(?:un)?authenticat|\bunauthori[sz]ed\b|\binvalid token\b"
            r"|\btoken (?:has )?expired\b|\bjwt\b",
        ),
        # a Slurm command or node daemon that cannot reach (or name) slurmctld or slurmdbd
        (
            "controller_unreachable",
            r"\b(?:sacct(?:mgr)?|sbatch|srun|salloc|squeue|sinfo|scontrol|scancel|sreport|sshare"
            r"|slurmd|slurmstepd|slurm_\w+):.{0,80}(?:unable to (?:contact|connect|resolve)"
            r"|control(?:ler)? machine|slurmctld|slurmdbd|persistent connection)",
        ),
        # Slurm setting a job step up on the node: the step daemon, its prolog, cgroups, exec
        (
            "job_launch_failed",
            r"\bslurmstepd\b|\bprolog\b|\btask launch\b|\blaunch failed\b|\bexecve\b"
            r"|\bcgroup|\bstep creat",
        ),
        (
            "nccl_communication_error",
            r"\b(?:NCCL|HCCL|HCCP)\b.{0,120}\b(?:time(?:d)? ?out|abort|fail|error)"
            r"|\bcollective\b.{0,80}time(?:d)? ?out|\bwatchdog\b|\btask timeout\b",
        ),
        (
            "mpi_network_error",
            r"Connection (?:refused|reset|timed out)|No route to host|Network is unreachable"
            r"|Name or service not known|\b(?:could not|unable to|can't|cannot|failed to) "
            r"(?:resolve|find address|connect)|\bgetaddrinfo\b|\bsocket\b.{0,60}"
            r"(?:time(?:d)? ?out|fail|error)|Address already in use|\bEADDRINUSE\b"
            r"|\brendezvous\b.{0,60}(?:time(?:d)? ?out|fail)|拒绝连接|没有到主机的路由|网络不可达"
            # a launcher still waiting for its peers' endpoints (Paddle's "server not ready,
            # wait 3 sec to retry" / "not ready endpoints:"): nothing listens where it looks
            r"|\b(?:server|endpoints?) not ready\b.{0,40}\b(?:retry|wait)|\bnot ready endpoints\b",
        ),
        (
            "library_version_mismatch",
            r"undefined symbol|version [`'\"]?\S+[`'\"]? not found|\bGLIBC(?:XX)?_\d"
            r"|version mismatch|\bbuilt (?:for|against)\b|\bcompiled (?:for|against)\b",
        ),
        ("missing_shared_library", r"cannot open shared object file"),
        ("python_module_missing", r"No module named|ModuleNotFoundError"),
        ("command_not_found", r"command not found"),
        (
            "storage_access_denied",
            r"Permission denied|\bEACCES\b|Operation not permitted|\bAccess denied\b"
            r"|权限不够|不允许的操作",
        ),
        ("input_path_not_found", r"No such file or directory|\bENOENT\b|没有那个文件或目录"),
    )
)

_WHY = N_("No rule knows this line's sentence yet; its own words ({words}) are those of {cause}.")


def kind_of_line(text: str) -> tuple[str, str] | None:
    """(label, the words that named it) for an error line, or None when its words name no
    kind. A line holding a producer's catalogue template keeps that template's domain: only a
    kind of the same domain may name it (slurmstepd's "Failed to create job container: No such
    file or directory" is a launch failure whose errno words are generic, not a missing input
    path; the catalogue's 1668 domain-only templates had 78 such clashes)."""
    from cockpit.diagnosis.catalogue import domain_of as template_domain
    from cockpit.diagnosis.domains import domain_of

    within = None
    for label, rx in _KINDS:
        m = rx.search(text)
        if m is None:
            continue
        if within is None:
            within = template_domain(text) or ""
        if not within or domain_of(label) == within:
            return label, m.group(0)
    return None


def _remedy_of(label: str) -> str | None:
    # the remedies a bare log file's cause gets (rules/slurm_site.py), in the current language
    from cockpit.diagnosis.rules.slurm_site import _REMEDY_BY_LABEL

    text = _REMEDY_BY_LABEL.get(label)
    return _(text) if text else None


def refine(f: Finding, text: str | None = None) -> Finding:
    """``f`` with the cause its cited line's words name, when no rule named one; else ``f``
    (the same object: callers compare by identity). ``text``: the cited line in full when the
    evidence holds it shortened (the words that name the kind may be past the cut)."""
    if f.root_cause not in GENERIC:
        return f
    line = next((e for e in f.evidence if e.line is not None and e.quoted), None)
    if line is None:
        return f
    kind = kind_of_line(text if text is not None else line.text)
    if kind is None:
        return f
    from cockpit.diagnosis.label_words import label_words

    label, words = kind
    why = _(_WHY).format(words=f"“{words.strip()}”", cause=label_words(label))
    remedy = _remedy_of(label) or f.remedy
    cited = line.text.strip()[:200]
    title = f"{label_words(label)}: {cited}"
    if f.root_cause == "application_error":
        # a job's exit headline ("exit 1: a generic error from the program") keeps its fact
        # after the line, as the rules' own headlines do ("… (exit 1)"); "gpu hardware error:
        # exit 1: a generic error" named neither the line nor the meaning
        lead, sep, _rest = f.title.partition(": ")
        short = sep and f.subject.kind == "job" and len(lead) <= 40
        title = f"{title} ({lead})" if short else f"{label_words(label)}: {f.title}"
    return replace(
        f,
        root_cause=label,
        title=title,
        explanation=f"{why} {f.explanation}".strip(),
        remedy=remedy,
        confidence=min(f.confidence, 0.5),
    )
