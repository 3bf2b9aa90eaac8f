"""Rows and cells for each pane: the one place that formats Slurm and ModelArts values.

Pure projections from snapshots, verdicts and incidents to table rows (the hub runs them
off the UI thread), the styles that give states and severities their colour, and the small
readers of the hub's state that the screens hand to the generic widgets as plain data.

Row keys are ``"<source>\\x1f<id>"`` so the same job id on two clusters stays distinct
and the cursor can follow a job across refreshes. Cells hold raw strings; the table
cleans them when it draws them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from itertools import compress
from operator import attrgetter, is_not
from typing import TYPE_CHECKING

from rich.text import Text

from cockpit.i18n import N_, _
from cockpit.model import SEVERITY_RANK, SUBJECT_KINDS, ExitCode, Finding, Incident, Snapshot
from cockpit.text import clean
from cockpit.units import squeue_time
from cockpit.widgets.fmt import age
from cockpit.widgets.rows import OPTIONAL, Column, Row, RowList, prepare_rows
from cockpit.widgets.rows import _search_text as search_text  # prepare_rows' own

if TYPE_CHECKING:
    pass

__all__ = [
    "Column",
    "INCIDENT_COLUMNS",
    "JOB_COLUMNS",
    "JOB_STATE_SHORT",
    "MEMBER_COLUMNS",
    "NODE_COLUMNS",
    "Row",
    "RowList",
    "RowMemo",
    "SEVERITY_MARK",
    "SEVERITY_STYLE",
    "TRAINING_COLUMNS",
    "age",
    "drop_cluster",
    "incident_rows",
    "incident_summary",
    "job_rows",
    "job_state_style",
    "member_rows",
    "mib",
    "node_rows",
    "node_state_style",
    "phase_style",
    "row_key",
    "since",
    "slurm_duration",
    "split_key",
    "stamp",
    "training_rows",
]

# ------------------------------------------------------------------ values

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
SEVERITY_MARK = {"critical": N_("CRIT"), "warning": N_("WARN"), "info": N_("INFO")}

_JOB_STATE_STYLE = {
    "PENDING": "yellow",
    "RUNNING": "green",
    "CONFIGURING": "green",
    "COMPLETING": "green",
    "COMPLETED": "dim",
    "CANCELLED": "magenta",
    "SUSPENDED": "yellow",
    "REQUEUED": "yellow",
}
_BAD_JOB_STATES = {
    "FAILED",
    "OUT_OF_MEMORY",
    "TIMEOUT",
    "NODE_FAIL",
    "BOOT_FAIL",
    "DEADLINE",
    "PREEMPTED",
}

# squeue's compact state codes, for narrow screens and muscle memory
JOB_STATE_SHORT = {
    "PENDING": "PD",
    "RUNNING": "R",
    "COMPLETING": "CG",
    "COMPLETED": "CD",
    "CONFIGURING": "CF",
    "CANCELLED": "CA",
    "FAILED": "F",
    "TIMEOUT": "TO",
    "NODE_FAIL": "NF",
    "OUT_OF_MEMORY": "OOM",
    "PREEMPTED": "PR",
    "SUSPENDED": "S",
    "BOOT_FAIL": "BF",
    "DEADLINE": "DL",
    "REQUEUED": "RQ",
}


def job_state_style(state: str) -> str:
    if state in _BAD_JOB_STATES:
        return "bold red"
    return _JOB_STATE_STYLE.get(state, "")


def node_state_style(state: str, flags: tuple[str, ...]) -> str:
    if state in {"DOWN", "FAIL", "FAILING", "UNKNOWN"} or "NOT_RESPONDING" in flags:
        return "bold red"
    if "DRAIN" in flags or state in {"DRAINED", "DRAINING"}:
        return "yellow"
    if state in {"IDLE"}:
        return "green"
    return ""


def phase_style(phase: str) -> str:
    return {
        "Failed": "bold red",
        "Abnormal": "bold red",
        "Running": "green",
        "Completed": "dim",
        "Initializing": "yellow",
        "Pending": "yellow",
        "Creating": "yellow",
        "Stopped": "magenta",
        "Terminated": "magenta",
    }.get(phase, "")


def slurm_duration(seconds: int | None) -> str:
    """Slurm's ``[D-]HH:MM:SS`` (``M:SS`` under an hour), ``-`` when unknown."""
    return squeue_time(seconds, "-")


