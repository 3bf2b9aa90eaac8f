"""Parsers of Slurm's delimited and ``scontrol`` output -> frozen model objects (no I/O).

The delimited outputs of :mod:`cockpit.slurm.commands` (squeue ``-o`` with the ``\\x1f``
separator, ``scontrol show node|partition|job -o``, ``sacct -P``) are the primary path:
portable from Slurm 17 to 24 and cheap on the controller. squeue's, read every poll for the
whole queue, has its own module (:mod:`cockpit.slurm.squeue`); the ``--json`` forms are
parsed by :mod:`cockpit.slurm.parse_json`. This module also holds the value parsers they
share (memory, durations, times, exit codes, output paths).

Every table parser is tolerant per row: a malformed row is skipped and described in
the returned warnings; input that is wholly unusable raises :class:`ParseError`.
Units: memory MiB, durations seconds, timestamps tz-aware (Slurm prints local time
without a zone; the caller passes the cluster's zone, UTC by default).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from typing import Any

from cockpit.errors import ParseError
from cockpit.model import AcctRecord, ExitCode, Partition, SlurmJob, SlurmNode
from cockpit.slurm import hostlist
from cockpit.slurm.commands import SACCT_FIELDS, SEP
from cockpit.slurm.versions import sacct_folds_exit

_NULLS = {"", "N/A", "n/a", "(null)", "None", "NONE", "Unknown", "UNKNOWN", "n/s"}

# --------------------------------------------------------------------------- units

_MEM_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP]?)(?:i?B)?([nc]?)\s*$", re.IGNORECASE)
_MEM_FACTOR = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024**2, "P": 1024**3, "": 1}


@lru_cache(maxsize=4096)
def parse_req_mem(s: str | None) -> tuple[int | None, bool]:
    """``ReqMem``/``MIN_MEMORY`` -> (MiB, per_cpu).

    ``4Gn`` -> (4096, False), ``2Gc`` -> (2048, True). A bare number is MiB (Slurm's default
    unit). ``16?`` (sacct placeholder), empty, ``UNLIMITED`` and junk give (None, False).
    """
    if s is None:
        return None, False
    m = _MEM_RE.match(s)
    if not m:
        return None, False
    value = float(m.group(1)) * _MEM_FACTOR[m.group(2).upper()]
    return int(round(value)), m.group(3).lower() == "c"


def parse_mem_mib(s: str | None) -> int | None:
    """Memory with K/M/G/T suffix (optional ``n``/``c``) -> MiB, rounded. ``827096K`` -> 808."""
    return parse_req_mem(s)[0]


_DUR_RE = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")


_DAYS_HOURS_RE = re.compile(r"(\d+)-(\d+)")


def parse_duration_s(s: str | None) -> int | None:
    """Slurm duration -> seconds: ``[D-]HH:MM:SS``, ``MM:SS``, ``D-HH`` forms, ``M:SS.mmm``.

    ``UNLIMITED``, ``INVALID``, ``Partition_Limit``, ``NOT_SET``, empty -> None.
    A bare integer is minutes (Slurm's ``-t`` convention).
    """
    if s is None:
        return None
    return _parse_duration_cached(s)


def _parse_duration(s: str) -> int | None:
    s = s.strip()
    if (
        not s
        or s in _NULLS
        or s.upper() in {"UNLIMITED", "INVALID", "PARTITION_LIMIT", "NOT_SET", "INFINITE"}
    ):
        return None
    m = _DUR_RE.match(s)
    if m:
        days, hours, mins, secs = m.groups()
        return int(days or 0) * 86400 + int(hours or 0) * 3600 + int(mins) * 60 + int(float(secs))
    m = _DAYS_HOURS_RE.fullmatch(s)  # D-HH
    if m:
        return int(m.group(1)) * 86400 + int(m.group(2)) * 3600
    if s.isdecimal():  # not isdigit(): '²' is a digit int() refuses
        return int(s) * 60
    return None


_parse_duration_cached = lru_cache(maxsize=4096)(_parse_duration)


def parse_time(s: str | None, tz: tzinfo = UTC) -> datetime | None:
    """Slurm timestamp ``2026-11-29T20:28:09`` (local, no zone) -> aware datetime in ``tz``.

    ``N/A``, ``Unknown``, ``None``, ``(null)``, ``0``, empty -> None; junk -> None.
    """
    if s is None:
        return None
    return _parse_time_cached(s, tz)


def _parse_time(s: str, tz: tzinfo) -> datetime | None:
    s = s.strip()
    if s in _NULLS or s == "0":
        return None
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=tz)


# Cached per distinct string for the scontrol/sacct parsers (boot and reason times repeat across
# nodes). parse_squeue uses a per-parse memo instead: its ~90k distinct times at 100k jobs would
# cycle through an LRU with no hits and keep ~16 MiB of entries alive between polls.
_parse_time_cached = lru_cache(maxsize=4096)(_parse_time)


_LEADING_INT_RE = re.compile(r"(\d+)")


def _int(s: str | None) -> int | None:
    if s is None:
        return None
    if s.isdigit() and s.isascii():  # the common case, no regex
        return int(s)
    s = s.strip()
    if not s or s in _NULLS or s.upper() == "UNLIMITED":
        return None
    m = _LEADING_INT_RE.match(s)  # NumNodes=1-1, NumCPUs=2
    return int(m.group(1)) if m else None


def _float(s: str | None) -> float | None:
    try:
        return float(s) if s not in (None, "") and s not in _NULLS else None
    except ValueError:
        return None


def _text(s: str | None) -> str:
    if not s or s in _NULLS:
        return ""
    return "" if s.strip() in _NULLS else s


_EXIT_RE = re.compile(r"\s*(\d+):(\d+)\s*")


def parse_exit_code(s: str | None, folded: bool = False) -> ExitCode | None:
    """``0:9`` -> ExitCode(0, 9); empty -> None. ``folded``: printed by a sacct that subtracted
    128 from a status of 128 or more (before 25.11, :func:`cockpit.slurm.versions.
    sacct_folds_exit`): a non-zero status without a signal is marked as maybe 128 more."""
    if not s:
        return None
    m = _EXIT_RE.fullmatch(s)
    if not m:
        return None
    code, sig = int(m.group(1)), int(m.group(2))
    return ExitCode(code, sig, folded and 0 < code < 128 and not sig)


def unfold_exits(rows: list[AcctRecord], exact: ExitCode | None) -> list[AcctRecord]:
    """An old sacct's folded job/batch exit (``9:0``) settled by the exact one ``scontrol show
    job`` gave (``137:0``, or ``9:0`` for a real exit 9) when they agree modulo 128; other rows
    as they are. So ``exit 137`` reads the same on 22.05 as on 25.11+, where sacct prints
    ``137:0`` itself."""
    if exact is None or exact.signal:
        return rows
    out = []
    for r in rows:
        ec = r.exit_code
        if ec is not None and ec.folded and r.step in ("", "batch") and exact.code % 128 == ec.code:
            r = replace(r, exit_code=ExitCode(exact.code, 0))
        out.append(r)
    return out


# what a parser of one field may raise on hostile text: OverflowError from int(float('1e400'))
# and friends (a 400-digit elapsed or priority) must skip one row, not abort the whole poll
_BAD_VALUE = (ValueError, ParseError, OverflowError)


# --------------------------------------------------------------------------- output paths

_PATH_TOKEN = re.compile(r"%(\d*)([jJuxAaNnts%])")


def _array_parts(job_id: str) -> tuple[str, str]:
    base, _, task = job_id.partition("_")
    return base, task


def resolve_output_path(pattern: str, job: SlurmJob) -> str:
    """Resolve sbatch ``--output`` patterns for ``job``: ``%j %u %x %A %a %N %n %t %s %%``.

    Empty pattern -> Slurm's default ``slurm-%j.out`` (arrays: ``slurm-%A_%a.out``).
    A relative result is placed in ``job.work_dir``. Zero padding (``%4a``) is honoured.
    """
    base, task = _array_parts(job.job_id)
    if not pattern:
        pattern = "slurm-%A_%a.out" if task else "slurm-%j.out"

    def sub(m: re.Match[str]) -> str:
        width, code = m.group(1), m.group(2)
        if code == "%":
            return "%"
        value = {
            "j": job.job_id if not task else base,
            "J": job.job_id,
            "u": job.user,
            "x": job.name,
            "A": base,
            "a": task or "4294967294",
            "N": job.nodes[0] if job.nodes else (job.node_list or "%N"),
            "n": "0",
            "t": "0",
            "s": "batch",
        }[code]
        return value.zfill(int(width)) if width and value.isdigit() else value

    path = _PATH_TOKEN.sub(sub, pattern)
    if not path.startswith("/") and job.work_dir:
        path = job.work_dir.rstrip("/") + "/" + path
    return path


# --------------------------------------------------------------------------- scontrol

# Keys whose value is free text (may contain spaces and even ``x=y``). Inside such a
# value a following ``Key=`` only counts when it is a key Slurm actually prints.
_FREE_TEXT = {
    "Reason",
    "Comment",
    "AdminComment",
    "SystemComment",
    "Extra",
    "Command",
    "OS",
    "Features",
}
_KNOWN_KEYS = set(
    """Account AccrueTime ActiveFeatures AdminComment AllocMem AllocNode:Sid AllocNodes AllocTRES
    AllowAccounts AllowGroups AllowQos Arch ArrayJobId ArrayTaskId ArrayTaskThrottle
    AvailableFeatures AveWatts BatchFlag BatchHost Boards BootTime BurstBuffer CPUAlloc CPUEfctv
    CPULoad CPUTot CPUs/Task CapWatts CfgTRES ClusterFeatures Command Comment Contiguous CoreSpec
    CoresPerSocket CpusPerTres CurrentWatts Deadline DefMemPerCPU DefMemPerNode Default DefaultTime
    DelayBoot Dependency DenyAccounts DenyQos DisableRootJobs EligibleTime EndTime ExcNodeList
    ExclusiveUser ExitCode DerivedExitCode ExtSensorsJoules ExtSensorsTemp ExtSensorsWatts Extra
    Features FreeMem GraceTime Gres GroupId Hidden JobDefaults JobId JobName JobState LLN
    LastBusyTime LastSchedEval Licenses MCS_label MaxCPUsPerNode MaxMemPerCPU MaxMemPerNode MaxNodes
    MaxTime MemPerTres MinCPUsNode MinMemoryCPU MinMemoryNode MinNodes MinTmpDiskNode Network Nice
    NodeAddr NodeHostName NodeList NodeName Nodes NtasksPerN:B:S:C NumCPUs NumNodes NumTasks OS
    OverSubscribe OverTimeLimit Owner Partition PartitionName Partitions Port Power PreemptMode
    PreemptTime Priority PriorityJobFactor PriorityTier QOS QoS RealMemory Reason Reboot ReqB:S:C:T
    ReqNodeList ReqResv Requeue Reservation ResumeAfterTime Restarts RootOnly RunTime Scheduler
    SecsPreSuspend SelectTypeParameters SlurmdStartTime Sockets Socks/Node StartTime State StdErr
    StdIn StdOut SubmitTime SuspendTime SystemComment TRES ThreadsPerCore TimeLimit TimeMin TmpDisk
    TresPerNode TresPerJob TRES_BILLING_WEIGHTS TotalCPUs TotalNodes UserId Version Weight WorkDir
    LastSchedEval Mem/Node ResvName HetJobId HetJobOffset MinCPUsNode CfgTRES AllocTRES
    NextStateAfterReboot InstanceId InstanceType Topology ReservationName""".split()
)
_KEY_RE = re.compile(r"(?<!\S)([A-Za-z][A-Za-z0-9_:/]*)=")  # a key at the start or after whitespace


def _split_segment(
    seg: str,
    into: dict[str, str],
    _known: frozenset[str] = frozenset(_KNOWN_KEYS),
    _free: frozenset[str] = frozenset(_FREE_TEXT),
    _split: Any = _KEY_RE.split,
) -> None:
    """Split one line of ``Key=value Key=value`` pairs into ``into`` (values may hold spaces)."""
    # 10k nodes x ~45 keys per poll: one C-level re.split gives [prefix, key, value, key, value,
    # ...]; a key's value runs to the next accepted key, a rejected "key=" is glued back into the
    # value.
    parts = _split(seg)
    key: str | None = None
    val = ""
    free = False  # the current value is free text: only a key Slurm prints ends it
    it = iter(parts)
    next(it)  # text before the first key
    for k, v in zip(it, it, strict=True):
        # "Reason=bad GPU=3" stays one value; lower-case tokens are inside values
        # (TRES=cpu=1,mem=...)
        if k not in _known and (free or not k[0].isupper()):
            if key is not None:
                val += k + "=" + v
            continue
        if key is not None:
            into[key] = val.rstrip(" ")
        key, val, free = k, v, k in _free
    if key is not None:
        into[key] = val.rstrip(" ")


def parse_scontrol_records(text: str) -> list[dict[str, str]]:
    """``scontrol show node|partition|job`` output -> one ``{Key: value}`` dict per record.

    Accepts the ``-o`` one-line form and the default multi-line form (records separated
    by blank lines, continuation lines indented). Values keep inner spaces
    (``OS=Linux 6.1 #1 SMP``, ``Reason=ECC errors [root@...]``). ``No nodes in the
    system`` style messages give ``[]``.
    """
    return list(iter_scontrol_records(text))


def iter_scontrol_records(text: str) -> Iterator[dict[str, str]]:
    """:func:`parse_scontrol_records` one record at a time: a consumer that turns each
    dict into a model object keeps one dict alive, not 10k (peak memory at big sites)."""
    segs: list[str] = []
    for line in text.split("\n"):  # not splitlines(): a Reason may contain \x0c, \x85, \u2028
        line = line.removesuffix("\r")
        if not line.strip():
            # a blank line ends a record only when the next line starts a new one: Slurm 23+
            # prints "   " (blank, indented) before a node's Reason=, and a paste keeps it
            # blank or empty
            continue
        if line[:1].isspace() and segs:
            segs.append(line.strip())
            continue
        if segs:
            yield from _record(segs)
        # "No jobs in the system", "Slurm ... not found": not a record
        segs = [line.strip()] if "=" in line else []
    if segs:
        yield from _record(segs)


def _record(segs: list[str]) -> Iterator[dict[str, str]]:
    rec: dict[str, str] = {}
    for seg in segs:
        _split_segment(seg, rec)
    if rec:
        yield rec


_REASON_RE = re.compile(r"^(.*?)\s*\[([^@\]\s]+)@([^\]]+)\]\s*$", re.S)


def split_reason(reason: str, tz: tzinfo = UTC) -> tuple[str, str, datetime | None]:
    """``ECC errors on DIMM B2 [root@2026-11-29T20:28:33]`` -> (text, user, time)."""
    m = _REASON_RE.match(reason)
    if not m:
        return reason.strip(), "", None
    return m.group(1), m.group(2), parse_time(m.group(3), tz)


_STATE_ALIASES = {
    "DRAINED": ("IDLE", "DRAIN"),
    "DRAINING": ("MIXED", "DRAIN"),
    "DRAIN": ("IDLE", "DRAIN"),
}


@lru_cache(maxsize=1024)
def split_node_state(state: str) -> tuple[str, tuple[str, ...]]:
    """``MIXED+DRAIN`` -> ("MIXED", ("DRAIN",)); ``DOWN*`` -> ("DOWN", ("NOT_RESPONDING",))."""
    state = state.strip().upper()
    flags: list[str] = []
    if state.endswith("*"):
        state = state.rstrip("*")
        flags.append("NOT_RESPONDING")
    parts = [p for p in state.split("+") if p]
    base = parts[0] if parts else "UNKNOWN"
    if base in _STATE_ALIASES:
        base, extra = _STATE_ALIASES[base]
        flags.insert(0, extra)
    for p in parts[1:]:
        if p not in flags:
            flags.append(p)
    return base, tuple(dict.fromkeys(flags))


def _records_or_raise(text: str, key: str, where: str) -> Iterator[dict[str, str]]:
    """Records one by one; ParseError (after the last) when ``text`` had ``=`` but no record."""
    any_rec = False
    for rec in iter_scontrol_records(text):
        any_rec = True
        yield rec
    if not any_rec and text.strip() and "=" in text:
        raise ParseError("no Key=value records", where=where)


def _tolerant(
    records: Iterable[dict[str, str]], key: str, where: str, build: Callable[[dict[str, str]], Any]
) -> tuple[list[Any], list[str]]:
    items: list[Any] = []
    warnings: list[str] = []
    n = 0
    for n, rec in enumerate(records, 1):
        item = _built(rec, n, key, where, build, warnings)
        if item is not None:
            items.append(item)
    _some_usable(n, items, warnings, where)
    return items, warnings


def _built(
    rec: dict[str, str],
    i: int,
    key: str,
    where: str,
    build: Callable[[dict[str, str]], Any],
    warnings: list[str],
) -> Any:
    """``build(rec)``, or None with the reason in ``warnings`` (record ``i``)."""
    if key not in rec or not rec[key].strip():
        warnings.append(f"{where}: record {i} has no {key}")
        return None
    try:
        return build(rec)
    except _BAD_VALUE as exc:
        warnings.append(f"{where}: record {i} ({rec.get(key, '?')}) skipped: {exc}")
        return None


def _some_usable(n: int, items: list[Any], warnings: list[str], where: str) -> None:
    if n and not items:
        raise ParseError(f"no usable record ({warnings[0]})", where=where)


def parse_scontrol_nodes(
    text: str, tz: tzinfo = UTC, memo: dict[str, SlurmNode] | None = None
) -> tuple[list[SlurmNode], list[str]]:
    """``scontrol show node [-o]`` -> (nodes, warnings); reason split into text, user, time.

    ``memo`` (the caller's, kept between polls): one-line records (``-o``) seen last time give
    back the same node object instead of a new one; it is refilled with this call's lines."""

    def build(r: dict[str, str]) -> SlurmNode:
        base, flags = split_node_state(r.get("State", "UNKNOWN"))
        reason, ruser, rtime = split_reason(_text(r.get("Reason", "")), tz)
        parts = _text(r.get("Partitions", "")).strip()
        real = _int(r.get("RealMemory"))
        free = _int(r.get("FreeMem"))
        return SlurmNode(
            name=r["NodeName"].strip(),
            state=base,
            flags=flags,
            partitions=tuple(p for p in parts.split(",") if p),
            cpus_total=_int(r.get("CPUTot")),
            cpus_alloc=_int(r.get("CPUAlloc")),
            cpu_load=_float(r.get("CPULoad")),
            real_memory_mib=real,
            alloc_memory_mib=_int(r.get("AllocMem")),
            free_memory_mib=free,
            gres=_text(r.get("Gres", "")).strip(),
            reason=reason,
            reason_user=ruser,
            reason_time=rtime,
            boot_time=parse_time(r.get("BootTime"), tz),
            sockets=_int(r.get("Sockets")),
            cores_per_socket=_int(r.get("CoresPerSocket")),
            threads_per_core=_int(r.get("ThreadsPerCore")),
            tmp_disk_mib=_int(r.get("TmpDisk")),  # slurm.conf TmpDisk is in MB already
        )

    where = "scontrol show node"
    if memo is None or "\n " in text or "\n\t" in text or text[:1].isspace():
        return _tolerant(_records_or_raise(text, "NodeName", where), "NodeName", where, build)
    # One record per line: a node whose line did not change (most of them, every poll) is the
    # same object as last poll's, so the later stages see it unchanged at once.
    items: list[SlurmNode] = []
    warnings: list[str] = []
    seen: dict[str, SlurmNode] = {}
    n = 0
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        node = memo.get(line)
        if node is None:
            if "=" not in line or not line.strip():
                continue
            recs = list(_record([line.strip()]))
            if not recs:
                continue
            n += 1
            node = _built(recs[0], n, "NodeName", where, build, warnings)
            if node is None:
                continue
        else:
            n += 1
        seen[line] = node
        items.append(node)
    _some_usable(n, items, warnings, where)
    if not n and text.strip() and "=" in text:
        raise ParseError("no Key=value records", where=where)
    memo.clear()
    memo.update(seen)
    return items, warnings


def parse_scontrol_partitions(text: str) -> tuple[list[Partition], list[str]]:
    """``scontrol show partition [-o]`` -> (partitions, warnings). UNLIMITED limits -> None."""

    def build(r: dict[str, str]) -> Partition:
        node_list = _text(r.get("Nodes", "")).strip()
        qos = _text(r.get("QoS", r.get("QOS", ""))).strip()
        return Partition(
            name=r["PartitionName"].strip(),
            state=(r.get("State") or "UP").strip().upper(),
            nodes=hostlist.expand(node_list),
            node_list=node_list,
            default=r.get("Default", "NO").strip().upper() == "YES",
            max_cpus_per_node=_int(r.get("MaxCPUsPerNode")),
            max_mem_per_node_mib=parse_mem_mib(r.get("MaxMemPerNode")),
            max_mem_per_cpu_mib=parse_mem_mib(r.get("MaxMemPerCPU")),
            max_time_s=parse_duration_s(r.get("MaxTime")),
            max_nodes=_int(r.get("MaxNodes")),
            total_cpus=_int(r.get("TotalCPUs")),
            total_nodes=_int(r.get("TotalNodes")),
            qos=qos,
        )

    return _tolerant(
        _records_or_raise(text, "PartitionName", "scontrol show partition"),
        "PartitionName",
        "scontrol show partition",
        build,
    )


def _user_name(v: str) -> str:
    """``root(0)`` -> ``root``."""
    return re.sub(r"\(\d+\)$", "", v.strip())


def parse_scontrol_job(text: str, tz: tzinfo = UTC) -> tuple[list[SlurmJob], list[str]]:
    """``scontrol show job [-o] [ID]`` -> (jobs, warnings) with StdOut/StdErr and ExitCode.

    Array tasks get ids ``ArrayJobId_ArrayTaskId``. StdOut/StdErr are resolved with
    :func:`resolve_output_path` in case the Slurm version prints raw patterns.
    """

    def build(r: dict[str, str]) -> SlurmJob:
        job_id = r["JobId"].strip()
        if r.get("ArrayJobId") and _text(r.get("ArrayTaskId")):
            job_id = f"{r['ArrayJobId'].strip()}_{r['ArrayTaskId'].strip()}"
        if "MinMemoryCPU" in r:
            mem, per_cpu = parse_mem_mib(r["MinMemoryCPU"]), True
        else:
            mem, per_cpu = parse_mem_mib(r.get("MinMemoryNode")), False
        node_list = _text(r.get("NodeList", "")).strip()
        job = SlurmJob(
            job_id=job_id,
            name=r.get("JobName", ""),
            user=_user_name(r.get("UserId", "")),
            partition=r.get("Partition", "").strip(),
            state=r.get("JobState", "").strip().upper(),
            reason=_text(r.get("Reason", "")).strip() or "None",
            cpus=_int(r.get("NumCPUs")),
            node_count=_int(r.get("NumNodes")),
            nodes=hostlist.expand(node_list),
            node_list=node_list,
            min_memory_mib=mem,
            mem_per_cpu=per_cpu,
            time_limit_s=parse_duration_s(r.get("TimeLimit")),
            elapsed_s=parse_duration_s(r.get("RunTime")),
            submit_time=parse_time(r.get("SubmitTime"), tz),
            start_time=parse_time(r.get("StartTime"), tz),
            end_time=parse_time(r.get("EndTime"), tz),
            work_dir=_text(r.get("WorkDir", "")),
            account=_text(r.get("Account", "")).strip(),
            qos=_text(r.get("QOS", "")).strip(),
            dependency=_text(r.get("Dependency", "")).strip(),
            priority=_int(r.get("Priority")),
            exit_code=parse_exit_code(r.get("ExitCode")),
            command=_text(r.get("Command", "")),
            comment=_text(r.get("Comment", "")),
            cpus_per_task=_int(r.get("CPUs/Task")),
            min_tmp_disk_mib=parse_mem_mib(r.get("MinTmpDiskNode")),
        )
        if not re.fullmatch(r"[A-Z_]+", job.state):
            raise ValueError(f"bad JobState {job.state!r}")
        out, err = _text(r.get("StdOut", "")), _text(r.get("StdErr", ""))
        return _with_paths(
            job,
            resolve_output_path(out, job) if out else "",
            resolve_output_path(err, job) if err else "",
        )

    return _tolerant(
        _records_or_raise(text, "JobId", "scontrol show job"), "JobId", "scontrol show job", build
    )


def _with_paths(job: SlurmJob, stdout: str, stderr: str) -> SlurmJob:
    return replace(job, stdout_path=stdout, stderr_path=stderr)


# --------------------------------------------------------------------------- sacct


def _split_rows(text: str) -> tuple[str, list[str]]:
    """Pick the separator (``\\x1f`` if present, else ``|``) and return non-empty lines."""
    sep = SEP if SEP in text else "|"
    # Only LF ends a row: str.splitlines() also splits on \x0b \x0c \x1c-\x1e \x85 \u2028,
    # which a job name may contain (the job would vanish from the queue).
    return sep, [ln.removesuffix("\r") for ln in text.split("\n") if ln.strip()]


def _acct_from_cols(c: dict[str, str], tz: tzinfo, folded: bool = False) -> AcctRecord:
    full_id = c.get("JobID", "").strip()
    m = re.fullmatch(r"(\d+(?:_(?:\d+|\[[^\]]*\]))?(?:\+\d+)?)(?:\.(.+))?", full_id)
    if not m:
        raise ValueError(f"bad JobID {full_id!r}")
    job_id, step = m.group(1), m.group(2) or ""
    state_raw = c.get("State", "").strip()
    state, _, by = state_raw.partition(" by ")
    state = state.strip().upper()
    if not re.fullmatch(r"[A-Z_]+", state):
        raise ValueError(f"bad State {state_raw!r}")
    req_raw = c.get("ReqMem", "").strip()
    job_name = c.get("JobName", "")
    partition = c.get("Partition", "").strip()
    placeholder = not step and (
        req_raw.endswith("?") or (job_name == "allocation" and not partition)
    )
    return AcctRecord(
        job_id=job_id,
        step=step,
        job_name=job_name,
        partition=partition,
        state=state,
        exit_code=parse_exit_code(c.get("ExitCode"), folded),
        req_mem_mib=parse_mem_mib(req_raw),
        max_rss_mib=parse_mem_mib(c.get("MaxRSS")),
        elapsed_s=parse_duration_s(c.get("Elapsed")),
        timelimit_s=parse_duration_s(c.get("Timelimit")),
        node_list=_text(c.get("NodeList", "")).strip()
        if c.get("NodeList", "").strip() != "None assigned"
        else "",
        reason=_text(c.get("Reason", "")).strip(),
        cancelled_by=by.strip(),
        placeholder=placeholder,
        user=c.get("User", "").strip(),
        start_time=parse_time(c.get("Start"), tz),
        end_time=parse_time(c.get("End"), tz),
    )


def parse_sacct(
    text: str, tz: tzinfo = UTC, version: str = ""
) -> tuple[list[AcctRecord], list[str]]:
    """``sacct -P`` output (``|`` or ``\\x1f``) -> (records, warnings), job rows and steps.

    ``version``: the sacct's Slurm release; before 25.11 exit codes are marked ``folded``
    (see :func:`parse_exit_code`).

    A header row (``JobID|JobName|...``) maps the columns; without one the order of
    ``commands.SACCT_FIELDS`` is assumed. ``CANCELLED by 0`` becomes state
    CANCELLED with ``cancelled_by="0"``; the transient ``allocation``/``16?`` row right
    after a job ends is kept with ``placeholder=True``. Raises ParseError if no row parses.
    """
    sep, lines = _split_rows(text)
    if not lines:
        return [], []
    folded = sacct_folds_exit(version)
    first = [f.strip() for f in lines[0].split(sep)]
    if first and first[0] == "JobID":
        cols = first
        lines = lines[1:]
    else:
        cols = list(SACCT_FIELDS)
    recs: list[AcctRecord] = []
    warnings: list[str] = []
    for i, line in enumerate(lines, 1):
        fields = line.split(sep)
        if len(fields) != len(cols):
            warnings.append(
                f"sacct: row {i} has {len(fields)} fields, expected {len(cols)}: {line[:80]!r}"
            )
            continue
        try:
            recs.append(_acct_from_cols(dict(zip(cols, fields, strict=True)), tz, folded))
        except _BAD_VALUE as exc:
            warnings.append(f"sacct: row {i} skipped: {exc}")
    if lines and not recs:
        raise ParseError(f"no usable row ({warnings[0]})", where="sacct")
    return recs, warnings


def split_sacct(text: str, job_ids: Iterable[str]) -> dict[str, str]:
    """Rows of one ``sacct -P -n -j ID1,ID2,...`` (``sacct_argv``) split per requested job id.

    A row belongs to a job when its JobID (first field) before the step's ``.`` is the id,
    or an array task / het component of it (``ID_4``, ``ID+1``): the rows ``sacct -j ID``
    alone would print. Every id gets an entry, "" when sacct printed nothing for it.
    """
    out: dict[str, list[str]] = {j: [] for j in job_ids}
    # LF only, as the parsers split: str.splitlines() also breaks on \x0c, \x1e, \u2028 ...,
    # which sbatch -J accepts in a job name, and would cut that job's rows apart
    for line in text.split("\n"):
        if not line:
            continue
        line += "\n"
        base = line.split(SEP, 1)[0].split(".", 1)[0].strip()
        if not base:
            continue
        for cand in (base, base.split("_", 1)[0], base.split("+", 1)[0]):
            rows = out.get(cand)
            if rows is not None and (not rows or rows[-1] is not line):
                rows.append(line)
    return {j: "".join(rows) for j, rows in out.items()}
