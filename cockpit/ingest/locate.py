"""Pointing a bundle's findings at file lines: the table row behind scheduler evidence
(``squeue``, ``sacct``, ``scontrol show node``), each evidence line as the file spells it,
and the bundle's first red error (the first line that carries the top finding's cause)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from cockpit.diagnosis.logscan import announced_cause, decode_line, iter_errors
from cockpit.diagnosis.startup_log import line_time
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


def locate(f: Finding, files: Sequence[BundleFile]) -> Finding:
    """``f`` with each evidence line pointing at the bundle file and line that holds it,
    and log evidence spelled as in the file (a ``docker compose`` prefix kept).

    Lines are indexed once per bundle by the ids and names they mention (:class:`_Index`),
    so pointing N findings at their lines costs about N lookups, not N scans of the bundle."""
    idx = _index(files)
    out: dict[tuple, Evidence] = {}
    for e in f.evidence:
        got = _locate(e, f, idx)
        out.setdefault((got.where, got.line, got.text), got)  # two facts, one line: once
    return replace(f, evidence=tuple(out.values()))


def _locate(ev: Evidence, f: Finding, idx: _Index) -> Evidence:
    if ev.line is not None:
        text = idx.line_text(ev.where, ev.line)
        return ev if text is None or text == ev.text else replace(ev, text=text, quoted=True)
    needle = f.subject.id
    if ev.where == "sacct" and ev.text:
        needle = ev.text.split()[0]
    for role in _ROLES.get(ev.where, ()):
        if role == "scontrol_job" and f.subject.kind == "job":
            hit = idx.scontrol_job(f.subject.id)
        else:
            hit = idx.mention(role, needle)
        if hit is not None:
            bf, i = hit
            return _ev(bf, i, idx.lines(bf)[i], ev.tier)
    if ev.where == "scontrol show node" and f.subject.kind == "node":
        return _log_line_of_node(f.subject.id, idx, ev)
    return ev


_NODE_CHANGE = re.compile(r"DRAIN|DOWN|not responding|reason set|has low|rebooted", re.I)
# where a needle may start (as _mentions reads it) and the run of characters it may span
_START = re.compile(r"(?<![\w.])(?=\w)")
_RUN = re.compile(r"[\w.\-]*")
_INDEXABLE = re.compile(r"\w[\w.\-]*")
_JOBID = re.compile(r"JobId=(\S*)")
_ARRAY = re.compile(r"ArrayJobId=(\d+)\b.*?ArrayTaskId=(\d+)\b")
_WORD = re.compile(r"\w")


def _tokens(line: str) -> set[str]:
    """Every needle ``_mentions(line, needle, role)`` holds for (non-sinfo roles), when the
    needle is made of word characters, dots and dashes and starts with a word character."""
    out: set[str] = set()
    for m in _START.finditer(line):
        p = m.start()
        run = _RUN.match(line, p).group()  # type: ignore[union-attr]
        for k in range(1, len(run) + 1):
            if k == len(run) or not _WORD.match(run[k]):
                out.add(run[:k])
    return out


def _prefixes_at_boundary(s: str) -> list[str]:
    """``s[:k]`` for each k where ``re.search(rf"JobId={s[:k]}\b", ...)`` would hold."""
    out = []
    for k in range(1, len(s) + 1):
        left = bool(_WORD.match(s[k - 1]))
        right = k < len(s) and bool(_WORD.match(s[k]))
        if left != right:
            out.append(s[:k])
    return out


class _Index:
    """A bundle's lines looked up by what they mention, built lazily, once per bundle."""

    def __init__(self, files: Sequence[BundleFile]) -> None:
        self.files = files
        self._lines: dict[int, list[str]] = {}
        self._raw: dict[int, list[bytes]] = {}
        self._roles: dict[str, dict[str, tuple[BundleFile, int]]] = {}
        self._sjobs: dict[str, tuple[BundleFile, int]] | None = None
        self._nodes: dict[str, tuple[BundleFile, int]] | None = None
        self._names: dict[str, list[BundleFile]] | None = None

    def lines(self, bf: BundleFile) -> list[str]:
        got = self._lines.get(id(bf))
        if got is None:
            got = self._lines[id(bf)] = bf.data.decode("utf-8", "replace").split("\n")
        return got

    def mention(self, role: str, needle: str) -> tuple[BundleFile, int] | None:
        """The first part of ``role`` whose lines mention ``needle``, and the line (in a
        ``scontrol_job`` part, a Reason=/JobState= line wins over an earlier mention)."""
        if not _INDEXABLE.fullmatch(needle) and role not in {"sinfo_r", "sinfo"}:
            return self._scan(role, needle)
        table = self._roles.get(role)
        if table is None:
            table = self._roles[role] = self._build(role)
        return table.get(needle)

    def _build(self, role: str) -> dict[str, tuple[BundleFile, int]]:
        table: dict[str, tuple[BundleFile, int]] = {}
        for bf in self.files:
            if bf.role != role:
                continue
            first: dict[str, int] = {}
            pref: dict[str, int] = {}
            for i, line in enumerate(self.lines(bf)):
                if role in {"sinfo_r", "sinfo"}:
                    toks = line.split()
                    keys = set(expand(toks[-1])) if toks else set()
                else:
                    keys = _tokens(line)
                good = "Reason=" in line or "JobState=" in line or role != "scontrol_job"
                for k in keys:
                    first.setdefault(k, i)
                    if good:
                        pref.setdefault(k, i)
            for k, i in first.items():
                if k not in table:
                    table[k] = (bf, pref.get(k, i))
        return table

    def _scan(self, role: str, needle: str) -> tuple[BundleFile, int] | None:
        """The unindexed way, for needles the index does not hold (``42_[1-3]``)."""
        for bf in self.files:
            if bf.role != role:
                continue
            node_hit = None
            for i, line in enumerate(self.lines(bf)):
                if not _mentions(line, needle, bf.role):
                    continue
                if "Reason=" in line or "JobState=" in line or bf.role != "scontrol_job":
                    return bf, i
                node_hit = node_hit or i
            if node_hit is not None:
                return bf, node_hit
        return None

    def scontrol_job(self, job_id: str) -> tuple[BundleFile, int] | None:
        """The JobState line of the first ``scontrol show job`` record for ``job_id``."""
        if self._sjobs is None:
            self._sjobs = {}
            for bf in self.files:
                if bf.role == "scontrol_job":
                    for k, j in _scontrol_job_lines(self.lines(bf)).items():
                        self._sjobs.setdefault(k, (bf, j))
        return self._sjobs.get(job_id)

    def node_change(self, node: str) -> tuple[BundleFile, int] | None:
        if self._nodes is None:
            self._nodes = {}
            for bf in self.files:
                if bf.kind != "slurmctld" or not bf.complete:
                    continue
                for i, line in enumerate(self.lines(bf)):
                    if _NODE_CHANGE.search(line):
                        for k in _tokens(line):
                            self._nodes.setdefault(k, (bf, i))
        if not _INDEXABLE.fullmatch(node):
            for bf in self.files:
                if bf.kind == "slurmctld" and bf.complete:
                    for i, line in enumerate(self.lines(bf)):
                        if _mentions(line, node, "log") and _NODE_CHANGE.search(line):
                            return bf, i
            return None
        return self._nodes.get(node)

    def line_text(self, name: str, line: int) -> str | None:
        if self._names is None:
            self._names = {}
            for bf in self.files:
                self._names.setdefault(bf.name, []).append(bf)
        parts = self._names.get(name, [])
        # parts of one file come in line order: try the one that starts at or before the line
        lo, hi = 0, len(parts)
        while lo < hi:
            mid = (lo + hi) // 2
            if parts[mid].line <= line:
                lo = mid + 1
            else:
                hi = mid
        order = ([parts[lo - 1]] if lo else []) + parts
        for bf in order:
            got = self._held_line(bf, line)
            if got is not None:
                return got
        return None

    def _held_line(self, bf: BundleFile, line: int) -> str | None:
        i = line - bf.line
        if i < 0:
            return None
        lines = self._raw.get(id(bf))
        if lines is None:
            lines = self._raw[id(bf)] = bf.data.split(b"\n")
        # the last piece is what follows the final newline: a line of its own only when the
        # part holds the whole file's end, not a head cut short
        held = len(lines) - (0 if bf.complete and not bf.data.endswith(b"\n") else 1)
        return decode_line(lines[i]) if i < held else None


