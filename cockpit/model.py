"""Immutable data the cockpit passes around: sources build it, the engine reads it, panes draw it.

Units are normalised at the parser boundary so nothing downstream guesses:
memory in MiB (int), durations in seconds (int), timestamps timezone-aware
``datetime`` (Slurm prints local time without a zone: parsers attach the
cluster's zone, UTC by default). ``None`` means "not reported", never zero.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Literal

from cockpit.i18n import N_, _

Severity = Literal["critical", "warning", "info"]
SEVERITY_RANK: Mapping[str, int] = {"critical": 0, "warning": 1, "info": 2}

SubjectKind = Literal[
    "job", "node", "partition", "training_job", "pool", "cluster", "project", "file", "user"
]
SourceKind = Literal["slurm", "modelarts"]


# --------------------------------------------------------------------------- Slurm


@dataclass(frozen=True, slots=True)
class ExitCode:
    """Slurm's ``code:signal`` pair (sacct/scontrol ``ExitCode=0:9``).

    ``code`` is the application's exit status, ``signal`` the signal that ended it
    (9 = SIGKILL, 15 = SIGTERM, 0 = none). squeue's JSON ``exit_code`` is a raw
    wait status and is converted with :meth:`from_wait_status`. ``folded``: printed by a
    sacct older than 25.11, which subtracted 128 from a status of 128 or more, so ``9:0`` may
    be ``exit 9`` or ``exit 137`` (:mod:`cockpit.slurm.versions`); False when exact.
    """

    code: int
    signal: int
    folded: bool = False

    @classmethod
    def from_wait_status(cls, status: int) -> ExitCode:
        """Decode a POSIX wait status (32512 -> 127:0, 9 -> 0:9)."""
        return cls(code=(status >> 8) & 0xFF, signal=status & 0x7F)

    def __str__(self) -> str:
        return f"{self.code}:{self.signal}"


@dataclass(frozen=True, slots=True)
class SlurmJob:
    """One row of the queue (squeue). Job ids are strings: arrays look like ``123_4``."""

    job_id: str
    name: str
    user: str
    partition: str
    state: str  # Slurm job state, upper case: PENDING, RUNNING, OUT_OF_MEMORY, ...
    reason: str  # squeue %r: None, Resources, PartitionConfig, ...
    cpus: int | None = None
    node_count: int | None = None
    nodes: tuple[str, ...] = ()  # expanded node list (c[1-2] -> c1, c2)
    node_list: str = ""  # Slurm's compact hostlist as printed
    min_memory_mib: int | None = None  # ReqMem / MIN_MEMORY, per node unless mem_per_cpu
    mem_per_cpu: bool = False
    time_limit_s: int | None = None  # None = UNLIMITED / not set
    elapsed_s: int | None = None
    submit_time: datetime | None = None
    start_time: datetime | None = None  # expected start for PENDING jobs when known
    end_time: datetime | None = None
    work_dir: str = ""
    stdout_path: str = ""  # patterns (%j %u %x %A %a %N) resolved
    stderr_path: str = ""
    account: str = ""
    qos: str = ""
    dependency: str = ""
    priority: int | None = None
    exit_code: ExitCode | None = None
    command: str = ""
    comment: str = ""
    # 26.05+: the sortable unique job id (squeue %s, JSON step_id.sluid, ``SLUID=`` in logs)
    sluid: str = ""
    # scontrol show job only (squeue's delimited format has neither): CPUs/Task= and
    # MinTmpDiskNode= (--tmp, MiB); None = not reported
    cpus_per_task: int | None = None
    min_tmp_disk_mib: int | None = None
    # squeue %b: the TRES (GRES) asked per node as printed (22.05 ``gres:gpu:2``, 23.02+
    # ``gres/gpu:a100:2``; "" for N/A) and the GPUs in it per node (None: no GPU asked)
    gres: str = ""
    gpus_per_node: int | None = None
    # when ``elapsed_s`` was read (POSIX seconds), for a job whose time runs on (RUNNING,
    # CONFIGURING): its elapsed time now is ``elapsed_by(now)``. A poll that finds it still
    # running keeps the same row object (nothing else about it changed), so the stages that
    # follow pay nothing for the clock. None: ``elapsed_s`` is final (or pending: 0).
    elapsed_at: float | None = None

    def elapsed_by(self, now: datetime | float | None) -> int | None:
        """Elapsed seconds at ``now`` (a datetime or POSIX time; None: as read)."""
        el, at = self.elapsed_s, self.elapsed_at
        if el is None or at is None or now is None:
            return el
        t = now if isinstance(now, float | int) else now.timestamp()
        return el + max(0, int(t - at))

    @property
    def cpus_per_node(self) -> int:
        """CPUs on its busiest node (CPUs over nodes, rounded up; 1 when unknown): what a
        ``--mem-per-cpu`` request is multiplied by on a node."""
        return max(1, -(-(self.cpus or 1) // (self.node_count or 1)))

    @property
    def gpus(self) -> int | None:
        """GPUs of the whole job: per node x nodes (None when it asked none)."""
        if self.gpus_per_node is None:
            return None
        return self.gpus_per_node * (self.node_count or 1)

    @property
    def is_pending(self) -> bool:
        return self.state == "PENDING"

    @property
    def is_active(self) -> bool:
        return self.state in {
            "PENDING",
            "RUNNING",
            "CONFIGURING",
            "COMPLETING",
            "SUSPENDED",
            "REQUEUED",
            "RESIZING",
        }


@dataclass(frozen=True, slots=True)
class SlurmNode:
    """One node (``scontrol show node -o`` or ``sinfo --json``)."""

    name: str
    state: str  # base state, upper case: IDLE, MIXED, ALLOCATED, DOWN, ...
    flags: tuple[str, ...] = ()  # DRAIN, NOT_RESPONDING (shown as '*'), COMPLETING, ...
    partitions: tuple[str, ...] = ()
    cpus_total: int | None = None
    cpus_alloc: int | None = None
    cpu_load: float | None = None
    real_memory_mib: int | None = None
    alloc_memory_mib: int | None = None
    free_memory_mib: int | None = None
    gres: str = ""
    reason: str = ""  # full DRAIN/DOWN reason, never truncated
    reason_user: str = ""
    reason_time: datetime | None = None
    boot_time: datetime | None = None
    # topology and local disk (scontrol show node): a request is checked against them
    sockets: int | None = None
    cores_per_socket: int | None = None
    threads_per_core: int | None = None
    tmp_disk_mib: int | None = None  # TmpDisk= (MiB; 0 = none configured)

    @property
    def is_drain(self) -> bool:
        return "DRAIN" in self.flags

    @property
    def is_down(self) -> bool:
        return self.state == "DOWN" or "NOT_RESPONDING" in self.flags

    @property
    def is_unhealthy(self) -> bool:
        return self.is_drain or self.is_down or self.state in {"FAIL", "FAILING", "UNKNOWN"}

    @property
    def state_label(self) -> str:
        """Compact state as operators read it: ``MIXED+DRAIN``, ``DOWN*``."""
        shown = [self.state, *(f for f in self.flags if f != "NOT_RESPONDING")]
        return "+".join(shown) + ("*" if "NOT_RESPONDING" in self.flags else "")


@dataclass(frozen=True, slots=True)
class Partition:
    """One partition (``scontrol show partition -o``). ``None`` limits are UNLIMITED."""

    name: str
    state: str = "UP"
    nodes: tuple[str, ...] = ()
    node_list: str = ""
    default: bool = False
    max_cpus_per_node: int | None = None
    max_mem_per_node_mib: int | None = None
    max_mem_per_cpu_mib: int | None = None
    max_time_s: int | None = None
    max_nodes: int | None = None
    total_cpus: int | None = None
    total_nodes: int | None = None
    qos: str = ""


@dataclass(frozen=True, slots=True)
class AcctRecord:
    """One ``sacct -P`` row (a job or one of its steps: ``4``, ``4.batch``, ``4.0``)."""

    job_id: str
    step: str  # "" for the job row, else "batch", "extern", "0", ...
    job_name: str
    partition: str
    state: str  # "CANCELLED by 0" is normalised to state CANCELLED, cancelled_by "0"
    exit_code: ExitCode | None
    req_mem_mib: int | None
    max_rss_mib: int | None
    elapsed_s: int | None
    timelimit_s: int | None
    node_list: str
    reason: str = ""
    cancelled_by: str = ""
    placeholder: bool = False  # sacct's transient row right after a job ends (ReqMem '16?')
    user: str = ""
    start_time: datetime | None = None
    end_time: datetime | None = None


# --------------------------------------------------------------------------- ModelArts


@dataclass(frozen=True, slots=True)
class Mount:
    """A data input/output or volume of a training job.

    ``kind`` is obs | evs | sfs | nfs | dataset | unknown; ``remote`` the OBS URL or
    server path, ``local`` the path in the container.
    """

    kind: str
    remote: str
    local: str
    read_only: bool = False
    name: str = ""
    direction: str = "input"  # input | output | volume


@dataclass(frozen=True, slots=True)
class TaskStatus:
    task: str
    exit_code: int | None
    message: str = ""


@dataclass(frozen=True, slots=True)
class Stage:
    """One entry of ``list_training_job_stages`` (latest running record)."""

    name: str  # scheduling | preparing | running | end
    start_time: datetime | None
    end_time: datetime | None  # None = still open
    message: str = ""
    sub_stages: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class JobEvent:
    """One ``list_training_job_events`` entry. level: Info | Warning | Error."""

    time: datetime | None
    level: str
    source: str
    message: str


# ModelArts v2 phases -> the word the console shows
_CONSOLE_PHASE = {
    "Running": "Running",
    "Completed": "Completed",
    "Failed": "Failed",
    "Terminating": "Stopping",
    "Terminated": "Stopped",
    "Abnormal": "Abnormal",
}


TRAINING_LOG_SCHEME = "modelarts://"


def training_log_path(job_id: str, task: str) -> str:
    """Path the log viewer uses for a training task's startup-log preview."""
    return f"{TRAINING_LOG_SCHEME}{job_id}/{task}"


