"""The error-pattern catalogue: regexes over log *bytes* mapped to root-cause labels.

Every pattern names the label it carries (``docs/root-causes.md``), a severity, the
evidence tier it usually comes from (0 scheduler, 1 node, 2 application) and whether it
is *strong* (the line names a cause) or *weak* (a symptom such as a bare ``Killed``, a
``Traceback`` or a generic ``ERROR``). The log scanner prefers the first strong line and
only falls back to the first weak one, so cascades and loud generic errors never win
over the line that says why.

Order matters: when one line matches several patterns the first one in
:data:`PATTERNS` labels it, so specific patterns come before general ones (NCCL's
``Connection reset by peer`` before the generic network one, ``FailedMount`` before the
``error while loading shared libraries`` nested inside its message).

:data:`HARMLESS` lines look like errors but are printed on healthy runs (Slurm's PMIx
plugin notice at every step start, missing state files on a fresh controller); the
scanner skips them.

Reason and code families that are data (CANN error codes, Kubernetes pod reasons, NVIDIA
Xids and host-memory errors) live in :mod:`cockpit.diagnosis.cann_codes`,
:mod:`cockpit.diagnosis.k8s_reasons` and :mod:`cockpit.diagnosis.xid_codes`, Chinese terms
(UTF-8 and GBK) in :mod:`cockpit.diagnosis.zh_terms`; their patterns are generated here, in
precedence order, from those tables.
"""

from __future__ import annotations

import re

from cockpit.diagnosis import cann_codes, catalogue, k8s_reasons, slurm_codes, xid_codes, zh_terms
from cockpit.diagnosis.pattern_base import NOT_DAEMON as _NOT_DAEMON
from cockpit.diagnosis.pattern_base import Pattern
from cockpit.diagnosis.pattern_base import spec as _p
from cockpit.diagnosis.pattern_base import specs as _specs
from cockpit.diagnosis.patterns_fabric import FABRIC
from cockpit.diagnosis.patterns_slurm_daemons import SLURM_DAEMONS
from cockpit.diagnosis.patterns_storage import OBJECT_STORAGE
from cockpit.diagnosis.patterns_weak import HARMLESS, WEAK


def _pending_reasons_in_text() -> tuple[Pattern, ...]:
    """A pending job's reason pasted as text (a squeue row quoted in prose or chat, header and
    columns gone): "(Code" for every code after which the job does not start by itself
    (Slurm's own list, :mod:`cockpit.diagnosis.slurm_codes`), and ReqNodeNotAvail's long
    wording; a warning, as the job waits rather than fails."""
    by_label: dict[str, list[str]] = {}
    for code, r in sorted(slurm_codes.REASONS.items()):
        if r.outcome in {"admin", "user", "depends"}:
            by_label.setdefault(r.label, []).append(re.escape(code))
    # squeue shows the long wording when too many nodes are down, drained or reserved; and
    # ReqNodeNotAvail with the nodes it names is quoted without its parenthesis in prose and
    # markdown ("> ReqNodeNotAvail, UnavailableNodes: **dagobah** and **hoth**", batch 29)
    also = {
        "pending_node_unavailable": "|Nodes required for job are DOWN, DRAINED"
        r"|\bReqNodeNotAvail,[ \t]*UnavailableNodes:"
    }
    return tuple(
        _p(
            f"pending_reason_text_{label}",
            r"(?:\(|（)`?(?:" + "|".join(codes) + r")\b" + also.get(label, ""),
            label,
            "warning",
            tier=0,
            kinds=_NOT_DAEMON,
        )
        for label, codes in by_label.items()
    )


