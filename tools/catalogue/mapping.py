"""Message template -> (domain, cause label, remedy): the rules every extractor shares.

A rule names a specific cause only where the words leave no doubt (a munge decode failure is
authentication, a step cgroup that cannot be created is a launch failure). Anything else keeps
its failure domain with the engine's generic label, ``unrecognised_failure``: the scanner then
still routes it, never "nothing wrong". Rules are tried in order, the first match wins.
"""

from __future__ import annotations

import re

GENERIC = "unrecognised_failure"

_RULES: tuple[tuple[str, str, str], ...] = (
    # (regex over the template, domain, label)
    (
        r"(?i)oom[-_ ]kill(?:ed| event)|exceeded (?:job |step )?memory limit|hit memory limit|"
        r"out of memory: kill",
        "memory",
        "oom_killed",
    ),
    (r"(?i)due to time limit|time limit exhausted|exceeded its time limit", "time", "time_limit"),
    (r"(?i)\bdeadline\b", "time", "deadline_reached"),
    (r"(?i)^(?!.*invalid).*(?:\bpreempted\b|due to preemption)", "scheduler", "preempted"),
    (
        r"(?i)kill task failed|unkillable|processes? (?:not|still) (?:killed|alive)",
        "node",
        "node_drain_kill_task_failed",
    ),
    (r"(?i)unexpectedly rebooted", "node", "node_down_unexpected_reboot"),
    (
        r"(?i)resumetimeout|reboot timed out|failed to (?:resume|power up)|boot_?fail",
        "node",
        "node_boot_failed",
    ),
    (
        r"(?i)unable to contact slurm controller|unable to establish controller|slurmctld.*"
        r"(?:unreachable|not responding)|socket timed out on send/recv|controlmachine \S+ not "
        r"responding",
        "scheduler",
        "controller_unreachable",
    ),
    (
        r"(?i)\bnot responding\b|cancelled by node failure|due to (?:failure of node|node "
        r"failure)|killing \S* on failed node",
        "node",
        "node_not_responding",
    ),
    (r"(?i)low real_?memory", "node", "node_drain_low_memory"),
    (
        r"(?i)configuration differs from hardware|low socket\*core\*thread|count (?:too low|"
        r"changed) for gres|gres\S* count (?:too low|inconsistent)",
        "node",
        "node_config_mismatch",
    ),
    (
        r"(?i)unable to contact slurm controller|unable to establish controller|slurmctld.*"
        r"(?:unreachable|not responding)|socket timed out on send/recv",
        "scheduler",
        "controller_unreachable",
    ),
    (r"(?i)while prolog is running", "launch", GENERIC),
    (
        r"(?i)(?:prolog|epilog)(?:_slurmctld)?\b[^\n]*(?:fail|error|timed? ?out|exit|status|abort"
        r"|killed)|(?:fail|error|abort)\w*[^\n]*\b(?:prolog|epilog)\b",
        "launch",
        "node_drain_prolog_epilog_failed",
    ),
    (
        r"(?i)\bmunge\b[^\n]*(?:fail|error|invalid|unable)|munge_ctx|"
        r"invalid authentication credential|"
        r"auth(?:entication)? (?:failure|failed|error)|(?:expired|replayed|rewound) credential|"
        r"credential (?:expired|replayed|rewound|revoked)|security violation|"
        r"(?:create|verify|decode|unpack)\w* (?:a |job |the )?(?:munge )?cred\w*|cred\w* "
        r"(?:create|verify|signature)\w* fail|invalid (?:job )?credential|"
        r"auth_g_\w+ (?:fail|error)|jwt\b.*(?:fail|invalid|expire)|token.*(?:expired|invalid)",
        "auth",
        "auth_failed",
    ),
    (
        r"(?i)pmix?\S*[^\n]*(?:init\w* fail|version mismatch|can ?not load)|PMI2?_Init|"
        r"PMIx_server_init|pmix.*setup failed",
        "network",
        "mpi_pmi_mismatch",
    ),
    # the step daemons' own wire-up between nodes (Slurm's mpi/pmix plugin, MPI/PMIx servers)
    # does not get through: a send past its retries, a direct connection that cannot be made,
    # a collective (fence) that times out; the step then dies and srun may call it a node failure
    (
        r"(?i)send failed[^\n]*retry limit|cannot send (?:message|data)\b|cannot establish "
        r"(?:the |direct )?connection|\bcollective timeout\b",
        "network",
        "mpi_network_error",
    ),
    (r"(?i)no space left", "storage", "disk_full"),
    (r"(?i)quota exceeded", "storage", "disk_quota_exceeded"),
    (r"(?i)read-only file system", "storage", "storage_read_only"),
    (
        r"(?i)(?:launch|execve?|spawn)\w*[^\n]* fail|fail\w* to (?:launch|exec|spawn|start "
        r"(?:the )?(?:job|step|slurmstepd))|unable to (?:launch|exec)|could not (?:launch|exec)|"
        r"(?:create|make|modify|chdir to|access) (?:the )?(?:job |batch |step )?(?:spool|batch|"
        r"job|working) (?:dir|directory)|batch dir|slurmstepd failed|(?:fork|exec) of slurmstepd|"
        r"(?:setup|set up|initiali[sz]e) (?:the )?(?:job |user )?environment|get_user_env|"
        r"(?:unable|failed|cannot|could not) to (?:set|change) (?:uid|gid|user|groups)|initgroups|"
        r"setgroups|(?:add|attach|move)\w* [^\n]*(?:pid|task|process)[^\n]* to "
        r"[^\n]*(?:cgroup|cg)\b|(?:create|instantiate|initiali[sz]e)\w* "
        r"[^\n]*(?:step|job|task|user|uid)[^\n]* (?:cgroup|cg)\b|"
        # the cgroup/proctrack/task plugins cannot set up their hierarchy on the node (a
        # controller not mounted, cgroup v1/v2 or dbus missing): slurmd starts no job there
        r"cgroup[^\n]*\bnot mounted|(?:unable|cannot|can't|could not|failed) to (?:create|"
        r"mount|initiali[sz]e|load)[^\n]*\bcgroup|cannot create (?:cgroup|proctrack) context|"
        r"unable to initiali[sz]e cgroup",
        "launch",
        "job_launch_failed",
    ),
    (
        r"(?i)requested node configuration is not available|can not be satisfied|cannot be "
        r"satisfied|more processors requested than permitted|node count specification invalid|"
        r"requested partition configuration not available|memory required by task is not "
        r"available|too many (?:cpus|tasks|nodes) requested",
        "scheduler",
        "submit_rejected_unsatisfiable",
    ),
    (
        r"(?i)invalid (?:account|qos|partition)|requested time limit is invalid|violates "
        r"accounting/qos policy|job violates|access/permission denied|not allowed (?:to use|in) "
        r"(?:this|the) partition|exceeded (?:assoc|qos)",
        "scheduler",
        "submit_rejected_policy",
    ),
    (
        r"(?i)gres/gpu[^\n]*(?:not (?:available|found)|unable|no gpu)|no gpus? (?:found|detected)",
        "accelerator",
        "gpu_not_available",
    ),
)
RULES = tuple((re.compile(rx), d, label) for rx, d, label in _RULES)