@dataclass(frozen=True, slots=True)
class TrainingJob:
    """A ModelArts v2 training job (``show_training_job_details`` plus stages/events)."""

    job_id: str
    name: str
    phase: str  # status.phase: Creating, Pending, Running, Failed, Completed, ...
    secondary_phase: str = ""
    create_time: datetime | None = None
    start_time: datetime | None = None
    phase_since: datetime | None = None  # when the current phase began, best known
    duration_s: int | None = None
    user: str = ""
    flavor_id: str = ""
    flavor_cpus: int | None = None
    flavor_gpus: int | None = None
    flavor_npus: int | None = None
    flavor_memory_mib: int | None = None
    node_count: int = 1
    pool_id: str = ""
    pool_name: str = ""
    pool_public: bool = True
    image: str = ""
    boot_command: str = ""
    mounts: tuple[Mount, ...] = ()
    tasks: tuple[str, ...] = ()
    task_statuses: tuple[TaskStatus, ...] = ()
    stages: tuple[Stage, ...] = ()
    events: tuple[JobEvent, ...] = ()
    log_preview: str = ""  # startup log of the first task (<= 5 MB per the API)
    log_task: str = ""
    workspace_id: str = ""
    log_changed_at: datetime | None = None  # when the poller last saw log_preview grow
    log_checked_at: datetime | None = None  # when log_preview was read (None: just now)
    # line number of log_preview's first line: a Running job keeps only its preview's tail
    log_first_line: int = 1

    @property
    def console_phase(self) -> str:
        """The word the ModelArts console shows (operators say "Initializing").

        Creating, Pending or an open ``preparing`` stage read as "Initializing".
        """
        if self.phase in {"Creating", "Pending"}:
            return "Initializing"
        if (
            self.phase == "Running"
            and self.stages
            and self.stages[-1].name == "preparing"
            and self.stages[-1].end_time is None
        ):
            return "Initializing"
        return _CONSOLE_PHASE.get(self.phase, self.phase or "Unknown")


