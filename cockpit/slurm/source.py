"""Pure parsers for Slurm command output -> frozen model objects (no I/O).

Primary path: the delimited outputs of ``slurm_commands`` (squeue ``-o`` with the
``\\x1f`` separator, ``scontrol show node|partition|job -o``, ``sacct -P``): portable
from Slurm 17 to 24 and cheap on the controller. The JSON parsers (``squeue/sinfo/sacct
--json``, 21.08+) are the tested alternative; they unwrap the 23.02+ ``{"set", "number"}``
objects so several schema versions work.

Every table parser is tolerant per row: a malformed row is skipped and described in
the returned warnings; input that is wholly unusable raises :class:`ParseError`.
Units: memory MiB, durations seconds, timestamps tz-aware (Slurm prints local time
without a zone; the caller passes the cluster's zone, UTC by default).

The second half of the module is :class:`SlurmSource`, which runs the commands over a
Transport and turns the parsed rows into a Snapshot.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from itertools import repeat
from operator import itemgetter
from typing import Any

from cockpit.errors import ParseError
from cockpit.model import (
    AcctRecord,
    Artifacts,
    ExitCode,
    LogLocation,
    LogText,
    Partition,
    SlurmJob,
    SlurmNode,
    Snapshot,
    SourceError,
    Subject,
    positional_constructor,
)
from cockpit.safety import (  # noqa: F401 (validate_* re-exported)
    JOB_ID_RE,
    NODE_RE,
    USER_RE,
    validate_job_id,
    validate_job_name,
    validate_node_name,
    validate_path,
    validate_user,
)
from cockpit.slurm import hostlist
from cockpit.slurm.commands import SACCT_FIELDS, SEP, SQUEUE_FIELDS
from cockpit.source import Source

_NULLS = {"", "N/A", "n/a", "(null)", "None", "NONE", "Unknown", "UNKNOWN", "n/s"}

# --------------------------------------------------------------------------- units

_MEM_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP]?)(?:i?B)?([nc]?)\s*$", re.IGNORECASE)
_MEM_FACTOR = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024**2, "P": 1024**3, "": 1}


@lru_cache(maxsize=4096)
def parse_req_mem(s: str | None) -> tuple[int | None, bool]:
    """``ReqMem``/``MIN_MEMORY`` -> (MiB, per_cpu). ``4Gn`` -> (4096, False), ``2Gc`` -> (2048, True).

    A bare number is MiB (Slurm's default unit). ``16?`` (sacct placeholder), empty,
    ``UNLIMITED`` and junk give (None, False).
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
    if not s or s in _NULLS or s.upper() in {"UNLIMITED", "INVALID", "PARTITION_LIMIT", "NOT_SET", "INFINITE"}:
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
# nodes). parse_squeue keeps its own per-parse memo: at 100k jobs ~90k distinct times cycled
# through a 64k LRU with no hits and kept ~16 MiB of entries alive between polls.
_parse_time_cached = lru_cache(maxsize=4096)(_parse_time)


def _epoch(v: Any, tz: tzinfo = UTC) -> datetime | None:
    v = _num(v)
    if not v:
        return None
    try:
        return datetime.fromtimestamp(int(v), tz)
    except (OverflowError, OSError, ValueError):
        return None


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


def parse_exit_code(s: str | None) -> ExitCode | None:
    """``0:9`` -> ExitCode(0, 9); empty -> None."""
    if not s:
        return None
    m = _EXIT_RE.fullmatch(s)
    if not m:
        return None
    return ExitCode(int(m.group(1)), int(m.group(2)))


def _num(v: Any) -> Any:
    """Unwrap 23.02+ JSON numbers ``{"set": true, "infinite": false, "number": 5}``."""
    if isinstance(v, dict) and ("number" in v or "set" in v):
        if v.get("infinite") or not v.get("set", True):
            return None
        return v.get("number")
    return v


def _state_str(v: Any) -> str:
    """22.05 gives ``"RUNNING"``, 23.02+ gives ``["RUNNING"]``."""
    if isinstance(v, list):
        return str(v[0]).upper() if v else ""
    return str(v or "").upper()


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


# --------------------------------------------------------------------------- squeue

# squeue header names (what ``squeue -o`` prints without --noheader) -> our column keys
_SQUEUE_HEADERS = {
    "JOBID": "job_id", "PARTITION": "partition", "NAME": "name", "USER": "user",
    "STATE": "state", "REASON": "reason", "CPUS": "cpus", "NODES": "node_count",
    "NODELIST": "node_list", "MIN_MEMORY": "min_memory", "TIME_LIMIT": "time_limit",
    "TIME": "elapsed", "SUBMIT_TIME": "submit_time", "START_TIME": "start_time",
    "END_TIME": "end_time", "WORK_DIR": "work_dir", "ACCOUNT": "account", "QOS": "qos",
    "DEPENDENCY": "dependency", "PRIORITY": "priority", "COMMENT": "comment",
    "COMMAND": "command", "ARRAY_JOB_ID": "array_job_id", "ARRAY_TASK_ID": "array_task_id",
}


def _split_rows(text: str) -> tuple[str, list[str]]:
    """Pick the separator (``\\x1f`` if present, else ``|``) and return non-empty lines."""
    sep = SEP if SEP in text else "|"
    # Only LF ends a row: str.splitlines() also splits on \x0b \x0c \x1c-\x1e \x85 \u2028,
    # which a job name may contain (the job would vanish from the queue).
    return sep, [ln.removesuffix("\r") for ln in text.split("\n") if ln.strip()]


_SQ_JOB_ID_RE = re.compile(r"\d+(?:_(?:\d+|\[[^\]]*\]))?(?:\+\d+)?")
_STATE_RE = re.compile(r"[A-Z_]+")
_PRIO_RE = re.compile(r"\d+(\.\d+)?")


_make_job = positional_constructor(SlurmJob)  # all 27 fields, ~2x faster than SlurmJob(...)

# Column cleaners of the squeue rows, one call per distinct raw string (per-parse memos).
# Columns that repeat across thousands of jobs (user, partition, state, reason, node list,
# work dir, account, QOS, command) are interned: one str per distinct value, not one per job.
_intern = sys.intern
_MISS: Any = object()


def _sq_state(s: str) -> str:
    s = s.strip().upper()
    if not s or not _STATE_RE.fullmatch(s):
        raise ValueError(f"bad state {s!r}")
    return _intern(s)


def _sq_nodes(s: str) -> tuple[str, tuple[str, ...]]:
    """%N -> (compact list, expanded names). A pending job's %N is empty; a finished job's stays."""
    s = _text(s).strip()
    return _intern(s), (hostlist.expand(s) if s and not s.startswith("(") else ())


def _sq_priority(s: str) -> int | None:
    s = s.strip()
    if s.isdigit() and s.isascii():
        return int(s)
    return int(float(s)) if _PRIO_RE.fullmatch(s) else None


def _sq_columns(tz: tzinfo) -> dict[str, Callable[[str], Any]]:
    """squeue column -> cleaner (raw field -> model value); ValueError/ParseError reject the row."""
    def when(s: str) -> datetime | None:
        return _parse_time(s, tz)

    # the three times share one function (so one memo): a job's start is often another's submit
    return {
        "name": str,  # as printed; shared per distinct name (array tasks, resubmits: ~5 MiB at 100k jobs)
        "user": lambda s: _intern(s.strip()),
        "partition": lambda s: _intern(s.strip()),
        "state": _sq_state,
        "reason": lambda s: _intern(_text(s).strip()) or "None",
        "cpus": _int,
        "node_count": _int,
        "node_list": _sq_nodes,
        "min_memory": parse_req_mem,
        "time_limit": _parse_duration,
        "elapsed": _parse_duration,
        "submit_time": when,
        "start_time": when,
        "end_time": when,
        "work_dir": lambda s: _intern(_text(s)),  # not stripped: a path may end in a space
        "account": lambda s: _intern(_text(s).strip()),
        "qos": lambda s: _intern(_text(s).strip()),
        "dependency": lambda s: _text(s).strip(),
        "priority": _sq_priority,
        "command": lambda s: _intern(_text(s)),
        "comment": _text,
    }


# what a parser of one field may raise on hostile text: OverflowError from int(float('1e400'))
# and friends (a 400-digit elapsed or priority) must skip one row, not abort the whole poll
_BAD_VALUE = (ValueError, ParseError, OverflowError)


class _Memo(dict):
    """raw value -> ``fn(raw)``, computed on the first lookup (``memo[raw]``, a C-level dict hit
    after that). A value ``fn`` rejects is not stored: the lookup gives None and sets ``bad``.
    ``prev``: the same column's table from the previous poll, consulted before ``fn`` (a job's
    submit/start times, user, node list rarely change between polls)."""

    __slots__ = ("fn", "bad", "prev")

    def __init__(self, fn: Callable[[str], Any], prev: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.fn = fn
        self.bad = False
        self.prev = prev if prev is not None else {}

    def __missing__(self, raw: str) -> Any:
        v = self.prev.get(raw, _MISS)
        if v is _MISS:
            try:
                v = self.fn(raw)
            except _BAD_VALUE:
                self.bad = True
                return None
        self[raw] = v
        return v

    def strict(self, raw: str) -> Any:
        """``memo[raw]`` that raises what ``fn`` raised."""
        v = self.get(raw, _MISS)
        if v is _MISS:
            v = self.prev.get(raw, _MISS)
            if v is _MISS:
                v = self.fn(raw)
            self[raw] = v
        return v


def _job_from_fields(f: list[str], ix: dict[str, int], memo: dict[str, _Memo]) -> SlurmJob:
    """One squeue row (its fields plus a trailing ``""`` that absent columns point at).
    The reference path, used for chunks :func:`_jobs_from_chunk` cannot take whole; raises
    ValueError/ParseError like the column pass rejects."""
    job_id = f[ix["job_id"]].strip()
    if not _SQ_JOB_ID_RE.fullmatch(job_id):
        raise ValueError(f"bad job id {job_id!r}")
    state = memo["state"].strict(f[ix["state"]])
    mem, per_cpu = memo["min_memory"].strict(f[ix["min_memory"]])
    node_list, nodes = memo["node_list"].strict(f[ix["node_list"]])

    def col(k: str) -> Any:
        return memo[k].strict(f[ix[k]])

    return _make_job(
        job_id, col("name"), col("user"), col("partition"), state, col("reason"), col("cpus"),
        col("node_count"), nodes, node_list, mem, per_cpu, col("time_limit"), col("elapsed"),
        col("submit_time"), col("start_time"), col("end_time"), col("work_dir"), "", "",
        col("account"), col("qos"), col("dependency"), col("priority"), None, col("command"), col("comment"),
    )


_first = itemgetter(0)
_second = itemgetter(1)


def _jobs_from_chunk(lines: list[str], sep: str, ix: dict[str, int], ncols: int,
                     memo: dict[str, _Memo]) -> list[SlurmJob] | None:
    """A chunk of squeue rows column by column: split, transpose, one C-level memo lookup per
    field (``map(memo.__getitem__, column)``) and one builder call per job. None when a row
    is malformed (field count, job id, state, node list): the caller redoes the chunk row by
    row for the exact warnings."""
    rows = [ln.split(sep) for ln in lines]
    if set(map(len, rows)) != {ncols}:
        return None
    cols = list(zip(*rows, strict=True))
    del rows
    cols.append(("",) * len(lines))  # absent columns read ""
    ids = list(map(str.strip, cols[ix["job_id"]]))
    if not all(map(_SQ_JOB_ID_RE.fullmatch, ids)):
        return None

    def col(k: str) -> Any:
        return map(memo[k].__getitem__, cols[ix[k]])

    nl = list(col("node_list"))  # (compact, expanded) pairs, read twice below
    mem = list(col("min_memory"))
    if _rejected(memo):
        return None
    nothing = repeat("")
    jobs = list(map(
        _make_job, ids, col("name"), col("user"), col("partition"), col("state"), col("reason"),
        col("cpus"), col("node_count"), map(_second, nl), map(_first, nl), map(_first, mem), map(_second, mem),
        col("time_limit"), col("elapsed"), col("submit_time"), col("start_time"), col("end_time"),
        col("work_dir"), nothing, nothing, col("account"), col("qos"), col("dependency"), col("priority"),
        repeat(None), col("command"), col("comment"),
    ))
    return None if _rejected(memo) else jobs


def _rejected(memo: dict[str, _Memo]) -> bool:
    """Whether a memo rejected a value (a bad state or node list, say) since the last call."""
    bad = [m for m in memo.values() if m.bad]
    for m in bad:
        m.bad = False
    return bool(bad)


_CHUNK_CHARS = 1 << 20  # squeue text per column pass (~4k rows of 22 fields)


def _line_chunks(text: str, size: int) -> Iterator[list[str]]:
    """The non-blank lines of ``text`` in lists of about ``size`` characters, a trailing CR
    dropped. Only LF ends a row: str.splitlines() also splits on \x0b \x0c \x1c-\x1e \x85
    \u2028, which a job name may contain (the job would vanish from the queue). Chunks keep
    the fields of ~4k rows alive at a time instead of the whole output's lines."""
    pos, n = 0, len(text)
    cr = "\r" in text
    while pos < n:
        end = text.find("\n", pos + size)
        if end < 0:
            end = n
        lines = text[pos:end].split("\n")
        pos = end + 1
        lines = list(filter(str.strip, lines))
        if cr:
            lines = [ln.removesuffix("\r") for ln in lines]
        if lines:
            yield lines


class SqueueCarry:
    """What one poller's :func:`parse_squeue` keeps from its last parse for the next one:
    per-column tables (raw field -> cleaned value) and, for the column layout it was parsed
    with, each good row's text -> its :class:`SlurmJob`. Both hold only what the latest
    output had (~40 MiB at 100k jobs): an unchanged row (a pending or ended job) is one dict
    lookup next poll, an unchanged submit time or node list in a changed row is not parsed
    again."""

    __slots__ = ("tables", "rows", "layout")

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Any]] = {}
        self.rows: dict[str, SlurmJob] = {}
        self.layout: tuple = ()

    def clear(self) -> None:
        self.tables, self.rows, self.layout = {}, {}, ()