# Remedy hints for labels whose engine text says less than the template does; only where the
# label itself has no remedy of its own in the engine (see docs/root-causes.md).
REMEDY: dict[str, str] = {
    "auth": "Check munged on both ends (munge -n | ssh <node> unmunge), the same munge.key "
    "everywhere, and clocks within a few minutes (chronyc tracking).",
    "launch": "Read slurmd.log on the job's first node around the job's start (journalctl -u "
    "slurmd); check the node's cgroup mounts, spool directory and prolog.",
    "node": "scontrol show node <node> for its state and reason; slurmd.log and dmesg on it.",
    "network": "Check the nodes reach each other on the ports MPI/PMIx/NCCL use (firewall, "
    "interface names, InfiniBand link state: ibstat).",
    "scheduler": "slurmctld.log around the time; scontrol show job <id> for the job's view.",
    "storage": "df -h / quota on the path; the mount's client log (NFS, Lustre, GPFS).",
    "memory": "Raise --mem or lower the job's memory use; sacct -o MaxRSS,ReqMem shows the peak.",
    "accelerator": "nvidia-smi / npu-smi info on the node; dmesg for Xid or device errors.",
    "time": "Raise --time within the partition's limit, or checkpoint and resume.",
    "software": "Check the modules/environment the job loads on the compute node.",
    "application": "Read the job's own output just before the line.",
    "image": "Check the image name, tag and registry access.",
}


def classify(template: str, default_domain: str) -> tuple[str, str]:
    """(domain, label) of a template: the first rule that matches, else its component's
    domain with the generic label."""
    for rx, domain, label in RULES:
        if rx.search(template):
            return domain, label
    return default_domain, GENERIC