@dataclass(frozen=True, slots=True)
class PoolNode:
    name: str
    phase: str  # Available | Creating | Deleting | Abnormal | Checking
    flavor: str = ""
    private_ip: str = ""
    cpus: float | None = None
    memory_mib: int | None = None
    gpus: int | None = None
    npus: int | None = None
    free_cpus: float | None = None
    free_memory_mib: int | None = None
    free_gpus: int | None = None
    free_npus: int | None = None


@dataclass(frozen=True, slots=True)
class Pool:
    """A ModelArts resource pool. ``public`` pools are shared, ``dedicated`` ones are the user's."""

    pool_id: str
    name: str
    public: bool = False
    phase: str = ""
    pool_type: str = ""
    flavor: str = ""
    nodes: tuple[PoolNode, ...] = ()
    available: int | None = None
    abnormal: int | None = None
    message: str = ""
    max_available: Mapping[str, tuple[int | None, int | None]] = field(default_factory=dict)
    # flavor id -> (cpu_core_num, mem_size GB) from show_training_flavor_max_available_resource


# --------------------------------------------------------------------------- snapshots


@dataclass(frozen=True, slots=True)
class SourceError:
    """Why a poll failed, shown on the source's status line.

    ``kind``: unreachable | auth | host_key | timeout | command | parse | forbidden |
    not_found | throttled | server | config | internal (a bug in the cockpit's own pipeline:
    a stage raised before the poll's data was published; see ``cockpit.runtime.poller``).
    """

    kind: str
    message: str
    where: str = ""  # command, URL or file
    retry_after_s: float | None = None