_CACHE: list = []  # [(files, _Index)]: the bundle being located, one at a time


def _index(files: Sequence[BundleFile]) -> _Index:
    if _CACHE and _CACHE[0][0] is files:
        return _CACHE[0][1]
    idx = _Index(files)
    _CACHE[:] = [(files, idx)]
    return idx


def _forget() -> None:
    _CACHE.clear()


def _scontrol_job_lines(lines: list[str]) -> dict[str, int]:
    """job id (``A_T`` too, from ArrayJobId=A ArrayTaskId=T) -> the JobState line of the
    first record for it that has one."""
    out: dict[str, int] = {}
    for i, line in enumerate(lines):
        if not line.strip().startswith("JobId="):
            continue
        keys = [k for m in _JOBID.finditer(line) for k in _prefixes_at_boundary(m.group(1))]
        arr = _ARRAY.search(line)
        if arr:
            keys.append(f"{arr.group(1)}_{arr.group(2)}")
        keys = [k for k in keys if k not in out]
        if not keys:
            continue
        for j in range(i, min(i + 40, len(lines))):
            if j > i and lines[j].strip().startswith("JobId="):
                break
            if "JobState=" in lines[j]:
                for k in keys:
                    out.setdefault(k, j)
                break
    return out


def _log_line_of_node(node: str, idx: _Index, ev: Evidence) -> Evidence:
    """A node known only from a slurmctld log: the line that changed its state."""
    hit = idx.node_change(node)
    if hit is None:
        return ev
    bf, i = hit
    return _ev(bf, i, idx.lines(bf)[i], ev.tier)


