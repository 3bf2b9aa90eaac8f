"""Failure domains: the team or the layer an operator routes a finding to, before its cause.

Every root-cause label belongs to one domain (``docs/root-causes.md`` lists both). A failure
no rule knows still gets a domain, read from the words of its first red error line
(:func:`domain_of_line`), so "unrecognised failure" is routed, never "nothing wrong".
"""

from __future__ import annotations

import re

from cockpit.i18n import N_, _

# (id, what an operator reads), in routing order
DOMAINS: dict[str, str] = {
    "scheduler": N_("scheduler policy"),
    "auth": N_("authentication"),
    "launch": N_("job launch"),
    "node": N_("node health"),
    "memory": N_("memory"),
    "time": N_("time"),
    "storage": N_("storage"),
    "network": N_("network and collective communication"),
    "accelerator": N_("accelerator (GPU, NPU)"),
    "image": N_("image and container"),
    "software": N_("software environment"),
    "application": N_("application"),
}

LABEL_DOMAIN: dict[str, str] = {
    # Slurm: job ended
    "oom_killed": "memory",
    "shared_memory_exhausted": "memory",
    "time_limit": "time",
    "time_limit_near": "time",
    "memory_near_request": "memory",
    "job_output_silent": "application",
    "training_log_silent": "application",
    "command_not_found": "software",
    "missing_shared_library": "software",
    "module_load_failed": "software",
    "library_version_mismatch": "software",
    "python_module_missing": "software",
    "conda_shell_not_initialised": "software",
    "open_files_limit": "software",
    "mpi_pmi_mismatch": "network",
    "mpi_network_error": "network",
    "mpi_launch_failed": "launch",
    "cuda_driver_mismatch": "accelerator",
    "gpu_out_of_memory": "accelerator",
    "gpu_not_available": "accelerator",
    "gpu_hardware_error": "accelerator",
    "accelerator_busy": "accelerator",
    "nccl_communication_error": "network",
    "disk_full": "storage",
    "disk_quota_exceeded": "storage",
    "cancelled_by_user": "scheduler",
    "application_error": "application",
    "no_failure": "application",
    "preempted": "scheduler",
    "deadline_reached": "time",
    "job_launch_failed": "launch",
    "auth_failed": "auth",
    "inactive_limit": "scheduler",
    "job_suspended": "scheduler",
    # Slurm: waiting or refused
    "pending_resources": "scheduler",
    "pending_priority": "scheduler",
    "pending_partition_limit": "scheduler",
    "pending_qos_limit": "scheduler",
    "pending_dependency": "scheduler",
    "dependency_failed": "scheduler",
    "pending_node_unavailable": "node",
    "pending_launch_failed_held": "launch",
    "pending_partition_down": "scheduler",
    "pending_held": "scheduler",
    "pending_reservation": "scheduler",
    "pending_invalid_account": "scheduler",
    "priority_qos_surge": "scheduler",
    "backfill_starvation": "scheduler",
    "submit_rejected_policy": "scheduler",
    "submit_rejected_unsatisfiable": "scheduler",
    "controller_unreachable": "scheduler",
    "unknown_slurm_code": "scheduler",
    # Slurm: nodes
    "node_drain_kill_task_failed": "node",
    "node_drain_low_memory": "node",
    "node_drain_prolog_epilog_failed": "launch",
    "node_not_responding": "node",
    "node_down_unexpected_reboot": "node",
    "node_config_mismatch": "node",
    "node_drain_admin": "node",
    "node_drain_loop": "node",
    "node_boot_failed": "node",
    "node_state_unknown": "node",
    "host_memory_error": "node",
    # ModelArts and containers
    "queued_insufficient_resources": "scheduler",
    "queued_quota_limit": "scheduler",
    "pool_fragmented": "scheduler",
    "pool_node_abnormal": "node",
    "scheduling_constraint_unsatisfied": "scheduler",
    "image_pull_failed": "image",
    "container_entrypoint_failed": "image",
    "pod_evicted": "node",
    "storage_mount_failed": "storage",
    "storage_path_invalid": "storage",
    "storage_access_denied": "storage",
    "storage_read_only": "storage",
    "storage_connection_error": "storage",
    "shared_fs_unreachable": "storage",
    "storage_stale_handle": "storage",
    "storage_file_lock_failed": "storage",
    "input_path_not_found": "storage",
    "input_data_invalid": "application",
    "dependency_install_failed": "software",
    "init_timeout": "image",
    "startup_log_silent": "application",
}