@dataclass(frozen=True, slots=True)
class FsUsage:
    """One shared filesystem as ``df -P`` (+ ``-Pi``) shows it, parsed by ``cockpit.slurm.storage``.

    Sizes in MiB (floored), ``use_pct`` is df's Capacity column (used / (used + avail),
    rounded up like df), ``inodes_pct`` df -Pi's IUse% (None when the filesystem has
    no inode count, e.g. some network filesystems print ``-``). ``path`` is the path
    that was asked for, ``mount`` where df says it is mounted.
    """

    mount: str
    size_mib: int
    used_mib: int
    avail_mib: int
    use_pct: float
    inodes_pct: float | None = None
    path: str = ""
    filesystem: str = ""
    inodes_used: int | None = None
    inodes_total: int | None = None


@dataclass(frozen=True, slots=True)
class RiskSettings:
    """``[risk]`` of the config: when a running job is named at risk (cockpit.slurm.risk)."""

    memory_near: float = 0.9  # MaxRSS / the job's memory request: a warning from here
    memory_critical: float = 0.98  # ... and critical from here (or climbing past memory_near)
    sample_budget: int = 50  # running jobs sampled per poll (one sstat, one stat of outputs)
    log_silent_s: float = 1800.0  # stdout not grown this long while RUNNING: a warning
    # (partition, seconds) overrides of log_silent_s
    log_silent_partitions: tuple[tuple[str, float], ...] = ()

    def silent_after(self, partition: str) -> float:
        for name, s in self.log_silent_partitions:
            if name == partition:
                return s
        return self.log_silent_s


@dataclass(frozen=True, slots=True)
class StepUsage:
    """One running step as ``sstat -a`` prints it (``cockpit.slurm.sstat``). Memory in KiB
    (sstat's own unit; MiB would round a small step to 0); None: the field was empty."""

    job_id: str
    step: str  # batch, extern, 0, 1, ...
    max_rss_kib: int | None
    max_rss_node: str = ""
    ave_rss_kib: int | None = None
    ntasks: int | None = None
    nodes: int | None = None  # nodes of the step (its Nodelist)
    ave_cpu_s: int | None = None


