"""The simulated Slurm cluster of the demo: its jobs, nodes and partitions over time.

Everything is relative to the demo start: a job is PENDING, RUNNING or ended at ``t`` by
its submit/start/run times, a node carries a DRAIN or DOWN from its scheduled changes.
:class:`SlurmCluster` answers squeue, ``scontrol show`` and sacct
(:mod:`cockpit.demo.slurm_output`) and serves its logs (:mod:`cockpit.demo.slurm_logs`)
for an instant ``t``.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import attrgetter

from cockpit.demo.slurm_logs import SlurmLogs
from cockpit.demo.slurm_output import SlurmCommands, stable_hash


@dataclass(frozen=True, slots=True)
class NodeChange:
    """From ``at`` (seconds after the demo start) the node carries ``flag`` with ``reason``.

    ``flag``: DRAIN | DOWN (DOWN is shown as ``DOWN+NOT_RESPONDING``, i.e. ``down*``) |
    RESUME (back to normal: an operator's ``scontrol update State=RESUME``).
    ``extra`` adds state flags (``INVALID_REG`` for a bad registration).
    """

    at: int
    flag: str
    reason: str
    user: str = "slurm"
    extra: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DemoNode:
    name: str
    cpus: int
    real_memory: int  # MiB, as configured in slurm.conf
    partitions: tuple[str, ...]
    sockets: int = 2
    gpus: int = 0
    gpu_type: str = ""
    boot: int = -12 * 86400  # seconds relative to the demo start
    slurmd_start: int = -12 * 86400 + 95
    changes: tuple[NodeChange, ...] = ()
    hw_memory: int | None = None  # what slurmd reports when it differs (Low RealMemory)

    def change_at(self, t: int) -> NodeChange | None:
        current = None
        for c in self.changes:
            if c.at <= t:
                current = c
        # an operator's resume (scontrol update State=RESUME) ends the drain or down
        return None if current is not None and current.flag == "RESUME" else current


@dataclass(frozen=True, slots=True)
class DemoPartition:
    name: str
    nodes: tuple[str, ...]
    max_time_s: int | None
    max_cpus_per_node: int | None = None
    max_nodes: int | None = None
    default: bool = False
    priority_tier: int = 1
    state: str = "UP"


@dataclass(frozen=True, slots=True)
class DemoJob:
    """One simulated batch job; every time is seconds relative to the demo start.

    ``run_s`` is how long the job would run; when it reaches ``time_limit_s`` the job
    ends TIMEOUT. ``start`` None = never starts (held by ``pending_reason``).
    ``stdout``: fixed lines ``(seconds after start, text)`` for scenario jobs; background
    jobs get generated training/simulation progress instead.
    """

    job_id: int
    name: str
    user: str
    uid: int
    account: str
    partition: str
    cpus: int
    mem_mib: int
    time_limit_s: int | None
    submit: int
    start: int | None = None
    run_s: int | None = None
    num_nodes: int = 1
    nodes: tuple[str, ...] = ()
    final_state: str = "COMPLETED"
    exit_code: tuple[int, int] = (0, 0)
    qos: str = "normal"
    priority: int = 10000
    pending_reason: str = ""
    work_dir: str = ""
    command: str = ""
    comment: str = ""
    dependency: str = ""
    gpus: int = 0
    max_rss_kib: int | None = None
    cancelled_by: int | None = None
    kind: str = "generic"  # background log template
    steps: tuple[str, ...] = ("batch",)
    split_err: bool = False
    stdout: tuple[tuple[float, str], ...] = ()
    stderr: tuple[tuple[float, str], ...] = ()
    ctld: tuple[tuple[float, str], ...] = ()  # extra slurmctld.log lines (absolute seconds)
    slurmd: tuple[tuple[str, float, str], ...] = ()  # (node, absolute seconds, text)
    srun_name: str = ""  # program of the srun step (sacct JobName of step .0)
    big_log_lines: int = 0  # >0: a huge fixed-width training log (lines per second x 1000)
    # cancelled while PENDING at this time (``start`` stays None): no node, no step, no MaxRSS
    cancelled_at: int | None = None

    @property
    def end(self) -> int | None:
        if self.start is None:
            return self.cancelled_at
        if self.run_s is None:
            return None
        run = self.run_s if self.time_limit_s is None else min(self.run_s, self.time_limit_s)
        return self.start + run

    @property
    def final(self) -> str:
        if (
            self.time_limit_s is not None
            and self.run_s is not None
            and self.run_s >= self.time_limit_s
        ):
            return "TIMEOUT"
        return self.final_state

    def state_at(self, t: int) -> str | None:
        """Slurm job state at ``t``; None before submission."""
        if t < self.submit:
            return None
        if self.start is None:
            pending = self.cancelled_at is None or t < self.cancelled_at
            return "PENDING" if pending else "CANCELLED"
        if t < self.start:
            return "PENDING"
        end = self.end
        if end is None or t < end:
            return "RUNNING"
        return self.final

    @property
    def stdout_path(self) -> str:
        return f"{self.work_dir}/slurm-{self.job_id}.out"

    @property
    def stderr_path(self) -> str:
        return f"{self.work_dir}/slurm-{self.job_id}.err" if self.split_err else self.stdout_path


FINAL_REASON = {
    "COMPLETED": "None",
    "FAILED": "NonZeroExitCode",
    "OUT_OF_MEMORY": "OutOfMemory",
    "TIMEOUT": "TimeLimit",
    "CANCELLED": "None",
    "NODE_FAIL": "NodeDown",
}

MIN_JOB_AGE = 6 * 3600  # finished jobs stay in squeue this long (slurm.conf MinJobAge)
_JOB_ID = attrgetter("job_id")


class SlurmCluster(SlurmCommands, SlurmLogs):
    """The simulated cluster: answers Slurm commands and serves its logs for an instant ``t``.

    ``t`` is whole seconds since ``start`` (may be negative). Everything printed is a pure
    function of (the construction arguments, t).
    """

    def __init__(
        self,
        start: datetime,
        nodes: list[DemoNode],
        partitions: list[DemoPartition],
        jobs: list[DemoJob],
        ctld_extra: list[tuple[float, str]],
        slurmd_extra: list[tuple[str, float, str]],
        job_log: Callable[[DemoJob, int], list[tuple[float, str]]],
        planned_start: dict[int, int] | None = None,
    ) -> None:
        self.start = start
        self.nodes = {n.name: n for n in nodes}
        self.partitions = {p.name: p for p in partitions}
        self.jobs = sorted(jobs, key=lambda j: j.job_id)
        self.by_id = {j.job_id: j for j in self.jobs}
        # by submit time: a poll looks only at jobs already submitted (~600 of ~4900 at the
        # demo's start; the rest are its future), not at every job (_submitted)
        self._by_submit = sorted(self.jobs, key=lambda j: (j.submit, j.job_id))
        self._submits = [j.submit for j in self._by_submit]
        self._job_log = job_log
        self._planned = planned_start or {}
        self.jobs_on_node: dict[str, list[DemoJob]] = {}
        for j in self.jobs:
            for n in j.nodes:
                self.jobs_on_node.setdefault(n, []).append(j)
        # node -> (start, end or None) of the jobs that ran on it, for LastBusyTime (reading
        # the jobs' properties per node every poll would be a third of a demo poll's work)
        self._spans = {
            n: [(j.start, j.end) for j in js if j.start is not None]
            for n, js in self.jobs_on_node.items()
        }
        self._submitted_at: tuple[int, list[DemoJob]] = (-1, [])
        self._init_output()
        self._init_logs(ctld_extra, slurmd_extra)

    def set_node_state(self, name: str, state: str, reason: str, t: int) -> None:
        """An operator's ``scontrol update NodeName=... State=...`` from ``t`` on."""
        node = self.nodes[name]
        change = NodeChange(t, state, reason, user="operator")
        self.nodes[name] = dataclasses.replace(node, changes=(*node.changes, change))

    # ------------------------------------------------------------------ time helpers

    def at(self, seconds: float) -> datetime:
        return self.start + timedelta(seconds=seconds)

    def _ms(self, *key: object) -> int:
        return stable_hash(*key) % 1000

    # ------------------------------------------------------------------ state

    def _submitted(self, t: int) -> list[DemoJob]:
        """Jobs submitted at or before t (the others have no state yet), in job id order.
        Shared by the commands of one poll (same second): do not mutate."""
        if self._submitted_at[0] != t:
            jobs = self._by_submit[: bisect_right(self._submits, t)]
            jobs.sort(key=_JOB_ID)
            self._submitted_at = (t, jobs)
        return self._submitted_at[1]

    def visible_jobs(self, t: int) -> list[tuple[DemoJob, str]]:
        out = []
        for j in self._submitted(t):
            st = j.state_at(t)
            end = j.end
            if st not in ("PENDING", "RUNNING") and end is not None and t - end > MIN_JOB_AGE:
                continue
            out.append((j, st))
        return out

    def pending_reasons(self, t: int, visible: list[tuple[DemoJob, str]]) -> dict[int, str]:
        """Resources for the head of each partition's queue, Priority behind it."""
        reasons: dict[int, str] = {}
        heads: set[str] = set()
        pend = [j for j, st in visible if st == "PENDING"]
        for j in sorted(pend, key=lambda j: (-j.priority, j.job_id)):
            if j.pending_reason:
                reasons[j.job_id] = j.pending_reason
            elif j.partition not in heads:
                heads.add(j.partition)
                reasons[j.job_id] = "Resources"
            else:
                reasons[j.job_id] = "Priority"
        return reasons

    def allocation(self, t: int) -> dict[str, tuple[int, int, int]]:
        """node -> (cpus, MiB, gpus) allocated to RUNNING jobs at t."""
        alloc: dict[str, list[int]] = {n: [0, 0, 0] for n in self.nodes}
        for j in self._submitted(t):
            if j.state_at(t) != "RUNNING":
                continue
            for n in j.nodes:
                a = alloc[n]
                a[0] += j.cpus // max(1, j.num_nodes)
                a[1] += j.mem_mib
                a[2] += j.gpus // max(1, j.num_nodes)
        return {n: (a[0], a[1], a[2]) for n, a in alloc.items()}

    def _reason(self, j: DemoJob, st: str, pending: dict[int, str]) -> str:
        if st == "PENDING":
            return pending.get(j.job_id, j.pending_reason or "Priority")
        if st == "RUNNING":
            return "None"
        return FINAL_REASON.get(st, "None")

    def _elapsed(self, j: DemoJob, st: str, t: int) -> int:
        if st == "PENDING" or j.start is None:
            return 0
        end = j.end if st != "RUNNING" else None
        return (end if end is not None else t) - j.start

    def _last_busy(self, n: DemoNode, t: int) -> int:
        busy = n.slurmd_start
        for start, end in self._spans.get(n.name, ()):
            if start <= t:
                busy = max(busy, t if end is None or end > t else end)
        return busy
