"""The weak patterns: symptoms (a bare ``Killed``, a ``Traceback``, a generic ``ERROR``, a
code that names no cause) the log scanner falls back to when no line names a cause, and the
lines that only look like errors (:data:`HARMLESS`). In precedence order, after every strong
pattern of :mod:`cockpit.diagnosis.patterns`."""

from __future__ import annotations

from cockpit.diagnosis import cann_codes, catalogue, k8s_reasons, xid_codes, zh_terms
from cockpit.diagnosis.pattern_base import DAEMON_KINDS as _DAEMON_KINDS
from cockpit.diagnosis.pattern_base import NOT_DAEMON as _NOT_DAEMON
from cockpit.diagnosis.pattern_base import Pattern
from cockpit.diagnosis.pattern_base import spec as _p
from cockpit.diagnosis.pattern_base import specs as _specs

WEAK: tuple[Pattern, ...] = (
    # the state word alone (a sacct cell, prose quoting it): cited only when no line says the
    # event (slurmstepd's 'CANCELLED AT … DUE TO PREEMPTION' is strong, patterns.py)
    _p("preempted_state_word", r"\bPREEMPTED\b", "preempted", "warning", tier=0, strong=False),
    _p(
        "step_mem_warning",
        r"Exceeded step memory limit at some point|hit memory limit at least once",
        "oom_killed",
        "warning",
        tier=1,
        strong=False,
    ),
    _p(
        "bare_killed",
        rb"\bKilled\b|" + zh_terms.KILLED,
        "oom_killed",
        "warning",
        tier=2,
        strong=False,
        kinds=_NOT_DAEMON,
    ),
    # a launcher (deepspeed, torchrun/elastic) reporting its child's death by a signal as a
    # negative code: -9 SIGKILL is nearly always the kernel's OOM killer (host RAM), -7 SIGBUS
    # in a container a /dev/shm too small for the ranks' shared buffers, -11/-6/-4/-8 a crash
    _p(
        "launcher_child_sigkill",
        r"(?:return code =|exit ?code:?) ?-9\b",
        "oom_killed",
        "warning",
        tier=2,
        strong=False,
    ),
    _p(
        "launcher_child_sigbus",
        r"(?:return code =|exit ?code:?) ?-7\b",
        "shared_memory_exhausted",
        "warning",
        tier=2,
        strong=False,
    ),
    _p(
        "launcher_child_crash",
        r"(?:return code =|exit ?code:?) ?-(?:4|6|8|11)\b",
        "application_error",
        tier=2,
        strong=False,
    ),
    # a container's or a shell's exit status 128+N for a crash signal: 132 SIGILL (a binary
    # built for CPU instructions the node lacks, e.g. TensorFlow's AVX), 134 SIGABRT, 136 SIGFPE,
    # 139 SIGSEGV; said by the platform at info level ("container failed with non-zero exit
    # code: 132", conmon's "exited with status 132", describe's "Exit Code:    139")
    _p(
        "exit_status_crash_signal",
        r"(?:exit(?:ed)?(?: with)? (?:code|status)|Exit Code|exitCode)[:=]?[ \t(]*"
        r"(?:132|134|136|139)\b",
        "application_error",
        "critical",
        tier=2,
        strong=False,
    ),
    # a launcher's summary that a node could not be reached to start ranks (DeepSpeed's
    # hostfile check, pdsh, a Python launcher's ssh subprocess): ssh's exit status 255 is ssh's
    # own failure (name, route, host key, key); the ssh line beside it says which, so weak
    _p(
        "launcher_ssh_unreachable",
        r"was not reachable via ssh|: ssh exited with exit code 255\b|"
        r"Command '\[?'?ssh\b[^\n]*returned non-zero exit status 255\b",
        "mpi_launch_failed",
        tier=2,
        strong=False,
    ),
    # Paddle's launcher (paddle.distributed.launch, fleet) waiting for its peers' trainer
    # endpoints: when it never ends nothing listens there (the launch not started on that
    # node, a wrong --ips, a firewall), torchrun's rendezvous wait in Paddle's words. Weak:
    # healthy runs print it too for the seconds their peers take to start
    _p(
        "paddle_endpoints_not_ready",
        r"server not ready, wait \d+ sec to retry|not ready endpoints: ?\[",
        "mpi_network_error",
        "warning",
        tier=2,
        strong=False,
    ),
    # srun's steps waiting inside the allocation for resources earlier steps hold (Slurm 20.11+
    # no longer shares them by default): slow or stuck, not failed; any real error wins
    _p(
        "srun_step_waiting",
        r"step creation (?:temporarily|still) disabled, retrying",
        "pending_resources",
        "warning",
        tier=0,
        strong=False,
    ),
    *_specs(cann_codes.pattern_specs(False)),
    _p(
        "npu_aicore_exception",
        r"aicore (?:error )?exception|AICORE Kernel task happen error|"
        r"ACL_ERROR_RT_AICORE_EXCEPTION",
        "application_error",
        strong=False,
    ),
    _p("pta_error", r"\bERR\d{5} [A-Z]+ ", "application_error", strong=False),
    # torch_npu's wrapper of a failed HCCL call ("HCCL function error: HcclGetRootInfo(&hcclID),
    # error code is 7"): the collective failed; CANN's message under it says why (a messenger,
    # logscan._messenger_cause)
    _p("pta_hccl_error", r"HCCL function error: ", "nccl_communication_error", strong=False),
    _p(
        "mox_obs_error",
        r"MoxFileRespException|Error occurs when accessing to OBS",
        "input_path_not_found",
        strong=False,
    ),
    *_specs(xid_codes.pattern_specs(False)),
    *_specs(k8s_reasons.pattern_specs(False)),
    # the catalogue's messages that name only a domain: an error line, never "nothing wrong"
    *_specs(catalogue.pattern_specs(False)),
    # a C++ exception nobody caught: "terminate called after throwing an instance of 'X'" then
    # "  what():  <message>"; the message line says what failed, the abort after it does not
    _p("cxx_uncaught_what", r"\bwhat\(\): +\S", "application_error", tier=2, strong=False),
    _p(
        "crash",
        rb"Segmentation fault|Bus error|core dumped|\bAborted\b|Floating point exception|"
        + zh_terms.CRASH,
        "application_error",
        "critical",
        tier=2,
        strong=False,
    ),
    # slurmstepd/slurmctld say a task died of a crash signal (ILL, ABRT, BUS, FPE, SEGV) only
    # at info level: "get_exit_code task 0 died by signal: 11", "_job_complete: JobId=7
    # WTERMSIG 11", "task 0 (4242) exited. Killed by signal 11."
    _p(
        "slurm_task_signal",
        r"died by signal: (?:4|6|7|8|11)\b|\bWTERMSIG (?:4|6|7|8|11)\b|"
        r"Killed by signal (?:4|6|7|8|11)\b",
        "application_error",
        "critical",
        tier=1,
        strong=False,
    ),
    _p(
        "traceback",
        r"Traceback \(most recent call last\)|\bException\b|\bFATAL\b|\bfatal:|\bpanic:",
        "application_error",
        "critical",
        tier=2,
        strong=False,
        kinds=_NOT_DAEMON,
    ),
    # a Python exception line without its traceback ("ValueError: bad shape"), also indented
    # as torchrun's "Root Cause" block quotes the child's traceback from its error file
    _p(
        "py_exception",
        r"^[ \t]*(?:\w+\.)*\w*(?:Error|Exception|Interrupt): ",
        "application_error",
        "critical",
        tier=2,
        strong=False,
        kinds=_NOT_DAEMON,
    ),
    # a line logged at error level ("ERROR: input file … not found", "[ERROR] …",
    # "2026-12-05 08:00:01 FATAL …"): an error, not a warning, though no rule knows its
    # sentence (the log viewer counted it a warning, "0 errors", while diagnose named it the
    # first red error). What comes before the level is a log's prefix (a time, a [tag], a
    # 'name:'), not words ('Mean ERROR: 0.031', 'Found 0 ERROR lines', a table's ERROR
    # column), and words follow it, not a bare number ('ERROR: 0'): those were red. No
    # lookaround: RE2 takes it (the combined scan fell back to the stdlib engine, ~100x slower)
    _p(
        "level_error",
        r"^[ \t]*(?:(?:[^\s\d]*\d\S*|\S*[:\]|\-])[ \t]+){0,3}?"
        r"\[?(?:ERROR|FATAL|CRITICAL)\]?(?::|[ \t])[ \t]*[-+]?[\d.]*%?[ \t]*[^\s\d.%+\-]",
        "application_error",
        "critical",
        tier=2,
        strong=False,
        kinds=_NOT_DAEMON,
    ),
    _p(
        "generic_error",
        r"(?:\b|\x1b\[[0-9;]*m)(?:error|ERROR|Error|failed|Failed|FAILED)\b",
        "application_error",
        "warning",
        tier=2,
        strong=False,
        kinds=_NOT_DAEMON,
    ),
    # a failure said without an error word ("cannot create directory '/x': Permission denied",
    # munged's "Logfile is insecure", "Unable to resolve …"): the libc and tool wordings of
    # a refused or missing resource are evidence, never "nothing wrong" (two unseen reports
    # of batch 25 were silent on such lines); kind_words names their cause
    _p(
        "failure_phrase",
        rb"Permission denied|Operation not permitted|No such file or directory"
        rb"|Connection refused|No route to host|\bis insecure\b"
        rb"|\b(?:[Cc]annot|[Cc]an't|[Cc]ould not|[Uu]nable to) (?:create|open|write|access|connect"
        rb"|resolve|allocate|execute|mount|bind)\b|" + zh_terms.ERRNO_WORDS,
        "application_error",
        "warning",
        tier=2,
        strong=False,
        kinds=_NOT_DAEMON,
    ),
    _p(
        "zh_failed",
        zh_terms.FAILED,
        "application_error",
        "warning",
        tier=2,
        strong=False,
        kinds=_NOT_DAEMON,
    ),
    _p(
        "daemon_error",
        r"\berror: ",
        "application_error",
        "warning",
        tier=1,
        strong=False,
        kinds=_DAEMON_KINDS,
    ),
)

# Lines that look like errors but appear on healthy runs.
HARMLESS: tuple[bytes, ...] = (
    rb"mpi/pmix\S*: .*[Cc]an ?not load PMIx library",
    rb"Could not open \S*.*state file",
    rb"No (?:job|node|resv|trigger|part)\w* state file",
    rb"error: _get_cgroup|cgroup namespace .* not supported",
    rb"NCCL INFO",
    # NCCL < 2.8 warned that it found no verbs library on every healthy run of a host without
    # InfiniBand (it then uses sockets); later releases print the same words at INFO level
    rb"NCCL WARN Failed to open lib(?:ibverbs|mlx5)\.so",
    # npu-smi and every CANN tool print it in a container without the host's log config
    rb"DrvMngGetConsoleLogLevel failed",
    # srun/salloc's progress note while the allocation waits: not the ModelArts queue
    rb"^(?:srun|salloc): job \d+ queued and waiting for resources",
    rb"\b0 errors?\b|\bno errors?\b|errors?=0\b|error_count[=:] ?0\b",
)