@dataclass(frozen=True, slots=True)
class JobMemory:
    """A running job's memory against its request, from its latest sstat sample.

    ``used_kib``: the busiest node's resident memory as far as sstat tells (the largest task's
    MaxRSS, or AveRSS times the tasks per node when a step runs several there);
    ``request_mib``: per node; ``near_kib``: its figure when first sampled at or past
    ``RiskSettings.memory_near`` (a job that climbs past it is about to be killed);
    ``mem_per_cpu_mib``: the ``--mem-per-cpu`` figure when the request came from it.
    """

    job_id: str
    step: str
    used_kib: int
    max_rss_kib: int
    request_mib: int
    sampled_at: datetime
    node: str = ""
    tasks_per_node: int = 1
    near_kib: int | None = None
    mem_per_cpu_mib: int | None = None


@dataclass(frozen=True, slots=True)
class JobOutput:
    """A running job's stdout file as the latest stat saw it: size and when it last grew;
    ``last_line`` read only once the file is silent (empty until then)."""

    job_id: str
    path: str
    size: int
    modified_at: datetime
    last_line: str = ""
    line_no: int | None = None


@dataclass(frozen=True, slots=True)
class RiskProbe:
    """What the source sampled of running jobs to say "at risk" before they fail, with the
    settings it sampled under (rules are pure: the thresholds travel with the data)."""

    settings: RiskSettings = field(default_factory=RiskSettings)
    memory: tuple[JobMemory, ...] = ()
    outputs: tuple[JobOutput, ...] = ()


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one poll of one source saw. Immutable; replaced wholesale each poll.

    ``error`` set means the poll failed: the collections then hold nothing new and the
    app keeps the previous good snapshot, marking it stale.
    """

    source: str  # cluster or ModelArts project name from the config
    kind: SourceKind
    taken_at: datetime
    jobs: tuple[SlurmJob, ...] = ()
    nodes: tuple[SlurmNode, ...] = ()
    partitions: tuple[Partition, ...] = ()
    training_jobs: tuple[TrainingJob, ...] = ()
    pools: tuple[Pool, ...] = ()
    error: SourceError | None = None
    warnings: tuple[str, ...] = ()  # rows skipped as malformed etc.
    slurm_version: str = ""
    storage: tuple[
        FsUsage, ...
    ] = ()  # df of the cluster's configured storage_paths (empty: none configured)
    # PENDING job counts of this source's earlier polls, oldest first: (taken_at, count), kept
    # across polls by cockpit.watch.surge (the engine is pure); empty = no history (a bundle)
    pending_history: tuple[tuple[datetime, int], ...] = ()
    # running jobs sampled for risk (memory near the request, silent output); None: none
    risk: RiskProbe | None = None
    # ids of the jobs only sacct listed (failed since the last poll, already gone from squeue);
    # a tuple, as every collection of the snapshot (JSON, the store's published form)
    acct_only: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class LogText:
    """Bytes of a log (or a range of it) handed to the engine; rules never do I/O.

    ``kind``: stdout | stderr | slurmctld | slurmd | events | startup | app | command.
    ``base_offset``/``base_line`` locate ``data`` in the full file (line numbers are
    1-based; ``base_line`` is None when a tail range was read and the line is unknown).
    An excerpt of non-contiguous lines (the slurmctld.log lines naming one job) carries
    ``line_offsets``: the file byte offset of each of its lines, and ``line_numbers``
    their 1-based file line numbers when known (empty otherwise); use
    :meth:`file_offset` / :meth:`file_line` to map a line of ``data`` back to the file.
    """

    name: str  # file name as the user knows it, e.g. slurm-4.out
    kind: str
    data: bytes
    path: str = ""
    subject_id: str = ""
    base_offset: int = 0
    base_line: int | None = 1
    line_offsets: tuple[int, ...] = ()
    line_numbers: tuple[int, ...] = ()

    def file_offset(self, line: int, offset: int) -> int:
        """File byte offset where ``data``'s 1-based ``line`` starts (at ``offset`` in ``data``)."""
        if self.line_offsets:
            return self.line_offsets[min(max(line, 1), len(self.line_offsets)) - 1]
        return self.base_offset + offset

    def file_line(self, line: int) -> int | None:
        """1-based file line number of ``data``'s 1-based ``line``; None when unknown."""
        if self.line_offsets:
            n = len(self.line_numbers)
            return self.line_numbers[line - 1] if 0 < line <= n else None
        return None if self.base_line is None else self.base_line + line - 1