WAIT_MINUTES_FROM_S = 3600  # a pending job's wait past an hour is shown to the minute
PATCH_SHARE = 2  # more changed rows than 1/PATCH_SHARE of them: rebuild the list


def time_text(seconds: int, coarse: bool = False) -> str:
    """The TIME column's text (``Column.clock``): ``coarse`` (a pending job's wait) to the
    minute past an hour, so its line changes once a minute, not every poll."""
    if coarse and seconds >= WAIT_MINUTES_FROM_S:
        seconds -= seconds % 60
    return slurm_duration(seconds)


def since(t: datetime | None, now: datetime) -> float | None:
    return None if t is None else (now - t).total_seconds()


def stamp(t: datetime | None) -> str:
    return "-" if t is None else t.strftime("%Y-%m-%d %H:%M")


def mib(n: int | None) -> str:
    """MiB as operators read it: 512M, 7.8G."""
    if n is None:
        return "-"
    if n < 1024:
        return f"{n}M"
    g = n / 1024
    return f"{g:.0f}G" if g >= 100 or g == int(g) else f"{g:.1f}G"


# ------------------------------------------------------------------ rows

SEP = "\x1f"

Verdicts = Mapping[tuple[str, str, str], Finding]


def row_key(source: str, ident: str) -> str:
    return f"{source}{SEP}{ident}"


def split_key(key: str) -> tuple[str, str]:
    source, _, ident = key.partition(SEP)
    return source, ident


JOB_COLUMNS = (
    Column(N_("JOBID"), 9, 0),
    # 14: at 80 columns the verdict keeps 39 cells ("never runs: 64 CPUs > MaxCPUsPerNode 48")
    Column(N_("NAME"), 14, 1),
    Column(N_("USER"), 9, 2),
    Column(N_("PART"), 8, 5),
    Column(N_("STATE"), 13, 0),
    Column(N_("TIME"), 10, 3, clock=time_text),
    Column(N_("N/CPU"), 8, 5),
    Column(N_("REASON"), 16, 4),
    # the verdict is what matters: at 80 columns TIME and USER go before it shrinks below 30
    # on a wide terminal the extras (EXIT, NODELIST, GPUS…) wait until it has 40 cells
    Column(N_("VERDICT"), 30, 0, flex=True, min_width=30, want=40),
    # shown on wide terminals, dropped first when narrow; `c` chooses (turm's most asked-for)
    Column(N_("EXIT"), 7, 6),
    Column(N_("NODELIST"), 14, 7),
    Column(N_("ACCOUNT"), 10, 8),
    Column(N_("QOS"), 8, 8),
    # GPUs of the job (squeue %b, TRES per node, x nodes); the raw GRES is in the drill-down
    Column(N_("GPUS"), 5, 7, justify="right"),
    Column(N_("CLUSTER"), 10, 6),
)

NODE_COLUMNS = (
    Column(N_("NODE"), 10, 0),
    Column(N_("STATE"), 16, 0),
    Column(N_("CPU"), 9, 2, justify="right"),
    Column(N_("MEM"), 11, 3, justify="right"),
    Column(N_("PARTITIONS"), 12, 4),
    Column(N_("REASON [who when]"), 30, 0, flex=True, want=30),
    Column(N_("GPUS"), 14, 5),  # the node's GRES, e.g. gpu:a100:8
    Column(N_("CLUSTER"), 10, 6),
)

