"""What the demo cluster prints: squeue, ``scontrol show``, sacct, in Slurm 22.05's text.

Checked against the lab captures (``tests/fixtures/lab``): squeue prints durations as
``M:SS`` / ``H:MM:SS`` / ``D-HH:MM:SS``, sacct and scontrol as ``HH:MM:SS`` /
``D-HH:MM:SS``; memory goes through Slurm's ``convert_num_unit`` (exact: ``100M``,
``32G``, ``257000M``); timestamps are local time without a zone (the demo uses UTC).

:class:`SlurmCommands` is the part of :class:`~cockpit.demo.slurm.SlurmCluster` that
answers the commands; what it prints comes from the cluster's state at ``t``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from cockpit.slurm.hostlist import compress
from cockpit.units import squeue_time

if TYPE_CHECKING:
    from cockpit.demo.slurm import DemoJob, DemoNode, DemoPartition


_NO_REASON = b"You must specify a reason when DOWNING or DRAINING a node. Request denied\n"


# every squeue prints the same submit/start times again; bounded well under a week of
# distinct log times (1 << 16 filled for the whole week of a soak: ~18 MiB of the simulator's
# own memory counted against the cockpit, 4 blocks a time stamp)
@lru_cache(maxsize=1 << 13)
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


def stable_hash(*parts: object) -> int:
    """Small deterministic hash (no Python hash randomisation): spreads ms, loads, noise."""
    x = 0x811C9DC5
    for p in parts:
        for b in str(p).encode():
            x = ((x ^ b) * 0x01000193) & 0xFFFFFFFF
    return x


# fmt: off
COMPACT = {
    "PENDING": "PD", "RUNNING": "R", "COMPLETED": "CD", "FAILED": "F", "TIMEOUT": "TO",
    "OUT_OF_MEMORY": "OOM", "CANCELLED": "CA", "NODE_FAIL": "NF",
}
# fmt: on
SLURM_VERSION = "22.05.8"
_FMT_CODE = re.compile(r"%(\.)?(\d+)?([a-zA-Z%])")


@lru_cache(maxsize=32)
def _parse_format(fmt: str) -> tuple[tuple[tuple[str, bool, int, str], ...], str]:
    """squeue ``-o`` format -> ((literal before, right-justified, width or 0, code), ...), tail."""
    segments = []
    pos = 0
    for m in _FMT_CODE.finditer(fmt):
        segments.append((fmt[pos : m.start()], bool(m.group(1)), int(m.group(2) or 0), m.group(3)))
        pos = m.end()
    return tuple(segments), fmt[pos:]


# squeue codes whose value moves with t while a job runs: TIME, TIME_LEFT
_MOVING = frozenset("ML")
# sacct --helpformat of Slurm 22.05 (no StdOut/StdErr: those came with 24.05)
SACCT_HELP = (
    "Account AdminComment AllocCPUS AllocNodes AllocTRES AssocID AveCPU AveCPUFreq AveDiskRead "
    "AveDiskWrite AvePages AveRSS AveVMSize BlockID Cluster Comment Constraints "
    "ConsumedEnergy ConsumedEnergyRaw Container CPUTime CPUTimeRAW DBIndex DerivedExitCode "
    "Elapsed ElapsedRaw Eligible End ExitCode Flags GID Group JobID JobIDRaw JobName Layout "
    "MaxDiskRead MaxRSS MaxVMSize NCPUS NNodes NodeList NTasks Partition Priority QOS Reason "
    "ReqCPUS ReqMem ReqNodes ReqTRES Reservation Start State Submit SubmitLine Suspended "
    "SystemComment Timelimit TotalCPU UID User WCKey WorkDir"
).split()


def _pad(text: str, right: bool, w: int) -> str:
    """squeue's ``%.Nx`` / ``%Nx``: cut to N, then right- or left-justify; no N: as is."""
    if not w:
        return text
    text = text[:w]
    return text.rjust(w) if right else text.ljust(w)