def parse_squeue(text: str, tz: tzinfo = UTC,
                 carry: SqueueCarry | None = None) -> tuple[list[SlurmJob], list[str]]:
    """Parse ``squeue -o`` delimited output (``slurm_commands.SQUEUE_ARGV``).

    Separator ``\\x1f`` (or ``|``). A header line (``JOBID|PARTITION|...``) is used to
    map columns; without it the column order of ``SQUEUE_FIELDS`` is assumed.
    ``carry``: a poller's :class:`SqueueCarry` from its previous parse with the same ``tz``
    (it passes the same one every poll); read, then replaced by what this parse found.
    Returns (jobs, warnings). Raises ParseError when no row at all is usable.
    """
    # Hot path (100k rows per poll at a big site): rows are taken ~4k at a time column by
    # column, every repeated column (times, durations, users, states, ...) cleaned once per
    # distinct raw string; a chunk with a malformed row is redone row by row.
    sep = SEP if SEP in text else "|"
    jobs: list[SlurmJob] = []
    warnings: list[str] = []
    memo: dict[str, _Memo] = {}
    shared: dict[Any, _Memo] = {}  # columns with one cleaner share its memo (the three times)
    prev = carry.tables if carry is not None else {}
    for k, fn in _sq_columns(tz).items():
        memo[k] = shared.setdefault(fn, _Memo(fn, prev.get(k)))
    ix: dict[str, int] = {}
    ncols = 0
    row = 0
    old_rows: dict[str, SlurmJob] = {}  # last poll's good rows, when parsed with this layout
    new_rows: dict[str, SlurmJob] | None = {} if carry is not None else None
    layout: tuple = ()
    for lines in _line_chunks(text, _CHUNK_CHARS):
        if not ix:  # the first line: a header or the first row
            first = [f.strip() for f in lines[0].split(sep)]
            if first and first[0] == "JOBID":
                cols = [_SQUEUE_HEADERS.get(h, "") for h in first]
                lines = lines[1:]
            else:
                cols = [name for _, name in SQUEUE_FIELDS]
            ncols = len(cols)
            # column -> field index; absent columns read the "" appended to every row
            ix = {name: ncols for _, name in SQUEUE_FIELDS} | {k: i for i, k in enumerate(cols) if k}
            layout = (sep, ncols, tuple(sorted(ix.items())))
            if carry is not None and carry.layout == layout:
                old_rows = carry.rows
        known = list(map(old_rows.get, lines)) if old_rows else None
        todo = [ln for ln, j in zip(lines, known, strict=True) if j is None] if known is not None else lines
        got = _jobs_from_chunk(todo, sep, ix, ncols, memo) if todo else []
        if got is not None:
            if known is not None:  # the unchanged rows' jobs, the parsed ones in the gaps
                fresh = iter(got)
                got = [j if j is not None else next(fresh) for j in known]
            jobs += got
            row += len(lines)
            if new_rows is not None:
                new_rows.update(zip(lines, got, strict=True))
            continue
        for i, line in enumerate(lines):
            row += 1
            job = known[i] if known is not None else None
            if job is None:
                fields = line.split(sep)
                if len(fields) != ncols:
                    warnings.append(f"squeue: row {row} has {len(fields)} fields, expected {ncols}: {line[:80]!r}")
                    continue
                fields.append("")
                try:
                    job = _job_from_fields(fields, ix, memo)
                except _BAD_VALUE as exc:
                    warnings.append(f"squeue: row {row} skipped: {exc}")
                    continue
            jobs.append(job)
            if new_rows is not None:
                new_rows[line] = job
    if row and not jobs:
        raise ParseError(f"no usable row ({warnings[0] if warnings else 'empty'})", where="squeue")
    if carry is not None:
        for m in memo.values():
            m.prev = {}  # the old tables die with this parse
        carry.tables, carry.layout = memo, layout
        carry.rows = new_rows if new_rows is not None else {}
    return jobs, warnings


