"""Text formats of Slurm 22.05 as the demo prints them (times, durations, memory, hostlists).

Checked against the lab captures (``tests/fixtures/lab``): squeue prints durations as
``M:SS`` / ``H:MM:SS`` / ``D-HH:MM:SS``, sacct and scontrol as ``HH:MM:SS`` /
``D-HH:MM:SS``; memory goes through Slurm's ``convert_num_unit`` (exact: ``100M``,
``32G``, ``257000M``); timestamps are local time without a zone (the demo uses UTC).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from operator import attrgetter

from cockpit.slurm.hostlist import compress
from cockpit.units import squeue_time


@lru_cache(maxsize=1 << 16)  # every squeue prints the same submit/start times again
def ts(dt: datetime) -> str:
    """``2026-11-29T20:28:09`` (Slurm's ISO time, no zone)."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def log_ts(dt: datetime, ms: int) -> str:
    """``[2026-11-29T20:28:09.385]`` as in slurmctld.log / slurmd.log."""
    return f"[{ts(dt)}.{ms % 1000:03d}]"


def squeue_dur(seconds: int | None) -> str:
    """squeue %l / %M: ``0:00``, ``1:27``, ``1:00:00``, ``1-02:03:04``, ``UNLIMITED``."""
    return squeue_time(seconds)


def hms(seconds: int | None, unlimited: str = "UNLIMITED") -> str:
    """sacct Elapsed/Timelimit, scontrol RunTime/TimeLimit: ``00:01:27``, ``1-02:03:04``."""
    if seconds is None:
        return unlimited
    d, rem = divmod(max(0, seconds), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return f"{d}-{h:02d}:{m:02d}:{s:02d}" if d else f"{h:02d}:{m:02d}:{s:02d}"


def mem(mib: int) -> str:
    """Slurm convert_num_unit with CONVERT_NUM_UNIT_EXACT: 100 -> 100M, 32768 -> 32G."""
    units = "MGTP"
    i = 0
    while mib and mib % 1024 == 0 and i < len(units) - 1:
        mib //= 1024
        i += 1
    return f"{mib}{units[i]}"


def rss_kib(kib: int) -> str:
    """sacct MaxRSS as printed for a step: ``827096K``."""
    return f"{kib}K"


def tres_mem(mib: int) -> str:
    """Memory inside TRES strings (CfgTRES, partition TRES): ``1000M``, ``250.98G``, ``11.72T``."""
    value = float(mib)
    units = "MGTP"
    i = 0
    while value >= 1024 and i < len(units) - 1:
        value /= 1024
        i += 1
    return f"{int(value)}{units[i]}" if value == int(value) else f"{value:.2f}{units[i]}"


def _h(*parts: object) -> int:
    """Small deterministic hash (no Python hash randomisation): spreads ms, loads, noise."""
    x = 0x811C9DC5
    for p in parts:
        for b in str(p).encode():
            x = ((x ^ b) * 0x01000193) & 0xFFFFFFFF
    return x


# --------------------------------------------------------------------------- model


@dataclass(frozen=True, slots=True)
class NodeChange:
    """From ``at`` (seconds after the demo start) the node carries ``flag`` with ``reason``.

    ``flag``: DRAIN | DOWN (DOWN is shown as ``DOWN+NOT_RESPONDING``, i.e. ``down*``).
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
        return current


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

    @property
    def end(self) -> int | None:
        if self.start is None or self.run_s is None:
            return None
        run = self.run_s if self.time_limit_s is None else min(self.run_s, self.time_limit_s)
        return self.start + run

    @property
    def final(self) -> str:
        if self.time_limit_s is not None and self.run_s is not None and self.run_s >= self.time_limit_s:
            return "TIMEOUT"
        return self.final_state

    def state_at(self, t: int) -> str | None:
        """Slurm job state at ``t``; None before submission."""
        if t < self.submit:
            return None
        if self.start is None or t < self.start:
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

COMPACT = {
    "PENDING": "PD", "RUNNING": "R", "COMPLETED": "CD", "FAILED": "F", "TIMEOUT": "TO",
    "OUT_OF_MEMORY": "OOM", "CANCELLED": "CA", "NODE_FAIL": "NF",
}
MIN_JOB_AGE = 6 * 3600  # finished jobs stay in squeue this long (slurm.conf MinJobAge)
SLURM_VERSION = "22.05.8"
_TS_REF = re.compile(r"\{ts:(-?\d+)\}")
_FMT_CODE = re.compile(r"%(\.)?(\d+)?([a-zA-Z%])")


@lru_cache(maxsize=32)
def _parse_format(fmt: str) -> tuple[tuple[tuple[str, bool, int, str], ...], str]:
    """squeue ``-o`` format -> ((literal before, right-justified, width or 0, code), ...), tail."""
    segments = []
    pos = 0
    for m in _FMT_CODE.finditer(fmt):
        segments.append((fmt[pos: m.start()], bool(m.group(1)), int(m.group(2) or 0), m.group(3)))
        pos = m.end()
    return tuple(segments), fmt[pos:]


_JOB_ID = attrgetter("job_id")
# squeue codes whose value moves with t while a job runs: TIME, TIME_LEFT
_MOVING = frozenset("ML")


def _pad(text: str, right: bool, w: int) -> str:
    """squeue's ``%.Nx`` / ``%Nx``: cut to N, then right- or left-justify; no N: as is."""
    if not w:
        return text
    text = text[:w]
    return text.rjust(w) if right else text.ljust(w)


@dataclass(frozen=True, slots=True)
class LogFile:
    """A log as the demo serves it at one instant: bytes by range, size and mtime."""

    size: int
    mtime: float
    read: Callable[[int, int], bytes]


def _static_log(data: bytes, mtime: float) -> LogFile:
    return LogFile(len(data), mtime, lambda off, n: data[max(0, off): max(0, off) + max(0, n)])


class SlurmCluster:
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
        # node -> (start, end or None) of the jobs that ran on it, for LastBusyTime (the
        # properties per job per node per poll were a third of a demo poll's generation)
        self._spans = {n: [(j.start, j.end) for j in js if j.start is not None] for n, js in self.jobs_on_node.items()}
        self._submitted_at: tuple[int, list[DemoJob]] = (-1, [])
        self._ctld = sorted(self._ctld_events(ctld_extra), key=lambda e: e[0])
        self._ctld_times = [e[0] for e in self._ctld]
        self._slurmd_extra: dict[str, list[tuple[float, str]]] = {}
        for node, at, text in slurmd_extra:
            self._slurmd_extra.setdefault(node, []).append((at, text))
        for j in self.jobs:
            for node, at, text in j.slurmd:
                self._slurmd_extra.setdefault(node, []).append((at, text))
        self._cache: dict[tuple[str, int], LogFile] = {}
        self._rows: dict[tuple, str] = {}  # squeue lines that do not change with t (see _row)
        self._running: dict[tuple, list] = {}  # (format, job id) -> RUNNING line template (_template)
        self.files: dict[str, Callable[[int], LogFile | None]] = {
            "/var/log/slurm/slurmctld.log": self._ctld_file,
        }
        for name in self.nodes:
            self.files[f"/var/log/slurm/slurmd-{name}.log"] = lambda t, name=name: self._slurmd_file(name, t)
        for j in self.jobs:
            self.files[j.stdout_path] = lambda t, j=j: self._job_file(j, t, "out")
            if j.split_err:
                self.files[j.stderr_path] = lambda t, j=j: self._job_file(j, t, "err")

    # ------------------------------------------------------------------ time helpers

    def at(self, seconds: float) -> datetime:
        return self.start + timedelta(seconds=seconds)

    def _ms(self, *key: object) -> int:
        return _h(*key) % 1000

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

    # ------------------------------------------------------------------ squeue

    def squeue(self, args: list[str], t: int) -> tuple[bytes, bytes, int]:
        fmt = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
        header = True
        states: set[str] | None = {"PENDING", "RUNNING"}
        states_given = False
        ids = users = parts = None
        it = iter(args)
        for a in it:
            key, _, val = a.partition("=")
            if key in ("-o", "--format"):
                fmt = val or next(it, "")
            elif key in ("-h", "--noheader"):
                header = False
            elif key in ("-t", "--states"):
                val = val or next(it, "")
                states_given = True
                states = None if val.lower() == "all" else {s.strip().upper() for s in val.split(",")}
            elif key in ("-j", "--jobs"):
                ids = set((val or next(it, "")).split(","))
            elif key in ("-u", "--user"):
                users = set((val or next(it, "")).split(","))
            elif key in ("-p", "--partition"):
                parts = set((val or next(it, "")).split(","))
            elif a.startswith("-o") and len(a) > 2:
                fmt = a[2:]
            else:
                return b"", f"squeue: unrecognized option '{a}'\nTry \"squeue --help\" for more information\n".encode(), 1
        if ids is not None and not states_given:
            states = None  # squeue -j shows the jobs whatever their state
        visible = self.visible_jobs(t)
        pending = self.pending_reasons(t, visible)
        rows = []
        for j, st in visible:
            if states is not None and st not in states and COMPACT.get(st) not in states:
                continue
            if ids is not None and str(j.job_id) not in ids:
                continue
            if users is not None and j.user not in users:
                continue
            if parts is not None and j.partition not in parts:
                continue
            rows.append((j, st))
        rows.sort(key=lambda r: (r[0].partition, COMPACT.get(r[1], r[1]), -r[0].priority, r[0].job_id))
        lines = []
        if header:
            lines.append(self._render(fmt, None, "", t, pending))
        lines.extend(self._row(fmt, j, st, t, pending) for j, st in rows)
        return "".join(line + "\n" for line in lines).encode(), b"", 0

    def _row(self, fmt: str, j: DemoJob, st: str, t: int, pending: dict[int, str]) -> str:
        """One squeue line; lines of jobs whose fields do not depend on t are kept.

        Only a RUNNING job's TIME/TIME_LEFT move with t; a PENDING one's depend on its reason
        and on whether its planned start is still ahead (START_TIME/END_TIME), an ended one's
        on nothing (its end is fixed). Re-rendering ~600 lines every poll was most of the idle
        demo's CPU.
        """
        if st == "RUNNING":
            tpl = self._running.get((fmt, j.job_id))
            if tpl is None:
                tpl = self._running[(fmt, j.job_id)] = self._template(fmt, j, st, t, pending)
            return "".join(
                p if p.__class__ is str else _pad(self._field(p[2], j, st, t, pending), p[0], p[1]) for p in tpl
            )
        if st != "PENDING" and j.end is None:
            return self._render(fmt, j, st, t, pending)
        if st == "PENDING":
            planned = self._planned.get(j.job_id)
            key: tuple = (fmt, j.job_id, st, pending.get(j.job_id), planned is not None and planned > t)
        else:
            key = (fmt, j.job_id, st)
        line = self._rows.get(key)
        if line is None:
            line = self._rows[key] = self._render(fmt, j, st, t, pending)
        return line

    def _template(self, fmt: str, j: DemoJob, st: str, t: int, pending: dict[int, str]) -> list:
        """A RUNNING job's squeue line as fixed text and (right, width, code) slots for the
        codes that move with t (:data:`_MOVING`): a running job's other fields (nodes, start,
        planned end, reason None) are fixed while it runs, and ~220 running lines re-rendered
        field by field every poll were most of the demo squeue's CPU."""
        segments, tail = _parse_format(fmt)
        parts: list = []
        fixed: list[str] = []
        for literal, right, w, code in segments:
            fixed.append(literal)
            if code in _MOVING:
                parts.append("".join(fixed))
                parts.append((right, w, code))
                fixed = []
            else:
                fixed.append(self._render(f"%{'.' if right else ''}{w or ''}{code}", j, st, t, pending))
        fixed.append(tail)
        parts.append("".join(fixed))
        return [p for p in parts if p != ""]

    def _render(self, fmt: str, j: DemoJob | None, st: str, t: int, pending: dict[int, str]) -> str:
        segments, tail = _parse_format(fmt)
        out: list[str] = []
        for literal, right, w, code in segments:
            out.append(literal)
            if code == "%":
                out.append("%")
                continue
            text = _SQUEUE_HEADERS.get(code, code.upper()) if j is None else self._field(code, j, st, t, pending)
            out.append(_pad(text, right, w))
        out.append(tail)
        return "".join(out)

    def _field(self, code: str, j: DemoJob, st: str, t: int, pending: dict[int, str]) -> str:
        # reason / node list / planned start only for the codes that print them: computing
        # them for each of ~20 codes per job was most of an idle demo's CPU (compress())
        if code in ("r", "R"):
            reason = self._reason(j, st, pending)
        if code in ("R", "N"):
            node_list = compress(j.nodes) if st != "PENDING" else ""
        if code in ("S", "e"):
            planned = self._planned.get(j.job_id) if st == "PENDING" and not j.pending_reason else None
        if code in ("i", "A"):
            return str(j.job_id)
        if code == "P":
            return j.partition
        if code == "j":
            return j.name
        if code == "u":
            return j.user
        if code == "T":
            return st
        if code == "t":
            return COMPACT.get(st, st)
        if code == "r":
            return reason
        if code == "R":
            return f"({reason})" if st == "PENDING" or reason != "None" else node_list
        if code in ("C", "c"):
            return str(j.cpus)
        if code == "D":
            return str(j.num_nodes)
        if code == "N":
            return node_list
        if code == "m":
            return mem(j.mem_mib)
        if code == "l":
            return squeue_dur(j.time_limit_s)
        if code == "M":
            return squeue_dur(self._elapsed(j, st, t))
        if code == "L":
            if st != "RUNNING" or j.time_limit_s is None or j.start is None:
                return "UNLIMITED" if j.time_limit_s is None else squeue_dur(j.time_limit_s)
            return squeue_dur(j.start + j.time_limit_s - t)
        if code == "V":
            return ts(self.at(j.submit))
        if code == "S":
            if st == "PENDING":
                return ts(self.at(planned)) if planned is not None and planned > t else "N/A"
            return ts(self.at(j.start or 0))
        if code == "e":
            if st == "PENDING":
                if planned is not None and planned > t and j.time_limit_s is not None:
                    return ts(self.at(planned + j.time_limit_s))
                return "N/A"
            if st == "RUNNING":
                return ts(self.at((j.start or 0) + j.time_limit_s)) if j.time_limit_s else "Unknown"
            return ts(self.at(j.end or 0))
        if code == "Z":
            return j.work_dir
        if code == "a":
            return j.account
        if code == "q":
            return j.qos
        if code == "E":
            return j.dependency or "(null)"
        if code == "Q":
            return str(j.priority)
        if code == "k":
            return j.comment or "(null)"
        if code == "o":
            return j.command or "(null)"
        if code == "b":
            return f"gres/gpu:{j.gpus}" if j.gpus else "N/A"
        return ""

    # ------------------------------------------------------------------ scontrol

    def scontrol(self, args: list[str], t: int) -> tuple[bytes, bytes, int]:
        words = [a for a in args if a not in ("-o", "--oneliner")]
        if len(words) < 2 or words[0] != "show":
            return b"", b"invalid entity: " + " ".join(words).encode() + b" for keyword: show\n", 1
        entity, name = words[1], (words[2] if len(words) > 2 else None)
        if entity in ("node", "nodes"):
            names = [name] if name else sorted(self.nodes)
            if name and name not in self.nodes:
                return b"", f"Node {name} not found\n".encode(), 1
            alloc = self.allocation(t)
            return "".join(self._node_line(self.nodes[n], t, alloc[n]) + "\n" for n in names).encode(), b"", 0
        if entity in ("partition", "partitions"):
            if name and name not in self.partitions:
                return b"", f"Partition {name} not found\n".encode(), 1
            parts = [self.partitions[name]] if name else list(self.partitions.values())
            return "".join(self._partition_line(p) + "\n" for p in parts).encode(), b"", 0
        if entity in ("job", "jobs"):
            visible = self.visible_jobs(t)
            pending = self.pending_reasons(t, visible)
            if name:
                found = [(j, st) for j, st in visible if str(j.job_id) == name]
                if not found:
                    return b"", b"slurm_load_jobs error: Invalid job id specified\n", 1
                visible = found
            return "".join(self._job_line(j, st, t, pending) + "\n\n" for j, st in visible).encode(), b"", 0
        return b"", f"invalid entity: {entity} for keyword: show\n".encode(), 1

    def _node_line(self, n: DemoNode, t: int, alloc: tuple[int, int, int]) -> str:
        change = n.change_at(t)
        cpus_alloc, mem_alloc, gpus_alloc = alloc
        if change is not None and change.flag == "DOWN":
            state = "DOWN+NOT_RESPONDING"
            cpus_alloc = mem_alloc = gpus_alloc = 0
        else:
            base = "IDLE" if cpus_alloc == 0 else ("ALLOCATED" if cpus_alloc >= n.cpus else "MIXED")
            state = base + ("+DRAIN" if change is not None else "") + "".join(
                "+" + f for f in (change.extra if change else ()))
        load = cpus_alloc * (0.88 + (_h(n.name, t // 60) % 12) / 100)
        free = max(1024, n.real_memory - int(mem_alloc * 0.74) - 6000 - _h(n.name, t // 30) % 2048)
        if change is not None and change.flag == "DOWN":
            load, free = 0.0, 0
        gres = f"gpu:{n.gpu_type}:{n.gpus}(S:0-1)" if n.gpus else "(null)"
        cfg = f"cpu={n.cpus},mem={tres_mem(n.real_memory)},billing={n.cpus}" + (f",gres/gpu={n.gpus}" if n.gpus else "")
        atres = ""
        if cpus_alloc:
            atres = f"cpu={cpus_alloc},mem={tres_mem(mem_alloc)}" + (f",gres/gpu={gpus_alloc}" if gpus_alloc else "")
        busy = self._last_busy(n, t)
        cores = n.cpus // n.sockets
        line = (
            f"NodeName={n.name} Arch=x86_64 CoresPerSocket={cores}  CPUAlloc={cpus_alloc} CPUEfctv={n.cpus} "
            f"CPUTot={n.cpus} CPULoad={load:.2f} AvailableFeatures=(null) ActiveFeatures=(null) Gres={gres} "
            f"NodeAddr={n.name} NodeHostName={n.name} Port=6818 Version={SLURM_VERSION} "
            f"OS=Linux 5.14.0-362.24.1.el9_3.x86_64 #1 SMP PREEMPT_DYNAMIC Thu Apr 4 22:31:43 UTC 2024  "
            f"RealMemory={n.real_memory} AllocMem={mem_alloc} FreeMem={free if free else 'N/A'} Sockets={n.sockets} "
            f"Boards=1 State={state} ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
            f"Partitions={','.join(n.partitions)}  BootTime={ts(self.at(n.boot))} "
            f"SlurmdStartTime={ts(self.at(n.slurmd_start))} LastBusyTime={ts(self.at(busy))} "
            f"CfgTRES={cfg} AllocTRES={atres} CapWatts=n/a CurrentWatts=0 AveWatts=0 "
            f"ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s"
        )
        if change is not None:
            line += f" Reason={change.reason} [{change.user}@{ts(self.at(change.at))}]"
        return line

    def _last_busy(self, n: DemoNode, t: int) -> int:
        busy = n.slurmd_start
        for start, end in self._spans.get(n.name, ()):
            if start <= t:
                busy = max(busy, t if end is None or end > t else end)
        return busy

    def _partition_line(self, p: DemoPartition) -> str:
        nodes = [self.nodes[n] for n in p.nodes]
        cpus = sum(n.cpus for n in nodes)
        memsum = sum(n.real_memory for n in nodes)
        gpus = sum(n.gpus for n in nodes)
        tres = f"cpu={cpus},mem={tres_mem(memsum)},node={len(nodes)},billing={cpus}" + (f",gres/gpu={gpus}" if gpus else "")
        unl = "UNLIMITED"
        return (
            f"PartitionName={p.name} AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL "
            f"Default={'YES' if p.default else 'NO'} QoS=N/A DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO "
            f"GraceTime=0 Hidden=NO MaxNodes={p.max_nodes if p.max_nodes else unl} "
            f"MaxTime={hms(p.max_time_s)} MinNodes=0 LLN=NO "
            f"MaxCPUsPerNode={p.max_cpus_per_node if p.max_cpus_per_node else unl} Nodes={compress(p.nodes)} "
            f"PriorityJobFactor=1 PriorityTier={p.priority_tier} RootOnly=NO ReqResv=NO OverSubscribe=NO "
            f"OverTimeLimit=NONE PreemptMode=OFF State={p.state} TotalCPUs={cpus} TotalNodes={len(nodes)} "
            f"SelectTypeParameters=NONE JobDefaults=(null) DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED "
            f"TRES={tres}"
        )

    def _job_line(self, j: DemoJob, st: str, t: int, pending: dict[int, str]) -> str:
        reason = self._reason(j, st, pending)
        code, sig = j.exit_code if st not in ("PENDING", "RUNNING") else (0, 0)
        if st == "TIMEOUT":
            code, sig = 0, 15
        running = st == "RUNNING"
        start = "Unknown" if st == "PENDING" else ts(self.at(j.start or 0))
        if st == "PENDING":
            end = "Unknown"
        elif running:
            end = ts(self.at((j.start or 0) + j.time_limit_s)) if j.time_limit_s else "Unknown"
        else:
            end = ts(self.at(j.end or 0))
        node_list = compress(j.nodes) if st != "PENDING" else ""
        batch_host = f" BatchHost={j.nodes[0]}" if st != "PENDING" and j.nodes else ""
        sched = j.start if j.start is not None and j.start <= t else min(t, j.submit + 30)
        tres = f"cpu={j.cpus},mem={mem(j.mem_mib * j.num_nodes)},node={j.num_nodes},billing={j.cpus}"
        if j.gpus:
            tres += f",gres/gpu={j.gpus}"
        gres = f" TresPerNode=gres:gpu:{j.gpus // max(1, j.num_nodes)}" if j.gpus else ""
        return (
            f"JobId={j.job_id} JobName={j.name} UserId={j.user}({j.uid}) GroupId={j.account}({j.uid}) "
            f"MCS_label=N/A Priority={j.priority} Nice=0 Account={j.account} QOS={j.qos} JobState={st} "
            f"Reason={reason} Dependency={j.dependency or '(null)'} Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 "
            f"ExitCode={code}:{sig} RunTime={hms(self._elapsed(j, st, t))} TimeLimit={hms(j.time_limit_s)} "
            f"TimeMin=N/A SubmitTime={ts(self.at(j.submit))} EligibleTime={ts(self.at(j.submit))} "
            f"AccrueTime={ts(self.at(j.submit))} StartTime={start} EndTime={end} Deadline=N/A "
            f"SuspendTime=None SecsPreSuspend=0 LastSchedEval={ts(self.at(sched))} Scheduler=Main "
            f"Partition={j.partition} AllocNode:Sid=login01:{2000 + j.uid % 7000} ReqNodeList=(null) "
            f"ExcNodeList=(null) NodeList={node_list}{batch_host} NumNodes={j.num_nodes} NumCPUs={j.cpus} "
            f"NumTasks={j.num_nodes} CPUs/Task={j.cpus // max(1, j.num_nodes)} ReqB:S:C:T=0:0:*:* TRES={tres} "
            f"Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode={j.cpus // max(1, j.num_nodes)} "
            f"MinMemoryNode={mem(j.mem_mib)} MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 "
            f"OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command={j.command or '(null)'} "
            f"WorkDir={j.work_dir} Comment={j.comment or '(null)'} StdErr={j.stderr_path} StdIn=/dev/null "
            f"StdOut={j.stdout_path} Power={gres} "
        ).replace(" Comment=(null)", "")

    # ------------------------------------------------------------------ sacct

    def sacct(self, args: list[str], t: int) -> tuple[bytes, bytes, int]:
        sep, fields, ids, user, name = "|", ["JobID", "JobName", "Partition", "State"], None, None, None
        allocations_only = False
        since = -30 * 86400
        it = iter(args)
        for a in it:
            key, _, val = a.partition("=")
            if key == "--delimiter":
                sep = val
            elif key in ("-o", "--format"):
                fields = (val or next(it, "")).split(",")
            elif key in ("-j", "--jobs"):
                ids = set((val or next(it, "")).split(","))
            elif key in ("-u", "--user"):
                user = val or next(it, "")
            elif key == "--name":
                name = val or next(it, "")
            elif key in ("-S", "--starttime"):
                spec = val or next(it, "")
                m = re.fullmatch(r"now-(\d+)days", spec)
                since = -int(m.group(1)) * 86400 + t if m else since
            elif key in ("-X", "--allocations"):
                allocations_only = True
            elif key in ("-P", "--parsable2", "-n", "--noheader"):
                continue
            else:
                return b"", f"sacct: unrecognized option '{a}'\n".encode(), 1
        rows: list[str] = []
        for j in self.jobs:
            st = j.state_at(t)
            if st is None:
                continue
            if ids is not None and str(j.job_id) not in ids:
                continue
            if user is not None and j.user != user:
                continue
            if name is not None and j.name != name:
                continue
            if ids is None and (j.end if j.end is not None and j.end <= t else t) < since:
                continue
            for rec in self._acct_rows(j, st, t, allocations_only):
                rows.append(sep.join(rec.get(f, "") for f in fields))
        return "".join(r + "\n" for r in rows).encode(), b"", 0

    def _acct_rows(self, j: DemoJob, st: str, t: int, allocations_only: bool) -> list[dict[str, str]]:
        elapsed = hms(self._elapsed(j, st, t))
        done = st not in ("PENDING", "RUNNING")
        start = "Unknown" if st == "PENDING" else ts(self.at(j.start or 0))
        end = ts(self.at(j.end or 0)) if done else "Unknown"
        code, sig = j.exit_code if done else (0, 0)
        state = st
        if st == "CANCELLED" and j.cancelled_by is not None:
            state = f"CANCELLED by {j.cancelled_by}"
        if st == "TIMEOUT":
            code, sig = 0, 0
        job = {
            "JobID": str(j.job_id), "JobName": j.name, "Partition": j.partition, "User": j.user,
            "State": state, "ExitCode": f"{code}:{sig}", "ReqMem": mem(j.mem_mib), "MaxRSS": "",
            "Elapsed": elapsed, "Timelimit": hms(j.time_limit_s, "Partition_Limit"),
            "NodeList": compress(j.nodes) if st != "PENDING" and j.nodes else "None assigned",
            "Reason": j.pending_reason if st == "PENDING" and j.pending_reason else "None",
            "Start": start, "End": end,
        }
        rows = [job]
        if st == "PENDING" or allocations_only:
            return rows
        step_state, step_exit = {
            "RUNNING": ("RUNNING", "0:0"),
            "COMPLETED": ("COMPLETED", "0:0"),
            "FAILED": ("FAILED", f"{code}:{sig}"),
            "OUT_OF_MEMORY": ("OUT_OF_MEMORY", "0:125"),
            "TIMEOUT": ("CANCELLED", "0:15"),
            "CANCELLED": ("CANCELLED", "0:15"),
            "NODE_FAIL": ("CANCELLED", ""),
        }.get(st, (st, f"{code}:{sig}"))
        rss = j.max_rss_kib if j.max_rss_kib is not None else int(j.mem_mib * 1024 * (0.35 + (_h(j.job_id) % 40) / 100))
        for step in j.steps:
            row = dict.fromkeys(job, "")
            row.update({
                "JobID": f"{j.job_id}.{step}", "JobName": "batch" if step == "batch" else (j.srun_name or j.name),
                "State": step_state, "ExitCode": step_exit, "Elapsed": elapsed,
                "MaxRSS": "" if st in ("RUNNING", "NODE_FAIL") else rss_kib(rss),
                "NodeList": j.nodes[0] if step == "batch" and j.nodes else compress(j.nodes),
                "Start": start, "End": end,
            })
            rows.append(row)
        return rows

    # ------------------------------------------------------------------ logs

    def file(self, path: str, t: int) -> LogFile | None:
        maker = self.files.get(path)
        if maker is None:
            return None
        key = (path, t)
        hit = self._cache.get(key)
        if hit is None:
            if len(self._cache) > 256:
                self._cache.clear()
            hit = maker(t)
            if hit is None:
                return None
            self._cache[key] = hit
        return hit

    def _ctld_events(self, extra: list[tuple[float, str]]) -> list[tuple[float, str]]:
        ev: list[tuple[float, str]] = list(extra)
        for j in self.jobs:
            ms = self._ms(j.job_id, "submit") / 1000
            ev.append((j.submit + ms, f"_slurm_rpc_submit_batch_job: JobId={j.job_id} InitPrio={j.priority} usec={200 + _h(j.job_id) % 500}"))
            ev.extend(j.ctld)
            if j.start is None:
                continue
            s = j.start + self._ms(j.job_id, "start") / 1000
            if _h(j.job_id, "bf") % 3 == 0:
                ev.append((s, f"sched/backfill: _start_job: Started JobId={j.job_id} in {j.partition} on {compress(j.nodes)}"))
            else:
                ev.append((s, f"sched: Allocate JobId={j.job_id} NodeList={compress(j.nodes)} #CPUs={j.cpus} Partition={j.partition}"))
            end = j.end
            if end is None:
                continue
            e = end + self._ms(j.job_id, "end") / 1000
            final = j.final
            if final == "TIMEOUT":
                ev.append((e, f"Time limit exhausted for JobId={j.job_id}"))
            elif final == "CANCELLED":
                ev.append((e, f"_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId={j.job_id} uid {j.cancelled_by if j.cancelled_by is not None else j.uid}"))
            elif final == "OUT_OF_MEMORY":
                ev.append((e, f"_job_complete: JobId={j.job_id} OOM failure"))
                ev.append((e, f"_job_complete: JobId={j.job_id} done"))
            elif final == "NODE_FAIL":
                pass  # the node-failure lines come with the node's scenario
            elif j.exit_code[1]:
                ev.append((e, f"_job_complete: JobId={j.job_id} WTERMSIG {j.exit_code[1]}"))
                ev.append((e, f"_job_complete: JobId={j.job_id} done"))
            else:
                ev.append((e, f"_job_complete: JobId={j.job_id} WEXITSTATUS {j.exit_code[0]}"))
                ev.append((e, f"_job_complete: JobId={j.job_id} done"))
        return ev

    def _fill(self, text: str) -> str:
        """Resolve ``{ts:N}`` placeholders (absolute demo seconds) in scenario lines."""
        return _TS_REF.sub(lambda m: ts(self.at(int(m.group(1)))), text) if "{ts:" in text else text

    def _lines_file(self, events: list[tuple[float, str]], t: int) -> LogFile:
        lines = [
            f"{log_ts(self.at(math.floor(at)), int((at - math.floor(at)) * 1000))} {self._fill(text)}\n"
            for at, text in events if at <= t
        ]
        last = max((at for at, _ in events if at <= t), default=0.0)
        return _static_log("".join(lines).encode(), (self.at(last)).timestamp())

    def _ctld_file(self, t: int) -> LogFile:
        n = bisect_right(self._ctld_times, t + 0.999)
        return self._lines_file(self._ctld[:n], t + 1)

    def _slurmd_file(self, name: str, t: int) -> LogFile:
        node = self.nodes[name]
        ev: list[tuple[float, str]] = []
        s = node.slurmd_start
        mem_hw = node.hw_memory or node.real_memory + 1400
        ev += [
            (s + 0.402, "CPU frequency setting not configured for this node"),
            (s + 0.405, f"slurmd version {SLURM_VERSION} started"),
            (s + 0.407, "error:  mpi/pmix_v4: init: (null) [0]: mpi_pmix.c:195: pmi/pmix: can not load PMIx library"),
            (s + 0.407, "error: Couldn't load specified plugin name for mpi/pmix_v4: Plugin init() callback failed"),
            (s + 0.407, "error: MPI: Cannot create context for mpi/pmix_v4"),
            (s + 0.409, f"slurmd started on {self.at(s).strftime('%a, %d %b %Y %H:%M:%S')} +0000"),
            (s + 0.409, f"CPUs={node.cpus} Boards=1 Sockets={node.sockets} Cores={node.cpus // node.sockets} Threads=1 "
                        f"Memory={mem_hw} TmpDisk=917504 Uptime={s - node.boot} CPUSpecList=(null) "
                        f"FeaturesAvail=(null) FeaturesActive=(null)"),
        ]
        for j in self.jobs_on_node.get(name, ()):
            if j.start is None:
                continue
            st = j.start + 0.002 + self._ms(j.job_id, name) / 1e6
            if j.nodes and j.nodes[0] == name:
                ev.append((st, f"Launching batch job {j.job_id} for UID {j.uid}"))
                ev.append((st + 0.02, f"[{j.job_id}.batch] task/cgroup: _memcg_initialize: job: alloc={j.mem_mib}MB mem.limit={j.mem_mib}MB memsw.limit=unlimited"))
                ev.append((st + 0.02, f"[{j.job_id}.batch] task/cgroup: _memcg_initialize: step: alloc={j.mem_mib}MB mem.limit={j.mem_mib}MB memsw.limit=unlimited"))
            end = j.end
            if end is None:
                continue
            if j.final == "TIMEOUT":
                ev.append((end + 0.002, f"[{j.job_id}.batch] error: *** JOB {j.job_id} ON {j.nodes[0]} CANCELLED AT {ts(self.at(end))} DUE TO TIME LIMIT ***"))
            elif j.final == "CANCELLED":
                ev.append((end + 0.001, f"[{j.job_id}.batch] error: *** JOB {j.job_id} ON {j.nodes[0]} CANCELLED AT {ts(self.at(end))} ***"))
            if j.final != "NODE_FAIL" and j.nodes and j.nodes[0] == name:
                ev.append((end + 1.02, f"[{j.job_id}.batch] done with job"))
        ev += self._slurmd_extra.get(name, [])
        ev.sort(key=lambda e: e[0])
        return self._lines_file(ev, t + 1)

    def _job_file(self, j: DemoJob, t: int, which: str) -> LogFile | None:
        if j.start is None or t < j.start:
            return None
        if j.big_log_lines and which == "out":
            return big_log(j, t, self)
        if which == "err":
            lines = [(j.start + off, text) for off, text in j.stderr]
        elif j.stdout or j.stderr:
            lines = [(j.start + off, text) for off, text in j.stdout]
            if not j.split_err:
                lines += [(j.start + off, text) for off, text in j.stderr]
        else:
            lines = self._job_log(j, t)
        lines = sorted((ln for ln in lines if ln[0] <= t), key=lambda ln: ln[0])
        data = "".join(self._fill(text) + "\n" for _, text in lines).encode()
        last = lines[-1][0] if lines else j.start
        return _static_log(data, self.at(last).timestamp())


_SQUEUE_HEADERS = {
    "i": "JOBID", "A": "JOBID", "P": "PARTITION", "j": "NAME", "u": "USER", "T": "STATE", "t": "ST",
    "r": "REASON", "R": "NODELIST(REASON)", "C": "CPUS", "c": "MIN_CPUS", "D": "NODES", "N": "NODELIST",
    "m": "MIN_MEMORY", "l": "TIME_LIMIT", "M": "TIME", "L": "TIME_LEFT", "V": "SUBMIT_TIME",
    "S": "START_TIME", "e": "END_TIME", "Z": "WORK_DIR", "a": "ACCOUNT", "q": "QOS", "E": "DEPENDENCY",
    "Q": "PRIORITY", "k": "COMMENT", "o": "COMMAND", "b": "TRES_PER_NODE",
}


# --------------------------------------------------------------------------- the big log

_BIG_HEADER_LINES = (
    "\x1b[1m== llm-pretrain: 64 x A100 80GB, ZeRO-3, bf16 ==\x1b[0m",
    "[rank0]: loading tokenizer from /shared/models/tokenizer-v3",
    "[rank0]: dataset shards: 4096, tokens: 2.1T",
)


def _big_line(i: int, when: datetime, seed: int) -> str:
    """One fixed-width progress line (every line has the same byte length)."""
    loss = 1.65 + 2.4 / (1 + i / 9000) + ((_h(seed, i) % 2000) - 1000) / 40000
    tok = 180_000 + _h(seed, "tok", i) % 9000
    gnorm = 0.2 + (_h(seed, "g", i) % 900) / 1000
    stamp = when.strftime("%Y-%m-%d %H:%M:%S")
    return (f"\x1b[32m{stamp}\x1b[0m | \x1b[34mINFO\x1b[0m | step {i:08d} | loss {loss:7.4f} | "
            f"lr 3.00e-04 | grad_norm {gnorm:5.3f} | tok/s {tok:7d} | mem 71.2GiB")


def big_log(j: DemoJob, t: int, cluster: SlurmCluster) -> LogFile:
    """A training log of ``j.big_log_lines`` lines at the demo start, growing 2 lines/s.

    Lines are fixed width, so any byte range is generated directly without building
    the file (hundreds of thousands of lines, tens of MB).
    """
    assert j.start is not None
    header = "".join(h + "\n" for h in _BIG_HEADER_LINES).encode()
    sample = (_big_line(0, cluster.at(0), 0) + "\n").encode()
    width = len(sample)
    t0_lines = j.big_log_lines
    # the job started t0_lines/2 seconds before the demo start plus header time
    end = j.end
    upto = t if end is None else min(t, end)
    count = max(0, t0_lines + 2 * upto)
    size = len(header) + count * width

    def when(i: int) -> datetime:
        return cluster.at(-t0_lines / 2 + i / 2)

    def read(offset: int, length: int) -> bytes:
        offset = max(0, offset)
        stop = min(size, offset + max(0, length))
        if offset >= stop:
            return b""
        out = bytearray()
        if offset < len(header):
            out += header[offset:stop]
        lo = max(0, (max(offset, len(header)) - len(header)) // width)
        hi = min(count, (stop - len(header) + width - 1) // width)
        if hi > lo:
            body = "".join(_big_line(i, when(i), j.job_id) + "\n" for i in range(lo, hi)).encode()
            base = len(header) + lo * width
            out += body[max(0, offset - base): stop - base]
        return bytes(out)

    return LogFile(size, cluster.at(upto).timestamp(), read)