TRAINING_COLUMNS = (
    Column(N_("NAME"), 20, 0),
    # the console's word ("Initializing"); the API's phase beside it only where there is room
    Column(N_("PHASE"), 13, 0),
    Column(N_("API PHASE"), 10, 5),
    Column(N_("IN PHASE"), 9, 1),
    Column(N_("POOL"), 14, 3),
    Column(N_("FLAVOR"), 18, 4),
    Column(N_("VERDICT"), 30, 0, flex=True, min_width=28, want=40),
    Column(N_("PROJECT"), 10, 6),
)

INCIDENT_COLUMNS = (
    Column(N_("SEV"), 5, 0),
    Column(N_("SUBJECT"), 22, 0),
    Column(N_("CAUSE"), 20, 2),
    # the title is the deciding fact: at 80 columns it keeps 34+ cells and CAUSE makes way
    # (with few rows and no scrollbar CAUSE stayed and left the title 16: "(gone) 20 jobs:…")
    # (and at 80 columns AFFECTED makes way too: the title keeps "MaxRSS 64.1G of ReqMem 64G")
    Column(N_("TITLE"), 30, 0, flex=True, min_width=34, want=44),
    Column(N_("FIRST SEEN"), 16, 3),
    Column(N_("AFFECTED"), 8, OPTIONAL, justify="right"),
    Column(N_("ACK"), 3, 1),
    # the cluster or project: its own column, so at 80 columns SUBJECT keeps the id whole
    Column(N_("SOURCE"), 14, 4),
)


def _verdict(verdicts: Verdicts, kind: str, source: str, ident: str) -> tuple[str, str, int]:
    f = verdicts.get((kind, source, ident))
    if f is None:
        return "", "", 3
    return f.title, SEVERITY_STYLE.get(f.severity, ""), SEVERITY_RANK.get(f.severity, 3)


class RowMemo:
    """A source's job rows kept from one poll to the next (``job_rows(..., memo=)``): a job
    whose row object, verdict and exit code are those of the last poll keeps its :class:`Row`
    and search text, so a poll pays for the rows that changed. Only the latest poll's jobs are
    held. TIME is not part of a row's identity: a running job's and a pending job's TIME
    count from an origin the table draws at the poll's time (``Row.tick``).

    With ``dirty`` (the job ids whose verdict may have changed, from the diagnosis delta)
    :func:`job_rows` patches the last :class:`RowList` instead of walking every job: the
    rows whose object, verdict or exit code changed are rebuilt in place; anything that moves
    a row (a job arriving, leaving, changing group) rebuilds."""

    __slots__ = ("jobs", "out", "snap_jobs", "now", "exits", "src", "patched")

    def __init__(self) -> None:
        # job id -> (job, verdict, row, search text, bucket, EXIT shown)
        self.jobs: dict[str, tuple] = {}
        self.out: RowList | None = None  # the last answer
        self.snap_jobs: tuple = ()
        self.now: datetime | None = None
        self.exits: Mapping[str, ExitCode] = {}
        self.src = ""
        self.patched = 0  # polls answered by a patch (for tests)


class _RowCaches:
    """What many rows share, built once per pass: styles per state and verdict, N/CPU per
    size, EXIT text per code, per-state facts, TIME origins per submit time."""

    __slots__ = ("per_state", "styles_for", "sizes", "exit_texts", "origins")

    def __init__(self) -> None:
        self.per_state: dict[str, tuple[bool, bool, int, str, str]] = {}
        self.styles_for: dict[tuple[str, str], tuple[str, ...]] = {}
        self.sizes: dict[tuple[int | None, int | None], str] = {}
        self.exit_texts: dict[object, str] = {}  # ExitCode -> "code:signal"
        self.origins: dict[datetime, float] = {}  # submit time -> its POSIX time

    def state(self, state: str, j) -> tuple[bool, bool, int, str, str]:
        st = self.per_state.get(state)
        if st is None:
            st = self.per_state[state] = (
                state == "PENDING",
                j.is_active,
                _STATE_ORDER.get(state, 1),
                job_state_style(state),
                JOB_STATE_SHORT.get(state, "").lower(),
            )
        return st