# --------------------------------------------------------------------------- scontrol

# Keys whose value is free text (may contain spaces and even ``x=y``). Inside such a
# value a following ``Key=`` only counts when it is a key Slurm actually prints.
_FREE_TEXT = {"Reason", "Comment", "AdminComment", "SystemComment", "Extra", "Command", "OS", "Features"}
_KNOWN_KEYS = set(
    """Account AccrueTime ActiveFeatures AdminComment AllocMem AllocNode:Sid AllocNodes AllocTRES
    AllowAccounts AllowGroups AllowQos Arch ArrayJobId ArrayTaskId ArrayTaskThrottle AvailableFeatures
    AveWatts BatchFlag BatchHost Boards BootTime BurstBuffer CPUAlloc CPUEfctv CPULoad CPUTot CPUs/Task
    CapWatts CfgTRES ClusterFeatures Command Comment Contiguous CoreSpec CoresPerSocket CpusPerTres
    CurrentWatts Deadline DefMemPerCPU DefMemPerNode Default DefaultTime DelayBoot Dependency DenyAccounts
    DenyQos DisableRootJobs EligibleTime EndTime ExcNodeList ExclusiveUser ExitCode DerivedExitCode
    ExtSensorsJoules ExtSensorsTemp ExtSensorsWatts Extra Features FreeMem GraceTime Gres GroupId Hidden
    JobDefaults JobId JobName JobState LLN LastBusyTime LastSchedEval Licenses MCS_label MaxCPUsPerNode
    MaxMemPerCPU MaxMemPerNode MaxNodes MaxTime MemPerTres MinCPUsNode MinMemoryCPU MinMemoryNode MinNodes
    MinTmpDiskNode Network Nice NodeAddr NodeHostName NodeList NodeName Nodes NtasksPerN:B:S:C NumCPUs
    NumNodes NumTasks OS OverSubscribe OverTimeLimit Owner Partition PartitionName Partitions Port Power
    PreemptMode PreemptTime Priority PriorityJobFactor PriorityTier QOS QoS RealMemory Reason Reboot
    ReqB:S:C:T ReqNodeList ReqResv Requeue Reservation ResumeAfterTime Restarts RootOnly RunTime
    Scheduler SecsPreSuspend SelectTypeParameters SlurmdStartTime Sockets Socks/Node StartTime State
    StdErr StdIn StdOut SubmitTime SuspendTime SystemComment TRES ThreadsPerCore TimeLimit TimeMin
    TmpDisk TresPerNode TresPerJob TRES_BILLING_WEIGHTS TotalCPUs TotalNodes UserId Version Weight
    WorkDir LastSchedEval Mem/Node ResvName HetJobId HetJobOffset MinCPUsNode CfgTRES AllocTRES
    NextStateAfterReboot InstanceId InstanceType Topology ReservationName""".split()
)
_KEY_RE = re.compile(r"(?<!\S)([A-Za-z][A-Za-z0-9_:/]*)=")  # a key at the start or after whitespace


def _split_segment(seg: str, into: dict[str, str], _known: frozenset[str] = frozenset(_KNOWN_KEYS),
                   _free: frozenset[str] = frozenset(_FREE_TEXT), _split: Any = _KEY_RE.split) -> None:
    """Split one line of ``Key=value Key=value`` pairs into ``into`` (values may hold spaces)."""
    # 10k nodes x ~45 keys per poll: one C-level re.split gives [prefix, key, value, key, value, ...];
    # a key's value runs to the next accepted key, a rejected "key=" is glued back into the value.
    parts = _split(seg)
    key: str | None = None
    val = ""
    free = False  # the current value is free text: only a key Slurm prints ends it
    it = iter(parts)
    next(it)  # text before the first key
    for k, v in zip(it, it, strict=True):
        # "Reason=bad GPU=3" stays one value; lower-case tokens are inside values (TRES=cpu=1,mem=...)
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
            if segs:
                yield from _record(segs)
            segs = []
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


_STATE_ALIASES = {"DRAINED": ("IDLE", "DRAIN"), "DRAINING": ("MIXED", "DRAIN"), "DRAIN": ("IDLE", "DRAIN")}


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


def _tolerant(records: Iterable[dict[str, str]], key: str, where: str, build: Callable[[dict[str, str]], Any]) -> tuple[list[Any], list[str]]:
    items: list[Any] = []
    warnings: list[str] = []
    n = 0
    for i, rec in enumerate(records, 1):
        n += 1
        if key not in rec or not rec[key].strip():
            warnings.append(f"{where}: record {i} has no {key}")
            continue
        try:
            items.append(build(rec))
        except _BAD_VALUE as exc:
            warnings.append(f"{where}: record {i} ({rec.get(key, '?')}) skipped: {exc}")
    if n and not items:
        raise ParseError(f"no usable record ({warnings[0]})", where=where)
    return items, warnings


