"""Offline diagnosis of a *bundle*: the directory of files a support engineer gets in a ticket.

Every file is recognised by its name *and* its first KBs (a ``sinfo -R`` table called
``nodes.txt`` is still a ``sinfo -R`` table): squeue / sinfo / sinfo -R / sacct tables
(default, ``-P`` pipe or ``-o`` formats), ``scontrol show job|node|partition`` (one-line
or multi-line), slurm-*.out/.err, slurmctld.log, slurmd.log, journal excerpts, dmesg,
``kubectl get events`` / ``describe pod``, ModelArts job JSON and events, and any other
text as an application log. From them it builds a Snapshot and Artifacts, runs the
engine, and picks the bundle's first red error.

JSON contract (scripts and tests depend on it)::

    {"findings": [{"root_cause", "severity", "subject", "title", "explanation", "remedy",
                   "evidence": [{"file", "line", "text"}]}],
     "first_error": {"file", "line", "text"} | null}
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from cockpit.diagnosis.engine import diagnose, sort_key, subject_label
from cockpit.diagnosis.logscan import decode_line, iter_errors
from cockpit.errors import ParseError, UserError
from cockpit.model import (
    AcctRecord,
    Artifacts,
    Evidence,
    Finding,
    LogText,
    Partition,
    SlurmJob,
    SlurmNode,
    Snapshot,
    TrainingJob,
)
from cockpit.slurm import hostlist

MAX_FILE_BYTES = 64 * 1024 * 1024  # read at most this much of one bundle file
SNIFF = 4096
SKIP_NAMES = {"expected.toml", "readme.md", ".ds_store"}

# Roles of structured (tabular/status) files; everything else is a log.
STRUCTURED = (
    "scontrol_job",
    "sacct",
    "squeue",
    "scontrol_node",
    "scontrol_partition",
    "sinfo_r",
    "sinfo",
    "df",
    "modelarts_job",
)
_LOG_TIER = {"slurmctld": 0, "command": 0, "slurmd": 1, "journal": 1, "dmesg": 1, "events": 0}

_LONG_STATES = {
    "PENDING",
    "RUNNING",
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "OUT_OF_MEMORY",
    "NODE_FAIL",
    "BOOT_FAIL",
    "DEADLINE",
    "PREEMPTED",
    "SUSPENDED",
    "COMPLETING",
    "CONFIGURING",
    "REQUEUED",
}
_SHORT_STATES = {
    "PD": "PENDING",
    "R": "RUNNING",
    "CD": "COMPLETED",
    "F": "FAILED",
    "CA": "CANCELLED",
    "TO": "TIMEOUT",
    "OOM": "OUT_OF_MEMORY",
    "NF": "NODE_FAIL",
    "CG": "COMPLETING",
    "CF": "CONFIGURING",
    "S": "SUSPENDED",
    "PR": "PREEMPTED",
    "BF": "BOOT_FAIL",
}
_JOURNAL = re.compile(rb"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d (\S+) [\w./-]+(?:\[\d+\])?: ", re.M)
_DMESG = re.compile(rb"^\[\s*\d+\.\d+\] ", re.M)
_JOB_IN_TEXT = re.compile(
    rb"StepId=(\d+)|\*\*\* (?:JOB|STEP) (\d+)[ .]|JobId=(\d+)\b|job(?:00)?(\d{3,})\b"
)
_SLURM_OUT = re.compile(r"slurm-(\d+(?:_\d+)?)(?:\.\w+)?$")


@dataclass(frozen=True, slots=True)
class BundleFile:
    """One file of the bundle: ``role`` is a structured kind (squeue, sinfo_r, ...) or ``log``;
    ``kind`` is the log kind the scanner uses; ``subject_id`` the job/node it belongs to."""

    name: str
    path: str
    role: str
    kind: str
    data: bytes
    subject_id: str = ""


@dataclass(frozen=True, slots=True)
class Bundle:
    path: str
    files: tuple[BundleFile, ...]
    snapshot: Snapshot
    artifacts: Artifacts
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FirstError:
    file: str
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class BundleReport:
    bundle: Bundle
    findings: tuple[Finding, ...]
    first_error: FirstError | None
    warnings: tuple[str, ...] = field(default=())

    def to_json(self) -> dict:
        """The documented JSON contract (see module docstring)."""
        return {
            "findings": [
                {
                    "root_cause": f.root_cause,
                    "severity": f.severity,
                    "subject": subject_label(f.subject),
                    "title": f.title,
                    "explanation": f.explanation,
                    "remedy": f.remedy,
                    "evidence": [
                        {"file": e.where, "line": e.line, "text": e.text} for e in f.evidence
                    ],
                }
                for f in self.findings
            ],
            "first_error": (
                {
                    "file": self.first_error.file,
                    "line": self.first_error.line,
                    "text": self.first_error.text,
                }
                if self.first_error
                else None
            ),
        }


# --------------------------------------------------------------------------- recognising files


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _looks_binary(head: bytes) -> bool:
    if not head:
        return False
    if b"\x00" in head[:1024]:
        return True
    bad = sum(1 for b in head[:2048] if b < 9 or 13 < b < 32)
    return bad > len(head[:2048]) * 0.1


def _first_content_line(text: str) -> str:
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("$"):
            return s
    return ""


def sniff(name: str, data: bytes) -> tuple[str, str]:
    """(role, log kind) for one file from its name and first KBs."""
    low = name.lower()
    head = data[:SNIFF]
    text = _text(head)
    first = _first_content_line(text)
    up = first.upper()
    if low.endswith(".json") or head.lstrip()[:1] in (b"{", b"["):
        try:
            obj = json.loads(_text(data))
        except ValueError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("metadata"), dict) and "status" in obj:
            return "modelarts_job", ""
        if isinstance(obj, (dict, list)) and (
            "event" in low or (isinstance(obj, dict) and "events" in obj)
        ):
            return "log", "events"
    if re.match(r"REASON\s+(USER\s+TIMESTAMP\s+)?NODELIST", up):
        return "sinfo_r", ""
    if re.match(r"PARTITION\s+AVAIL\s+TIMELIMIT\s+NODES\s+STATE\s+NODELIST", up):
        return "sinfo", ""
    if re.match(r"JOBID[\s|]+(PARTITION|NAME)", up) or ("squeue" in low and _squeue_like(text)):
        return "squeue", ""
    if re.match(r"JOBID[\s|]+JOBNAME", up) or re.match(r"JOBID\|", up) and "STATE" in up:
        return "sacct", ""
    if re.search(r"^\s*JobId=\d+", text, re.M):
        return "scontrol_job", ""
    if re.search(r"^\s*NodeName=\S+ .*State=", text, re.M) or re.search(
        r"^NodeName=\S+\s*$", text, re.M
    ):
        return "scontrol_node", ""
    if re.search(r"^\s*PartitionName=\S+", text, re.M):
        return "scontrol_partition", ""
    if re.match(r"FILESYSTEM\s+(SIZE|1K-BLOCKS|INODES|1024-BLOCKS)", up):
        return "df", ""
    if "slurmctld" in low or re.search(r"_slurm_rpc_|sched: Allocate JobId", text):
        return "log", "slurmctld"
    if _JOURNAL.search(head):
        return "log", "journal"
    if ("slurmd" in low and "status" not in low) or re.search(
        r"Launching batch job \d+|slurmd version", text
    ):
        return "log", "slurmd"
    if "dmesg" in low or len(_DMESG.findall(head)) >= 2:
        return "log", "dmesg"
    if (
        "event" in low
        or re.match(r"(LAST SEEN|TYPE)\s+(TYPE|REASON)", up)
        or re.search(r"^Events:\s*$", text, re.M)
    ):
        return "log", "events"
    if "squeue" in low and _squeue_like(text):
        return "squeue", ""
    if _SLURM_OUT.search(low):
        return "log", "stderr" if low.endswith(".err") else "stdout"
    if re.match(r"^\s*(#!|#SBATCH)", text) or low.endswith(
        (".sbatch", ".slurm", ".job", ".def", ".yaml", ".cfg")
    ):
        return "script", ""
    return "log", "app"


def _squeue_like(text: str) -> bool:
    for line in text.splitlines()[:20]:
        toks = line.split()
        if (
            len(toks) >= 4
            and re.match(r"^\d+(_[\d\[\]-]+)?$", toks[0])
            and any(t in _LONG_STATES or t in _SHORT_STATES for t in toks[1:6])
        ):
            return True
    return False


def _subject_for(name: str, role: str, kind: str, data: bytes) -> str:
    m = _SLURM_OUT.search(name.lower())
    if m:
        return m.group(1)
    if kind == "journal":
        hosts = {h.decode() for h in _JOURNAL.findall(data[:65536])}
        return hosts.pop() if len(hosts) == 1 else ""
    if kind == "slurmd":
        m = re.search(r"slurmd[-_.]([A-Za-z][\w-]*?)(?:\.log)?$", name)
        return m.group(1) if m and m.group(1) not in {"log", "journal"} else ""
    if kind in {"stdout", "stderr", "app"}:
        ids = {next(g for g in m.groups() if g) for m in _JOB_IN_TEXT.finditer(data[:262144])}
        if len(ids) == 1:
            return ids.pop().decode()
    return ""


# --------------------------------------------------------------------------- table parsers


def _columns(header: str) -> list[tuple[str, int]]:
    return [(m.group(0), m.start()) for m in re.finditer(r"\S+", header)]


def parse_fixed_table(text: str) -> list[dict[str, str]]:
    """A whitespace-aligned table with a header (sinfo, sinfo -R, sacct default, squeue default).

    Columns are cut at the header words' start positions (values like ``Kill task failed``
    keep their spaces); a ``----`` ruler line under the header (sacct) is skipped.
    """
    lines = [
        ln.rstrip("\r")
        for ln in text.splitlines()
        if ln.strip() and not ln.lstrip().startswith("$")
    ]
    if not lines:
        return []
    header, rows = lines[0], lines[1:]
    if rows and re.fullmatch(r"[\s-]+", rows[0]):
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rows[0])]
        names = [header[a:b].strip() or f"col{i}" for i, (a, b) in enumerate(spans)]
        out = []
        for r in rows[1:]:
            out.append(
                {
                    n: r[a : b if i + 1 < len(spans) else None].strip()
                    for i, (n, (a, b)) in enumerate(zip(names, spans, strict=False))
                }
            )
        return out
    cols = _columns(header)
    out = []
    for r in rows:
        rec = {}
        for i, (name, start) in enumerate(cols):
            end = cols[i + 1][1] if i + 1 < len(cols) else None
            # a value may start a little left of its header (right-aligned numbers)
            a = start if i == 0 else _snap_left(r, start)
            b = _snap_left(r, end) if end is not None else None
            rec[name.upper()] = r[a:b].strip()
        out.append(rec)
    return out


def _snap_left(line: str, pos: int) -> int:
    """Move a cut point left to the start of the token it falls into."""
    if pos >= len(line):
        return len(line)
    while pos > 0 and not line[pos - 1].isspace() and not line[pos].isspace():
        pos -= 1
    return pos


def parse_pipe_table(text: str) -> list[dict[str, str]]:
    """``-P``/``|``-separated output with a header row -> dicts keyed by upper-case column."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("$")]
    if not lines:
        return []
    sep = "\x1f" if "\x1f" in lines[0] else "|"
    header = [h.strip().upper() for h in lines[0].split(sep)]
    return [dict(zip(header, (v.strip() for v in ln.split(sep)), strict=False)) for ln in lines[1:]]