@dataclass(frozen=True, slots=True)
class StartupDiff:
    """Where a stuck training job's startup log stopped against the closest good run of the
    same pool/image (computed by ``cockpit.watch.baseline``; the engine only reads it).

    ``passed``/``total`` baseline lines reached; ``last_passed`` the last one reached (None:
    not even the first); ``next_expected`` what the good run printed next; ``then_next_s``
    how long the good run took for that step; ``stalled_s`` how long this log is silent.
    """

    job_id: str
    baseline_job_id: str
    passed: int
    total: int
    summary: str
    last_passed: str | None = None
    next_expected: tuple[str, ...] = ()
    then_next_s: float | None = None
    stalled_s: float | None = None


@dataclass(frozen=True, slots=True)
class Artifacts:
    """On-demand extras for the engine: accounting rows and log excerpts."""

    acct: tuple[AcctRecord, ...] = ()
    logs: tuple[LogText, ...] = ()
    commands: Mapping[str, str] = field(default_factory=dict)  # e.g. 'scontrol show job 4' -> text
    # Past runs of the same user + job name (sacct -u U --name N), fetched for OOM/TIMEOUT
    # jobs: right-sizing.
    history: tuple[AcctRecord, ...] = ()
    # ModelArts: stuck startup logs against good runs (cockpit.watch.baseline), per job
    startup_diffs: tuple[StartupDiff, ...] = ()


# --------------------------------------------------------------------------- findings


@dataclass(frozen=True, slots=True)
class Subject:
    """What a finding is about. ``source`` is the cluster/project name."""

    kind: SubjectKind
    source: str
    id: str
    # Human name (a training job's name: its id is a UUID). Not part of identity.
    name: str = field(default="", compare=False)

    @classmethod
    def of_source(cls, name: str, kind: str) -> Subject:
        """A cluster (``kind`` "slurm") or ModelArts project as a whole: its outage, its
        screen, the incidents about it rather than one job."""
        return cls("cluster" if kind == "slurm" else "project", name, name)

    def __str__(self) -> str:
        label = {"training_job": "training job"}.get(self.kind, self.kind)
        shown = self.name if self.kind == "training_job" and self.name else self.id
        return f"{label} {shown}" + (f" @{self.source}" if self.source else "")

    def label(self) -> str:
        """``str(self)`` in the language spoken (``作业 48101 @demo-hpc``), for people; ``str()``
        stays English for machines (JSON, alert keys, audit records)."""
        kind = _(SUBJECT_KINDS.get(self.kind, self.kind))
        shown = self.name if self.kind == "training_job" and self.name else self.id
        return f"{kind} {shown}" + (f" @{self.source}" if self.source else "")


# the kinds of subject as people read them (Subject.label)
SUBJECT_KINDS = {
    "job": N_("job"),
    "node": N_("node"),
    "training_job": N_("training job"),
    "pool": N_("pool"),
    "cluster": N_("cluster"),
    "partition": N_("partition"),
    "user": N_("user"),
    "project": N_("project"),
    "file": N_("file"),
}