def _tick(j, pending: bool, origins: dict[datetime, float]) -> tuple[float, bool] | None:
    """A job's TIME when it counts on (``Row.tick``: origin, coarse): a pending job's wait
    since submission, a running job's elapsed time from when squeue read it
    (``SlurmJob.elapsed_at``); None: squeue's elapsed, fixed."""
    submit = j.submit_time
    if pending and submit is not None:  # pending jobs share submit times: one conversion each
        origin = origins.get(submit)
        if origin is None:
            origin = origins[submit] = submit.timestamp()
        return origin, True
    at, el = j.elapsed_at, j.elapsed_s
    if at is not None and el is not None:
        return at - el, False
    return None


@lru_cache(maxsize=8192)
def _verdict_cell(state: str, title: str) -> str:
    """The verdict as the queue's VERDICT cell shows it: without a lead that repeats the STATE
    cell beside it ("OUT_OF_MEMORY: MaxRSS 64.1G of ReqMem 64G" is "MaxRSS 64.1G of ReqMem
    64G" there), so at 80 columns the cell keeps the figures that decide."""
    for sep in (": ", " "):
        if title.startswith(state + sep) and len(title) > len(state) + len(sep):
            return title[len(state) + len(sep) :]
    return title


def _job_row(j, f: Finding | None, ec, src: str, c: _RowCaches) -> tuple[Row, str, int]:
    """One job's (row, search text, bucket)."""
    state = j.state
    pending, active, order, state_style, alias = c.state(state, j)
    if f is None:
        title, vstyle, rank = "", "", 3
    else:
        title, vstyle, rank = (
            _verdict_cell(state, f.title),
            SEVERITY_STYLE.get(f.severity, ""),
            SEVERITY_RANK.get(f.severity, 3),
        )
    tick = _tick(j, pending, c.origins)
    # a ticking TIME is drawn by the table: the row stays the same while the clock moves
    t_s = None if tick is not None else j.elapsed_s
    dur = "" if tick is not None else slurm_duration(t_s)
    size_key = (j.node_count, j.cpus)
    size = c.sizes.get(size_key)
    if size is None:
        size = c.sizes[size_key] = (
            f"{j.node_count if j.node_count is not None else '-'}/"
            f"{j.cpus if j.cpus is not None else '-'}"
        )
    styles = c.styles_for.get((state, vstyle))
    if styles is None:
        wait = "yellow" if pending else ""
        styles = c.styles_for[(state, vstyle)] = (
            *("bold", "", "", "", state_style, "", "", wait, vstyle, "", ""),
            *("dim", "dim", "", "dim"),
        )
    reason = j.reason if j.reason not in ("None", "") else ""
    exit_text = c.exit_texts.get(ec) if ec is not None else ""
    if exit_text is None:
        exit_text = c.exit_texts[ec] = f"{ec.code}:{ec.signal}"
    cells = (
        j.job_id,
        j.name,
        j.user,
        j.partition,
        state,
        dur,
        size,
        reason,
        title,
        exit_text,
        j.node_list,
        j.account,
        j.qos,
        "" if (gpus := j.gpus) is None else str(gpus),
        src,
    )
    sort = (_job_num(j.job_id), None, None, None, None, t_s, j.cpus, None, rank)
    if gpus is not None:  # numeric, not "16" < "8"
        sort = (*sort, None, None, None, None, gpus)
    group = 0 if rank < 2 else 1 if active else 2
    bucket = (group * 4 + rank) * 4 + order  # == sorting by (group, rank, order), stable
    row = Row(row_key(src, j.job_id), cells, styles, sort, alias, tick)
    return row, search_text(row), bucket