def _table(text: str) -> list[dict[str, str]]:
    first = _first_content_line(text)
    return parse_pipe_table(text) if ("|" in first or "\x1f" in first) else parse_fixed_table(text)


def _slurm():
    from cockpit.slurm import parse as slurm

    return slurm


def _state(v: str) -> str:
    v = v.strip().upper().rstrip("+")
    return _SHORT_STATES.get(v, v.split()[0] if v else "")


def parse_squeue_any(text: str) -> list[SlurmJob]:
    """squeue in its default table, a ``-o`` format with a header, ``|``-separated, or headerless rows."""
    s = _slurm()
    jobs: list[SlurmJob] = []
    first = _first_content_line(text).upper()
    if first.startswith("JOBID"):
        for r in _table(text):
            jid = r.get("JOBID", "")
            if not jid:
                continue
            reason = r.get("REASON") or r.get("NODELIST(REASON)", "")
            nodelist = r.get("NODELIST", "")
            if reason.startswith("("):
                reason = reason.strip("()")
            elif "NODELIST(REASON)" in r:
                nodelist, reason = reason, "None"
            jobs.append(
                SlurmJob(
                    job_id=jid,
                    name=r.get("NAME", ""),
                    user=r.get("USER", ""),
                    partition=r.get("PARTITION", "").rstrip("*"),
                    state=_state(r.get("STATE") or r.get("ST", "")),
                    reason=reason or "None",
                    cpus=_int(r.get("CPUS")),
                    node_count=_int(r.get("NODES")),
                    node_list=nodelist,
                    nodes=_expand(nodelist),
                    min_memory_mib=s.parse_mem_mib(r.get("MIN_MEMORY")),
                    time_limit_s=s.parse_duration_s(r.get("TIME_LIMIT")),
                    elapsed_s=s.parse_duration_s(r.get("TIME")),
                    submit_time=s.parse_time(r.get("SUBMIT_TIME")),
                    start_time=s.parse_time(r.get("START_TIME")),
                    end_time=s.parse_time(r.get("END_TIME")),
                    work_dir=r.get("WORK_DIR", ""),
                )
            )
        return jobs
    for line in (
        text.splitlines()
    ):  # headerless: id partition name [user] state time nodes (reason)|nodelist
        toks = line.split()
        if len(toks) < 4 or not re.match(r"^\d+(_\d+)?$", toks[0]):
            continue
        si = next(
            (i for i, t in enumerate(toks[1:], 1) if t in _LONG_STATES or t in _SHORT_STATES), None
        )
        if si is None:
            continue
        m = re.search(r"\(([^()]*)\)\s*$", line)
        reason = m.group(1) if m else "None"
        nodelist = "" if m else toks[-1]
        if reason == "launch failed requeued held":
            reason = "launch_failed_requeued_held"
        jobs.append(
            SlurmJob(
                job_id=toks[0],
                name=toks[2] if si > 2 else "",
                user=toks[3] if si > 3 else "",
                partition=toks[1],
                state=_state(toks[si]),
                reason=reason,
                node_list=nodelist,
                nodes=_expand(nodelist),
            )
        )
    return jobs