# squeue ``-o`` code -> the column header squeue prints for it
# fmt: off
_SQUEUE_HEADERS = {
    "i": "JOBID", "A": "JOBID", "P": "PARTITION", "j": "NAME", "u": "USER", "T": "STATE", "t": "ST",
    "r": "REASON", "R": "NODELIST(REASON)", "C": "CPUS", "c": "MIN_CPUS", "D": "NODES",
    "N": "NODELIST", "m": "MIN_MEMORY", "l": "TIME_LIMIT", "M": "TIME", "L": "TIME_LEFT",
    "V": "SUBMIT_TIME", "S": "START_TIME", "e": "END_TIME", "Z": "WORK_DIR", "a": "ACCOUNT",
    "q": "QOS", "E": "DEPENDENCY", "Q": "PRIORITY", "k": "COMMENT", "o": "COMMAND",
    "b": "TRES_PER_NODE",
}
# fmt: on


class SlurmCommands:
    """squeue, ``scontrol show`` and sacct of :class:`~cockpit.demo.slurm.SlurmCluster`.

    Reads the cluster's jobs, nodes and partitions and its state at ``t``
    (``visible_jobs``, ``pending_reasons``, ``allocation``, ``_reason``, ``_elapsed``,
    ``_last_busy``); keeps the squeue lines that do not change with ``t``.
    """

    nodes: dict[str, DemoNode]
    partitions: dict[str, DemoPartition]
    jobs: list[DemoJob]
    _planned: dict[int, int]

    def set_node_state(self, name: str, state: str, reason: str, t: int) -> None: ...

    def _init_output(self) -> None:
        self._rows: dict[tuple, str] = {}  # squeue lines that do not change with t (see _row)
        # (format, job id) -> RUNNING line template (_template)
        self._running: dict[tuple, list] = {}

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
                states = (
                    None if val.lower() == "all" else {s.strip().upper() for s in val.split(",")}
                )
            elif key in ("-j", "--jobs"):
                ids = set((val or next(it, "")).split(","))
            elif key in ("-u", "--user"):
                users = set((val or next(it, "")).split(","))
            elif key in ("-p", "--partition"):
                parts = set((val or next(it, "")).split(","))
            elif a.startswith("-o") and len(a) > 2:
                fmt = a[2:]
            elif key in ("-O", "--Format"):
                fmt = "-O " + (val or next(it, ""))
            else:
                err = (
                    f"squeue: unrecognized option '{a}'\n"
                    'Try "squeue --help" for more information\n'
                )
                return b"", err.encode(), 1
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
        rows.sort(
            key=lambda r: (r[0].partition, COMPACT.get(r[1], r[1]), -r[0].priority, r[0].job_id)
        )
        if fmt.startswith("-O "):
            return self._long_format(fmt[3:], rows, header), b"", 0
        lines = []
        if header:
            lines.append(self._render(fmt, None, "", t, pending))
        lines.extend(self._row(fmt, j, st, t, pending) for j, st in rows)
        return "".join(line + "\n" for line in lines).encode(), b"", 0

    def _long_format(self, spec: str, rows: list, header: bool) -> bytes:
        """``squeue -O JobID:|,UserID:|,...``: the fields the cockpit asks for, each
        followed by its suffix (``:|`` a separator; ``:0`` the whole value)."""
        values = {
            "jobid": lambda j: str(j.job_id),
            "jobarrayid": lambda j: str(j.job_id),
            "userid": lambda j: str(j.uid),
            "groupid": lambda j: str(j.uid),
            "stdout": lambda j: j.stdout_path,
            "stderr": lambda j: j.stderr_path,
            "tres-alloc": lambda j: (
                f"cpu={j.cpus},mem={tres_mem(j.mem_mib * j.num_nodes)},node={j.num_nodes},"
                f"billing={j.cpus}"
            ),
        }
        fields = []
        for item in spec.split(","):
            name, _, size = item.partition(":")
            fields.append((name.lower(), size if not size.isdigit() else ""))
        lines = [] if not header else ["".join(n.upper() + sep for n, sep in fields)]
        for j, _st in rows:
            lines.append("".join(values.get(n, lambda j: "")(j) + sep for n, sep in fields))
        return "".join(line + "\n" for line in lines).encode()

    def sstat(self, args: list[str], t: int) -> tuple[bytes, bytes, int]:
        """``sstat -a -n -P -j IDS --format=...``: each running job's batch step, its
        MaxRSS a steady share of its request (the demo's jobs hold below --mem)."""
        ids: set[str] = set()
        fmt = ["JobID", "MaxRSS", "MaxRSSNode", "AveRSS", "NTasks", "Nodelist", "AveCPU"]
        it = iter(args)
        for a in it:
            key, _, val = a.partition("=")
            if key in ("-j", "--jobs"):
                ids = set((val or next(it, "")).split(","))
            elif key in ("-o", "--format", "--fields"):
                fmt = (val or next(it, "")).split(",")
        out, err = [], []
        running = {str(j.job_id): j for j, st in self.visible_jobs(t) if st == "RUNNING"}
        for jid in sorted(ids):
            j = running.get(jid)
            if j is None:
                err.append(f"sstat: error: couldn't get steps for job {jid}\n")
                continue
            share = 0.25 + (stable_hash("rss", j.job_id) % 50) / 100  # 25..74 % of --mem
            kib = int(j.mem_mib * 1024 * share)
            node = j.nodes[0] if j.nodes else ""
            cell = {
                "jobid": f"{jid}.batch", "maxrss": f"{kib}K", "maxrssnode": node,
                "averss": f"{kib}K", "ntasks": "1", "nodelist": node, "avecpu": "00:10:00",
            }  # fmt: skip
            out.append("|".join(cell.get(f.lower(), "") for f in fmt) + "|\n")
        return "".join(out).encode(), "".join(err).encode(), 1 if err and not out else 0

    def _row(self, fmt: str, j: DemoJob, st: str, t: int, pending: dict[int, str]) -> str:
        """One squeue line; lines of jobs whose fields do not depend on t are kept.

        Only a RUNNING job's TIME/TIME_LEFT move with t; a PENDING one's depend on its reason
        and on whether its planned start is still ahead (START_TIME/END_TIME), an ended one's
        on nothing (its end is fixed). Re-rendering ~600 lines every poll would be most of the
        idle demo's CPU.
        """
        if st == "RUNNING":
            tpl = self._running.get((fmt, j.job_id))
            if tpl is None:
                tpl = self._running[(fmt, j.job_id)] = self._template(fmt, j, st, t, pending)
            return "".join(
                p if p.__class__ is str else _pad(self._field(p[2], j, st, t, pending), p[0], p[1])
                for p in tpl
            )
        if st != "PENDING" and j.end is None:
            return self._render(fmt, j, st, t, pending)
        if st == "PENDING":
            planned = self._planned.get(j.job_id)
            key: tuple = (
                fmt,
                j.job_id,
                st,
                pending.get(j.job_id),
                planned is not None and planned > t,
            )
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
        field by field every poll would be most of the demo squeue's CPU."""
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
                fixed.append(
                    self._render(f"%{'.' if right else ''}{w or ''}{code}", j, st, t, pending)
                )
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
            text = (
                _SQUEUE_HEADERS.get(code, code.upper())
                if j is None
                else self._field(code, j, st, t, pending)
            )
            out.append(_pad(text, right, w))
        out.append(tail)
        return "".join(out)

    def _field(self, code: str, j: DemoJob, st: str, t: int, pending: dict[int, str]) -> str:
        # reason / node list / planned start only for the codes that print them: computing
        # them for each of ~20 codes per job would be most of an idle demo's CPU (compress())
        if code in ("r", "R"):
            reason = self._reason(j, st, pending)
        if code in ("R", "N"):
            node_list = compress(j.nodes) if st != "PENDING" else ""
        if code in ("S", "e"):
            planned = (
                self._planned.get(j.job_id) if st == "PENDING" and not j.pending_reason else None
            )
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
            return ts(self.at(j.start if j.start is not None else j.end or 0))
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
        if code == "b":  # TRES per node; 22.05 spells it gres:gpu:N (23.02+ gres/gpu:N)
            return f"gres:gpu:{max(1, j.gpus // max(1, j.num_nodes))}" if j.gpus else "N/A"
        return ""

    # ------------------------------------------------------------------ scontrol

    def scontrol(self, args: list[str], t: int) -> tuple[bytes, bytes, int]:
        words = [a for a in args if a not in ("-o", "--oneliner")]
        if words[:1] == ["update"]:
            return self._update(words[1:], t)
        if words[:1] in (["hold"], ["release"], ["requeue"]):
            return b"", b"demo site: job actions are not simulated (node actions are)\n", 1
        if len(words) < 2 or words[0] != "show":
            return b"", b"invalid entity: " + " ".join(words).encode() + b" for keyword: show\n", 1
        entity, name = words[1], (words[2] if len(words) > 2 else None)
        if entity in ("node", "nodes"):
            names = [name] if name else sorted(self.nodes)
            if name and name not in self.nodes:
                return b"", f"Node {name} not found\n".encode(), 1
            alloc = self.allocation(t)
            return (
                "".join(self._node_line(self.nodes[n], t, alloc[n]) + "\n" for n in names).encode(),
                b"",
                0,
            )
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
            return (
                "".join(self._job_line(j, st, t, pending) + "\n\n" for j, st in visible).encode(),
                b"",
                0,
            )
        return b"", f"invalid entity: {entity} for keyword: show\n".encode(), 1

    def _update(self, words: list[str], t: int) -> tuple[bytes, bytes, int]:
        """``scontrol update NodeName=X State=DRAIN|DOWN|RESUME [Reason=...]`` as Slurm takes
        it: a drain or down without a reason is refused, an unknown node is an error."""
        fields = dict(w.split("=", 1) for w in words if "=" in w)
        name, state = fields.get("NodeName", ""), fields.get("State", "").upper()
        if not name:
            return b"", b"demo site: job actions are not simulated (node actions are)\n", 1
        node = self.nodes.get(name)
        if node is None:
            return b"", f"Invalid node name specified: {name}\n".encode(), 1
        reason = fields.get("Reason", "")
        if state in ("DRAIN", "DOWN") and not reason:
            return (
                b"",
                b"You must specify a reason when DOWNING or DRAINING a node. Request denied\n",
                1,
            )
        if state not in ("DRAIN", "DOWN", "RESUME"):
            return b"", f"Invalid node state specified: {state}\n".encode(), 1
        self.set_node_state(name, state, reason, t)
        return b"", b"", 0

    def _node_line(self, n: DemoNode, t: int, alloc: tuple[int, int, int]) -> str:
        change = n.change_at(t)
        cpus_alloc, mem_alloc, gpus_alloc = alloc
        if change is not None and change.flag == "DOWN":
            state = "DOWN+NOT_RESPONDING"
            cpus_alloc = mem_alloc = gpus_alloc = 0
        else:
            base = "IDLE" if cpus_alloc == 0 else ("ALLOCATED" if cpus_alloc >= n.cpus else "MIXED")
            state = (
                base
                + ("+DRAIN" if change is not None else "")
                + "".join("+" + f for f in (change.extra if change else ()))
            )
        load = cpus_alloc * (0.88 + (stable_hash(n.name, t // 60) % 12) / 100)
        free = max(
            1024, n.real_memory - int(mem_alloc * 0.74) - 6000 - stable_hash(n.name, t // 30) % 2048
        )
        if change is not None and change.flag == "DOWN":
            load, free = 0.0, 0
        gres = f"gpu:{n.gpu_type}:{n.gpus}(S:0-1)" if n.gpus else "(null)"
        cfg = f"cpu={n.cpus},mem={tres_mem(n.real_memory)},billing={n.cpus}" + (
            f",gres/gpu={n.gpus}" if n.gpus else ""
        )
        atres = ""
        if cpus_alloc:
            atres = f"cpu={cpus_alloc},mem={tres_mem(mem_alloc)}" + (
                f",gres/gpu={gpus_alloc}" if gpus_alloc else ""
            )
        busy = self._last_busy(n, t)
        cores = n.cpus // n.sockets
        line = (
            f"NodeName={n.name} Arch=x86_64 CoresPerSocket={cores}  CPUAlloc={cpus_alloc} "
            f"CPUEfctv={n.cpus} "
            f"CPUTot={n.cpus} CPULoad={load:.2f} AvailableFeatures=(null) ActiveFeatures=(null) "
            f"Gres={gres} "
            f"NodeAddr={n.name} NodeHostName={n.name} Port=6818 Version={SLURM_VERSION} "
            f"OS=Linux 5.14.0-362.24.1.el9_3.x86_64 #1 SMP PREEMPT_DYNAMIC Thu Apr 4 22:31:43 UTC "
            f"2024  "
            f"RealMemory={n.real_memory} AllocMem={mem_alloc} FreeMem={free if free else 'N/A'} "
            f"Sockets={n.sockets} "
            f"Boards=1 State={state} ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
            f"Partitions={','.join(n.partitions)}  BootTime={ts(self.at(n.boot))} "
            f"SlurmdStartTime={ts(self.at(n.slurmd_start))} LastBusyTime={ts(self.at(busy))} "
            f"CfgTRES={cfg} AllocTRES={atres} CapWatts=n/a CurrentWatts=0 AveWatts=0 "
            f"ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s"
        )
        if change is not None:
            line += f" Reason={change.reason} [{change.user}@{ts(self.at(change.at))}]"
        return line

    def _partition_line(self, p: DemoPartition) -> str:
        nodes = [self.nodes[n] for n in p.nodes]
        cpus = sum(n.cpus for n in nodes)
        memsum = sum(n.real_memory for n in nodes)
        gpus = sum(n.gpus for n in nodes)
        tres = f"cpu={cpus},mem={tres_mem(memsum)},node={len(nodes)},billing={cpus}" + (
            f",gres/gpu={gpus}" if gpus else ""
        )
        unl = "UNLIMITED"
        return (
            f"PartitionName={p.name} AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL "
            f"Default={'YES' if p.default else 'NO'} QoS=N/A DefaultTime=NONE DisableRootJobs=NO "
            f"ExclusiveUser=NO "
            f"GraceTime=0 Hidden=NO MaxNodes={p.max_nodes if p.max_nodes else unl} "
            f"MaxTime={hms(p.max_time_s)} MinNodes=0 LLN=NO "
            f"MaxCPUsPerNode={p.max_cpus_per_node if p.max_cpus_per_node else unl} "
            f"Nodes={compress(p.nodes)} "
            f"PriorityJobFactor=1 PriorityTier={p.priority_tier} RootOnly=NO ReqResv=NO "
            f"OverSubscribe=NO "
            f"OverTimeLimit=NONE PreemptMode=OFF State={p.state} TotalCPUs={cpus} "
            f"TotalNodes={len(nodes)} "
            f"SelectTypeParameters=NONE JobDefaults=(null) DefMemPerNode=UNLIMITED "
            f"MaxMemPerNode=UNLIMITED "
            f"TRES={tres}"
        )

    def _job_line(self, j: DemoJob, st: str, t: int, pending: dict[int, str]) -> str:
        reason = self._reason(j, st, pending)
        code, sig = j.exit_code if st not in ("PENDING", "RUNNING") else (0, 0)
        if st == "TIMEOUT":
            code, sig = 0, 15
        running = st == "RUNNING"
        start = (
            "Unknown"
            if st == "PENDING"
            else ts(self.at(j.start if j.start is not None else j.end or 0))
        )
        if st == "PENDING":
            end = "Unknown"
        elif running:
            end = ts(self.at((j.start or 0) + j.time_limit_s)) if j.time_limit_s else "Unknown"
        else:
            end = ts(self.at(j.end or 0))
        node_list = compress(j.nodes) if st != "PENDING" else ""
        batch_host = f" BatchHost={j.nodes[0]}" if st != "PENDING" and j.nodes else ""
        sched = j.start if j.start is not None and j.start <= t else min(t, j.submit + 30)
        tres = (
            f"cpu={j.cpus},mem={mem(j.mem_mib * j.num_nodes)},node={j.num_nodes},billing={j.cpus}"
        )
        if j.gpus:
            tres += f",gres/gpu={j.gpus}"
        gres = f" TresPerNode=gres:gpu:{j.gpus // max(1, j.num_nodes)}" if j.gpus else ""
        return (
            f"JobId={j.job_id} JobName={j.name} UserId={j.user}({j.uid}) "
            f"GroupId={j.account}({j.uid}) "
            f"MCS_label=N/A Priority={j.priority} Nice=0 Account={j.account} QOS={j.qos} "
            f"JobState={st} "
            f"Reason={reason} Dependency={j.dependency or '(null)'} Requeue=1 Restarts=0 "
            f"BatchFlag=1 Reboot=0 "
            f"ExitCode={code}:{sig} RunTime={hms(self._elapsed(j, st, t))} "
            f"TimeLimit={hms(j.time_limit_s)} "
            f"TimeMin=N/A SubmitTime={ts(self.at(j.submit))} EligibleTime={ts(self.at(j.submit))} "
            f"AccrueTime={ts(self.at(j.submit))} StartTime={start} EndTime={end} Deadline=N/A "
            f"SuspendTime=None SecsPreSuspend=0 LastSchedEval={ts(self.at(sched))} Scheduler=Main "
            f"Partition={j.partition} AllocNode:Sid=login01:{2000 + j.uid % 7000} "
            f"ReqNodeList=(null) "
            f"ExcNodeList=(null) NodeList={node_list}{batch_host} NumNodes={j.num_nodes} "
            f"NumCPUs={j.cpus} "
            f"NumTasks={j.num_nodes} CPUs/Task={j.cpus // max(1, j.num_nodes)} ReqB:S:C:T=0:0:*:* "
            f"TRES={tres} "
            f"Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* "
            f"MinCPUsNode={j.cpus // max(1, j.num_nodes)} "
            f"MinMemoryNode={mem(j.mem_mib)} MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 "
            f"OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) "
            f"Command={j.command or '(null)'} "
            f"WorkDir={j.work_dir} Comment={j.comment or '(null)'} StdErr={j.stderr_path} "
            f"StdIn=/dev/null "
            f"StdOut={j.stdout_path} Power={gres} "
        ).replace(" Comment=(null)", "")

    # ------------------------------------------------------------------ sacct

    def sacct(self, args: list[str], t: int) -> tuple[bytes, bytes, int]:
        sep, fields, ids, user, name = (
            "|",
            ["JobID", "JobName", "Partition", "State"],
            None,
            None,
            None,
        )
        allocations_only = script = False
        since = -30 * 86400
        until = t
        states: set[str] | None = None
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
            elif key in ("-S", "--starttime", "-E", "--endtime"):
                at = self._sacct_time(val or next(it, ""), t)
                if at is None:
                    return b"", f"sacct: error: Invalid time specification: {a}\n".encode(), 1
                if key in ("-S", "--starttime"):
                    since = at
                else:
                    until = at
            elif key in ("-s", "--state"):
                states = {s.upper() for s in (val or next(it, "")).split(",")}
            elif key in ("-X", "--allocations"):
                allocations_only = True
            elif key in ("-B", "--batch-script"):
                script = True
            elif key == "--helpformat":
                return (" ".join(SACCT_HELP) + "\n").encode(), b"", 0
            elif key in ("-P", "--parsable2", "-n", "--noheader", "-a", "--allusers"):
                continue
            else:
                return b"", f"sacct: unrecognized option '{a}'\n".encode(), 1
        if script:  # like a site without AccountingStoreFlags=job_script
            return (
                "".join(
                    f"Batch Script for {i}\n{'-' * 80}\nNONE\n\n" for i in sorted(ids or ())
                ).encode(),
                b"",
                0,
            )
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
            if states is not None:
                # with --state, slurmdbd selects by when the job entered it: an ended one's End
                if st not in states or j.end is None or not since <= j.end <= until:
                    continue
            elif ids is None and (j.end if j.end is not None and j.end <= t else t) < since:
                continue
            for rec in self._acct_rows(j, st, t, allocations_only):
                rows.append(sep.join(rec.get(f, "") for f in fields))
        return "".join(r + "\n" for r in rows).encode(), b"", 0

    def _sacct_time(self, spec: str, t: int) -> int | None:
        """``-S``/``-E`` as seconds from the demo start: ``now``, ``now-Ndays``, or an ISO time
        (UTC, as the demo prints)."""
        if spec == "now":
            return t
        m = re.fullmatch(r"now-(\d+)days", spec)
        if m:
            return t - int(m.group(1)) * 86400
        try:
            at = datetime.strptime(spec, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
        except ValueError:
            return None
        return int((at - self.start).total_seconds())

    def _acct_rows(
        self, j: DemoJob, st: str, t: int, allocations_only: bool
    ) -> list[dict[str, str]]:
        elapsed = hms(self._elapsed(j, st, t))
        done = st not in ("PENDING", "RUNNING")
        start = (
            "Unknown"
            if st == "PENDING"
            else ts(self.at(j.start if j.start is not None else j.end or 0))
        )
        end = ts(self.at(j.end or 0)) if done else "Unknown"
        code, sig = j.exit_code if done else (0, 0)
        state = st
        if st == "CANCELLED" and j.cancelled_by is not None:
            state = f"CANCELLED by {j.cancelled_by}"
        if st == "TIMEOUT":
            code, sig = 0, 0
        job = {
            "JobID": str(j.job_id),
            "JobName": j.name,
            "Partition": j.partition,
            "User": j.user,
            "State": state,
            "ExitCode": f"{code}:{sig}",
            "ReqMem": mem(j.mem_mib),
            "MaxRSS": "",
            "Elapsed": elapsed,
            "Timelimit": hms(j.time_limit_s, "Partition_Limit"),
            "NodeList": compress(j.nodes) if st != "PENDING" and j.nodes else "None assigned",
            "Reason": j.pending_reason if st == "PENDING" and j.pending_reason else "None",
            "Start": start,
            "End": end,
            "JobIDRaw": str(j.job_id),
            "AllocCPUS": str(j.cpus) if st != "PENDING" else "0",
            "UID": str(j.uid),
            "GID": str(j.uid),
            "Submit": ts(self.at(j.submit)),
            "WorkDir": j.work_dir,
            # the demo's jobs were submitted with their script (default output file; -e when
            # stderr goes apart), as slurmdbd keeps it
            "SubmitLine": (
                f"sbatch{' -e slurm-%j.err' if j.split_err else ''} {j.command}"
                if j.command
                else ""
            ),
        }
        rows = [job]
        if st == "PENDING" or allocations_only or j.start is None:
            return rows  # a job cancelled while pending never had a step
        step_state, step_exit = {
            "RUNNING": ("RUNNING", "0:0"),
            "COMPLETED": ("COMPLETED", "0:0"),
            "FAILED": ("FAILED", f"{code}:{sig}"),
            "OUT_OF_MEMORY": ("OUT_OF_MEMORY", "0:125"),
            "TIMEOUT": ("CANCELLED", "0:15"),
            "CANCELLED": ("CANCELLED", "0:15"),
            "NODE_FAIL": ("CANCELLED", ""),
        }.get(st, (st, f"{code}:{sig}"))
        rss = (
            j.max_rss_kib
            if j.max_rss_kib is not None
            else int(j.mem_mib * 1024 * (0.35 + (stable_hash(j.job_id) % 40) / 100))
        )
        ran = self._elapsed(j, st, t)
        if j.max_rss_kib is None and ran < 60:
            # a step that ran seconds (a missing command or library) touched megabytes, not
            # its whole request: 4-12 MiB of shell and loader, ~50 MiB more per second
            rss = min(rss, 4096 + stable_hash(j.job_id, "rss") % 8192 + ran * 50 * 1024)
        for step in j.steps:
            row = dict.fromkeys(job, "")
            row.update(
                {
                    "JobID": f"{j.job_id}.{step}",
                    "JobName": "batch" if step == "batch" else (j.srun_name or j.name),
                    "State": step_state,
                    "ExitCode": step_exit,
                    "Elapsed": elapsed,
                    "MaxRSS": "" if st in ("RUNNING", "NODE_FAIL") else rss_kib(rss),
                    "NodeList": j.nodes[0] if step == "batch" and j.nodes else compress(j.nodes),
                    "Start": start,
                    "End": end,
                }
            )
            rows.append(row)
        return rows
