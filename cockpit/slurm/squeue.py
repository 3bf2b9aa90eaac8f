"""squeue's delimited output (``commands.SQUEUE_ARGV``) -> SlurmJobs, the whole queue every poll.

The hot path of a poll (100k rows at a big site): rows are taken ~4k at a time column by
column, every repeated column (times, durations, users, states, ...) cleaned once per
distinct raw string, and a poller's :class:`SqueueCarry` keeps what the previous parse
found, so an unchanged row costs one dict lookup. Tolerant per row like the other parsers
(:mod:`cockpit.slurm.parse`): a malformed row is skipped and described in the warnings.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, tzinfo
from itertools import compress, repeat
from operator import attrgetter, is_, itemgetter, ne
from typing import Any

from cockpit.errors import ParseError
from cockpit.model import SlurmJob, positional_constructor
from cockpit.slurm import hostlist
from cockpit.slurm.commands import SEP, SQUEUE_FIELDS, SQUEUE_FIELDS_SLUID, SQUEUE_LAYOUTS
from cockpit.slurm.parse import _BAD_VALUE, _int, _parse_duration, _parse_time, _text, parse_req_mem

# squeue header names (what ``squeue -o`` prints without --noheader) -> our column keys
# fmt: off
_SQUEUE_HEADERS = {
    "JOBID": "job_id", "PARTITION": "partition", "NAME": "name", "USER": "user",
    "STATE": "state", "REASON": "reason", "CPUS": "cpus", "NODES": "node_count",
    "NODELIST": "node_list", "MIN_MEMORY": "min_memory", "TIME_LIMIT": "time_limit",
    "TIME": "elapsed", "SUBMIT_TIME": "submit_time", "START_TIME": "start_time",
    "END_TIME": "end_time", "WORK_DIR": "work_dir", "ACCOUNT": "account", "QOS": "qos",
    "DEPENDENCY": "dependency", "PRIORITY": "priority", "COMMENT": "comment",
    "COMMAND": "command", "ARRAY_JOB_ID": "array_job_id", "ARRAY_TASK_ID": "array_task_id",
    "TRES_PER_NODE": "gres", "SLUID": "sluid",
}
# fmt: on


_SQ_JOB_ID_RE = re.compile(r"\d+(?:_(?:\d+|\[[^\]]*\]))?(?:\+\d+)?")
_STATE_RE = re.compile(r"[A-Z_]+")
_PRIO_RE = re.compile(r"\d+(\.\d+)?")


_make_job = positional_constructor(SlurmJob)  # all 33 fields, ~2x faster than SlurmJob(...)

# Column cleaners of the squeue rows, one call per distinct raw string (per-parse memos).
# Columns that repeat across thousands of jobs (user, partition, state, reason, node list,
# work dir, account, QOS, command) are interned: one str per distinct value, not one per job.
_intern = sys.intern
_MISS: Any = object()


def _sq_state(s: str) -> str:
    # a flag Slurm may append (25.11 EXPEDITING: RUNNING+EXPEDITING): the base state counts
    s = s.strip().upper().split("+", 1)[0]
    if not s or not _STATE_RE.fullmatch(s):
        raise ValueError(f"bad state {s!r}")
    return _intern(s)


def _sq_nodes(s: str) -> tuple[str, tuple[str, ...]]:
    """%N -> (compact list, expanded names). A pending job's %N is empty; a finished job's stays."""
    s = _text(s).strip()
    if not s or s.startswith("("):
        return _intern(s), ()
    # the names interned: jobs on overlapping node lists share them (~30 B a job at 10k)
    return _intern(s), tuple(map(_intern, hostlist.expand(s)))


_SLUID_RE = re.compile(r"s[0-9A-Z]{13}")


def _sq_sluid(s: str) -> str:
    # 26.05 prints s0000000000000 where it has none (--only-job-state, old records)
    s = s.strip()
    return s if _SLUID_RE.fullmatch(s) and s != "s0000000000000" else ""


def parse_tres_per_node(s: str) -> tuple[str, int | None]:
    """%b, the TRES (GRES) per node -> (as printed, GPUs per node). ``gres:gpu:2`` (22.05),
    ``gres/gpu:a100:2`` (23.02+), several joined by commas (types summed); ``N/A`` -> ("",
    None); a GPU GRES without a count is one GPU."""
    s = _text(s).strip()
    if not s or s == "N/A":
        return "", None
    gpus = None
    for item in s.split(","):
        name, _, rest = item.strip().removeprefix("gres").lstrip(":/").partition(":")
        name, _, eq = name.partition("=")
        if name != "gpu":
            continue
        count = eq or rest.rpartition(":")[2]
        n = int(count) if count.isdigit() and count.isascii() else 1
        gpus = (gpus or 0) + n
    return _intern(s), gpus


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
        # as printed; shared per distinct name (array tasks, resubmits: ~5 MiB at 100k jobs)
        "name": str,
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
        "gres": parse_tres_per_node,
        "sluid": _sq_sluid,
    }


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


def _job_from_fields(
    f: list[str], ix: dict[str, int], memo: dict[str, _Memo], now: float | None
) -> SlurmJob:
    """One squeue row (its fields plus a trailing ``""`` that absent columns point at).
    The reference path, used for chunks :func:`_jobs_from_chunk` cannot take whole; raises
    ValueError/ParseError like the column pass rejects. ``now``: when squeue printed it."""
    job_id = f[ix["job_id"]].strip()
    if not _SQ_JOB_ID_RE.fullmatch(job_id):
        raise ValueError(f"bad job id {job_id!r}")
    state = memo["state"].strict(f[ix["state"]])
    mem, per_cpu = memo["min_memory"].strict(f[ix["min_memory"]])
    node_list, nodes = memo["node_list"].strict(f[ix["node_list"]])
    gres, gpus = memo["gres"].strict(f[ix.get("gres", -1)])

    def col(k: str) -> Any:  # a column the layout lacks reads the trailing ""
        return memo[k].strict(f[ix.get(k, -1)])

    return _make_job(
        job_id,
        col("name"),
        col("user"),
        col("partition"),
        state,
        col("reason"),
        col("cpus"),
        col("node_count"),
        nodes,
        node_list,
        mem,
        per_cpu,
        col("time_limit"),
        col("elapsed"),
        col("submit_time"),
        col("start_time"),
        col("end_time"),
        col("work_dir"),
        "",
        "",
        col("account"),
        col("qos"),
        col("dependency"),
        col("priority"),
        None,
        col("command"),
        col("comment"),
        col("sluid"),
        None,  # cpus_per_task, min_tmp_disk_mib: scontrol show job only
        None,
        gres,
        gpus,
        now if state in RUNS_ON else None,
    )


_first = itemgetter(0)
_second = itemgetter(1)


def _jobs_from_chunk(
    lines: list[str],
    sep: str,
    ix: dict[str, int],
    ncols: int,
    memo: dict[str, _Memo],
    now: float | None,
) -> list[SlurmJob] | None:
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

    states = list(col("state"))
    nl = list(col("node_list"))  # (compact, expanded) pairs, read twice below
    mem = list(col("min_memory"))
    gres = list(col("gres"))  # (as printed, GPUs per node)
    if _rejected(memo):
        return None
    nothing = repeat("")
    jobs = list(
        map(
            _make_job,
            ids,
            col("name"),
            col("user"),
            col("partition"),
            states,
            col("reason"),
            col("cpus"),
            col("node_count"),
            map(_second, nl),
            map(_first, nl),
            map(_first, mem),
            map(_second, mem),
            col("time_limit"),
            col("elapsed"),
            col("submit_time"),
            col("start_time"),
            col("end_time"),
            col("work_dir"),
            nothing,
            nothing,
            col("account"),
            col("qos"),
            col("dependency"),
            col("priority"),
            repeat(None),
            col("command"),
            col("comment"),
            col("sluid"),
            repeat(None),  # cpus_per_task, min_tmp_disk_mib: scontrol show job only
            repeat(None),
            map(_first, gres),
            map(_second, gres),
            [now if s in RUNS_ON else None for s in states] if now is not None else repeat(None),
        )
    )
    return None if _rejected(memo) else jobs


def _rejected(memo: dict[str, _Memo]) -> bool:
    """Whether a memo rejected a value (a bad state or node list, say) since the last call."""
    bad = [m for m in memo.values() if m.bad]
    for m in bad:
        m.bad = False
    return bool(bad)


_CHUNK_CHARS = 1 << 20  # squeue text per column pass (~4k rows of 22 fields)
# Lines one row may span: squeue prints a job's name as its owner set it, newlines, CRs and
# \x1f included (sbatch -J, scontrol update JobName), so no separator is safe from it
_JOIN_MAX = 16
# Slurm's job states (job_state_string(), flags after "+"): a row put back together from
# pieces must name one where its state goes, or it is not taken for a row
_JOB_STATES = frozenset(
    """PENDING RUNNING SUSPENDED COMPLETED CANCELLED FAILED TIMEOUT NODE_FAIL PREEMPTED
    BOOT_FAIL DEADLINE OUT_OF_MEMORY COMPLETING CONFIGURING RESIZING REQUEUED REQUEUE_FED
    REQUEUE_HOLD SPECIAL_EXIT STOPPED SIGNALING STAGE_OUT RESV_DEL_HOLD REVOKED
    EXPEDITING LAUNCH_FAILED POWER_UP_NODE UPDATE_DB""".split()
)
_USER_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")


def _starts_row(line: str, sep: str) -> bool:
    """Whether ``line`` begins like a row: a job id, then the separator."""
    head, found, _ = line.partition(sep)
    return bool(found) and _SQ_JOB_ID_RE.fullmatch(head) is not None


def _record_at(
    lines: list[str], i: int, sep: str, ncols: int, name_ix: int, final: bool
) -> tuple[str, list[str] | None, int]:
    """The row starting at ``lines[i]``: (its text, its fields or None when it is not one, the
    index after it: the end of ``lines`` when they ran out first and more may come).

    A row with too few fields goes on at the next lines (a newline in the name), through
    every line that does not start like a row (a job id first: what a name printed after a
    newline is not; a name may hold a whole forged row, and the rest of its own row follows
    it). One with too many fields has separators in its name, which get them back, unless
    its last line is a whole row of its own: then the first line is a row cut short (as a
    paste may have), and it costs only itself."""
    n = lines[i].count(sep)
    j = i
    if n < ncols - 1:
        last = min(len(lines) - 1, i + _JOIN_MAX)
        while j < last and (n < ncols - 1 or not _starts_row(lines[j + 1], sep)):
            j += 1
            n += lines[j].count(sep)
        if j == len(lines) - 1 and not final:
            return lines[i], None, len(lines)  # the next chunk may hold more of it
    text = "\n".join(lines[i : j + 1]) if j > i else lines[i]
    if n < ncols - 1:
        return text, None, j + 1
    fields = text.split(sep)
    extra = n - (ncols - 1)
    if extra and j > i and lines[j].count(sep) == ncols - 1 and _starts_row(lines[j], sep):
        return lines[i], None, i + 1
    if extra and name_ix < ncols:
        fields[name_ix : name_ix + extra + 1] = [sep.join(fields[name_ix : name_ix + extra + 1])]
    return text, fields, j + 1


def _plausible(job: SlurmJob | None) -> bool:
    """Whether a row put back together (a name with newlines or separators) reads as one: a
    known state and a user name where they go."""
    return job is not None and job.state in _JOB_STATES and bool(_USER_RE.fullmatch(job.user))


def _layout_width(lines: list[str], sep: str) -> int:
    """The column count of header-less rows: the most common known one among the first rows
    that start with a job id (the first row alone may be a piece of a job whose name holds a
    newline; a piece has fewer fields than its row, so a tie goes to the wider layout)."""
    counts: dict[int, int] = {}
    for ln in lines[:64]:
        w = ln.count(sep) + 1
        if w in SQUEUE_LAYOUTS and _SQ_JOB_ID_RE.fullmatch(ln.partition(sep)[0].strip()):
            counts[w] = counts.get(w, 0) + 1
    return max(counts, key=lambda w: (counts[w], w)) if counts else len(SQUEUE_FIELDS)


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


_JOB_FIELDS = [f.name for f in dataclasses.fields(SlurmJob)]
_ELAPSED = _JOB_FIELDS.index("elapsed_s")
_READ_AT = _JOB_FIELDS.index("elapsed_at")
_job_values = attrgetter(*_JOB_FIELDS)
# states whose TIME squeue prints anew each poll (its row text changes with the clock)
_TICKING = frozenset({"RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STOPPED"})
# states whose elapsed time runs on between polls (``SlurmJob.elapsed_at``); a SUSPENDED job's
# stands still, a COMPLETING job's is its final one
RUNS_ON = frozenset({"RUNNING", "CONFIGURING"})
# how far squeue's TIME may stray from the last poll's elapsed carried on by the clock before
# the job is read anew: the latency of the squeue call varies by a second or two; a job
# suspended and resumed between two polls (RUNNING both times) shows a larger gap
DRIFT_S = 5


def _time_at(line: str, sep: str, e: int, ncols: int) -> tuple[str, int, int] | None:
    """(job id: the first field, where the TIME field (the ``e``-th) starts, where it ends)
    in a well-formed row."""
    if line.count(sep) != ncols - 1:
        return None
    start = 0
    for _ in range(e):
        start = line.index(sep, start) + 1
    end = line.find(sep, start)
    return line[: line.find(sep)], start, end if end >= 0 else len(line)


def _carried(job: SlurmJob | None) -> bool:
    return job is not None and job.elapsed_at is not None


def _retick(
    lines: list[str],
    known: list,
    sep: str,
    ix: dict[str, int],
    ncols: int,
    memo,
    ticks: dict,
    now: float | None,
    last: float | None,
) -> None:
    """Rows that differ from the last poll's only in TIME (%M: squeue prints a running job's
    elapsed time anew every poll), filled into ``known``: the last poll's job itself when its
    elapsed time carried on to ``now`` is what squeue printed (within :data:`DRIFT_S`), else
    that job with the new elapsed. Only that column is parsed (the rest is the same text, so
    the same values).

    Whose time runs on is read from squeue itself: a job of another state (COMPLETING,
    SUSPENDED: Slurm holds their time, some builds and fakes do not) whose TIME moved with
    the clock since the last read (``last``) is carried on from now too, like a running job;
    one whose time then stands still (even a running one: squeue printed the same TIME as
    before) is read anew, fixed, until it moves again."""
    el = memo["elapsed"]
    for i in compress(range(len(known)), map(is_, known, repeat(None))):
        line = lines[i]
        key = line[: line.find(sep)]  # the job id opens every layout (see parse_squeue)
        e = ticks.get(key)
        if e is None:
            continue
        # the same row but for TIME: last poll's text before and after that field (by their
        # hashes; the text before holds the job id this entry is kept under)
        start, tail = e[1], e[3]
        end = len(line) - tail
        if end < start or hash(line[:start]) != e[0] or hash(line[end:]) != e[2]:
            continue
        raw = line[start:end]
        if sep in raw:
            continue
        v = el[raw]
        if el.bad:  # rejected: parsed (and warned about) as a row of its own
            el.bad = False
            continue
        job = e[4]
        at, was = job.elapsed_at, job.elapsed_s
        runs = job.state in RUNS_ON
        if now is not None and v is not None and was is not None:
            if at is not None and abs(was + (now - at) - v) <= DRIFT_S:
                known[i] = job  # its time runs on as carried: nothing about it changed
                continue
            if v <= was:
                runs = False  # it stood still (squeue printed the same time): shown as printed
            elif at is None and not runs and last is not None:
                runs = abs(was + (now - last) - v) <= DRIFT_S
        vals = list(_job_values(job))
        vals[_ELAPSED] = v
        vals[_READ_AT] = now if runs else None
        known[i] = job = _make_job(*vals)
        ticks[key] = (e[0], start, e[2], tail, job)


def _note_ticks(
    lines: list[str], jobs: list, sep: str, ix: dict[str, int], ncols: int, ticks: dict
) -> None:
    """Remember the rows of running jobs parsed this poll, for :func:`_retick` next poll."""
    for line, job in zip(lines, jobs, strict=True):
        if job.state in _TICKING:
            at = _time_at(line, sep, ix["elapsed"], ncols)
            if at is not None:
                # the hashes of the text before and after TIME, not the row's text: ~200
                # bytes a running job less (#33)
                start, end = at[1], at[2]
                ticks[at[0]] = (hash(line[:start]), start, hash(line[end:]), len(line) - end, job)
        elif ticks:
            ticks.pop(job.job_id, None)  # it stopped running: its old row is not kept


class SqueueCarry:
    """What one poller's :func:`parse_squeue` keeps from its last parse for the next one:
    per-column tables (raw field -> cleaned value) and, for the column layout it was parsed
    with, each good row's text's ``hash`` -> its :class:`SlurmJob` (the hash, not the text:
    ~170 bytes a job less; a hit counts only when the row opens with that job's id, see
    :func:`_known`). Both hold only what the latest
    output had (~40 MiB at 100k jobs): an unchanged row (a pending or ended job) is one dict
    lookup next poll, an unchanged submit time or node list in a changed row is not parsed
    again."""

    __slots__ = ("tables", "rows", "layout", "ticks", "read_at")

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Any]] = {}
        self.rows: dict[int, SlurmJob] = {}
        self.layout: tuple = ()
        # running jobs: job id -> (hash of its row's text before TIME, where TIME starts,
        # hash of the text after it, that text's length, job), see _retick
        self.ticks: dict[str, tuple[int, int, int, int, SlurmJob]] = {}
        self.read_at: float | None = None  # the ``now`` of the last parse

    def clear(self) -> None:
        self.tables, self.rows, self.layout, self.ticks = {}, {}, (), {}
        self.read_at = None


_job_id = attrgetter("job_id")


def _known(rows: dict[int, SlurmJob], lines: list[str], sep: str) -> list[SlurmJob | None]:
    """Last poll's job of each line whose text is unchanged (None: parse it): found by the
    text's hash and taken only when the line's first field is that job's id, so a hash
    shared by two texts could only ever confuse two rows of one job."""
    known = list(map(rows.get, map(hash, lines)))
    at = list(compress(range(len(known)), known))
    if at:
        heads = [ln[: ln.find(sep)].strip() for ln in map(lines.__getitem__, at)]
        ids = map(_job_id, map(known.__getitem__, at))
        for i in compress(at, map(ne, heads, ids)):
            known[i] = None
    return known


def _chain_chunks(chunks: Iterator[list[str]]) -> Iterator[list[str] | None]:
    """``chunks`` then None (the parse's cue to finish a row the last chunk left open)."""
    yield from chunks
    yield None


def parse_squeue(
    text: str, tz: tzinfo = UTC, carry: SqueueCarry | None = None, now: float | None = None
) -> tuple[list[SlurmJob], list[str]]:
    """Parse ``squeue -o`` delimited output (``commands.SQUEUE_ARGV``).

    Separator ``\\x1f`` (or ``|``). A header line (``JOBID|PARTITION|...``) is used to
    map columns; without it the column order of ``SQUEUE_FIELDS`` is assumed.
    ``carry``: a poller's :class:`SqueueCarry` from its previous parse with the same ``tz``
    (it passes the same one every poll); read, then replaced by what this parse found.
    ``now``: when squeue ran (POSIX seconds): a running job's ``elapsed_at``, so its time
    runs on without a new row each poll; None (a capture read later): TIME as printed.
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
    old_rows: dict[int, SlurmJob] = {}  # last poll's good rows, when parsed with this layout
    new_rows: dict[int, SlurmJob] | None = {} if carry is not None else None
    layout: tuple = ()
    pending: list[str] = []  # the lines of a row the last chunk ended inside
    for lines in _chain_chunks(_line_chunks(text, _CHUNK_CHARS)):
        if lines is None:  # past the last chunk: what is still pending is all there is
            if not pending:
                break
            lines, pending, final = pending, [], True
        else:
            lines, pending, final = (pending + lines if pending else lines), [], False
        if not ix:  # the first line: a header or the first row
            first = [f.strip() for f in lines[0].split(sep)]
            if first and first[0] == "JOBID":
                cols = [_SQUEUE_HEADERS.get(h, "") for h in first]
                lines = lines[1:]
            else:
                # no header: the layout the cockpit asked, told apart by its column count
                # (\x1f never occurs in a field); older captures and recordings lack %b
                layout_fields = SQUEUE_LAYOUTS[_layout_width(lines, sep)]
                cols = [name for _, name in layout_fields]
            ncols = len(cols)
            # column -> field index; absent columns read the "" appended to every row
            ix = {name: ncols for _, name in SQUEUE_FIELDS_SLUID} | {
                k: i for i, k in enumerate(cols) if k
            }
            layout = (sep, ncols, tuple(sorted(ix.items())))
            if carry is not None and carry.layout == layout:
                old_rows = carry.rows
            elif carry is not None:
                carry.ticks = {}
            # rows whose TIME alone changed (_retick): with a TIME column, the job id first
            ticks = (
                carry.ticks
                if carry is not None and 0 == ix["job_id"] < ix["elapsed"] < ncols
                else None
            )
        known = _known(old_rows, lines, sep) if old_rows else None
        if known is not None and ticks:
            # the same text as last poll, but the clock moved: a job carried on from its
            # elapsed_at is checked against the TIME printed (its time may have stood still)
            for i in compress(range(len(known)), map(_carried, known)):
                known[i] = None
            _retick(lines, known, sep, ix, ncols, memo, ticks, now, carry.read_at)
        todo = (
            [ln for ln, j in zip(lines, known, strict=True) if j is None]
            if known is not None
            else lines
        )
        got = _jobs_from_chunk(todo, sep, ix, ncols, memo, now) if todo else []
        if got is not None:
            if ticks is not None and got:
                _note_ticks(todo, got, sep, ix, ncols, ticks)
            if known is not None and not todo:
                got = known  # every row as last poll's (or ticked): nothing to fill in
            elif known is not None:  # the unchanged rows' jobs, the parsed ones in the gaps
                fresh = iter(got)
                got = [j if j is not None else next(fresh) for j in known]
            jobs += got
            row += len(lines)
            if new_rows is not None:
                new_rows.update(zip(map(hash, lines), got, strict=True))
            continue
        i = 0
        while i < len(lines):
            line = lines[i]
            job = known[i] if known is not None else None
            nxt, why = i + 1, ""
            if job is None:
                line, fields, nxt = _record_at(lines, i, sep, ncols, ix["name"], final)
                if fields is None and nxt == len(lines) and not final:
                    pending = lines[i:]  # the row goes on in the next chunk
                    break
                width = lines[i].count(sep) + 1
                if fields is not None:
                    fields.append("")
                    try:
                        job = _job_from_fields(fields, ix, memo, now)
                    except _BAD_VALUE as exc:
                        why = f"skipped: {exc}"
                    if width != ncols and not _plausible(job):
                        job = None
                if job is None:
                    if width != ncols:
                        why = f"has {width} fields, expected {ncols}: {lines[i][:80]!r}"
                    # not a row after all: the next line is tried as the start of one, so a
                    # broken row costs only itself
                    row += 1
                    warnings.append(f"squeue: row {row} {why}")
                    i += 1
                    continue
            row += 1
            i = nxt
            jobs.append(job)
            if new_rows is not None:
                new_rows[hash(line)] = job
    if row and not jobs:
        raise ParseError(f"no usable row ({warnings[0] if warnings else 'empty'})", where="squeue")
    if carry is not None:
        for m in memo.values():
            m.prev = {}  # the old tables die with this parse
        carry.tables, carry.layout, carry.read_at = memo, layout, now
        carry.rows = new_rows if new_rows is not None else {}
        if len(carry.ticks) > 2 * len(jobs) + 1024:  # jobs that left: keep the present ones
            present = {id(j) for j in jobs}
            carry.ticks = {k: e for k, e in carry.ticks.items() if id(e[4]) in present}
    return jobs, warnings