def _int(v: str | None) -> int | None:
    try:
        return int(v) if v not in (None, "") else None
    except ValueError:
        return None


def _expand(nodelist: str) -> tuple[str, ...]:
    if not nodelist or nodelist.startswith("("):
        return ()
    try:
        return hostlist.expand(nodelist)
    except Exception:  # noqa: BLE001 - a bad hostlist in a ticket file is just not expanded
        return (nodelist,)


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
    "maint": ("MAINT", ()),
    "unk": ("UNKNOWN", ()),
    "comp": ("COMPLETING", ()),
}


def _sinfo_state(v: str) -> tuple[str, tuple[str, ...]]:
    v = v.strip().lower()
    star = v.endswith("*")
    v = v.rstrip("*~#!%$@^-")
    base, flags = _SINFO_STATE.get(v, (v.upper() or "UNKNOWN", ()))
    return base, flags + (("NOT_RESPONDING",) if star else ())


def parse_sinfo(text: str) -> tuple[list[SlurmNode], list[Partition]]:
    """sinfo default table -> nodes (state only) and partitions (name, nodes)."""
    nodes: dict[str, SlurmNode] = {}
    parts: dict[str, list[str]] = {}
    for r in _table(text):
        pname = r.get("PARTITION", "").rstrip("*")
        names = _expand(r.get("NODELIST", ""))
        base, flags = _sinfo_state(r.get("STATE", ""))
        parts.setdefault(pname, []).extend(names)
        for n in names:
            prev = nodes.get(n)
            nodes[n] = SlurmNode(
                name=n,
                state=base,
                flags=flags,
                partitions=((prev.partitions if prev else ()) + (pname,)),
            )
    partitions = [
        Partition(name=p, nodes=tuple(ns), total_nodes=len(ns)) for p, ns in parts.items() if p
    ]
    return list(nodes.values()), partitions