PATTERNS: tuple[Pattern, ...] = (
    # A node's prolog/epilog output (a log recognised as such): whatever fails in it is the
    # prolog failing, which drains the node, not a user's missing command or file.
    _p(
        "prolog_script_error",
        r": command not found|: No such file or directory|[Pp]ermission denied|\berror\b|"
        r"\bERROR\b|\b[Ff]ailed\b|\bfatal\b",
        "node_drain_prolog_epilog_failed",
        tier=1,
        kinds=frozenset({"prolog"}),
    ),
    # ---------------------------------------------------------------- scheduler verdicts
    _p(
        "slurm_time_limit",
        r"DUE TO TIME LIMIT|Time limit exhausted for JobId",
        "time_limit",
        tier=0,
    ),
    _p(
        "slurm_node_failure",
        r"DUE TO NODE FAILURE|Killing JobId=\d+ on failed node",
        "node_not_responding",
        tier=0,
    ),
    _p("slurm_oom_cgroup", r"Detected \d+ oom[-_]kill event", "oom_killed", tier=1),
    _p(
        "slurm_oom_exceeded",
        r"exceeded memory limit \(\d+ > \d+\), being killed|Exceeded job memory limit|"
        r"JobId=\d+ OOM failure|"
        # srun's report of a task the OOM killer ended (Slurm 19.05+)
        r"srun: error: \S+: tasks? [\d,-]+: Out Of Memory",
        "oom_killed",
        tier=0,
    ),
    _p(
        "kernel_oom",
        r"Out of memory: Kill(?:ed)? process|Memory cgroup out of memory|invoked oom-killer|"
        r"\boom-kill:",
        "oom_killed",
        tier=1,
    ),
    _p(
        "container_oom",
        # kubectl describe's "Exit Code:    137" (Reason: Error, not OOMKilled) and an operator's
        # "terminated with exit code (137)": the container's SIGKILL, most often its memory limit
        # (not a platform's "Exit code: 137" event: a SIGKILL whose log may name the cause, as
        # a CUDA out of memory before it)
        r"return code: ?137\b|exit(?:ed)? (?:with|code)[: ]*137\b|exit with 137\b|"
        r"Exit Code:[ \t]{2,}137\b|exit code \(137\)|"
        # the same SIGKILL as Open MPI names the first rank that died of it (not MPICH's
        # "KILLED BY SIGNAL: 9", also said of the ranks Hydra kills after another one failed)
        r"noticed that process rank \d+ [^\n]*exited on signal 9\b",
        "oom_killed",
        tier=2,
    ),
    # the process ran out of file descriptors (RLIMIT_NOFILE, `ulimit -n`; a job inherits the
    # submit shell's soft limit): EMFILE from any producer, glibc's Chinese text, and PyTorch's
    # own words when passing tensors by descriptor fails. Before shared memory: PyTorch's
    # "unable to open shared memory object … Too many open files (24)" is this limit.
    _p(
        "open_files_limit",
        rb"[Tt]oo many open files|\bEMFILE\b|\bENFILE\b|received 0 items of ancdata|"
        + zh_terms.zh("打开的文件过多"),
        "open_files_limit",
        tier=2,
    ),
    # /dev/shm too small (Docker's 64 MB default): DataLoader workers die of SIGBUS; before the
    # generic "Bus error" crash and before host OOM wording
    _p(
        "shared_memory",
        r"out of shared memory|insufficient shared memory \(shm\)|"
        r"DataLoader worker \(pid \d+\) is killed by signal: Bus\b|"
        # PyTorch's shared segments (/dev/shm/torch_*) that could not be created or filled
        r"unable to (?:open shared memory object|write to file) </torch_",
        "shared_memory_exhausted",
        tier=2,
    ),
    _p(
        "slurm_launch_held",
        r"launch[_ ]failed[_ ]requeued[_ ]held",
        "pending_launch_failed_held",
        "warning",
        tier=0,
    ),
    _p(
        "slurm_dependency_never",
        r"DependencyNeverSatisfied|Job dependency problem",
        "dependency_failed",
        "warning",
        tier=0,
    ),
    _p(
        "slurm_partition_limit",
        r"Reason=(?:PartitionConfig|PartitionNodeLimit|PartitionTimeLimit)\b",
        "pending_partition_limit",
        "warning",
        tier=0,
    ),
    _p(
        "slurm_submit_io_error",
        r"I/O error writing script/environment to file",
        "disk_full",
        tier=0,
    ),
    _p(
        "slurm_submit_unsatisfiable",
        r"Memory specification can not be satisfied|Requested node configuration is not available|"
        r"CPU count per node can not be satisfied|Node count specification invalid|"
        r"Temporary disk specification can not be satisfied|"
        r"More processors requested than permitted|"
        r"Requested partition configuration not available now|"
        r"Invalid generic resource \(gres\) specification|"
        # a step (srun, or an MPI launcher's srun) asking for more than its allocation has
        r"Only allocated \d+ nodes asked for \d+|"
        # --constraint names a feature no node of the cluster defines
        r"Batch job submission failed: Invalid feature specification|"
        # sbatch refuses the script itself before asking slurmctld: nothing is queued, and
        # never will be until the script is fixed (Windows line breaks, no #! line, empty)
        r"Batch script (?:contains DOS line breaks|is empty|contains only whitespace)|"
        r"This does not look like a batch script",
        "submit_rejected_unsatisfiable",
        tier=0,
    ),
    _p(
        "slurm_submit_policy",
        # as sbatch/srun print them, and as workflow tools (Autosubmit) lower-case them
        r"(?i:(?:Batch job submission failed|Unable to allocate resources): "
        r"(?:Invalid (?:qos|account|partition)|Requested time limit is invalid|"
        r"Requested reservation is invalid|Job violates accounting/QOS policy|"
        r"Invalid account or account/partition|No partition specified))|bank_limit plugin|"
        # a site's job_submit filter explains the refusal on the lines before it
        r"[Tt]ime ?limit exceeds (?:the )?max(?:imum)?\b|"
        r"can not exceed the available balance|QOSMaxSubmitJob|AssocMaxSubmitJob|"
        # the reason code on its own line before the refusal (QOSMaxWallDurationPerJobLimit,
        # QOSGrpGRES, QOSMinNode, AssocGrpCpuLimit...), and both as workflow tools (Autosubmit)
        # print them: lower-cased
        r"(?i:(?:sbatch|salloc|srun): error: (?:qos|assoc)(?:max|min|grp)\w+\s*$|"
        r"submission failed: job violates accounting/qos policy)|"
        # a site's GPU-request filter names what the request lacks ("No gpu count given,
        # specify --gres=gpu", "Gres format wrong", "You must always specify a type ... GRES")
        r"(?:sbatch|salloc|srun): error: [^\n]*(?:specify (?:a type|--gres)|[Gg]res format|"
        r"gpu count given|GPU specification)",
        "submit_rejected_policy",
        tier=0,
    ),
    # authentication between Slurm's daemons and clients (munge, credentials, JWT): the
    # controller then drops what it cannot verify, and clients see a bare "Zero Bytes" reply
    _p(
        "slurm_auth_failed",
        r"Munge decode failed|Invalid authentication credential|auth/munge\b[^\n]*"
        r"(?:fail|error|invalid)|Protocol authentication error|Munged communication error|"
        r"[Ee]xpired credential|[Rr]ewound credential|[Rr]eplayed credential|"
        r"Security violation,? \w+ RPC|auth/jwt\b[^\n]*(?:fail|invalid|expired)|"
        r"Unable to (?:create|generate|obtain) (?:a )?(?:munge )?credential|"
        # the client cannot reach munged; slurmd refuses a step's job credential (clock skew,
        # a replayed or forged one): the launch failure that follows is its consequence
        r"Munge encode failed|Credential replayed|Job credential (?:expired|revoked)|"
        r"Invalid job credential|Credential signature check|"
        # auth/munge's own line before a rewound/expired credential, ahead of the refusal
        r"Check for out of sync clocks",
        "auth_failed",
        tier=0,
    ),
    _p(
        "slurm_preempted",
        # slurmstepd's cancel line (also elided, 'CANCELLED ... DUE TO PREEMPTION'), the
        # controller's, a state field, and preemption said in prose ('will be preempted',
        # Volcano's preempt action): the event. A bare PREEMPTED is weak (patterns_weak): prose
        # quoting the state word ('"PREEMPTED is non-terminal"') is talk about it
        r"CANCELLED\b[^\n]{0,60}?DUE TO PREEMPTION|\bJob \d+ preempted\b|"
        r"\b(?:Job)?State\s*[=:]\s*PREEMPTED\b|"
        r"\b(?:was|were|is|are|be|been|being|got|get|gets) preempted\b",
        "preempted",
        "warning",
        tier=0,
    ),
    # a step that cannot be placed in its cgroup (cpuset full, cgroup.procs unwritable):
    # Slurm could not launch it. ENOSPC on /sys/fs/cgroup is not a full disk.
    _p(
        "slurm_cgroup_launch",
        r"slurmstepd: error: [^\n]*/sys/fs/cgroup/[^\n]*(?:failed|No space left|"
        r"Permission denied)|task/cgroup: [^\n]*(?:unable|failed)|Slurmd could not execve job|"
        r"_spawn_job_container: Unable|cgroup namespace [^\n]* not supported|"
        # job_container/tmpfs: the step cannot enter the job's private /tmp (BasePath missing)
        r"error: container_[pg]_(?:join|create)\b|job_container/tmpfs[^\n]*(?:fail|unable)|"
        # slurmstepd cannot run the batch script from slurmd's spool (SlurmdSpoolDir unset or
        # not executable, the spool gone under NFS)
        r"execve\(\): \S*slurm_script: |"
        # the allocated node's name does not resolve (a recycled cloud node, a stale NodeAddr):
        # srun, or the step's PMIx plugin, cannot reach its slurmd
        r"[Cc]an't find (?:an )?address\b",
        "job_launch_failed",
        tier=1,
    ),
    _p(
        "slurm_controller_unreachable",
        r"Unable to contact slurm controller|Socket timed out on send/recv|"
        r"slurm_load_\w+ error: Unable to contact|"
        # sacct/sacctmgr (or slurmctld) cannot reach slurmdbd, the accounting daemon (port 6819)
        r"failed to open persistent connection to|Problem talking to the database|"
        # a client or a node's daemon cannot resolve the controller's name or address (DNS,
        # /etc/hosts); slurmctld's own "Unable to resolve" is about a node, not matched here
        r"(?:slurmstepd|slurmd|srun|sbatch|salloc|sinfo|squeue|scontrol|sacct\w*)\b[^:\n]*: "
        r"error: (?:slurm_set_addr: )?Unable to resolve \"|"
        r"Unable to establish control machine address",
        "controller_unreachable",
        tier=0,
    ),
    # ---------------------------------------------------------------- node state / daemons
    _p(
        "slurm_config_differs",
        r"Node configuration differs from hardware|[Ll]ow socket\*core\*thread count|"
        r"has low cpu count \(\d+ < \d+\)|"
        # slurmd found fewer devices than gres.conf/slurm.conf declare for the node
        r"gres/\w+ count (?:reported lower than configured|too low)",
        "node_config_mismatch",
        tier=1,
    ),
    _p(
        "slurm_low_realmemory",
        r"Low RealMemory|has low real_memory size",
        "node_drain_low_memory",
        tier=0,
    ),
    _p(
        "slurm_prolog_epilog",
        r"[Pp]rolog (?:error|failed|failure)|[Ee]pilog (?:error|failed|failure)|"
        r"spank-(?:epilog|prolog): error|"
        r"prolog_slurmctld failed|error: (?:run_)?(?:prolog|epilog)\b",
        "node_drain_prolog_epilog_failed",
        tier=1,
    ),
    # slurmstepd gave up on a step whose processes survived SIGKILL (UnkillableStepTimeout)
    _p(
        "slurm_kill_task_failed",
        r"Kill task failed|DUE TO JOB NOT ENDING WITH SIGNALS",
        "node_drain_kill_task_failed",
        tier=0,
    ),
    _p(
        "slurm_unexpected_reboot",
        r"[Nn]ode unexpectedly rebooted",
        "node_down_unexpected_reboot",
        tier=0,
    ),
    # the node did not come back in time from a reboot Slurm asked for or a power-save resume:
    # slurmctld's reason suffix and log line, whatever the operator's reason before it says
    _p(
        "slurm_boot_failed",
        r"reboot timed out|ResumeTimeout reached|not resumed by ResumeTimeout",
        "node_boot_failed",
        tier=0,
    ),
    _p(
        "slurm_not_responding",
        r"\bNot responding\b|[Nn]odes? \S+ not responding",
        "node_not_responding",
        tier=0,
    ),
    # ---------------------------------------------------------------- containers / ModelArts
    *_specs(k8s_reasons.pattern_specs(True)),
    _p(
        "modelarts_queuing",
        rb"queuing and awaiting resource allocation|[Ww]aiting for (?:resource|the resources)|"
        + zh_terms.QUEUING,
        "queued_insufficient_resources",
        "info",
        tier=0,
    ),
    # Kueue could not admit the workload within its ClusterQueue's quota (the queue lacks the
    # resource, or its nominal quota and borrowing limit are used up)
    _p(
        "kueue_quota",
        r"couldn't assign flavors to pod set|[Ww]orkload didn't fit in the remaining quota|"
        r"insufficient (?:unused )?quota for \S+ in flavor|"
        r"borrowing limit for \S+ in flavor \S+ exceeded",
        "queued_quota_limit",
        "warning",
        tier=0,
    ),
    _p(
        "modelarts_quota",
        r"ModelArts\.0116|[Qq]uota (?:exceeded|limit) for (?:training|resource)",
        "queued_quota_limit",
        "warning",
        tier=0,
    ),
    _p(
        "modelarts_init_timeout",
        rb"[Pp]reparations? timed out|" + zh_terms.INIT_TIMEOUT,
        "init_timeout",
        tier=0,
    ),
    # the device exists but another process or container holds it (Ascend DCMI: one
    # container per NPU); before "unavailable", whose remedy is a driver or a mount
    _p(
        "accelerator_busy",
        r"because the device is used|dcmi module initiali[sz]e failed\. ret is -8020\b|"
        # CUDA error 46: every device is held (Exclusive Process compute mode, another job)
        r"CUDA-capable devices? (?:are|\(s\) is/are) busy or unavailable|"
        r"cudaErrorDevicesUnavailable|CUDA_ERROR_DEVICES_UNAVAILABLE|\(46 vs\. 0\)",
        "accelerator_busy",
        tier=1,
    ),
    _p(
        "gpu_device_unavailable",
        r"requested number of devices unavailable|no CUDA-capable device is detected|"
        r"CUDA_ERROR_NO_DEVICE|Found no NVIDIA driver|"
        r"NVIDIA-SMI has failed because it couldn't communicate|"
        # PyTorch when CUDA_VISIBLE_DEVICES names no GPU the process can see; CANN when
        # ASCEND_RT_VISIBLE_DEVICES names NPUs the host or VM does not have
        r"No CUDA GPUs are available|set ASCEND_RT_VISIBLE_DEVICES:\S+ error|"
        r"Set visible device failed, invalid device|"
        # a device index the process does not have (set_device(local_rank) when each task
        # sees one GPU: --gpus-per-task, CUDA_VISIBLE_DEVICES)
        r"invalid device ordinal|cudaErrorInvalidDevice\b|CUDA_ERROR_INVALID_DEVICE\b|"
        # CUDA error 802 in any producer's wording (PyTorch, nccl-tests, cupy, ggml, a CUDA
        # sample): on an NVSwitch server no GPU initialises until NVIDIA Fabric Manager has set
        # up the fabric; the Fabric Manager line that says why (below) is cited when present
        r"system not yet initialized|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY|"
        # Fabric Manager itself not ready: its service failed, or a probe waited in vain
        r"[Ff]abric[ _-]?[Mm]anager[^\n]*(?:never (?:reported|reached|became)|"
        r"not (?:running|started|ready|active)|failed to start)|"
        r"Failed to start NVIDIA fabric manager|nvidia-fabricmanager\.service: Failed",
        "gpu_not_available",
        tier=1,
    ),
    # object storage (OBS/S3/OSS/GCS, its FUSE mounts, a trainer's data channel)
    *OBJECT_STORAGE,
    # a bare program name is a missing command; a path is missing input
    _p(
        "py_missing_program",
        r"FileNotFoundError: \[Errno 2\] No such file or directory: '[\w+-]+'",
        "command_not_found",
        tier=2,
    ),
    _p(
        "py_file_not_found",
        r"FileNotFoundError: \[Errno 2\]|IOError: \[Errno 2\] No such file or directory",
        "input_path_not_found",
        tier=2,
    ),
    _p("py_not_a_directory", r"\[Errno 20\] Not a directory", "input_data_invalid", tier=2),
    # a dataset reader found the file but not in its format (MindSpore's MNIST/CIFAR readers)
    _p(
        "dataset_format",
        r"This is not the mnist (?:image|label) file|Invalid (?:cifar\d*|mnist) (?:data )?file",
        "input_data_invalid",
        tier=2,
    ),
    _p("read_only_fs", r"Read-only file system", "storage_read_only", tier=2),
    # Python, or a shell tool (mkdir, touch, cp), refused a path by its permissions (a mount
    # or directory the job's user may not write): the storage's access, not the program
    _p(
        "py_permission_denied",
        r"(?:PermissionError: )?\[Errno 13\] Permission denied: '|"
        r"cannot (?:create (?:directory|regular file)|touch|open|remove) [^\n]*: Permission denied",
        "storage_access_denied",
        tier=2,
    ),
    # Singularity/Apptainer cannot bind a path the node lacks into the container (a site's or
    # the user's bind list): the mount is the fault, not the image
    _p(
        "container_bind_missing",
        r"container creation failed: mount [^\n]*(?:doesn't|does not) exist",
        "storage_mount_failed",
        tier=1,
    ),
    # a container runtime that cannot create the container at all: Singularity/Apptainer's
    # FATAL "container creation failed" (no loop device, a missing /etc/resolv.conf) and "could
    # not open image" (the image argument missing or wrong), Pyxis/Enroot's start failures
    _p(
        "container_entrypoint",
        r"exited with code 127|executable file not found in \$PATH|exec format error|"
        r"OCI runtime (?:create|exec) failed|\b(?:CreateContainerError|RunContainerError|"
        r"ContainerCannotRun|StartError)\b|FATAL: +(?:container creation failed|"
        r"[^\n]*could not open image)|pyxis: (?:failed to (?:import|create|start)|"
        r"container start failed)",
        "container_entrypoint_failed",
        tier=1,
    ),
    # ---------------------------------------------------------------- GPU / communication
    # Device memory (HBM) exhausted: before NCCL so "NCCL WARN Cuda failure 'out of memory'" is
    # an OOM.
    # Host-RAM OOM lines (kernel, cgroup, Go's "runtime: out of memory") stay oom_killed: every
    # alternative names the device (CUDA/NPU/GPU, a CUDA/cuBLAS/CANN status) or a CANN module.
    _p(
        "gpu_oom",
        r"CUDA out of memory|torch\.(?:cuda\.)?OutOfMemoryError|CUDA error: out of memory|"
        r"CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED|"
        r"CUDNN_STATUS_ALLOC_FAILED|Cuda failure '?out of memory|"
        r"unhandled cuda error[^\n]*out of memory|OOM when allocating tensor|"
        r"RESOURCE_EXHAUSTED: Out of memory|(?:NPU|GPU|HBM|[Dd]evice) out of memory|\bEL0004\b|"
        r"GpuLaunchKernel[^\n]*status: Internal: out of memory|"
        # CUDA error 2 (cudaErrorMemoryAllocation) as Paddle prints it
        r"(?i:cuda error\(2\)[.,:]? ?out of memory)|"
        r"^\[ERROR\] (?:RUNTIME|DRV|GE|HCCL|ASCENDCL|TBE|APP)\b[^\n]*(?:out of memory|"
        r"[Mm]alloc[^\n]*fail)",
        "gpu_out_of_memory",
        tier=2,
    ),
    # ---------------------------------------------------------------- Ascend (CANN, HCCL)
    # the device's own account of a collective that timed out, inside an E*9999 message whose
    # code alone says only "Inner Error": what it says is the cause
    _p(
        "hccl_device_timeout",
        r"hccl fftsplus task timeout|event wait timeout occurred during task execution|"
        # the runtime's reason for a device/stream sync that gave up (107020): a task on the
        # stream (in multi-card training the collective's wait) never finished
        r"Synchronize\w* execute failed, reason=\[task timeout\]|"
        r"notify wait timeout occurred|ProcessStars\w*(?:Hccl|Wait)\w*Timeout|"
        r"HCCL[^\n]{0,80}(?:timeout|timed out)",
        "nccl_communication_error",
        tier=2,
    ),
    *_specs(cann_codes.pattern_specs(True)),
    # HCCL's LINK_ERROR_INFO table (hcomm's HcclSocketManager::PrintErrorConnection): its
    # border, header and separator rows are plog lines that carry no cause; the row of a link
    # that did not come up does (its Status: TransformSocketStatus's "time out", "connect
    # failed", "no connect", "connecting"; the row ends with LOG_KEYWORDS_LINK_INFO)
    _p(
        "hccl_link_failed",
        r"\|\s*(?:time out|connect failed|no connect|connecting)\s*\|[^\n]*\|\s*LinkInfo\b",
        "nccl_communication_error",
        tier=2,
    ),
    # a plog line with a message of its own: HCCP/RoCE's, or HCCL's after its [pid][tid]
    # brackets, not the table's rows (which start with "|" or "_" after them)
    _p(
        "hccl_plog",
        r"^\[ERROR\] (?:HCCP|ROCE)\(|^\[ERROR\] HCCL\([^\n]*?\](?: ?\[\d+\])+ *[^ |_\n]",
        "nccl_communication_error",
        tier=2,
    ),
    _p(
        "nccl",
        r"\bNCCL (?:error|WARN)\b|nccl\w*Error|NCCL communicator was aborted|"
        # NCCL 2.0-2.3 printed its warnings without the "NCCL" word ("transport/net_ib.cu:781
        # WARN NET/IB : Got completion with error 12"): the IB transport's own failures
        r"\bWARN NET/IB\b|\bNET/IB ?: Got (?:completion|async event)\b|"
        r"Watchdog caught collective operation timeout",
        "nccl_communication_error",
        tier=2,
    ),
    _p(
        "cuda_driver",
        r"CUDA driver version is insufficient|driver version is insufficient for CUDA runtime|"
        r"not compatible with the current PyTorch installation|"
        r"no kernel image is available for execution|forward compatibility was attempted|"
        r"unsupported PTX version|"
        # PyTorch's own check: its CUDA build needs a newer driver than the node has (one line
        # as RuntimeError, or under an empty "AssertionError:" line in torch < 1.5)
        r"NVIDIA driver on your system is too old|"
        # the driver's user-space libraries were replaced while the old kernel module stays
        # loaded (an unattended upgrade): NVML and CUDA refuse until a reload or reboot
        r"Failed to initialize NVML: Driver/library version mismatch|"
        # NVIDIA Fabric Manager refuses a driver of another release than its own (a pinned or
        # upgraded package): CUDA then says only error 802, "system not yet initialized"
        r"driver interface version \S+ (?:don.?t|doesn.?t|does not) match with driver version",
        "cuda_driver_mismatch",
        tier=2,
    ),
    # ---------------------------------------------------------------- GPU hosts, host memory
    *_specs(xid_codes.pattern_specs(True)),
    # a kernel of the program touched memory it does not own or asserted: the program's bug
    # (or the toolkit it was built with), after the device faults above, which win when present
    _p(
        "cuda_kernel_fault",
        r"an illegal memory access was encountered|cudaErrorIllegalAddress|"
        r"CUDA_ERROR_ILLEGAL_ADDRESS|device-side assert triggered|cudaErrorAssert|"
        r"misaligned address|CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "application_error",
        tier=2,
    ),
    *FABRIC,
    # ---------------------------------------------------------------- storage
    # slurmd drains its node itself when the disk holding its spool fills (a node reason)
    _p("disk_full", r"No space left on device|ENOSPC|SlurmdSpoolDir is full", "disk_full", tier=2),
    # EIO from a job's file system: a shared one's client lost its server or was evicted
    # (Lustre, NFS, GPFS), a local one's disk failed; a line naming the fault itself (an
    # eviction, a stale handle, a quota) is more specific. Not s3fs's "returing EIO" (info)
    _p(
        "filesystem_eio",
        rb"Input/output error|" + zh_terms.zh("输入/输出错误"),
        "shared_fs_unreachable",
        tier=2,
    ),
    # NFS: the file or directory was replaced or removed on the server (or by another client)
    # while this client held it open
    _p(
        "stale_file_handle",
        r"Stale (?:NFS )?file handle|\bESTALE\b",
        "storage_stale_handle",
        tier=2,
    ),
    # HDF5 (h5py, netCDF4, PyTables, xarray) locks every file it opens since 1.10; on NFS
    # without lockd, Lustre mounted without flock or GPFS's "locking disabled" the lock call
    # fails (ENOLCK 37, ENOSYS 38, ENOTSUPP 524), or another process holds it (EAGAIN 11).
    # Only the frame that names errno: the outer frames ("unable to lock the file") announce it
    _p(
        "file_lock_failed",
        rb"unable to lock file, errno\b|file locking disabled on this file system|"
        rb"[Nn]o locks available|\bENOLCK\b|" + zh_terms.zh("没有可用的锁"),
        "storage_file_lock_failed",
        tier=2,
    ),
    # IBM Storage Scale (GPFS): the daemon is down, so its filesystems are not mounted
    _p(
        "gpfs_down",
        r"GPFS is not ready to handle commands|GPFS daemon (?:is )?(?:not running|down)|"
        r"mmmount: [^\n]*(?:failed|error)",
        "storage_mount_failed",
        tier=1,
    ),
    _p(
        "disk_quota", r"Disk quota exceeded|EDQUOT|[Qq]uota exceeded", "disk_quota_exceeded", tier=2
    ),
    # pip/conda gave up (retry warnings before it are not causes: pip often recovers from them)
    _p(
        "dependency_install",
        r"Could not find a version that satisfies the requirement|"
        r"No matching distribution found for|"
        r"Could not install packages due to an OSError: HTTPS?ConnectionPool|CondaHTTPError|"
        r"PackagesNotFoundError|ResolvePackageNotFound",
        "dependency_install_failed",
        tier=2,
    ),
    # an endpoint the job downloads from at start (a model hub, an object store) cannot be
    # reached from the node: urllib3/requests give up connecting, the hub clients say so;
    # after pip's own refusal above, which names the same urllib3 words for the package index
    _p(
        "download_endpoint_unreachable",
        r"Max retries exceeded with url: [^\n]*(?:ConnectTimeoutError|NewConnectionError|"
        r"Network is unreachable|Temporary failure in name resolution|Name or service not known)|"
        r"We couldn't connect to 'https?://[^']+' to load|"
        r"LocalEntryNotFoundError: An error happened while trying to locate the file on the Hub",
        "storage_connection_error",
        tier=2,
    ),
    # ---------------------------------------------------------------- environment
    # the library is there but older than the binary was built for (glibc/libstdc++ symbol
    # versions), or a framework built against another release of its toolkit (undefined
    # symbol at import): ahead of shared_lib, whose words the loader's line may share
    _p(
        "library_version",
        r"version `(?:GLIBC|GLIBCXX|CXXABI|GCC)_[\d.]+' not found|"
        r"(?:ImportError|OSError|error while loading shared libraries)[^\n]*undefined symbol: ",
        "library_version_mismatch",
        tier=2,
    ),
    # the job's Python lacks a package (environment not activated, built without it); CANN's
    # graph engine says only "init env failed" when the toolkit's own Python packages are missing
    _p(
        "python_module",
        r"ModuleNotFoundError: No module named|ImportError: No module named|"
        r"\[Init\]\[Env\]init env failed",
        "python_module_missing",
        tier=2,
    ),
    _p(
        "cann_kernels_missing",
        # CANN has no compiled kernel for an operator: the operator binaries package
        # (Ascend-cann-kernels for the chip) is not installed with the toolkit
        r"Op \w+ does not ha(?:s|ve) any binary",
        "missing_shared_library",
        tier=2,
    ),
    _p(
        "shared_lib",
        r"error while loading shared libraries|cannot open shared object file",
        "missing_shared_library",
        tier=2,
    ),
    # conda/mamba's shell function was never set up in this (batch, non-interactive) shell:
    # `conda activate` refuses, or the command is missing altogether. Before the generic
    # "command not found": the remedy is conda's hook, not the PATH
    _p(
        "conda_shell_not_initialised",
        rb"Run '(?:conda|mamba) init' before '(?:conda|mamba) activate'|"
        rb"Your shell has not been properly configured to use '(?:conda|mamba) activate'|"
        rb"'(?:micro)?mamba' is running as a subprocess and can't modify the parent|"
        rb"\b(?:conda|mamba|micromamba): (?:command not found|" + zh_terms.zh("未找到命令") + rb")",
        "conda_shell_not_initialised",
        tier=2,
    ),
    _p(
        "lmod",
        r"Lmod has detected the following error|module: command not found|"
        r"[Mm]odule(?:File)? .* not found|ERROR:(?:\d+:)? Unable to locate a modulefile",
        "module_load_failed",
        tier=2,
    ),
    # bash: "x: command not found"; dash (sbatch --wrap, /bin/sh): "script: 4: x: not found";
    # busybox ash (alpine images): "/bin/sh: bash: not found"
    _p(
        "command_not_found",
        r": command not found|: \d+: [^\n:]+: not found\s*$|\bsh: [^\n:]+: not found\s*$|"
        r": line \d+: [^\n:]+: No such file or directory|"
        r"execve\(\): [^\n:]+: No such file or directory|exited with exit code 127",
        "command_not_found",
        tier=2,
    ),
    _p(
        "slurm_cancelled",
        r"CANCELLED AT \S+ \*\*\*|_slurm_rpc_kill_job: REQUEST_KILL_JOB|"
        # srun/salloc waiting for an allocation that was cancelled before it started
        r"^(?:srun|salloc): (?:error: )?Job has been cancelled",
        "cancelled_by_user",
        "warning",
        tier=0,
    ),
    *_pending_reasons_in_text(),
    *SLURM_DAEMONS,
    # ---------------------------------------------------------------- Chinese (ModelArts, CANN)
    *(_p(name, rx, label, sev, tier) for name, rx, label, sev, tier in zh_terms.STRONG),
    # ---------------------------------------------------------------- the producers' catalogue
    # Slurm/MUNGE/NCCL/PyTorch/kernel messages that name a cause (cockpit/diagnosis/catalogue):
    # after every hand-written strong pattern, which keeps precedence on a line both match
    *_specs(catalogue.pattern_specs(True)),
    # a Slurm client's refusal whose reason no pattern above knows (slurm_strerror has some
    # 300 messages): still a refusal by the controller, never an unrecognised failure
    _p(
        "slurm_refused_other",
        r"(?i:batch job submission failed|unable to allocate resources|"
        r"job submit/allocate failed|unable to create step for job \d+): \S",
        "submit_rejected_policy",
        tier=0,
    ),
    # ---------------------------------------------------------------- weak: symptoms
    *WEAK,
)