def parse_scontrol_nodes(text: str, tz: tzinfo = UTC) -> tuple[list[SlurmNode], list[str]]:
    """``scontrol show node [-o]`` -> (nodes, warnings); reason split into text, user, time."""

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
        )

    return _tolerant(_records_or_raise(text, "NodeName", "scontrol show node"), "NodeName", "scontrol show node", build)


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
        _records_or_raise(text, "PartitionName", "scontrol show partition"), "PartitionName", "scontrol show partition", build
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
        )
        if not re.fullmatch(r"[A-Z_]+", job.state):
            raise ValueError(f"bad JobState {job.state!r}")
        out, err = _text(r.get("StdOut", "")), _text(r.get("StdErr", ""))
        return _with_paths(job, resolve_output_path(out, job) if out else "", resolve_output_path(err, job) if err else "")

    return _tolerant(_records_or_raise(text, "JobId", "scontrol show job"), "JobId", "scontrol show job", build)


def _with_paths(job: SlurmJob, stdout: str, stderr: str) -> SlurmJob:
    from dataclasses import replace

    return replace(job, stdout_path=stdout, stderr_path=stderr)


# --------------------------------------------------------------------------- sacct


def _acct_from_cols(c: dict[str, str], tz: tzinfo) -> AcctRecord:
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
    placeholder = not step and (req_raw.endswith("?") or (job_name == "allocation" and not partition))
    return AcctRecord(
        job_id=job_id,
        step=step,
        job_name=job_name,
        partition=partition,
        state=state,
        exit_code=parse_exit_code(c.get("ExitCode")),
        req_mem_mib=parse_mem_mib(req_raw),
        max_rss_mib=parse_mem_mib(c.get("MaxRSS")),
        elapsed_s=parse_duration_s(c.get("Elapsed")),
        timelimit_s=parse_duration_s(c.get("Timelimit")),
        node_list=_text(c.get("NodeList", "")).strip() if c.get("NodeList", "").strip() != "None assigned" else "",
        reason=_text(c.get("Reason", "")).strip(),
        cancelled_by=by.strip(),
        placeholder=placeholder,
        user=c.get("User", "").strip(),
        start_time=parse_time(c.get("Start"), tz),
        end_time=parse_time(c.get("End"), tz),
    )


def parse_sacct(text: str, tz: tzinfo = UTC) -> tuple[list[AcctRecord], list[str]]:
    """``sacct -P`` output (``|`` or ``\\x1f``) -> (records, warnings), job rows and steps.

    A header row (``JobID|JobName|...``) maps the columns; without one the order of
    ``slurm_commands.SACCT_FIELDS`` is assumed. ``CANCELLED by 0`` becomes state
    CANCELLED with ``cancelled_by="0"``; the transient ``allocation``/``16?`` row right
    after a job ends is kept with ``placeholder=True``. Raises ParseError if no row parses.
    """
    sep, lines = _split_rows(text)
    if not lines:
        return [], []
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
            warnings.append(f"sacct: row {i} has {len(fields)} fields, expected {len(cols)}: {line[:80]!r}")
            continue
        try:
            recs.append(_acct_from_cols(dict(zip(cols, fields, strict=True)), tz))
        except _BAD_VALUE as exc:
            warnings.append(f"sacct: row {i} skipped: {exc}")
    if lines and not recs:
        raise ParseError(f"no usable row ({warnings[0]})", where="sacct")
    return recs, warnings


# --------------------------------------------------------------------------- JSON