def parse_sinfo_r(text: str) -> list[SlurmNode]:
    """``sinfo -R`` (REASON [USER TIMESTAMP] NODELIST) -> drained nodes with their reasons."""
    s = _slurm()
    out = []
    for r in _table(text):
        reason = r.get("REASON", "")
        for n in _expand(r.get("NODELIST", "")):
            out.append(
                SlurmNode(
                    name=n,
                    state="DOWN" if re.search(r"Not responding|reboot", reason) else "IDLE",
                    flags=("DRAIN",)
                    if not re.search(r"Not responding", reason)
                    else ("NOT_RESPONDING",),
                    reason=reason,
                    reason_user=r.get("USER", ""),
                    reason_time=s.parse_time(r.get("TIMESTAMP")) if r.get("TIMESTAMP") else None,
                )
            )
    return out


def parse_sacct_any(text: str) -> list[AcctRecord]:
    """sacct default table or ``-P`` output with a header -> AcctRecord rows."""
    s = _slurm()
    out = []
    for r in _table(text):
        jid = r.get("JOBID", "")
        if not jid or jid.startswith("-"):
            continue
        job, _, step = jid.partition(".")
        state = r.get("STATE", "")
        by = ""
        m = re.match(r"(\w+) by (\S+)", state)
        if m:
            state, by = m.group(1), m.group(2)
        req = r.get("REQMEM", "")
        out.append(
            AcctRecord(
                job_id=job,
                step=step,
                job_name=r.get("JOBNAME", ""),
                partition=r.get("PARTITION", ""),
                state=_state(state),
                exit_code=s.parse_exit_code(r.get("EXITCODE")),
                req_mem_mib=s.parse_mem_mib(req.rstrip("?nc") if req else None),
                max_rss_mib=s.parse_mem_mib(r.get("MAXRSS")),
                elapsed_s=s.parse_duration_s(r.get("ELAPSED")),
                timelimit_s=s.parse_duration_s(r.get("TIMELIMIT")),
                node_list=r.get("NODELIST", ""),
                reason=r.get("REASON", ""),
                cancelled_by=by,
                placeholder=req.endswith("?"),
                user=r.get("USER", ""),
            )
        )
    return out


