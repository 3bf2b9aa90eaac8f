"""Whose line is it? Log lines go to the job or node they name, not to the file.

A slurmctld log that says ``JobId=42 OOM failure`` is evidence about job 42, not about the
controller: reported as "file slurmctld.log: it ran out of memory" it would read as if the
controller had. So a daemon log (slurmctld, slurmd, journal) is cut into excerpts, one per
subject its lines name: a job (``JobId=42``, ``[job 42]``, ``StepId=42.0``, ``*** JOB 42``,
``[42.batch]``), else a known node (``node c05``, ``NodeName=c05``), else the node whose log
it is (``slurmd-c05.log``, a journal of host c05). Lines nobody claims stay with the file.
A job's own output (``slurm-42.out``) belongs to that job whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cockpit.ingest.sniff import JOURNAL, SLURM_OUT
from cockpit.model import LogText

_JOB = re.compile(
    rb"(?:JobId=|StepId=|\[job |\*\*\* (?:JOB|STEP) |[Bb]atch job |\bjob_?id[=: ]+)(\d+)"
    rb"(?:_(\d+))?|\[(\d+)\.(?:batch|extern|interactive|\d+)\]"
)
_NODE = re.compile(rb"(?:\b[Nn]odes? |NodeName=|node=|\bon node )([\w.\[\],-]+?)[,:;)]?(?:\s|$)")
_OWN_JOB = re.compile(
    rb"StepId=(\d+)|\*\*\* (?:JOB|STEP) (\d+)[ .]|JobId=(\d+)\b|job(?:00)?(\d{3,})\b"
)
_SLURMD_NAME = re.compile(r"slurmd[-_.]([A-Za-z][\w-]*?)(?:\.log)?$")
DAEMON_KINDS = frozenset({"slurmctld", "slurmd", "journal"})


def file_subject(name: str, kind: str, data: bytes) -> str:
    """The job or node a whole log belongs to, from its name or content ("" = nobody's):
    ``slurm-42.out`` -> 42, ``slurmd-c05.log`` -> c05, a journal of one host -> that host,
    a program's output naming exactly one job -> that job."""
    base = name.rsplit("/", 1)[-1].lower()
    m = SLURM_OUT.search(base)
    if m:
        return m.group(1)
    if kind == "journal":
        hosts = {h.decode() for h in JOURNAL.findall(data[:65536])}
        return hosts.pop() if len(hosts) == 1 else ""
    if kind == "slurmd":
        m = _SLURMD_NAME.search(name.rsplit("/", 1)[-1])
        return m.group(1) if m and m.group(1) not in {"log", "journal"} else ""
    if kind in {"stdout", "stderr", "app"}:
        ids = {next(g for g in m.groups() if g) for m in _OWN_JOB.finditer(data[:262144])}
        if len(ids) == 1:
            return ids.pop().decode()
    return ""


def line_subject(line: bytes, nodes: frozenset[str], jobs: frozenset[str] | None = None) -> str:
    """The job (``42``, ``42_7``) or known node one daemon log line names; "" for none.
    ``jobs``: only these jobs claim lines (None: any job id named)."""
    m = _JOB.search(line)
    if m:
        if m.group(3):
            job = m.group(3).decode()
        else:
            job = m.group(1).decode() + (f"_{m.group(2).decode()}" if m.group(2) else "")
        if jobs is None or job in jobs:
            return job
    if nodes:
        for m in _NODE.finditer(line):
            name = m.group(1).decode("utf-8", "replace")
            if name in nodes:
                return name
    return ""


def excerpts(
    log: LogText, nodes: frozenset[str], jobs: frozenset[str], owner: str
) -> list[LogText]:
    """``log`` (a whole part or an excerpt of a file) cut per subject its lines name; lines
    naming nobody go to ``owner`` (the node whose log it is, or "" for the file). A log whose
    lines all go one way comes back whole, with that subject.

    Any job the controller's log names claims its lines; in a node's own log (slurmd,
    journal) only the jobs of the snapshot do: an unknown id there stays with the node, whose
    findings the rules word as node findings."""
    if log.kind not in DAEMON_KINDS:
        return [_with_subject(log, owner)]
    claim = None if log.kind == "slurmctld" else jobs
    groups: dict[str, list[int]] = {}
    lines = log.data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, line in enumerate(lines):
        groups.setdefault(line_subject(line, nodes, claim) or owner, []).append(i)
    if len(groups) <= 1:
        return [_with_subject(log, next(iter(groups), owner))]
    starts = _line_starts(lines)
    out = []
    for sid, idx in groups.items():
        out.append(
            LogText(
                name=log.name,
                kind=log.kind,
                data=b"\n".join(lines[i] for i in idx) + b"\n",
                path=log.path,
                subject_id=sid,
                line_offsets=tuple(log.file_offset(i + 1, starts[i]) for i in idx),
                line_numbers=_numbers(log, idx),
            )
        )
    return out


def _with_subject(log: LogText, sid: str) -> LogText:
    from dataclasses import replace

    return log if log.subject_id == sid else replace(log, subject_id=sid)


def _line_starts(lines: Iterable[bytes]) -> list[int]:
    out, pos = [], 0
    for ln in lines:
        out.append(pos)
        pos += len(ln) + 1
    return out


def _numbers(log: LogText, idx: list[int]) -> tuple[int, ...]:
    nums = [log.file_line(i + 1) for i in idx]
    return () if any(n is None for n in nums) else tuple(n for n in nums if n is not None)