def job_rows(
    snapshot: Snapshot,
    verdicts: Verdicts,
    now: datetime,
    memo: RowMemo | None = None,
    exits: Mapping[str, ExitCode] | None = None,
    dirty: frozenset[str] | None = None,
) -> RowList:
    """One row per squeue job: jobs with a critical/warning verdict first, then active jobs
    (pending before running), then finished ones; squeue order inside each group.

    A pending job's TIME is how long it has waited (squeue prints 0:00): to the second under
    an hour, to the minute past it. A running job's counts on from squeue's elapsed. Both
    are drawn by the table at ``now`` (the list's ``as_of``), so the rows stay the same while
    only the clock moves. ``dirty``: the job ids whose verdict may differ from the last
    call's (None: any), so the last answer in ``memo`` can be patched (:class:`RowMemo`)."""
    now_ts = now.timestamp()
    if memo is not None and dirty is not None:
        got = _patch_rows(snapshot, verdicts, now, memo, exits or {}, dirty)
        if got is not None:
            memo.patched += 1
            got.as_of = now_ts
            return got
    # Hot path (100k jobs at a big site): what many jobs share (styles per state and verdict,
    # TIME origin per submit time, N/CPU) is built once and the tuples/strings shared;
    # grouping is a stable bucket pass instead of a sort with a key tuple per job.
    buckets: dict[int, tuple[list[Row], list[str]]] = {}
    src = snapshot.source
    c = _RowCaches()
    per_state = c.per_state
    old = memo.jobs if memo is not None else {}
    kept: dict[str, tuple] = {}
    for j in snapshot.jobs:
        state = j.state
        st = per_state.get(state) or c.state(state, j)
        f = verdicts.get(("job", src, j.job_id))
        e = old.get(j.job_id)
        # squeue prints no exit code: an ended job's comes from its sacct row (the evidence)
        ec = None if st[1] else (j.exit_code or (exits.get(j.job_id) if exits else None))
        if e is not None and e[0] is j and e[1] is f and e[5] == ec:
            row, hay, bucket = e[2], e[3], e[4]
        else:
            row, hay, bucket = _job_row(j, f, ec, src, c)
        if memo is not None:
            kept[j.job_id] = (j, f, row, hay, bucket, ec)
        pair = buckets.get(bucket)
        if pair is None:
            pair = buckets[bucket] = ([], [])
        pair[0].append(row)
        pair[1].append(hay)
    out = RowList()
    hays: list[str] = []
    for b in sorted(buckets):
        out.extend(buckets[b][0])
        hays.extend(buckets[b][1])
    # in C, not a comprehension: 10k rows a poll at a churning site (~1/8 of this call)
    out.key_index = dict(zip(map(_row_key, out), range(len(out)), strict=True))
    out.haystack = hays
    out.as_of = now_ts
    if memo is not None:
        memo.jobs = kept
        memo.out, memo.snap_jobs, memo.now, memo.src = out, snapshot.jobs, now, src
        memo.exits = dict(exits or {})
    return out


_row_key = attrgetter("key")


