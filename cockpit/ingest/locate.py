"""Pointing a bundle's findings at file lines: the table row behind scheduler evidence
(``squeue``, ``sacct``, ``scontrol show node``), each evidence line as the file spells it,
and the bundle's first red error (the first line that carries the top finding's cause)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from cockpit.diagnosis.logscan import decode_line, iter_errors
from cockpit.ingest.slurm_text import expand
from cockpit.ingest.sniff import STRUCTURED, scan_kind
from cockpit.model import Evidence, Finding, LogText

if TYPE_CHECKING:
    from cockpit.ingest.bundle import BundleFile


@dataclass(frozen=True, slots=True)
class FirstError:
    """The bundle's first red error: file name as the operator knows it, 1-based line."""

    file: str
    line: int
    text: str


# evidence "where" -> roles of the bundle parts that hold it, most telling first
_ROLES = {
    # the record a job came from: scontrol's wins over a squeue row (records.py)
    "squeue": ("scontrol_job", "squeue"),
    "scontrol show node": ("sinfo_r", "scontrol_node", "sinfo"),
    "sacct": ("sacct", "seff"),
    "scontrol show partition": ("scontrol_partition", "sinfo"),
    "scontrol show job": ("scontrol_job", "squeue"),
}
_LOG_TIER = {"slurmctld": 0, "command": 0, "slurmd": 1, "journal": 1, "dmesg": 1, "events": 0}
MAX_HITS = 500  # error lines looked at per part for the top cause's line


def _lines(f: BundleFile) -> list[str]:
    return f.data.decode("utf-8", "replace").split("\n")


def locate(f: Finding, files: Sequence[BundleFile]) -> Finding:
    """``f`` with each evidence line pointing at the bundle file and line that holds it,
    and log evidence spelled as in the file (a ``docker compose`` prefix kept)."""
    out: dict[tuple, Evidence] = {}
    for e in f.evidence:
        got = _locate(e, f, files)
        out.setdefault((got.where, got.line, got.text), got)  # two facts, one line: once
    return replace(f, evidence=tuple(out.values()))


def _locate(ev: Evidence, f: Finding, files: Sequence[BundleFile]) -> Evidence:
    if ev.line is not None:
        text = file_line_text(files, ev.where, ev.line)
        return ev if text is None or text == ev.text else replace(ev, text=text)
    needle = f.subject.id
    if ev.where == "sacct" and ev.text:
        needle = ev.text.split()[0]
    for role in _ROLES.get(ev.where, ()):
        for bf in files:
            if bf.role != role:
                continue
            if bf.role == "scontrol_job" and f.subject.kind == "job":
                got = _scontrol_job_line(bf, f.subject.id, ev.tier)
                if got is not None:
                    return got
                continue
            node_hit = None
            for i, line in enumerate(_lines(bf)):
                if not _mentions(line, needle, bf.role):
                    continue
                if "Reason=" in line or "JobState=" in line or bf.role != "scontrol_job":
                    return _ev(bf, i, line, ev.tier)
                node_hit = node_hit or (i, line)
            if node_hit:
                return _ev(bf, *node_hit, ev.tier)
    if ev.where == "scontrol show node" and f.subject.kind == "node":
        return _log_line_of_node(f.subject.id, files, ev)
    return ev


_NODE_CHANGE = re.compile(r"DRAIN|DOWN|not responding|reason set|has low|rebooted", re.I)


def _log_line_of_node(node: str, files: Sequence[BundleFile], ev: Evidence) -> Evidence:
    """A node known only from a slurmctld log: the line that changed its state."""
    for bf in files:
        if bf.kind != "slurmctld" or not bf.complete:
            continue
        for i, line in enumerate(_lines(bf)):
            if _mentions(line, node, "log") and _NODE_CHANGE.search(line):
                return _ev(bf, i, line, ev.tier)
    return ev


def _ev(bf: BundleFile, i: int, line: str, tier: int) -> Evidence:
    return Evidence(bf.name, decode_line(line.encode()), line=bf.line + i, path=bf.path, tier=tier)


def _scontrol_job_line(bf: BundleFile, job_id: str, tier: int) -> Evidence | None:
    """The JobState line of the record for ``job_id`` (``A_T`` matches ArrayJobId=A
    ArrayTaskId=T)."""
    arr, _, task = job_id.partition("_")
    want = [rf"JobId={re.escape(job_id)}\b"] + (
        [rf"ArrayJobId={arr}\b.*ArrayTaskId={task}\b"] if task else []
    )
    lines = _lines(bf)
    for i, line in enumerate(lines):
        if line.strip().startswith("JobId=") and any(re.search(w, line) for w in want):
            for j in range(i, min(i + 40, len(lines))):
                if j > i and lines[j].strip().startswith("JobId="):
                    break
                if "JobState=" in lines[j]:
                    return _ev(bf, j, lines[j], tier)
    return None


def _mentions(line: str, needle: str, role: str) -> bool:
    if role in {"sinfo_r", "sinfo"}:
        toks = line.split()
        return bool(toks) and needle in expand(toks[-1])
    return re.search(rf"(?<![\w.]){re.escape(needle)}(?![\w])", line) is not None


def file_line_text(files: Sequence[BundleFile], name: str, line: int) -> str | None:
    """Line ``line`` of file ``name`` as the file has it (None when no part holds it: past
    the head of a large file)."""
    for bf in files:
        i = line - bf.line
        if bf.name != name or i < 0:
            continue
        lines = bf.data.split(b"\n")
        # the last piece is what follows the final newline: a line of its own only when the
        # part holds the whole file's end, not a head cut short
        held = len(lines) - (0 if bf.complete and not bf.data.endswith(b"\n") else 1)
        if i < held:
            return decode_line(lines[i])
    return None


def _view(bf: BundleFile) -> LogText:
    if bf.log is not None:
        return bf.log
    return LogText(bf.name, "command", bf.data, bf.path, base_offset=bf.offset, base_line=bf.line)


def first_error(top: Finding | None, files: Sequence[BundleFile]) -> FirstError | None:
    """The line that carries the top finding's cause: logs before status tables, scheduler
    logs before node logs before program output; else the top finding's first evidence
    line."""
    if top is None or top.root_cause == "no_failure":
        return None
    rank = {r: i for i, r in enumerate(STRUCTURED)}
    cands = []
    for bf in files:
        if bf.role in {"script", "modelarts_job"}:
            continue
        lt = _view(bf)
        for n, h in enumerate(iter_errors(lt.data, kind=scan_kind(lt.kind))):
            if n > MAX_HITS:
                break
            if h.strong and h.label == top.root_cause:
                line = lt.file_line(h.line) or h.line
                key = (bf.role != "log", rank.get(bf.role, 0), _LOG_TIER.get(lt.kind, 2))
                cands.append(((*key, bf.name, line), bf, line, h.text))
                break
    if cands:
        _, bf, line, text = min(cands, key=lambda c: c[0])
        return FirstError(bf.name, line, file_line_text(files, bf.name, line) or text)
    for e in top.evidence:
        if e.line is not None:
            return FirstError(e.where, e.line, e.text)
    return None


def unrecognised_error(files: Sequence[BundleFile]) -> FirstError | None:
    """When no cause is recognised: the first error-looking line of any log, in file order,
    so the operator still sees where to look."""
    for bf in files:
        if bf.role != "log" or bf.log is None:
            continue
        for h in iter_errors(bf.log.data, kind=scan_kind(bf.log.kind)):
            line = bf.log.file_line(h.line) or h.line
            return FirstError(bf.name, line, file_line_text(files, bf.name, line) or h.text)
    return None