def _ev(bf: BundleFile, i: int, line: str, tier: int) -> Evidence:
    line = decode_line(line.encode())
    return Evidence(bf.name, line, line=bf.line + i, path=bf.path, tier=tier, quoted=True)


def _mentions(line: str, needle: str, role: str) -> bool:
    if role in {"sinfo_r", "sinfo"}:
        toks = line.split()
        return bool(toks) and needle in expand(toks[-1])
    return re.search(rf"(?<![\w.]){re.escape(needle)}(?![\w])", line) is not None


def file_line_text(files: Sequence[BundleFile], name: str, line: int) -> str | None:
    """Line ``line`` of file ``name`` as the file has it (None when no part holds it: past
    the head of a large file)."""
    return _index(files).line_text(name, line)


def _view(bf: BundleFile) -> LogText:
    if bf.log is not None:
        return bf.log
    return LogText(bf.name, "command", bf.data, bf.path, base_offset=bf.offset, base_line=bf.line)


def first_error(top: Finding | None, files: Sequence[BundleFile]) -> FirstError | None:
    """The line that carries the top finding's cause: logs before status tables, scheduler
    logs before node logs before program output; else the top finding's first evidence
    line. The last look-up of a bundle: its line index is dropped after it."""
    try:
        return _first_error(top, files)
    finally:
        _forget()


def _first_error(top: Finding | None, files: Sequence[BundleFile]) -> FirstError | None:
    if top is None or top.root_cause == "no_failure":
        return None
    rank = {r: i for i, r in enumerate(STRUCTURED)}
    cands = []
    for bf in files:
        if bf.role in {"script", "modelarts_job"}:
            continue
        lt = _view(bf)
        kind = scan_kind(lt.kind)
        for n, h in enumerate(iter_errors(lt.data, kind=kind)):
            if n > MAX_HITS:
                break
            if h.strong and h.label == top.root_cause:
                # the line the scanner's first red error is (a summary names its cause below)
                cause = announced_cause(lt.data, h, kind=kind)
                h = cause if cause.label == top.root_cause else h
                line = lt.file_line(h.line) or h.line
                key = (bf.role != "log", rank.get(bf.role, 0), _LOG_TIER.get(lt.kind, 2))
                cands.append(((*key, bf.name, line), bf, line, h.text))
                break
    if cands:
        _, bf, line, text = _earliest(cands)
        return FirstError(bf.name, line, file_line_text(files, bf.name, line) or text)
    for e in top.evidence:
        if e.line is not None:
            return FirstError(e.where, e.line, e.text)
    return None


# CANN's plog and error-message stamp: 2025-07-15-12:45:31.202.787
_CANN_TIME = re.compile(r"\b(\d{4}-\d\d-\d\d)-(\d\d:\d\d:\d\d)\.(\d{3})\.(\d{3})\b")


def _when(text: str) -> datetime | None:
    m = _CANN_TIME.search(text)
    if m is not None:
        return datetime.fromisoformat(f"{m[1]}T{m[2]}.{m[3]}{m[4]}+00:00")
    return line_time(text)


def _earliest(cands: list) -> tuple:
    """The candidate of the most telling kind of file; among files of that same kind (two
    programs' logs of one incident), the line written first when every one of them is
    stamped, so the cause is not the line of whichever file sorts first by name."""
    best = min(cands, key=lambda c: c[0])
    peers = [c for c in cands if c[0][:3] == best[0][:3]]
    stamps = [_when(c[3]) for c in peers]
    if len(peers) > 1 and all(t is not None for t in stamps):
        return min(zip(stamps, peers, strict=True), key=lambda tc: (tc[0], tc[1][0]))[1]
    return best


def unrecognised_error(files: Sequence[BundleFile]) -> FirstError | None:
    """When no cause is recognised: the first error-looking line of any log, in file order,
    so the operator still sees where to look."""
    try:
        return _unrecognised_error(files)
    finally:
        _forget()


def _unrecognised_error(files: Sequence[BundleFile]) -> FirstError | None:
    for bf in files:
        if bf.role != "log" or bf.log is None:
            continue
        for h in iter_errors(bf.log.data, kind=scan_kind(bf.log.kind)):
            line = bf.log.file_line(h.line) or h.line
            return FirstError(bf.name, line, file_line_text(files, bf.name, line) or h.text)
    return None