# --------------------------------------------------------------------------- loading


def _read_files(path: str) -> list[tuple[str, str, bytes]]:
    if not os.path.isdir(path):
        raise UserError(f"{path}: not a directory (a bundle is a directory of files)")
    out = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for fn in sorted(files):
            if fn.lower() in SKIP_NAMES or fn.startswith("."):
                continue
            full = os.path.join(root, fn)
            try:
                with open(full, "rb") as fh:
                    data = fh.read(MAX_FILE_BYTES)
            except OSError:
                continue
            out.append((os.path.relpath(full, path), full, data))
    return out


def load_bundle(path: str) -> Bundle:
    """Read and recognise every file of the bundle directory; build Snapshot + Artifacts.

    Raises UserError if ``path`` is not a directory. Files that fail to parse become
    warnings (and are still scanned as logs).
    """
    warnings: list[str] = []
    files: list[BundleFile] = []
    for name, full, data in _read_files(path):
        if _looks_binary(data[:SNIFF]):
            warnings.append(f"{name}: binary, skipped")
            continue
        role, kind = sniff(name, data)
        files.append(
            BundleFile(name, full, role, kind or "app", data, _subject_for(name, role, kind, data))
        )
    s = _slurm()
    jobs: dict[str, SlurmJob] = {}
    nodes: dict[str, SlurmNode] = {}
    parts: dict[str, Partition] = {}
    acct: list[AcctRecord] = []
    tjobs: list[TrainingJob] = []
    commands: dict[str, str] = {}
    for f in files:
        text = _text(f.data)
        try:
            if f.role == "squeue":
                for j in parse_squeue_any(text):
                    jobs.setdefault(j.job_id, j)
            elif f.role == "scontrol_job":
                got, w = s.parse_scontrol_job(text)
                warnings.extend(f"{f.name}: {x}" for x in w)
                for j in got:
                    jobs[j.job_id] = j  # scontrol has more detail than squeue
            elif f.role == "scontrol_node":
                got, w = s.parse_scontrol_nodes(text)
                warnings.extend(f"{f.name}: {x}" for x in w)
                for n in got:
                    nodes[n.name] = n
            elif f.role == "scontrol_partition":
                got, w = s.parse_scontrol_partitions(text)
                for p in got:
                    parts[p.name] = p
            elif f.role == "sinfo":
                ns, ps = parse_sinfo(text)
                for n in ns:
                    nodes.setdefault(n.name, n)
                for p in ps:
                    parts.setdefault(p.name, p)
            elif f.role == "sinfo_r":
                for n in parse_sinfo_r(text):
                    prev = nodes.get(n.name)
                    nodes[n.name] = (
                        replace(
                            prev,
                            reason=n.reason,
                            reason_user=n.reason_user,
                            reason_time=n.reason_time,
                            flags=tuple(dict.fromkeys(prev.flags + n.flags)),
                        )
                        if prev
                        else n
                    )
            elif f.role == "sacct":
                acct.extend(parse_sacct_any(text))
            elif f.role == "df":
                commands[f"df {f.name}"] = text
            elif f.role == "modelarts_job":
                tjobs.append(_training_job(f, files))
        except (ParseError, ValueError, KeyError) as exc:
            warnings.append(f"{f.name}: {exc}")
    # a node's journal/slurmd log is attributed to the node only if that node is known
    logs = []
    for f in files:
        if f.role in {"script", "modelarts_job"}:
            continue
        sid = f.subject_id
        logs.append(
            LogText(
                name=f.name,
                kind=f.kind if f.role == "log" else "command",
                data=f.data,
                path=f.path,
                subject_id=sid,
            )
        )
    taken = _bundle_time(files)
    kind = "modelarts" if tjobs and not (jobs or nodes) else "slurm"
    snap = Snapshot(
        source=os.path.basename(os.path.abspath(path)),
        kind=kind,
        taken_at=taken,
        jobs=tuple(jobs.values()),
        nodes=tuple(nodes.values()),
        partitions=tuple(parts.values()),
        training_jobs=tuple(tjobs),
        warnings=tuple(warnings),
    )
    # structured files are evidence through the rules, not logs to scan
    arts = Artifacts(
        acct=tuple(acct), logs=tuple(lt for lt in logs if _is_log(lt, files)), commands=commands
    )
    return Bundle(
        path=path, files=tuple(files), snapshot=snap, artifacts=arts, warnings=tuple(warnings)
    )