def _patch_rows(
    snapshot: Snapshot,
    verdicts: Verdicts,
    now: datetime,
    memo: RowMemo,
    exits: Mapping[str, ExitCode],
    dirty: frozenset[str],
) -> RowList | None:
    """The last answer with the changed jobs' rows rebuilt in place; None: rebuild."""
    last = memo.out
    if last is None or memo.now is None or now < memo.now or snapshot.source != memo.src:
        return None
    jobs, before = snapshot.jobs, memo.snap_jobs
    if len(jobs) != len(before):
        return None
    n = len(jobs)
    todo: dict[str, object] = {}
    if jobs is not before:
        for i in compress(range(n), map(is_not, jobs, before)):
            j = jobs[i]
            if j.job_id != before[i].job_id:
                return None  # moved, arrived or left: the order changes
            todo[j.job_id] = j
    if len(todo) + len(dirty) > n // PATCH_SHARE + 8:
        return None
    old = memo.jobs
    for jid in dirty:
        if jid not in todo:
            e = old.get(jid)
            if e is not None:
                todo[jid] = e[0]
    if exits != memo.exits:
        for jid in exits.keys() ^ memo.exits.keys():
            e = old.get(jid)
            if e is not None:
                todo.setdefault(jid, e[0])
        for jid, ec in exits.items():
            if memo.exits.get(jid, ec) != ec:
                e = old.get(jid)
                if e is not None:
                    todo.setdefault(jid, e[0])
    if len(todo) > n // PATCH_SHARE + 8:
        return None
    src = snapshot.source
    c = _RowCaches()
    rows = None
    hays: list[str] | None = None
    index = last.key_index
    for jid, j in todo.items():
        e = old.get(jid)
        if e is None:
            return None
        active = c.state(j.state, j)[1]
        f = verdicts.get(("job", src, jid))
        ec = None if active else (j.exit_code or exits.get(jid))
        if e[0] is j and e[1] is f and e[5] == ec:
            continue
        row, hay, bucket = _job_row(j, f, ec, src, c)
        if bucket != e[4]:
            return None  # the row moves to another group
        i = index.get(row.key)
        if i is None:
            return None
        if rows is None:
            rows, hays = RowList(last), list(last.haystack)
        rows[i] = row
        hays[i] = hay  # type: ignore[index]
        old[jid] = (j, f, row, hay, bucket, ec)
    memo.snap_jobs, memo.now = jobs, now
    memo.exits = dict(exits)
    if rows is None:  # nothing changed: a new list of the same rows (the table is told)
        rows, hays = RowList(last), last.haystack
    rows.key_index = index
    rows.haystack = hays  # type: ignore[assignment]
    memo.out = rows
    return rows


# inside a group: dead jobs, then pending, then running, then the rest (squeue order kept)
_STATE_ORDER = {
    "FAILED": 0,
    "OUT_OF_MEMORY": 0,
    "TIMEOUT": 0,
    "NODE_FAIL": 0,
    "PENDING": 1,
    "RUNNING": 2,
}


def _job_num(job_id: str) -> float:
    head, _, tail = job_id.partition("_")
    try:
        return float(head) + (float(tail) / 1e6 if tail.isdigit() else 0.0)
    except ValueError:
        return float("inf")


def gpu_text(gres: str) -> str:
    """A node's GRES as the column shows it: ``gpu:a100:8(S:0-1)`` -> ``gpu:a100:8``; several
    joined by commas; ``(null)`` and empty -> ""."""
    if not gres or gres == "(null)":
        return ""
    parts = []
    depth, cur = 0, []
    for ch in gres:  # commas inside (S:0-1,3) are not separators
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        if depth == 0 and ch != ")":
            cur.append(ch)
    parts.append("".join(cur))
    return ",".join(p for p in parts if p)


def node_rows(snapshot: Snapshot, verdicts: Verdicts) -> RowList:
    """Unhealthy nodes first (DOWN, then DRAIN), then by name."""
    src = snapshot.source
    out: list[tuple[tuple, Row]] = []
    for nd in snapshot.nodes:
        reason = nd.reason
        if reason and (nd.reason_user or nd.reason_time):
            who = " ".join(
                x for x in (nd.reason_user, stamp(nd.reason_time) if nd.reason_time else "") if x
            )
            reason = f"{reason} [{who}]"
        title, vstyle, rank = _verdict(verdicts, "node", src, nd.name)
        if not reason and title:
            reason = title
        alloc = nd.cpus_alloc if nd.cpus_alloc is not None else "-"
        cpu = f"{alloc}/{nd.cpus_total if nd.cpus_total is not None else '-'}"
        mem = f"{mib(nd.alloc_memory_mib)}/{mib(nd.real_memory_mib)}"
        gres = gpu_text(nd.gres)
        cells = (nd.name, nd.state_label, cpu, mem, ",".join(nd.partitions), reason, gres, src)
        sstyle = node_state_style(nd.state, nd.flags)
        styles = ("bold", sstyle, "", "", "", vstyle or ("yellow" if reason else ""), "", "dim")
        health = 0 if nd.is_down else 1 if nd.is_unhealthy else 2
        out.append(((health, rank, nd.name), Row(row_key(src, nd.name), cells, styles)))
    out.sort(key=lambda t: t[0])
    return prepare_rows([r for _, r in out])