_HARMLESS_RE = re.compile(b"|".join(b"(?:%s)" % h for h in HARMLESS))
_BY_NAME = {p.name: p for p in PATTERNS}


def patterns_for(kind: str, strong: bool | None = None) -> tuple[Pattern, ...]:
    """Patterns that apply to a log ``kind`` (``strong`` None = both strengths)."""
    return tuple(
        p
        for p in PATTERNS
        if (p.kinds is None or kind in p.kinds) and (strong is None or p.strong == strong)
    )


def is_harmless(line: bytes) -> bool:
    return _HARMLESS_RE.search(line) is not None


def classify(line: bytes, kind: str = "app") -> Pattern | None:
    """The first catalogue pattern matching one line, or None (harmless lines give None)."""
    if is_harmless(line):
        return None
    for p in PATTERNS:
        if (p.kinds is None or kind in p.kinds) and _compiled(p).search(line):
            return p
    return None


def match_span(line: str, label: str | None = None, kind: str = "app") -> tuple[int, int] | None:
    """Character span of the phrase that makes ``line`` an error: the earliest match of a pattern
    carrying ``label`` (the finding's root cause) if any, else of any pattern; None if none match.
    Lets displays that shorten a long line keep that phrase visible."""
    raw = line.encode("utf-8", "replace")
    best: tuple[int, int] | None = None
    for want in ((label,) if label else ()) + (None,):
        for p in PATTERNS:
            if (want is not None and p.label != want) or (
                p.kinds is not None and kind not in p.kinds
            ):
                continue
            m = _compiled(p).search(raw)
            # earliest, then shortest: "FailedMount" rather than "FailedMount … AccessDenied"
            if m is not None and (best is None or (m.start(), m.end()) < best):
                best = (m.start(), m.end())
        if best is not None:
            break
    if best is None:
        return None

    def chars(n: int) -> int:
        return len(raw[:n].decode("utf-8", "ignore"))

    return chars(best[0]), chars(best[1])


_COMPILED: dict[str, re.Pattern[bytes]] = {}


def _compiled(p: Pattern) -> re.Pattern[bytes]:
    c = _COMPILED.get(p.name)
    if c is None:
        c = _COMPILED[p.name] = re.compile(p.regex, re.MULTILINE)
    return c


def pattern(name: str) -> Pattern:
    return _BY_NAME[name]