def _load_json(text: str, key: str, where: str) -> list[Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", where=where, line=exc.lineno) from None
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        raise ParseError(f"no '{key}' list in JSON", where=where)
    return doc[key]


def _json_tolerant(items: list[Any], where: str, build: Callable[[dict[str, Any]], Any]) -> tuple[list[Any], list[str]]:
    out: list[Any] = []
    warnings: list[str] = []
    for i, item in enumerate(items):
        try:
            if not isinstance(item, dict):
                raise ValueError("not an object")
            res = build(item)
            if isinstance(res, list):
                out.extend(res)
            else:
                out.append(res)
        except (ValueError, KeyError, TypeError, AttributeError, ParseError) as exc:  # wrong-typed field
            warnings.append(f"{where}: entry {i} skipped: {exc!r}")
    if items and not out:
        raise ParseError(f"no usable entry ({warnings[0]})", where=where)
    return out, warnings


def parse_squeue_json(text: str, tz: tzinfo = UTC, now: datetime | None = None) -> tuple[list[SlurmJob], list[str]]:
    """``squeue --json`` (v0.0.38 .. v0.0.40) -> (jobs, warnings).

    ``exit_code`` is a raw wait status (32512 -> 127:0). Elapsed is end-start for
    finished jobs, now-start for running ones when ``now`` is given. Note 22.05 ignores
    ``-j/-t/-p`` with ``--json``: filter the result on the client.
    """

    def build(j: dict[str, Any]) -> SlurmJob:
        job_id = str(_num(j["job_id"]))
        task = _num(j.get("array_task_id"))
        if _num(j.get("array_job_id")) and task is not None:
            job_id = f"{_num(j['array_job_id'])}_{task}"
        state = _state_str(j.get("job_state"))
        start, end = _epoch(j.get("start_time"), tz), _epoch(j.get("end_time"), tz)
        elapsed = None
        if state == "PENDING":
            elapsed = 0
        elif start and end and end >= start and (state != "RUNNING" or (now and end <= now)):
            elapsed = int((end - start).total_seconds())
        elif start and now:
            elapsed = max(0, int((now - start).total_seconds()))
        per_cpu = _num(j.get("memory_per_cpu"))
        per_node = _num(j.get("memory_per_node"))
        limit = _num(j.get("time_limit"))
        raw_exit = _num(j.get("exit_code"))
        if isinstance(raw_exit, dict):  # 23.02+: {"status": [...], "return_code": {...}}
            rc, sig = _num(raw_exit.get("return_code")), _num((raw_exit.get("signal") or {}).get("id"))
            exit_code = ExitCode(int(rc or 0), int(sig or 0))
        else:
            exit_code = ExitCode.from_wait_status(int(raw_exit)) if raw_exit is not None else None
        node_list = j.get("nodes") or ""
        job = SlurmJob(
            job_id=job_id,
            name=j.get("name", ""),
            user=j.get("user_name", ""),
            partition=j.get("partition", ""),
            state=state,
            reason=j.get("state_reason") or "None",
            cpus=_num(j.get("cpus")),
            node_count=_num(j.get("node_count")),
            nodes=hostlist.expand(node_list),
            node_list=node_list,
            min_memory_mib=per_cpu if per_cpu else per_node,
            mem_per_cpu=bool(per_cpu),
            time_limit_s=int(limit) * 60 if limit and limit < 0xFFFFFFFE else None,
            elapsed_s=elapsed,
            submit_time=_epoch(j.get("submit_time"), tz),
            start_time=start,
            end_time=end,
            work_dir=j.get("current_working_directory", ""),
            account=j.get("account", ""),
            qos=j.get("qos", ""),
            dependency=j.get("dependency", ""),
            priority=_num(j.get("priority")),
            exit_code=exit_code,
            command=j.get("command", ""),
            comment=j.get("comment", ""),
        )
        out, err = j.get("standard_output") or "", j.get("standard_error") or ""
        return _with_paths(job, resolve_output_path(out, job) if out else "", resolve_output_path(err, job) if err else "")

    return _json_tolerant(_load_json(text, "jobs", "squeue --json"), "squeue --json", build)


def parse_sinfo_json(text: str, tz: tzinfo = UTC) -> tuple[list[SlurmNode], list[str]]:
    """``sinfo --json`` nodes -> (nodes, warnings). cpu_load is reported in hundredths."""

    def build(n: dict[str, Any]) -> SlurmNode:
        st = n.get("state")
        if isinstance(st, list):  # 23.02+: ["IDLE", "DRAIN"]
            base, flags = (str(st[0]).upper() if st else "UNKNOWN"), tuple(str(f).upper() for f in st[1:])
        else:
            base, flags = split_node_state(str(st or "UNKNOWN"))
        flags = tuple(dict.fromkeys([*flags, *(str(f).upper() for f in n.get("state_flags") or ())]))
        load = _num(n.get("cpu_load"))
        return SlurmNode(
            name=n["name"],
            state=base,
            flags=flags,
            partitions=tuple(n.get("partitions") or ()),
            cpus_total=_num(n.get("cpus")),
            cpus_alloc=_num(n.get("alloc_cpus")),
            cpu_load=load / 100 if isinstance(load, int | float) else None,
            real_memory_mib=_num(n.get("real_memory")),
            alloc_memory_mib=_num(n.get("alloc_memory")),
            free_memory_mib=_num(n.get("free_memory")),
            gres=n.get("gres") or "",
            reason=n.get("reason") or "",
            reason_user=n.get("reason_set_by_user") or "",
            reason_time=_epoch(n.get("reason_changed_at"), tz),
            boot_time=_epoch(n.get("boot_time"), tz),
        )

    return _json_tolerant(_load_json(text, "nodes", "sinfo --json"), "sinfo --json", build)


def _json_exit(e: Any) -> ExitCode | None:
    if not isinstance(e, dict):
        return None
    rc = _num(e.get("return_code"))
    sig = e.get("signal") or {}
    sig_id = _num(sig.get("signal_id", sig.get("id"))) if isinstance(sig, dict) else None
    return ExitCode(int(rc or 0), int(sig_id or 0))


def _max_rss_mib(tres: Any) -> int | None:
    try:
        for t in tres["requested"]["max"]:
            if t.get("type") == "mem":
                return int(round(int(t["count"]) / 1024 / 1024))
    except (KeyError, TypeError, ValueError):
        return None
    return None


def parse_sacct_json(text: str, tz: tzinfo = UTC) -> tuple[list[AcctRecord], list[str]]:
    """``sacct --json`` -> (records, warnings): one job row plus one per step.

    ReqMem from ``required.memory`` (MiB), MaxRSS from the step's
    ``tres.requested.max`` mem entry (bytes). The JSON has no ``by UID`` suffix:
    ``kill_request_user`` fills ``cancelled_by``.
    """

    def build(j: dict[str, Any]) -> list[AcctRecord]:
        job_id = str(_num(j["job_id"]))
        arr = j.get("array") or {}
        if _num(arr.get("job_id")) and _num(arr.get("task_id")) is not None:
            job_id = f"{_num(arr['job_id'])}_{_num(arr['task_id'])}"
        t = j.get("time") or {}
        st = j.get("state") or {}
        state = _state_str(st.get("current") if isinstance(st, dict) else st)
        req = _num((j.get("required") or {}).get("memory"))
        if req is None:
            req = _num((j.get("required") or {}).get("memory_per_node")) or _num((j.get("required") or {}).get("memory_per_cpu"))
        limit = _num(t.get("limit"))
        rows = [
            AcctRecord(
                job_id=job_id,
                step="",
                job_name=j.get("name", ""),
                partition=j.get("partition") or "",
                state=state,
                exit_code=_json_exit(j.get("exit_code")),
                req_mem_mib=req,
                max_rss_mib=None,
                elapsed_s=_num(t.get("elapsed")),
                timelimit_s=int(limit) * 60 if limit and limit < 0xFFFFFFFE else None,
                node_list="" if j.get("nodes") in (None, "None assigned") else j.get("nodes"),
                reason=_text((st.get("reason") if isinstance(st, dict) else "") or ""),
                cancelled_by=j.get("kill_request_user") or "" if state == "CANCELLED" else "",
                user=j.get("user") or "",
                start_time=_epoch(t.get("start"), tz),
                end_time=_epoch(t.get("end"), tz),
            )
        ]
        for s in j.get("steps") or ():
            step_id = str((s.get("step") or {}).get("id") or (s.get("step") or {}).get("name") or "")
            step_id = step_id.split(".", 1)[1] if step_id.startswith(f"{_num(j['job_id'])}.") else step_id
            st_t = s.get("time") or {}
            state_s = _state_str(s.get("state"))
            rows.append(
                AcctRecord(
                    job_id=job_id,
                    step=step_id,
                    job_name=(s.get("step") or {}).get("name", ""),
                    partition="",
                    state=state_s,
                    exit_code=_json_exit(s.get("exit_code")),
                    req_mem_mib=None,
                    max_rss_mib=_max_rss_mib(s.get("tres")),
                    elapsed_s=_num(st_t.get("elapsed")),
                    timelimit_s=None,
                    node_list=((s.get("nodes") or {}).get("range")) or "",
                    cancelled_by=(s.get("kill_request_user") or "") if state_s == "CANCELLED" else "",
                    start_time=_epoch(st_t.get("start"), tz),
                    end_time=_epoch(st_t.get("end"), tz),
                )
            )
        return rows

    return _json_tolerant(_load_json(text, "jobs", "sacct --json"), "sacct --json", build)


# --------------------------------------------------------------------------- the source

# Validators live in cockpit.safety (one place); re-exported here for older imports.
_JOB_ID_RE, _NODE_RE, _USER_RE = JOB_ID_RE, NODE_RE, USER_RE

STDOUT_TAIL = 1 << 20  # bytes of stdout/stderr handed to the engine
CTLD_TAIL = 8 << 20  # bytes of slurmctld.log searched for a job's lines
SLURMD_TAIL = 4 << 20  # bytes of slurmd.log searched for a job's lines
NODE_TAIL = 1 << 20  # bytes of slurmd.log shown for a node


def _cmd_label(argv: tuple[str, ...] | list[str]) -> str:
    """Counter key: ``squeue``, ``sacct``, ``scontrol show node`` ..."""
    return " ".join(argv[:3]) if argv and argv[0] == "scontrol" else (argv[0] if argv else "")


def _job_log_re(job_id: str) -> re.Pattern[bytes]:
    # Same forms the controller and slurmd print: JobId=13, job 13, JOB 13, [13.batch]
    j = re.escape(job_id.encode())
    # "[13.0]" step prefixes end in a dot, the named forms must not run into a longer id.
    return re.compile(rb"(?:(?:JobId=|StepId=|[Jj]ob |JOB )" + j + rb"(?![0-9])|\[" + j + rb"[.\]])")


def grep_excerpt(name: str, kind: str, path: str, subject_id: str, data: bytes, offset: int,
                 pattern: re.Pattern[bytes]) -> LogText:
    """The lines of ``data`` (read at file byte ``offset``) that match ``pattern``, as a LogText.

    The lines are not contiguous, so each keeps its own file byte offset (``line_offsets``)
    and, when ``data`` starts the file (``offset`` 0), its file line number: evidence found
    in the excerpt then opens the full log at the right line. ``pattern`` must not match
    across a newline.
    """
    starts: list[int] = []
    numbers: list[int] = []
    chunks: list[bytes] = []
    line_no, counted_to, last = 1, 0, -1
    for m in pattern.finditer(data):
        ls = data.rfind(b"\n", 0, m.start()) + 1
        if ls == last:
            continue
        le = data.find(b"\n", m.end())
        le = len(data) if le < 0 else le + 1
        line_no += data.count(b"\n", counted_to, ls)
        counted_to, last = ls, ls
        starts.append(offset + ls)
        numbers.append(line_no)
        chunks.append(data[ls:le] if data[le - 1 : le] == b"\n" else data[ls:le] + b"\n")
    return LogText(name=name, kind=kind, data=b"".join(chunks), path=path, subject_id=subject_id,
                   base_offset=offset, base_line=None, line_offsets=tuple(starts),
                   line_numbers=tuple(numbers) if offset == 0 else ())


def _node_log_re(node: str) -> re.Pattern[bytes]:
    n = re.escape(node.encode())
    return re.compile(rb"(?<![A-Za-z0-9])" + n + rb"(?![0-9A-Za-z])")


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


class SlurmSource(Source):
    """One Slurm cluster reached through a Transport (local or SSH).

    ``poll()`` runs squeue, ``scontrol show node -o`` and ``scontrol show partition -o``
    concurrently and returns a Snapshot; a silent controller, a missing command or a
    transport failure becomes ``Snapshot(error=SourceError(...))``. Concurrent callers
    of ``poll()`` share one in-flight collection, so a cluster is polled once per
    interval whatever reads it. ``command_counts`` counts invocations per command.
    """

    kind = "slurm"

    def __init__(
        self,
        name: str,
        transport: Any,
        *,
        interval: float = 15.0,
        clock: Callable[[], datetime] | None = None,
        tz: tzinfo = UTC,
        slurmctld_log: str = "/var/log/slurm/slurmctld.log",
        slurmd_log: str = "/var/log/slurm/slurmd.log",
        storage_paths: tuple[str, ...] | list[str] = (),
        command_timeout: float = 20.0,
        background_evidence: bool = True,
    ) -> None:
        from collections import Counter

        self.name = name
        # False: evidence (sacct, scontrol show job, logs) only for what the operator opens
        # (config ``evidence = "drill-down"``); the pollers fetch none for newly failed jobs
        self.background_evidence = background_evidence
        self.transport = transport
        self.interval = interval
        self._clock = clock or (lambda: datetime.now(UTC))
        self.tz = tz
        self.slurmctld_log = slurmctld_log
        self.slurmd_log = slurmd_log
        self.storage_paths = tuple(storage_paths)
        self.command_timeout = command_timeout
        self.command_counts: Counter[str] = Counter()
        self._inflight: Any = None
        self._cache: dict[tuple[str, str], Any] = {}
        self._detail: dict[str, SlurmJob] = {}  # job id -> scontrol show job (paths), until next poll
        self._squeue_carry = SqueueCarry()  # what parse_squeue keeps from the last poll

    # ------------------------------------------------------------------ commands

    async def _run(self, argv: tuple[str, ...]) -> str:
        """Run one command; raise TransportError or _CommandFailed."""
        self.command_counts[_cmd_label(argv)] += 1
        res = await self.transport.run(argv, timeout=self.command_timeout)
        out = res.stdout.decode("utf-8", errors="replace")
        if res.exit_status != 0:
            err = res.stderr.decode("utf-8", errors="replace").strip()
            raise _CommandFailed(argv, res.exit_status, err or out.strip())
        return out

    # ------------------------------------------------------------------ poll

    async def poll(self) -> Snapshot:
        import asyncio

        if self._inflight is None or self._inflight.done():
            self._inflight = asyncio.ensure_future(self._poll())
        return await asyncio.shield(self._inflight)

    async def _poll(self) -> Snapshot:
        import asyncio

        from cockpit.slurm.commands import NODES_ARGV, PARTITIONS_ARGV, SQUEUE_ARGV
        from cockpit.transport import TransportError

        taken = self._clock()
        self._cache.clear()
        self._detail.clear()
        results = await asyncio.gather(
            self._run(SQUEUE_ARGV), self._run(NODES_ARGV), self._run(PARTITIONS_ARGV), self._storage(),
            return_exceptions=True,
        )
        storage_res = results.pop()
        for res in results:
            if isinstance(res, TransportError):
                return Snapshot(self.name, "slurm", taken, error=SourceError(res.kind, res.message, res.where))
            if isinstance(res, _CommandFailed):
                return Snapshot(self.name, "slurm", taken, error=res.source_error())
            if isinstance(res, BaseException):
                return Snapshot(
                    self.name, "slurm", taken, error=SourceError("command", f"{type(res).__name__}: {res}", "")
                )
        squeue_out, nodes_out, parts_out = results
        results.clear()
        version = ""
        m = re.search(r"\bVersion=(\S+)", nodes_out)
        if m:
            version = m.group(1)
        warnings: list[str] = []
        try:
            # ~1.5 s at 100k jobs: off the event loop (the UI thread), GC paused while it builds
            jobs, w1, nodes, w2, parts, w3 = await asyncio.to_thread(self._parse, squeue_out, nodes_out, parts_out)
        except ParseError as exc:
            return Snapshot(self.name, "slurm", taken, error=SourceError("parse", str(exc), exc.where))
        del squeue_out, nodes_out, parts_out
        if len(jobs) >= _TRIM_JOBS:
            await asyncio.to_thread(_trim_heap)
        warnings += w1 + w2 + w3
        storage: tuple = ()
        if isinstance(storage_res, BaseException):  # df trouble must not hide the queue
            warnings.append(f"df {' '.join(self.storage_paths)}: {_err_text(storage_res)}")
        else:
            storage, df_errors = storage_res
            warnings += [f"df: {e}" if not e.startswith("df:") else e for e in df_errors]
        return Snapshot(
            source=self.name,
            kind="slurm",
            taken_at=taken,
            jobs=tuple(jobs),
            nodes=tuple(nodes),
            partitions=tuple(parts),
            warnings=tuple(warnings),
            slurm_version=version,
            storage=storage,
        )

    def _parse(self, squeue_out: str, nodes_out: str, parts_out: str) -> tuple:
        from cockpit import gcpolicy

        with gcpolicy.bulk():
            jobs, w1 = parse_squeue(squeue_out, self.tz, self._squeue_carry)
            nodes, w2 = parse_scontrol_nodes(nodes_out, self.tz)
            parts, w3 = parse_scontrol_partitions(parts_out)
        return jobs, w1, nodes, w2, parts, w3

    async def _storage(self) -> tuple[tuple, tuple[str, ...]]:
        """``df -P`` / ``df -Pi`` of ``storage_paths``: (usages, df's complaints). Raises like ``_run``."""
        if not self.storage_paths:
            return (), ()
        from cockpit.slurm.storage import collect_storage

        self.command_counts["df"] += 2
        report = await collect_storage(self.transport, self.storage_paths, timeout=self.command_timeout)
        return report.usages, report.errors

    # ------------------------------------------------------------------ on demand

    async def acct(self, job_ids: list[str] | tuple[str, ...]) -> list[AcctRecord]:
        """sacct rows (job and steps) for validated job ids. Raises ValueError, TransportError, _CommandFailed."""
        from cockpit.slurm.commands import sacct_argv

        ids = [validate_job_id(j) for j in job_ids]
        if not ids:
            return []
        return parse_sacct(await self._run(sacct_argv(ids)), self.tz)[0]

    async def history(self, user: str, name: str, days: int = 30) -> list[AcctRecord]:
        """Past runs of ``user``'s job ``name`` over ``days`` (right-sizing): one ``sacct -u -name``.

        Shared until the next poll: the drill-down's evidence and the job screen's right-sizing
        ask for the same rows. Raises ValueError on bad input, TransportError/_CommandFailed.
        """
        from cockpit.slurm.commands import sacct_history_argv

        validate_user(user)
        validate_job_name(name)

        async def fetch() -> list[AcctRecord]:
            return parse_sacct(await self._run(sacct_history_argv(user, name, days)), self.tz)[0]

        return list(await self._shared(("history", f"{user}{SEP}{name}{SEP}{days}"), fetch))

    async def _shared(self, key: tuple[str, str], fetch: Callable[[], Any]) -> Any:
        """``await fetch()`` once per ``key`` until the next poll (``_poll`` clears ``_cache``).

        Concurrent callers (the background evidence round and an open screen) await the same
        fetch; a caller cancelled mid-way (a screen closed) does not cancel it for the others.
        A fetch that raised is forgotten, so the next caller tries again.
        """
        import asyncio

        fut = self._cache.get(key)
        if fut is None:
            fut = self._cache[key] = asyncio.ensure_future(fetch())

            def forget(f: Any, key: tuple[str, str] = key) -> None:
                if (f.cancelled() or f.exception() is not None) and self._cache.get(key) is f:
                    del self._cache[key]

            fut.add_done_callback(forget)
        return await asyncio.shield(fut)

    def _find_job(self, snapshot: Snapshot, job_id: str) -> SlurmJob | None:
        return next((j for j in snapshot.jobs if j.job_id == job_id), None)

    def _job_paths(self, job: SlurmJob | None, job_id: str) -> tuple[str, str]:
        detail = self._detail.get(job_id)
        src = detail or job
        if src is None:
            return "", ""
        out = src.stdout_path or (resolve_output_path("", src) if src.work_dir else "")
        err = src.stderr_path or out
        return out, err

    def _slurmd_path(self, node: str) -> str:
        return self.slurmd_log.replace("%n", node).replace("%h", node)

    async def _tail(self, path: str, limit: int) -> tuple[bytes, int]:
        """Last ``limit`` bytes of ``path``, cut to whole lines; returns (data, file offset)."""
        st = await self.transport.stat(path)
        offset = max(0, st.size - limit)
        data = await self.transport.read_range(path, offset, st.size - offset)
        if offset > 0:
            nl = data.find(b"\n")
            if nl >= 0:
                data, offset = data[nl + 1 :], offset + nl + 1
        return data, offset

    async def _tail_log(self, name: str, kind: str, path: str, limit: int, subject_id: str) -> LogText:
        data, offset = await self._tail(path, limit)
        return LogText(name=name, kind=kind, data=data, path=path, subject_id=subject_id,
                       base_offset=offset, base_line=1 if offset == 0 else None)

    async def _grep_log(self, name: str, kind: str, path: str, limit: int, pattern: re.Pattern[bytes], subject_id: str) -> LogText:
        data, offset = await self._tail(path, limit)
        return grep_excerpt(name, kind, path, subject_id, data, offset, pattern)

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        """Evidence for a job or node (drill-down, ``cockpit diagnose JOBID``).

        Job: sacct rows, ``scontrol show job -o`` (StdOut/StdErr), the last MiB of
        stdout/stderr, slurmctld.log lines mentioning the job (last 8 MiB searched), the
        slurmd.log lines of its node(s) and, for OUT_OF_MEMORY/TIMEOUT, the sacct history
        of the same user + job name. Node: slurmd.log tail and slurmctld.log lines naming it.
        Fetched once per subject until the next poll (concurrent callers share the fetch; a
        subject already fetched by :meth:`evidence` this poll is served from it, without
        history). Failures are reported in ``commands`` under ``error: <what>``, never raised,
        except ValueError for a subject id that is not valid Slurm syntax.
        """
        fetch = self._fetcher(subject, snapshot)
        return Artifacts() if fetch is None else await self._shared((subject.kind, subject.id), fetch)

    def _fetcher(self, subject: Subject, snapshot: Snapshot, **job_kw: Any) -> Callable[[], Any] | None:
        """The evidence fetch of one job (``_job_artifacts`` with ``job_kw``) or node, after its id
        is validated (ValueError); None for other kinds."""
        from functools import partial

        if subject.kind == "job":
            validate_job_id(subject.id)
            return partial(self._job_artifacts, subject.id, snapshot, **job_kw)
        if subject.kind == "node":
            validate_node_name(subject.id)
            return partial(self._node_artifacts, subject.id)
        return None

    async def evidence(self, subjects: Iterable[Subject], snapshot: Snapshot, *, concurrency: int = 4,
                       timeout: float = 30.0) -> dict[Subject, Artifacts | BaseException]:
        """Background evidence for many subjects (``cockpit.runtime.evidence``): ONE sacct for all their jobs.

        Jobs get the rows of one ``sacct -j ID1,ID2,...`` split per job (:func:`split_sacct`),
        then each its ``scontrol show job -o ID`` (it takes no list) and log range reads, at
        most ``concurrency`` at once, ``timeout`` seconds each; no sacct history (drill-down
        only). Nodes as in :meth:`artifacts`. Subjects already fetched this poll are reused.
        Returns per subject its Artifacts, or the exception that stopped it (an invalid id:
        ValueError; a timeout); never raises itself.
        """
        import asyncio

        from cockpit.slurm.commands import sacct_argv

        subjects = list(dict.fromkeys(subjects))
        ids = [s.id for s in subjects if s.kind == "job" and _JOB_ID_RE.match(s.id)
               and (s.kind, s.id) not in self._cache]
        acct: dict[str, str | BaseException] = {}
        if ids:
            try:
                acct.update(split_sacct(await self._run(sacct_argv(ids)), ids))
            except Exception as exc:  # noqa: BLE001 - each job reports it, its logs still come
                acct.update(dict.fromkeys(ids, exc))
        sem = asyncio.Semaphore(concurrency)
        out: dict[Subject, Artifacts | BaseException] = {}

        async def one(s: Subject) -> None:
            async with sem:
                try:
                    # acct_out None (fetched, then forgotten, since the batch was cut): its own sacct
                    fetch = self._fetcher(s, snapshot, acct_out=acct.get(s.id), with_history=False)
                    if fetch is None:
                        out[s] = Artifacts()
                        return
                    out[s] = await asyncio.wait_for(self._shared((s.kind, s.id), fetch), timeout)
                except Exception as exc:  # noqa: BLE001 - one subject must not stop the others
                    out[s] = exc

        await asyncio.gather(*(one(s) for s in subjects))
        return out

    async def _job_artifacts(self, job_id: str, snapshot: Snapshot, acct_out: str | BaseException | None = None,
                             with_history: bool = True) -> Artifacts:
        """One job's evidence. ``acct_out``: its rows of a batched sacct (:meth:`evidence`), or the
        batch's failure; None runs ``sacct -j ID`` here. ``with_history``: fetch the sacct history
        of an OUT_OF_MEMORY/TIMEOUT job (drill-down), not for background evidence."""
        import asyncio

        from cockpit.slurm.commands import sacct_argv, scontrol_job_argv

        commands: dict[str, str] = {}
        job_cmd = scontrol_job_argv(job_id)
        if acct_out is None:
            sacct_res, job_res = await asyncio.gather(self._run(sacct_argv([job_id])), self._run(job_cmd),
                                                      return_exceptions=True)
        else:
            sacct_res, job_res = acct_out, (await asyncio.gather(self._run(job_cmd), return_exceptions=True))[0]
        acct: list[AcctRecord] = []
        label_s, label_j = f"sacct -j {job_id}", f"scontrol show job {job_id}"
        if isinstance(sacct_res, str):
            commands[label_s] = sacct_res
            try:
                acct = parse_sacct(sacct_res, self.tz)[0]
            except ParseError as exc:
                commands[f"error: {label_s}"] = str(exc)
        else:
            commands[f"error: {label_s}"] = _err_text(sacct_res)
        if isinstance(job_res, str):
            commands[label_j] = job_res
            try:
                jobs = parse_scontrol_job(job_res, self.tz)[0]
                if jobs:
                    self._detail[job_id] = jobs[0]
            except ParseError as exc:
                commands[f"error: {label_j}"] = str(exc)
        else:
            commands[f"error: {label_j}"] = _err_text(job_res)
        job = self._detail.get(job_id) or self._find_job(snapshot, job_id)
        nodes: list[str] = list(job.nodes) if job else []
        if not nodes:
            for r in acct:
                if r.node_list:
                    try:
                        nodes = list(hostlist.expand(r.node_list))
                    except ParseError:
                        pass
                    break
        nodes = [n for n in dict.fromkeys(nodes) if _NODE_RE.match(n)][:8]
        out_path, err_path = self._job_paths(job, job_id)
        tasks: list[tuple[str, Any]] = []
        if out_path.startswith("/"):
            tasks.append(("stdout", self._tail_log(out_path.rsplit("/", 1)[-1], "stdout", out_path, STDOUT_TAIL, job_id)))
        if err_path.startswith("/") and err_path != out_path:
            tasks.append(("stderr", self._tail_log(err_path.rsplit("/", 1)[-1], "stderr", err_path, STDOUT_TAIL, job_id)))
        jre = _job_log_re(job_id)
        tasks.append(("slurmctld.log", self._grep_log("slurmctld.log", "slurmctld", self.slurmctld_log, CTLD_TAIL, jre, job_id)))
        for n in nodes:
            path = self._slurmd_path(n)
            tasks.append((f"slurmd.log {n}", self._grep_log(path.rsplit("/", 1)[-1], "slurmd", path, SLURMD_TAIL, jre, job_id)))
        logs = await self._gather_logs(tasks, commands)
        history = await self._history_for(job, acct, commands) if with_history else ()
        return Artifacts(acct=tuple(acct), logs=tuple(logs), commands=commands, history=history)

    async def _history_for(self, job: SlurmJob | None, acct: list[AcctRecord], commands: dict[str, str]) -> tuple[AcctRecord, ...]:
        """Past runs (same user + job name) of a job that ended OUT_OF_MEMORY / TIMEOUT: one sacct call.

        Only for those two states: their remedy is a --mem / --time, which history sizes.
        A failure lands in ``commands`` as ``error: sacct history``.
        """
        from cockpit.diagnosis.rightsize import sizing_subject

        sized = sizing_subject(job, acct)
        if sized is None:
            return ()
        try:
            return tuple(await self.history(*sized))
        except (ValueError, ParseError) as exc:  # a name sacct cannot take; nothing to size from
            commands["error: sacct history"] = str(exc)
        except Exception as exc:  # noqa: BLE001 - transport trouble must not lose the other evidence
            commands["error: sacct history"] = _err_text(exc)
        return ()

    async def _node_artifacts(self, node: str) -> Artifacts:
        commands: dict[str, str] = {}
        path = self._slurmd_path(node)
        tasks = [
            (f"slurmd.log {node}", self._tail_log(path.rsplit("/", 1)[-1], "slurmd", path, NODE_TAIL, node)),
            ("slurmctld.log", self._grep_log("slurmctld.log", "slurmctld", self.slurmctld_log, CTLD_TAIL, _node_log_re(node), node)),
        ]
        logs = await self._gather_logs(tasks, commands)
        return Artifacts(logs=tuple(logs), commands=commands)

    async def _gather_logs(self, tasks: list[tuple[str, Any]], commands: dict[str, str]) -> list[LogText]:
        import asyncio

        results = await asyncio.gather(*(t for _, t in tasks), return_exceptions=True)
        logs: list[LogText] = []
        for (label, _), res in zip(tasks, results, strict=True):
            if isinstance(res, LogText):
                logs.append(res)
            else:
                commands[f"error: {label}"] = _err_text(res)
        return logs

    def log_locations(self, subject: Subject, snapshot: Snapshot) -> list[tuple[str, LogLocation]]:
        """Named logs of a job (stdout, stderr, slurmctld.log, slurmd.log per node) or node."""
        locs: list[tuple[str, LogLocation]] = []
        if subject.kind == "job" and _JOB_ID_RE.match(subject.id):
            job = self._detail.get(subject.id) or self._find_job(snapshot, subject.id)
            out, err = self._job_paths(job, subject.id)
            if out:
                locs.append(("stdout", LogLocation(self.name, out)))
            if err and err != out:
                locs.append(("stderr", LogLocation(self.name, err)))
            locs.append(("slurmctld.log", LogLocation(self.name, self.slurmctld_log)))
            for n in (job.nodes if job else ())[:8]:
                if _NODE_RE.match(n):
                    locs.append((f"slurmd.log ({n})", LogLocation(self.name, self._slurmd_path(n))))
        elif subject.kind == "node" and _NODE_RE.match(subject.id):
            locs.append(("slurmd.log", LogLocation(self.name, self._slurmd_path(subject.id))))
            locs.append(("slurmctld.log", LogLocation(self.name, self.slurmctld_log)))
        return locs

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        return await self.transport.read_range(validate_path(path), offset, length)

    async def stat(self, path: str) -> Any:
        return await self.transport.stat(validate_path(path))

    async def close(self) -> None:
        await self.transport.close()


_TRIM_JOBS = 10_000  # a queue this long has outputs of megabytes: worth a trim after the parse
_malloc_trim: Any = None


def _trim_heap() -> None:
    """Hand the heap pages freed by the parse back to the OS (glibc ``malloc_trim``; a no-op
    elsewhere). ~10 ms.

    squeue's output is ~24 MB at 100k jobs, held as bytes and then as str. Once glibc has freed
    one such mmapped block it raises its mmap threshold, so from the second poll on these
    buffers come from the heap and, freed, stay resident under the diagnosis and the table
    rows that follow: the polls' peak RSS grew 225 -> 240 -> 267 MiB over three 100k polls
    (217-220 MiB flat with the trim)."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):  # musl and others: no malloc_trim
                pass
    if _malloc_trim:
        _malloc_trim(0)


class _CommandFailed(Exception):
    """A Slurm command exited non-zero; becomes a SourceError."""

    def __init__(self, argv: tuple[str, ...], status: int, message: str) -> None:
        super().__init__(message)
        self.argv, self.status, self.message = argv, status, message

    def source_error(self) -> SourceError:
        where = _cmd_label(self.argv)
        first = self.message.splitlines()[0] if self.message else f"exit status {self.status}"
        if "Unable to contact slurm controller" in self.message or "Socket timed out" in self.message:
            return SourceError("unreachable", f"Slurm controller does not answer: {first}", where)
        if self.status == 127:
            return SourceError("command", f"{self.argv[0]} not found on the cluster", where)
        return SourceError("command", f"{where} failed ({self.status}): {first}", where)


def _err_text(exc: BaseException) -> str:
    if isinstance(exc, _CommandFailed):
        return exc.source_error().message
    return getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