_PHASE_LEAD = re.compile(
    r"(\d+(?:\.\d+)? (?:s|min|h|d|days?|hours?|秒|分钟|小时|天))(?: in phase)?: (.+)$", re.S
)
# ModelArts phases as a finding's title leads with them in the language spoken (the PHASE
# column itself shows the API's word)
_PHASE_WORDS = {
    "Initializing": N_("Initializing"),
    "Pending": N_("Pending"),
    "Running": N_("Running"),
    "Failed": N_("Failed"),
    "Completed": N_("Completed"),
}


def _training_verdict_cell(phase: str, title: str) -> str:
    """A training job's VERDICT cell: the cause first, without the phase the PHASE column shows
    ("Initializing 15 min: image pull failed (not found)" -> "image pull failed (not found)
    (15 min)", "Failed: input path not found" -> "input path not found"), so at 80 columns the
    cause is what stays."""
    lead = next(
        (
            w + sep
            for w in (phase, _(_PHASE_WORDS.get(phase, phase)))
            for sep in (": ", " ")
            if title.startswith(w + sep) and len(title) > len(w + sep)
        ),
        None,
    )
    if lead is None:
        return title
    rest = title[len(lead) :]
    m = _PHASE_LEAD.match(rest)
    return f"{m.group(2)} ({m.group(1)})" if m else rest


def training_rows(snapshot: Snapshot, verdicts: Verdicts, now: datetime) -> RowList:
    """ModelArts training jobs: problems first, then newest first."""
    src = snapshot.source
    out: list[tuple[tuple, Row]] = []
    for t in snapshot.training_jobs:
        title, vstyle, rank = _verdict(verdicts, "training_job", src, t.job_id)
        console = t.console_phase
        in_phase = since(t.phase_since or t.create_time, now)
        cells = (
            t.name or t.job_id,
            console,
            "" if console == t.phase else t.phase,
            age(in_phase),
            t.pool_name or t.pool_id,
            # every flavor starts "modelarts.": the part that tells them apart is the end
            t.flavor_id.removeprefix("modelarts."),
            _training_verdict_cell(console, _training_verdict_cell(t.phase, title)),
            src,
        )
        styles = ("bold", phase_style(console), "dim", "", "", "", vstyle, "dim")
        created = t.create_time.timestamp() if t.create_time else 0.0
        out.append(((min(rank, 2), -created), Row(row_key(src, t.job_id), cells, styles)))
    out.sort(key=lambda x: x[0])
    return prepare_rows([r for _, r in out])


def _subject_cell(s) -> str:
    """``job 48101``, ``node cn022``, ``training job bert-ft`` (its name, not its UUID): the
    source has its own column."""
    return f"{subject_kind(s.kind)} {s.name or s.id}"


def subject_kind(kind: str) -> str:
    """``job``, ``node``, ``training job``… in the language spoken."""
    return _(SUBJECT_KINDS.get(kind, kind))


