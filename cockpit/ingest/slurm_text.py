"""Slurm's human-format outputs as operators paste them -> the records live polls produce.

squeue in any column layout (default, ``-l``, ``-o``, ``--start``, a site wrapper such as
``myjobs``, ``squeue | grep user`` without a header), sacct (default format with its
``----`` ruler, headerless, ``-P``/``--parsable2``), sinfo and ``sinfo -R``, ``seff``,
``sprio``, and the node state changes a slurmctld log records. ``scontrol show`` blocks
go through :mod:`cockpit.slurm.parse`, as on a live poll.

Parsers never raise on odd input: an unreadable row is skipped.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from cockpit.diagnosis import slurm_states
from cockpit.diagnosis.slurm_codes import REASONS, base_code
from cockpit.ingest.tables import col, content_lines, parse_table
from cockpit.model import AcctRecord, Partition, SlurmJob, SlurmNode
from cockpit.slurm import hostlist
from cockpit.slurm import parse as slurm

# squeue's compact job state codes (%t) -> the state names (slurm_states lists them all).
JOB_STATES = {
    "BF": "BOOT_FAIL",
    "CA": "CANCELLED",
    "CD": "COMPLETED",
    "CF": "CONFIGURING",
    "CG": "COMPLETING",
    "DL": "DEADLINE",
    "F": "FAILED",
    "NF": "NODE_FAIL",
    "OOM": "OUT_OF_MEMORY",
    "PD": "PENDING",
    "PR": "PREEMPTED",
    "R": "RUNNING",
    "RD": "RESV_DEL_HOLD",
    "RF": "REQUEUE_FED",
    "RH": "REQUEUE_HOLD",
    "RQ": "REQUEUED",
    "RS": "RESIZING",
    "RV": "REVOKED",
    "SI": "SIGNALING",
    "SE": "SPECIAL_EXIT",
    "SO": "STAGE_OUT",
    "ST": "STOPPED",
    "S": "SUSPENDED",
    "TO": "TIMEOUT",
}
LONG_STATES = frozenset(JOB_STATES.values()) | frozenset(slurm_states.JOB_STATES)
_JOB_ID = re.compile(r"^\d+(?:_(?:\d+|\[[\d,%\-]+\]))?(?:\+\d+)?(?:\.[\w+-]+)?$")
_EXIT = re.compile(r"^\d+:\d+$")


def job_state(v: str) -> str:
    """``PD``/``PENDING``/``CANCELLED+``/``OUT_OF_ME+``/``CANCELLED by 0`` -> the state name;
    "" when ``v`` names no job state."""
    v = v.strip().split(" ")[0].upper()
    if v in JOB_STATES:
        return JOB_STATES[v]
    if v in LONG_STATES:
        return v
    if v.endswith("+"):  # sacct cuts a long word to its column: CANCELLED+, OUT_OF_ME+
        stem = v.rstrip("+")
        for s in sorted(LONG_STATES):
            if stem and s.startswith(stem):
                return s
    return ""


def is_job_id(tok: str) -> bool:
    return bool(_JOB_ID.match(tok))


def expand(nodelist: str) -> tuple[str, ...]:
    """A hostlist expanded; a malformed one stays as it is, ``(reason)`` gives ()."""
    if not nodelist or nodelist.startswith("(") or nodelist in {"None", "(null)"}:
        return ()
    try:
        return hostlist.expand(nodelist)
    except Exception:  # noqa: BLE001 - a bad hostlist in a ticket file is just not expanded
        return (nodelist,)


def _int(v: str | None) -> int | None:
    v = (v or "").strip()
    return int(v) if v.isdigit() else None


def _header_words(line: str) -> set[str]:
    return {w.upper() for w in re.split(r"[\s|]+", line.strip()) if w}


_ID_HEADS = {"JOBID", "JOB_ID", "JOBIDRAW"}
_STATE_HEADS = {"STATE", "ST", "STATUS"}


# --------------------------------------------------------------------------- squeue


def is_squeue_header(line: str) -> bool:
    words = _header_words(line)
    return bool(words & _ID_HEADS) and bool(words & _STATE_HEADS) and "EXITCODE" not in words


def squeue_row_shape(line: str) -> bool:
    """A headerless squeue row: a job id first, a job state among the next fields, and the
    reason in parentheses or a node list last."""
    toks = line.split()
    if len(toks) < 3 or not is_job_id(toks[0]) or "." in toks[0]:
        return False
    if not any(job_state(t) and t.rstrip("+") == t for t in toks[1:7]):
        return False
    return line.rstrip().endswith(")") or not _EXIT.match(toks[-1])


def parse_squeue_any(text: str) -> list[SlurmJob]:
    """squeue in any layout with a header (default, ``-l``, ``-o``, ``--start``, ``|``,
    a wrapper's own columns), or headerless rows in the default column order."""
    lines = content_lines(text)
    if not lines:
        return []
    if is_squeue_header(lines[0]):
        return [j for r in parse_table(text) if (j := _job_from_row(r)) is not None]
    return [j for ln in lines if squeue_row_shape(ln) and (j := _headerless_job(ln))]


def _job_from_row(r: dict[str, str]) -> SlurmJob | None:
    jid = col(r, "JOBID")
    state = job_state(col(r, "STATE"))
    if not is_job_id(jid) or not state:
        return None
    reason = col(r, "REASON")
    nodelist = col(r, "NODELIST")
    both = r.get("NODELIST(REASON)", "")
    if both.startswith("("):
        reason = reason or both.strip("()")
    elif both:
        nodelist = nodelist or both
    part = col(r, "PARTITION").rstrip("*")
    return SlurmJob(
        job_id=jid,
        name=col(r, "NAME"),
        user=col(r, "USER"),
        partition=part,
        state=state,
        reason=_reason(reason),
        cpus=_int(col(r, "CPUS")),
        node_count=_int(col(r, "NODES")),
        node_list=nodelist,
        nodes=expand(nodelist),
        min_memory_mib=slurm.parse_mem_mib(col(r, "MIN_MEMORY") or None),
        time_limit_s=slurm.parse_duration_s(col(r, "TIME_LIMIT") or None),
        elapsed_s=slurm.parse_duration_s(col(r, "TIME") or None),
        submit_time=slurm.parse_time(col(r, "SUBMIT_TIME") or None),
        start_time=slurm.parse_time(col(r, "START_TIME") or None),
        end_time=slurm.parse_time(col(r, "END_TIME") or None),
        work_dir=col(r, "WORK_DIR"),
        account=col(r, "ACCOUNT"),
        qos=col(r, "QOS") or (r.get("PARTITION/QOS", "").partition("/")[2]),
        priority=_int(col(r, "PRIORITY")),
    )


def _reason(reason: str) -> str:
    reason = reason.strip() or "None"
    # squeue prints this one reason with spaces; scontrol and the rules use the code
    return "launch_failed_requeued_held" if reason == "launch failed requeued held" else reason


def _headerless_job(line: str) -> SlurmJob | None:
    """Default squeue order: JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)."""
    toks = line.split()
    si = next((i for i, t in enumerate(toks[1:7], 1) if job_state(t)), None)
    if si is None:
        return None
    m = re.search(r"\(([^()]*)\)\s*$", line) or _reason_cell_inside(line, toks[si])
    # a custom -o format ('%i %P %u %T %r %l') prints the reason bare, anywhere after the state
    bare = None if m else next((t for t in toks[si + 1 :] if _is_reason_code(t)), None)
    reason = m.group(1) if m else (bare or "None")
    after = toks[si + 1 :]
    nodelist = "" if m or len(after) < 3 else after[-1]
    return SlurmJob(
        job_id=toks[0],
        name=toks[2] if si > 2 else "",
        user=toks[3] if si > 3 else "",
        partition=toks[1].rstrip("*") if si > 1 else "",
        state=job_state(toks[si]),
        reason=_reason(reason),
        elapsed_s=slurm.parse_duration_s(after[0]) if after else None,
        node_count=_int(after[1]) if len(after) > 1 else None,
        node_list=nodelist,
        nodes=expand(nodelist),
    )


def _reason_cell_inside(line: str, state: str) -> re.Match[str] | None:
    """A site's ``-o`` format with columns after ``%R`` ('... 1 (launch failed requeued
    held) 8 4000M'): the parenthesised cell after the state, when it names a reason Slurm
    knows (a bare '(null)' feature cell does not)."""
    start = line.find(state) + len(state)
    m = re.search(r"\(([^()]+)\)", line[start:])
    if m is None or not _is_reason_code(base_code(m.group(1))):
        return None
    return m


def _is_reason_code(tok: str) -> bool:
    """A pending/ended reason code Slurm names (``PartitionTimeLimit``), not a node or time."""
    code = base_code(tok.strip(",()"))
    return code != "None" and code in REASONS


# --------------------------------------------------------------------------- sacct


def is_sacct_header(line: str) -> bool:
    words = _header_words(line)
    return bool(words & _ID_HEADS) and (
        "EXITCODE" in words or "JOBNAME" in words or {"ELAPSED", "STATE"} <= words
    )


def sacct_row_shape(line: str) -> bool:
    """A headerless sacct row: a job (or step) id first, a state and an exit code last."""
    toks = line.split()
    return (
        len(toks) >= 3
        and is_job_id(toks[0])
        and bool(_EXIT.match(toks[-1]))
        and bool(job_state(toks[-2]) or toks[-2] == "by")
    )


# sacct's default columns, in order (what a bare `sacct` prints)
SACCT_DEFAULT = ("JOBID", "JOBNAME", "PARTITION", "ACCOUNT", "ALLOCCPUS", "STATE", "EXITCODE")


def parse_sacct_any(text: str) -> list[AcctRecord]:
    """sacct with a header (default table with ruler, ``-o``, ``-P``/``--parsable2``) or
    headerless rows of the default format -> AcctRecord rows (jobs and steps)."""
    lines = content_lines(text)
    if not lines:
        return []
    if is_sacct_header(lines[0]):
        rows = parse_table(text)
    else:
        rows = [_headerless_acct(ln) for ln in lines if sacct_row_shape(ln)]
    out = []
    for r in rows:
        rec = _acct_from_row(r)
        if rec is not None:
            out.append(rec)
    return out


def _headerless_acct(line: str) -> dict[str, str]:
    toks = line.split()
    m = re.search(r"\s(\S+)(?: by (\S+))?\s+(\d+:\d+)\s*$", line)
    if len(toks) == len(SACCT_DEFAULT):
        return dict(zip(SACCT_DEFAULT, toks, strict=True))
    row = {"JOBID": toks[0], "EXITCODE": toks[-1]}
    if m:
        row["STATE"] = m.group(1) + (f" by {m.group(2)}" if m.group(2) else "")
    if len(toks) > 3:
        row["JOBNAME"] = toks[1]
    return row


def _acct_from_row(r: dict[str, str]) -> AcctRecord | None:
    jid = col(r, "JOBID")
    if not is_job_id(jid):
        return None
    job, _, step = jid.partition(".")
    raw = col(r, "STATE")
    state = job_state(raw)
    if not state:
        return None
    m = re.search(r"\bby (\S+)", raw)
    req = col(r, "MIN_MEMORY")
    nodelist = r.get("NODELIST", "")
    return AcctRecord(
        job_id=job,
        step=step,
        job_name=col(r, "NAME"),
        partition=col(r, "PARTITION"),
        state=state,
        exit_code=slurm.parse_exit_code(col(r, "EXITCODE")),
        req_mem_mib=slurm.parse_mem_mib(req.rstrip("?nc") if req else None),
        max_rss_mib=slurm.parse_mem_mib(col(r, "MAXRSS") or None),
        elapsed_s=slurm.parse_duration_s(col(r, "TIME") or None),
        timelimit_s=slurm.parse_duration_s(col(r, "TIME_LIMIT") or None),
        node_list="" if nodelist == "None assigned" else nodelist,
        reason=r.get("REASON", ""),
        cancelled_by=m.group(1) if m else "",
        placeholder=req.endswith("?"),
        user=col(r, "USER"),
        start_time=slurm.parse_time(r.get("START") or None),
        end_time=slurm.parse_time(r.get("END") or None),
    )


def job_from_acct(rows: list[AcctRecord]) -> SlurmJob | None:
    """The job as squeue would have shown it, from its sacct rows (job row first): a job that
    already left the queue is still diagnosed."""
    if not rows:
        return None
    r = next((x for x in rows if not x.step), rows[0])
    return SlurmJob(
        job_id=r.job_id,
        name=r.job_name,
        user=r.user,
        partition=r.partition,
        state=r.state,
        reason=r.reason or "None",
        node_list=r.node_list,
        nodes=expand(r.node_list),
        exit_code=r.exit_code,
        elapsed_s=r.elapsed_s,
        time_limit_s=r.timelimit_s,
        start_time=r.start_time,
        end_time=r.end_time,
    )


# --------------------------------------------------------------------------- seff


_SEFF_KEYS = re.compile(
    r"^(Job ID|State|Memory Utilized|Memory Efficiency|Job Wall-clock time|"
    r"Cluster|User/Group|Nodes|Cores per node|CPU Utilized):\s*(.*)$",
    re.M,
)


def is_seff(text: str) -> bool:
    keys = {m.group(1) for m in _SEFF_KEYS.finditer(text)}
    return "Job ID" in keys and "State" in keys


def parse_seff(text: str) -> list[AcctRecord]:
    """``seff JOBID`` -> the job's sacct-like row: state, exit code, memory used of requested,
    wall-clock time."""
    kv = {m.group(1): m.group(2).strip() for m in _SEFF_KEYS.finditer(text)}
    jid = kv.get("Job ID", "")
    m = re.match(r"(\w+)(?: \(exit code (\d+)\))?", kv.get("State", ""))
    if not is_job_id(jid) or not m or not job_state(m.group(1)):
        return []
    mem = re.search(r"of ([\d.]+ \w+)", kv.get("Memory Efficiency", ""))
    user = kv.get("User/Group", "").partition("/")[0]
    return [
        AcctRecord(
            job_id=jid,
            step="",
            job_name="",
            partition="",
            state=job_state(m.group(1)),
            exit_code=slurm.parse_exit_code(f"{m.group(2)}:0") if m.group(2) else None,
            req_mem_mib=_human_mib(mem.group(1)) if mem else None,
            max_rss_mib=_human_mib(kv.get("Memory Utilized", "")),
            elapsed_s=slurm.parse_duration_s(kv.get("Job Wall-clock time") or None),
            timelimit_s=None,
            node_list="",
            user=user,
        )
    ]


def _human_mib(v: str) -> int | None:
    """seff's ``1.50 GB``/``800.00 MB``/``0.00 MB (estimated maximum)`` -> MiB."""
    m = re.match(r"([\d.]+)\s*([KMGTP])B", v.strip())
    if not m:
        return None
    return slurm.parse_mem_mib(m.group(1) + m.group(2))


# --------------------------------------------------------------------------- sprio


def is_sprio_header(line: str) -> bool:
    words = _header_words(line)
    return (
        bool(words & _ID_HEADS)
        and "PRIORITY" in words
        and bool(words & {"AGE", "FAIRSHARE", "JOBSIZE", "QOS", "SITE"})
        and not words & _STATE_HEADS
    )


def parse_sprio(text: str) -> dict[str, int]:
    """``sprio [-l]`` -> job id -> priority."""
    out = {}
    for r in parse_table(text):
        jid, prio = col(r, "JOBID"), _int(col(r, "PRIORITY"))
        if is_job_id(jid) and prio is not None:
            out[jid] = prio
    return out


# --------------------------------------------------------------------------- sinfo

_SINFO_STATE = {
    "drain": ("IDLE", ("DRAIN",)),
    "drng": ("MIXED", ("DRAIN",)),
    "drained": ("IDLE", ("DRAIN",)),
    "draining": ("MIXED", ("DRAIN",)),
    "down": ("DOWN", ()),
    "idle": ("IDLE", ()),
    "mix": ("MIXED", ()),
    "mixed": ("MIXED", ()),
    "alloc": ("ALLOCATED", ()),
    "allocated": ("ALLOCATED", ()),
    "fail": ("FAIL", ()),
    "failing": ("FAILING", ()),
    "maint": ("MAINT", ()),
    "unk": ("UNKNOWN", ()),
    "unknown": ("UNKNOWN", ()),
    "comp": ("COMPLETING", ()),
    "completing": ("COMPLETING", ()),
    "plnd": ("PLANNED", ()),
    "resv": ("RESERVED", ()),
    "reserved": ("RESERVED", ()),
    "pow_dn": ("IDLE", ("POWERED_DOWN",)),
    "powered_down": ("IDLE", ("POWERED_DOWN",)),
    "inval": ("INVAL", ()),
}


def sinfo_state(v: str) -> tuple[str, tuple[str, ...]]:
    """sinfo's compact state (``drain*``, ``mix-``, ``down~``) -> (base, flags)."""
    v = v.strip().lower()
    star = v.endswith("*")
    v = v.rstrip("*~#!%$@^-")
    base, flags = _SINFO_STATE.get(v, (v.upper() or "UNKNOWN", ()))
    return base, flags + (("NOT_RESPONDING",) if star else ())


def is_sinfo_header(line: str) -> bool:
    words = _header_words(line)
    return {"PARTITION", "STATE", "NODELIST"} <= words or {"PARTITION", "AVAIL"} <= words


def is_sinfo_r_header(line: str) -> bool:
    words = _header_words(line)
    return "REASON" in words and "NODELIST" in words and not words & _ID_HEADS


def parse_sinfo(text: str) -> tuple[list[SlurmNode], list[Partition]]:
    """sinfo's default table (or ``-N``, ``-l``) -> nodes (state only) and partitions."""
    nodes: dict[str, SlurmNode] = {}
    parts: dict[str, list[str]] = {}
    for r in parse_table(fitting("sinfo", text)):
        pname = col(r, "PARTITION").rstrip("*")
        names = expand(r.get("NODELIST", "") or r.get("HOSTNAMES", ""))
        base, flags = sinfo_state(r.get("STATE", ""))
        # a site's own columns (-o/-O with %E, or -l -N) carry the reason slurmd or an admin set
        reason = r.get("REASON", "").strip()
        reason = "" if reason.lower() in {"none", "(null)", "n/a"} else reason
        parts.setdefault(pname, []).extend(names)
        for n in names:
            prev = nodes.get(n)
            nodes[n] = SlurmNode(
                name=n,
                state=base,
                flags=flags,
                partitions=((prev.partitions if prev else ()) + (pname,)),
                reason=reason,
            )
    partitions = [
        Partition(name=p, nodes=tuple(ns), total_nodes=len(ns)) for p, ns in parts.items() if p
    ]
    return list(nodes.values()), partitions


def parse_sinfo_r(text: str) -> list[SlurmNode]:
    """``sinfo -R`` (REASON [USER TIMESTAMP] NODELIST) -> drained nodes with their reasons."""
    out = []
    for r in parse_table(fitting("sinfo_r", text)):
        reason = r.get("REASON", "")
        down = re.search(r"Not responding|reboot", reason)
        for n in expand(r.get("NODELIST", "")):
            out.append(
                SlurmNode(
                    name=n,
                    state="DOWN" if down else "IDLE",
                    flags=("NOT_RESPONDING",) if "Not responding" in reason else ("DRAIN",),
                    reason=reason,
                    reason_user=r.get("USER", ""),
                    reason_time=slurm.parse_time(r.get("TIMESTAMP") or None),
                )
            )
    return out


# --------------------------------------------------------------------------- slurmctld log

_TS = re.compile(r"^\[?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)")
_NODE_EVENTS = (
    (re.compile(r"(?:drain_nodes|update_node): node (\S+) state set to (\w+)"), "state"),
    # 23.02+: "Setting node c1 state to INVAL with reason:gres/gpu count reported lower ..."
    (re.compile(r"[Ss]etting node (\S+) state to (\w+)(?: with reason:(.+))?"), "state"),
    (re.compile(r"update_node: node (\S+) reason set to: (.+)$"), "reason"),
    (re.compile(r"[Nn]odes? (\S+?),? not responding(?:, setting (DOWN))?"), "down"),
    (re.compile(r"[Nn]ode (\S+) now responding"), "up"),
    (re.compile(r"[Nn]ode (\S+) (unexpectedly rebooted).*"), "reboot"),
    # a line that says why slurmctld is about to drain the node
    (re.compile(r"error: (?:_?\w+: )?(Node (\S+) (?:has|appears to have) .+)$"), "why"),
)


def node_events(text: str) -> list[SlurmNode]:
    """Nodes a slurmctld log leaves drained or down (the last change of each wins), with the
    reason the log gives: a log pasted alone still says which node is sick and why."""
    state: dict[str, tuple[str, tuple[str, ...], str, datetime | None]] = {}
    why: dict[str, str] = {}
    for line in text.split("\n"):
        if "ode" not in line:
            continue
        ts = _TS.match(line.strip())
        when = slurm.parse_time(ts.group(1)) if ts else None
        for rx, what in _NODE_EVENTS:
            m = rx.search(line)
            if not m:
                continue
            if what == "why":
                why[m.group(2)] = m.group(1).strip()
                break
            for node in expand(m.group(1).rstrip(",")):
                prev = state.get(node)
                if what == "state":
                    word = m.group(2).upper()
                    if m.lastindex == 3:  # the reason slurmctld sets with the state
                        why[node] = m.group(3).strip()
                    if word.startswith("INVAL"):  # registration refused: drained, INVALID_REG
                        state[node] = ("IDLE", ("DRAIN", "INVALID_REG"), why.get(node, ""), when)
                    elif word.startswith("DRAIN"):
                        state[node] = ("IDLE", ("DRAIN",), why.get(node, ""), when)
                    elif word in {"DOWN", "FAIL", "FAILING"}:
                        state[node] = (word, (), why.get(node, ""), when)
                    else:  # RESUME, IDLE, ...: healthy again
                        state.pop(node, None)
                elif what == "reason" and prev:
                    state[node] = (prev[0], prev[1], m.group(2).strip(), when)
                elif what == "down":
                    state[node] = ("DOWN", ("NOT_RESPONDING",), "Not responding", when)
                elif what == "up" and prev and "NOT_RESPONDING" in prev[1]:
                    state.pop(node, None)
                elif what == "reboot":
                    state[node] = ("DOWN", (), "Node unexpectedly rebooted", when)
            break
    return [
        SlurmNode(name=n, state=s, flags=f, reason=reason or why.get(n, ""), reason_time=t)
        for n, (s, f, reason, t) in state.items()
    ]


# --------------------------------------------------------------------------- row shapes
#
# Where a pasted table ends: a job script that prints ``squeue`` (or sacct, sinfo, scontrol)
# before its own log lines leaves both in one part. A row belongs to the table only when it
# has the table's shape (the header's columns, a job id and a job state, a node list and a
# node state); the first line without it ends the table and the rest is read as a log.

_HOSTLIST = re.compile(r"^[A-Za-z0-9][\w.\-]*(?:\[[\d,\-]+\][\w.\-]*)*(?:,[\w.\-\[\],]+)*$")
_SINFO_STATE_SHAPE = re.compile(r"^[A-Za-z_]+(?:\+[A-Za-z_]+)*[*~#!%$@^-]?$")
_TIMESTAMP = re.compile(r"^(?:\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?|Unknown|None|N/A)$", re.I)
_RULER = re.compile(r"^[\s-]*-{3,}[\s-]*$")
SEFF_KEYS = re.compile(
    r"^(?:Job ID|Array Job ID|Cluster|User/Group|State|Nodes|Cores per node|Cores|"
    r"CPU Utilized|CPU Efficiency|Job Wall-clock time|Memory Utilized|Memory Efficiency|"
    r"GPU[\w /-]*|WARNING):"
)
KEY_VALUE = re.compile(r"^\s*[A-Za-z][\w/:.\[\]-]*=")
ELISION = re.compile(r"^\s*(?:\.{3,}|…|\[\.\.\.\]|<snip>|\(snip\))\s*$")


@lru_cache(maxsize=64)
def _head_words(header: str, sep: str) -> tuple[str, ...]:
    if sep:
        return tuple(h.strip().upper() for h in header.split(sep))
    return tuple(t.upper() for t in _TABLE_TOKEN.findall(header))


_TABLE_TOKEN = re.compile(r"\([^()]*\)|\S+")  # as tables._tokens: a ( ... ) run is one


def _one_row(header: str, ruler: str, line: str) -> dict[str, str] | None:
    """``line`` read under ``header`` (and the sacct ruler, if any); None when the row does
    not have the header's columns: a ``|`` table's count of fields, an aligned table's count
    of values (values with single spaces inside are one)."""
    if "|" in header or "\x1f" in header:
        sep = "\x1f" if "\x1f" in header else "|"
        if line.count(sep) != header.count(sep):
            return None
        return dict(
            zip(_head_words(header, sep), (v.strip() for v in line.split(sep)), strict=True)
        )
    if not ruler:  # the common case first: one value per header word
        heads, toks = _head_words(header, ""), _TABLE_TOKEN.findall(line)
        if len(toks) == len(heads):
            return dict(zip(heads, toks, strict=True))
    rows = parse_table("\n".join(x for x in (header, ruler, line) if x))
    return rows[0] if rows else None


def row_fits(role: str, header: str, line: str, ruler: str = "") -> bool:
    """Whether ``line`` is a row of the ``role`` table under ``header``."""
    row = _one_row(header, ruler, line)
    if row is None:
        return False
    heads = _header_words(header)
    if role in {"squeue", "sacct", "sprio"}:
        if not is_job_id(col(row, "JOBID")):
            return False
        if role == "sprio":
            return _int(col(row, "PRIORITY")) is not None
        return not (heads & _STATE_HEADS) or bool(job_state(col(row, "STATE")))
    if role == "sinfo":
        if "|" not in header and len(line.split()) != len(header.split()):
            return False
        state = row.get("STATE", "")
        nodes = row.get("NODELIST", "") or row.get("HOSTNAMES", "")
        count = row.get("NODES", "")
        return (
            bool(col(row, "PARTITION"))
            and (not state or bool(_SINFO_STATE_SHAPE.match(state)))
            and (not nodes or bool(_HOSTLIST.match(nodes)))
            and (not count or count.isdigit())
        )
    if role == "sinfo_r":
        nodes = row.get("NODELIST", "")
        stamp = row.get("TIMESTAMP")
        return bool(_HOSTLIST.match(nodes)) and (stamp is None or bool(_TIMESTAMP.match(stamp)))
    if role == "df":
        return len(line.split()) == 1 or bool(re.search(r"(?:^|\s)(?:\d{1,3}%|-)(?:\s|$)", line))
    return True


def table_span(role: str, lines: list[str]) -> tuple[int, int]:
    """(first, end) indices into ``lines`` (one part, terminal escapes already removed) of
    the ``role`` table or record dump it starts with: the lines from ``end`` on do not have
    its shape and are no part of it. ``first`` > 0 when a record dump (scontrol) starts
    further down. Blank lines inside a table are kept in it."""
    idx = [i for i, ln in enumerate(lines) if ln.strip()]
    if not idx:
        return 0, len(lines)
    if role in {"scontrol_job", "scontrol_node", "scontrol_partition"}:
        start_rx = {
            "scontrol_job": r"^\s*JobId=\d",
            "scontrol_node": r"^\s*NodeName=\S",
            "scontrol_partition": r"^\s*PartitionName=\S",
        }[role]
        first = next((i for i in idx if re.match(start_rx, lines[i])), idx[0])
        ok = lambda ln: bool(KEY_VALUE.match(ln) or ELISION.match(ln))  # noqa: E731
        return first, _run_end(lines, first, ok)
    first = idx[0]
    if role == "seff":
        return first, _run_end(lines, first, lambda ln: bool(SEFF_KEYS.match(ln.strip())))
    header = lines[first].strip()
    if role in {"squeue", "sacct"} and not (
        is_squeue_header(header) if role == "squeue" else is_sacct_header(header)
    ):
        shape = squeue_row_shape if role == "squeue" else sacct_row_shape
        if not shape(header):
            return 0, len(lines)  # recognised by most of its rows: the whole part
        return first, _run_end(lines, first, shape)
    if role not in {"squeue", "sacct", "sinfo", "sinfo_r", "sprio", "df"}:
        return 0, len(lines)
    raw_header = lines[first].rstrip()
    ruler = ""
    i = first + 1
    if i < len(lines) and _RULER.match(lines[i]):
        ruler = lines[i].rstrip()
        i += 1
    for j in range(i, len(lines)):
        ln = lines[j].rstrip()
        if not ln.strip() or (ruler and _RULER.match(ln)):
            continue
        if not row_fits(role, raw_header, ln, ruler):
            return first, j
    return first, len(lines)


def fitting(role: str, text: str) -> str:
    """``text`` (a table with its header first) without the rows that do not have the
    table's shape: no node or job is made of a log line that follows a table."""
    lines = content_lines(text)
    if len(lines) < 2:
        return text
    header = lines[0]
    if not (is_sinfo_r_header(header) if role == "sinfo_r" else is_sinfo_header(header)):
        return text  # sinfo -l's date line first, or a custom layout: read as it is
    ruler = lines[1] if _RULER.match(lines[1]) else ""
    keep = [header] + ([ruler] if ruler else [])
    for ln in lines[1 + bool(ruler) :]:
        if (ruler and _RULER.match(ln)) or row_fits(role, header, ln, ruler):
            keep.append(ln)
    return "\n".join(keep) + "\n"


def _run_end(lines: list[str], first: int, ok) -> int:
    """Index of the first non-blank line from ``first`` on that is not ``ok``."""
    for j in range(first, len(lines)):
        if lines[j].strip() and not ok(lines[j]):
            return j
    return len(lines)