# Words of an error line that no rule knows -> its domain, most specific first. Whole words,
# case-insensitive: the vocabulary of the programs that write these logs.
_LINE_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (domain, re.compile(words, re.IGNORECASE))
    for domain, words in (
        # at a word's start: not ssh's PasswordAuthentication=no in a quoted launcher command
        (
            "auth",
            r"\bmunge|credential|\bjwt\b|\b(?:un)?authenticat|\bauth\b|unauthori[sz]ed"
            r"|token expired",
        ),
        ("launch", r"\bprolog|\bepilog|\bcgroup|slurmstepd|step creat|task launch|launch failed"),
        (
            "network",
            r"\bnccl|\bhccl|\bmpi\b|\bpmix?\b|\bucx\b|\bc10d\b|rendezvous"
            r"|connection (refused|reset)|timed? ?out.*(connect|socket)|\bsocket\b|infiniband"
            r"|\bibv_",
        ),
        (
            "accelerator",
            r"\bcuda|\bgpu|\bnpu|\bascend|\bxid\b|\bcann\b|\baicore|\bE[EHIJKLZ]\d{4}\b|npu-smi"
            r"|nvidia|\becc\b",
        ),
        ("memory", r"out of memory|\boom\b|memory limit|cannot allocate memory|\bmalloc"),
        ("time", r"time ?limit|deadline exceeded|\bexpired\b"),
        (
            "image",
            r"\bimage\b|\bpull\b|container|\bdocker|\bpod\b|entrypoint|\bkubelet|crashloop"
            r"|backoff",
        ),
        (
            "software",
            r"\bimport ?error|modulenotfound|no module named|shared librar|\bglibc|version "
            r"mismatch|undefined symbol|\bpip\b|\bconda\b|\blmod\b|command not found"
            r"|too many open files",
        ),
        (
            "storage",
            r"no space|quota|\bnfs\b|lustre|\bgpfs|\bobs\b|read-only file|no such file"
            r"|permission denied|\bmount\b|\bi/o error|stale file handle|unable to lock"
            r"|file locking",
        ),
        ("node", r"\bnode\b|slurmd|not responding|\bdrain|kernel|\bedac\b|\bmce\b|hung task"),
        ("scheduler", r"\bpartition\b|\bqos\b|\bpreempt|\breservation\b|slurmctld|\bqueue\b"),
    )
)

# Chinese words operators paste (ModelArts, E-HPC consoles and logs)
_LINE_WORDS_ZH: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("auth", ("认证", "鉴权", "凭证", "令牌")),
    ("network", ("通信", "网络", "连接超时", "连接被拒绝")),
    ("accelerator", ("显卡", "昇腾", "算子", "设备")),
    ("memory", ("内存不足", "内存溢出", "显存")),
    ("time", ("超时",)),
    ("image", ("镜像", "容器")),
    ("software", ("依赖", "版本不匹配", "找不到模块")),
    ("storage", ("磁盘", "存储", "挂载", "路径不存在", "权限")),
    ("node", ("节点",)),
    ("scheduler", ("队列", "资源不足", "配额", "资源池")),
)


def domain_of(label: str) -> str:
    """The domain of a root-cause label ("application" for one this table does not list)."""
    return LABEL_DOMAIN.get(label, "application")


def domain_of_line(text: str) -> str:
    """The domain of an error line: the producer's catalogue template it holds
    (:mod:`cockpit.diagnosis.catalogue`), else its own words, "application" when none does."""
    from cockpit.diagnosis.catalogue import domain_of as catalogue_domain

    return catalogue_domain(text) or domain_of_words(text)


def domain_of_words(text: str) -> str:
    """The domain an error line's own words point to, "application" when none does."""
    for domain, rx in _LINE_WORDS:
        if rx.search(text):
            return domain
    for domain, words in _LINE_WORDS_ZH:
        if any(w in text for w in words):
            return domain
    return "application"


def describe(domain: str) -> str:
    """The domain in words, in the current language."""
    words = DOMAINS.get(domain)
    return _(words) if words else domain


def unrecognised_texts(file: str, line: int | None, domain: str, text: str) -> tuple[str, str, str]:
    """(title, explanation, remedy) of an error line no rule knows, routed to ``domain`` (its
    words, :func:`describe`), in the current language."""
    return (
        _("unrecognised failure ({domain}): {text}").format(domain=domain, text=text),
        _(
            "No rule knows this yet. The first red error line is {file}:{line}; its words point "
            "to the {domain} domain. The cockpit does not say nothing is wrong while a log holds "
            "an error line."
        ).format(file=file, line=line, domain=domain),
        _(
            "Read {file} from line {line} (the lines before it often name the cause); route it "
            "to whoever owns the {domain} layer."
        ).format(file=file, line=line, domain=domain),
    )