def _is_log(lt: LogText, files: list[BundleFile]) -> bool:
    return lt.kind != "command"


def _training_job(f: BundleFile, files: list[BundleFile]) -> TrainingJob:
    from cockpit.modelarts.parse import parse_training_job

    return parse_training_job(json.loads(_text(f.data)))


def _bundle_time(files: list[BundleFile]) -> datetime:
    """Bundles are old: 'now' is the newest ISO timestamp seen in the files (else the epoch)."""
    best = None
    for f in files:
        for m in re.finditer(rb"(20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d)", f.data[:262144]):
            try:
                t = datetime.fromisoformat(m.group(1).decode()).replace(tzinfo=UTC)
            except ValueError:
                continue
            if best is None or t > best:
                best = t
    return best or datetime(1970, 1, 1, tzinfo=UTC)


# --------------------------------------------------------------------------- diagnosis


def _locate(ev: Evidence, f: Finding, by_role: dict[str, list[BundleFile]]) -> Evidence:
    """Point scheduler evidence (``squeue``, ``scontrol show node``) at the bundle file and line."""
    if ev.line is not None:
        return ev
    role = {
        "squeue": ("squeue", "scontrol_job"),
        "scontrol show node": ("sinfo_r", "scontrol_node", "sinfo"),
        "sacct": ("sacct",),
        "scontrol show partition": ("scontrol_partition", "sinfo"),
        "scontrol show job": ("scontrol_job", "squeue"),
    }.get(ev.where, ())
    needle = f.subject.id
    if ev.where == "sacct" and ev.text:
        needle = ev.text.split()[0]
    for r in role:
        for bf in by_role.get(r, ()):
            if bf.role == "scontrol_job" and f.subject.kind == "job":
                got = _scontrol_job_line(bf, f.subject.id, ev.tier)
                if got is not None:
                    return got
                continue
            node_hit = None
            for i, line in enumerate(_text(bf.data).splitlines(), 1):
                if not _mentions(line, needle, bf.role):
                    continue
                if "Reason=" in line or "JobState=" in line or bf.role != "scontrol_job":
                    return Evidence(
                        bf.name, decode_line(line.encode()), line=i, path=bf.path, tier=ev.tier
                    )
                node_hit = node_hit or (i, line)
            if node_hit:
                return Evidence(bf.name, node_hit[1], line=node_hit[0], path=bf.path, tier=ev.tier)
    return ev