@dataclass(frozen=True, slots=True)
class Evidence:
    """One line that backs a finding.

    ``where`` names the command or file (``sacct``, ``slurmctld.log``, ``slurm-4.out``,
    ``events``); ``line`` is 1-based when known; ``path``/``offset`` let the log viewer
    open the file at that byte. ``tier`` orders the chain: 0 scheduler, 1 node,
    2 application. ``quoted``: ``text`` is a line copied verbatim from a log, an event or a
    command's output (it stays as the platform printed it, in any language); False: the engine
    wrote it (a summary such as ``pool p: 2 node(s) fit``, or a command's fields it spelled
    out), in the language spoken. Not part of the ``diagnose --json`` contract.
    """

    where: str
    text: str
    line: int | None = None
    path: str = ""
    offset: int | None = None
    tier: int = 0
    quoted: bool = False

    def shown_where(self) -> str:
        """``where`` as a person reads it: a source the engine names itself (``stages``,
        ``pool nodes``) in the language spoken; a file or command (``slurmctld.log``,
        ``sacct``) as it is. ``where`` itself stays the key (logs are matched by it)."""
        return shown_source(self.where)


# the evidence sources and log tabs the engine names itself (files and commands keep their names)
ENGINE_SOURCES = frozenset(
    {
        N_("stages"),
        N_("events"),
        N_("pool nodes"),
        N_("startup log"),
        N_("job status"),
        N_("job spec"),
        N_("poll history"),
        N_("baseline"),
    }
)


def shown_source(name: str) -> str:
    """A log tab's or evidence source's name in the language spoken when the engine named it."""
    return _(name) if name in ENGINE_SOURCES else name


@dataclass(frozen=True, slots=True)
class Finding:
    root_cause: str  # a label from docs/root-causes.md
    severity: Severity
    subject: Subject
    title: str  # one line, also the verdict in table rows
    explanation: str = ""
    remedy: str = ""
    evidence: tuple[Evidence, ...] = ()
    confidence: float = 0.8  # 0..1
    first_seen: datetime | None = None
    related: tuple[Subject, ...] = ()  # other subjects sharing the cause (filled by correlation)

    @property
    def key(self) -> str:
        return f"{self.root_cause}|{self.subject.kind}|{self.subject.source}|{self.subject.id}"


@dataclass(frozen=True, slots=True)
class Incident:
    """One cause with its symptoms: a node DRAIN plus the jobs that died on it."""

    key: str
    root_cause: str
    severity: Severity
    subject: Subject
    title: str
    findings: tuple[Finding, ...]
    affected: tuple[Subject, ...] = ()
    first_seen: datetime | None = None
    # a stored incident read back keeps only its first findings: how many it folded then
    folded: int = 0

    @property
    def primary(self) -> Finding:
        return self.findings[0]

    @property
    def findings_total(self) -> int:
        """How many findings this incident folds (``findings`` may hold only the first)."""
        return max(self.folded, len(self.findings))


@dataclass(frozen=True, slots=True)
class LogLocation:
    """Where to open a log: a path on a source, optionally at a line / byte offset."""

    source: str
    path: str
    line: int | None = None
    offset: int | None = None


def positional_constructor(cls: type) -> Callable[..., Any]:
    """A constructor of the frozen slots dataclass ``cls`` taking every field positionally, in
    declaration order, with no defaults and no ``__post_init__``.

    A frozen ``__init__`` sets each field with ``object.__setattr__``; storing through the slot
    descriptors is ~2x faster, which matters where objects are built by the 100k per poll
    (SlurmJob in the squeue parser, the findings of pending jobs). The object is the same
    (equal, hashable, still frozen). Generated from ``fields(cls)`` as dataclasses generates
    ``__init__``, so it follows the model."""
    names = [f.name for f in fields(cls)]
    ns: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    ns.update({f"_set_{n}": getattr(cls, n).__set__ for n in names})
    body = "".join(f" _set_{n}(o, {n})\n" for n in names)
    exec(f"def build({', '.join(names)}):\n o = _new(_cls)\n{body} return o\n", ns)  # noqa: S102
    return ns["build"]