def incident_rows(incidents: Iterable[Incident], acked: frozenset[str] | set[str]) -> list[Row]:
    """Ranked severity, then cause (so a cause's incidents sit together), then age."""
    items = sorted(
        incidents,
        key=lambda i: (
            SEVERITY_RANK.get(i.severity, 3),
            i.key in acked,
            # then age, oldest first (correlate() already grouped symptoms under their cause)
            i.first_seen.timestamp() if i.first_seen else float("inf"),
            i.key,
        ),
    )
    rows = []
    for inc in items:
        is_acked = inc.key in acked
        sev_style = "dim" if is_acked else SEVERITY_STYLE.get(inc.severity, "")
        cells = (
            _(SEVERITY_MARK.get(inc.severity, inc.severity)),
            _subject_cell(inc.subject),
            inc.root_cause,
            inc.title,
            stamp(inc.first_seen),
            str(max(1, len(inc.affected))),
            _("yes") if is_acked else "",
            inc.subject.source,
        )
        styles = (sev_style, "bold", "cyan", "dim" if is_acked else "", "", "", "green", "dim")
        rows.append(Row(inc.key, cells, styles))
    return rows


MEMBER_COLUMNS = (
    Column(N_("SEV"), 5, 0),
    Column(N_("SUBJECT"), 22, 0),
    Column(N_("CAUSE"), 20, 2),
    Column(N_("TITLE"), 30, 0, flex=True, min_width=34),  # as in the incident view
    Column(N_("SINCE"), 16, 3),
)


def member_rows(incident: Incident) -> list[Row]:
    """One row per finding an incident folds (a node's casualties, one user's held jobs, a
    cluster's starved jobs), most severe first, then oldest; keyed by the member's subject
    (``kind\x1fsource\x1fid``) so the members view can open it."""
    items = sorted(
        incident.findings,
        key=lambda f: (
            SEVERITY_RANK.get(f.severity, 3),
            f.first_seen.timestamp() if f.first_seen else float("inf"),
            f.subject.id,
        ),
    )
    rows = []
    for f in items:
        s = f.subject
        cells = (
            _(SEVERITY_MARK.get(f.severity, f.severity)),
            s.label(),
            f.root_cause,
            f.title,
            stamp(f.first_seen),
        )
        styles = (SEVERITY_STYLE.get(f.severity, ""), "bold", "cyan", "", "")
        rows.append(Row(SEP.join((s.kind, s.source, s.id)), cells, styles))
    return rows


def drop_cluster(columns: Sequence[Column], multi: bool) -> tuple[Column, ...]:
    """The CLUSTER/PROJECT column only matters with more than one source, and then it is
    kept at any width: twelve rows reading "48104" are twelve different jobs."""
    if multi:
        return tuple(
            dataclasses.replace(c, priority=0) if c.label in ("CLUSTER", "PROJECT") else c
            for c in columns
        )
    return tuple(c for c in columns if c.label not in ("CLUSTER", "PROJECT"))


# ------------------------------------------------------------------ details


def incident_summary(inc: Incident, acked: bool, now: datetime) -> Text:
    """Detail lines for the incident under the cursor."""
    out = Text()
    out.append(
        f"{_(SEVERITY_MARK.get(inc.severity, ''))} ", style=SEVERITY_STYLE.get(inc.severity, "")
    )
    out.append(clean(inc.title, 400), style="bold")
    out.append(f"\n{inc.root_cause} · {inc.subject.label()}", style="cyan")
    if inc.first_seen:
        ago = age((now - inc.first_seen).total_seconds())
        out.append(" · " + _("first seen {age} ago").format(age=ago))
    if acked:
        out.append(" · " + _("acknowledged"), style="green")
    p = inc.primary
    if p.remedy:
        out.append("\n→ " + clean(p.remedy, 600), style="green")
    if inc.affected:
        shown = ", ".join(clean(str(s), 60) for s in inc.affected[:12])
        extra = len(inc.affected) - 12
        more = _(" and {n} more").format(n=extra) if extra > 0 else ""
        out.append("\n" + _("affected ({n}): ").format(n=len(inc.affected)) + shown + more)
    return out