def _scontrol_job_line(bf: BundleFile, job_id: str, tier: int) -> Evidence | None:
    """The JobState line of the record for ``job_id`` (``A_T`` matches ArrayJobId=A ArrayTaskId=T)."""
    arr, _, task = job_id.partition("_")
    want = [rf"JobId={re.escape(job_id)}\b"] + (
        [rf"ArrayJobId={arr}\b.*ArrayTaskId={task}\b"] if task else []
    )
    lines = _text(bf.data).splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("JobId=") and any(re.search(w, line) for w in want):
            for j in range(i, min(i + 40, len(lines))):
                if j > i and lines[j].strip().startswith("JobId="):
                    break
                if "JobState=" in lines[j]:
                    return Evidence(
                        bf.name, decode_line(lines[j].encode()), line=j + 1, path=bf.path, tier=tier
                    )
    return None


def _mentions(line: str, needle: str, role: str) -> bool:
    if role in {"sinfo_r", "sinfo"}:
        toks = line.split()
        return bool(toks) and needle in _expand(toks[-1])
    return re.search(rf"(?<![\w.]){re.escape(needle)}(?![\w])", line) is not None


def _pick_first_error(top: Finding | None, bundle: Bundle) -> FirstError | None:
    """The line that carries the top finding's cause: logs before status tables, then the evidence."""
    if top is None or top.root_cause == "no_failure":
        return None
    role_rank = {r: i for i, r in enumerate(STRUCTURED)}
    cands = []
    for bf in bundle.files:
        if bf.role in {"script", "modelarts_job"}:
            continue
        kind = bf.kind if bf.role == "log" else "command"
        scan_kind = kind if kind in {"slurmctld", "slurmd", "events"} else "app"
        for n, h in enumerate(iter_errors(bf.data, kind=scan_kind)):
            if n > 500:
                break
            if h.strong and h.label == top.root_cause:
                structured = bf.role != "log"
                cands.append(
                    (
                        (structured, role_rank.get(bf.role, 0), _LOG_TIER.get(kind, 2), bf.name),
                        bf,
                        h,
                    )
                )
                break
    if cands:
        cands.sort(key=lambda c: c[0])
        _, bf, h = cands[0]
        return FirstError(bf.name, h.line, h.text)
    for e in top.evidence:
        if e.line is not None:
            return FirstError(e.where, e.line, e.text)
    return None


def diagnose_bundle(path: str, now: datetime | None = None) -> BundleReport:
    """Load the bundle at ``path``, run the engine, pick the first red error.

    ``now`` defaults to the newest timestamp inside the bundle (tickets are old). Raises
    UserError if ``path`` is not a readable directory.
    """
    bundle = load_bundle(path)
    findings = diagnose(bundle.snapshot, bundle.artifacts, now=now or bundle.snapshot.taken_at)
    by_role: dict[str, list[BundleFile]] = {}
    for bf in bundle.files:
        by_role.setdefault(bf.role, []).append(bf)
    located = [
        replace(f, evidence=tuple(_locate(e, f, by_role) for e in f.evidence)) for f in findings
    ]
    located.sort(key=sort_key)
    top = located[0] if located else None
    return BundleReport(
        bundle=bundle,
        findings=tuple(located),
        first_error=_pick_first_error(top, bundle),
        warnings=bundle.warnings,
    )
