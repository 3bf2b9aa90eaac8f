"""Offline diagnosis of what an operator has: a folder of ticket files, one file, an archive,
or a terminal session pasted on standard input.

Each file is cut at the shell prompts in it (:mod:`~cockpit.ingest.split`), each part is
recognised by its content (:mod:`~cockpit.ingest.sniff`), tables become the records a live
poll produces (:mod:`~cockpit.ingest.records`), log lines go to the job or node they name
(:mod:`~cockpit.ingest.attribute`), and the engine diagnoses the result as it would a live
site. Large files are scanned streaming (:mod:`~cockpit.ingest.sources`); whatever is not
read is said in ``notes``.

JSON contract (scripts and tests depend on it)::

    {"findings": [{"root_cause", "severity", "subject", "title", "explanation", "remedy",
                   "evidence": [{"file", "line", "text"}]}],
     "first_error": {"file", "line", "text"} | null,
     "notes": [str]}
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import BinaryIO

from cockpit.diagnosis.engine import diagnose, finding_json, sort_key
from cockpit.errors import UserError
from cockpit.i18n import _
from cockpit.ingest.attribute import excerpts, file_subject
from cockpit.ingest.locate import FirstError, first_error, locate, unrecognised_error
from cockpit.ingest.records import Records
from cockpit.ingest.slurm_text import (
    parse_sacct_any,
    parse_sinfo,
    parse_sinfo_r,
    parse_squeue_any,
    table_span,
)
from cockpit.ingest.sniff import STRUCTURED, docker_prefix_len, engine_kind, sniff
from cockpit.ingest.sources import Input, read_inputs
from cockpit.ingest.split import command_word, split_parts
from cockpit.ingest.tables import parse_fixed_table, parse_pipe_table
from cockpit.model import Artifacts, Evidence, Finding, LogText, Snapshot, Subject
from cockpit.text import clean, strip_ansi

__all__ = [
    "Bundle",
    "BundleFile",
    "BundleReport",
    "FirstError",
    "diagnose_bundle",
    "load_bundle",
    "parse_fixed_table",
    "parse_pipe_table",
    "parse_sacct_any",
    "parse_sinfo",
    "parse_sinfo_r",
    "parse_squeue_any",
    "sniff",
]


@dataclass(frozen=True, slots=True)
class BundleFile:
    """One recognised part of a file: ``role`` is a structured kind (squeue, sinfo_r, ...),
    ``log`` or ``script``; ``kind`` the log's kind; ``data`` the part's bytes as in the file,
    which starts at 1-based ``line`` / byte ``offset``; ``command`` what was typed before it;
    ``log`` the part as the engine scans it (for a large file, the lines streaming found)."""

    name: str
    path: str
    role: str
    kind: str
    data: bytes
    subject_id: str = ""
    command: str = ""
    line: int = 1
    offset: int = 0
    log: LogText | None = None
    complete: bool = True  # False: ``data`` is only the head of a large file
    embedded: bool = False  # a table inside other output (a job script printed squeue)


@dataclass(frozen=True, slots=True)
class Bundle:
    path: str
    files: tuple[BundleFile, ...]
    snapshot: Snapshot
    artifacts: Artifacts
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # (kind, id) -> (file name, line) of the row or record each job/node/partition came from
    origins: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BundleReport:
    bundle: Bundle
    findings: tuple[Finding, ...]
    first_error: FirstError | None
    warnings: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict:
        """The documented JSON contract (see module docstring)."""
        fe = self.first_error
        return {
            "findings": [finding_json(f) for f in self.findings],
            "first_error": {"file": fe.file, "line": fe.line, "text": fe.text} if fe else None,
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------- loading


def _parts(inp: Input) -> list[BundleFile]:
    """The recognised parts of one input (a large one is one part: its streamed excerpt)."""
    if inp.scan is not None:
        hit = inp.scan.hit
        log = None
        if hit is not None:
            log = LogText(
                name=inp.name,
                kind=engine_kind(inp.kind),
                data=hit.text.encode() + b"\n",
                path=inp.path,
                line_offsets=(hit.offset,),
                line_numbers=(hit.line,),
            )
        return [BundleFile(inp.name, inp.path, "log", inp.kind, inp.data, log=log, complete=False)]
    out: list[BundleFile] = []
    for part in split_parts(inp.data):
        out.extend(_recognise(inp, part.data, part.command, part.line, part.offset))
    return out


# commands whose output is the table itself: what follows it without a prompt is not theirs
_TABLE_COMMANDS = frozenset("squeue sacct sinfo scontrol seff sprio myjobs df".split())


def _recognise(inp: Input, data: bytes, command: str, line: int, offset: int) -> list[BundleFile]:
    """One part as recognised pieces, in file order. A table or record dump ends where its
    rows stop having its shape: a job's output that starts with the ``squeue`` its script
    printed is a table, then a log (each at its own file lines). A structured piece keeps
    its lines without terminal escapes (colour codes would hide job ids and states)."""
    out: list[BundleFile] = []
    while data.strip():
        role, kind = sniff(inp.name, data, command)
        if role not in STRUCTURED or role == "modelarts_job":
            out.append(
                BundleFile(inp.name, inp.path, role, kind or "app", data, "", command, line, offset)
            )
            break
        raw = data.split(b"\n")
        lines = [strip_ansi(b.decode("utf-8", "replace")) for b in raw]
        first, end = table_span(role, lines)
        starts = [0]
        for b in raw:
            starts.append(starts[-1] + len(b) + 1)
        if first > 0:  # what comes before a record dump is read on its own
            out.extend(_recognise(inp, data[: starts[first]], command, line, offset))
        table = "\n".join(lines[first:end])
        if end < len(lines):
            table += "\n"
        out.append(
            BundleFile(
                inp.name,
                inp.path,
                role,
                "app",
                table.encode(),
                "",
                command,
                line + first,
                offset + starts[first],
                embedded=first > 0 or bool(b"".join(raw[end:]).strip()),
            )
        )
        if end >= len(lines):
            break
        cut = min(starts[end], len(data))
        data, line, offset = data[cut:], line + end, offset + cut
        if command_word(command) in _TABLE_COMMANDS:
            command = ""
    return out


def _engine_log(f: BundleFile) -> LogText:
    """The part as the engine scans it; a ``docker compose`` service prefix is cut off each
    line so patterns anchored at the line start match, line numbers kept."""
    if f.log is not None:
        return f.log
    kind = engine_kind(f.kind)
    if f.kind != "docker":
        return LogText(f.name, kind, f.data, f.path, base_offset=f.offset, base_line=f.line)
    lines, offsets, pos = [], [], f.offset
    for raw in f.data.split(b"\n"):
        cut = docker_prefix_len(raw)
        lines.append(raw[cut:])
        offsets.append(pos + cut)
        pos += len(raw) + 1
    if lines and lines[-1] == b"":
        lines.pop()
        offsets.pop()
    return LogText(
        f.name,
        kind,
        b"\n".join(lines) + b"\n",
        f.path,
        line_offsets=tuple(offsets),
        line_numbers=tuple(range(f.line, f.line + len(lines))),
    )


def load_bundle(path: str, stdin: BinaryIO | None = None) -> Bundle:
    """Read and recognise everything at ``path`` (folder, file, archive, ``-`` for stdin);
    build the Snapshot and Artifacts. Raises UserError when there is nothing to read."""
    inputs, notes = read_inputs(path, stdin)
    files: list[BundleFile] = []
    for inp in inputs:
        got = _parts(inp)
        if not got:
            notes.append(f"{inp.name}: empty")
        files.extend(got)
    if not files:
        why = notes[0] if len(notes) == 1 else "; ".join(notes[:3]) or f"{_shown(path)}: empty"
        raise UserError(_("{why}: nothing to diagnose").format(why=why))
    rec = Records()
    for i, f in enumerate(files):
        text = f.data.decode("utf-8", "replace")
        if f.role in STRUCTURED and not rec.add(f.name, f.role, text, f.line):
            files[i] = replace(f, role="log", kind="app")  # looked like a table, held none
    for f in files:
        if f.kind == "slurmctld" and f.log is None:
            rec.add_log_facts(f.data.decode("utf-8", "replace"))
    rec.finish()
    notes.extend(_seen_by_the_job(files, rec))
    nodes, jobs = frozenset(rec.nodes), frozenset(rec.jobs)
    logs: list[LogText] = []
    for i, f in enumerate(files):
        if f.role != "log":
            continue
        view = _engine_log(f)
        # a large file's head and the lines streaming found are what is known of it
        owner = file_subject(f.name, f.kind, f.data if f.complete else f.data + view.data)
        files[i] = replace(f, subject_id=owner, log=view)
        logs.extend(excerpts(view, nodes, jobs, owner))
    tjobs = rec.training_jobs
    snap = Snapshot(
        source=os.path.basename(os.path.abspath(path)) if path != "-" else "stdin",
        kind="modelarts" if tjobs and not (rec.jobs or rec.nodes) else "slurm",
        taken_at=_bundle_time(files),
        jobs=tuple(rec.jobs.values()),
        nodes=tuple(rec.nodes.values()),
        partitions=tuple(rec.partitions.values()),
        training_jobs=tuple(tjobs),
        warnings=tuple(rec.warnings),
    )
    arts = Artifacts(acct=tuple(rec.acct), logs=tuple(logs), commands=rec.commands)
    return Bundle(
        path, tuple(files), snap, arts, tuple(rec.warnings), tuple(notes), dict(rec.origins)
    )


# slurmstepd's last word on a job or step: "*** JOB 3 ON c1 CANCELLED AT ... ***"
_STEPD_END = re.compile(rb"\*\*\* (?:JOB|STEP) [\d.]+ ON \S+ CANCELLED AT ")


def _seen_by_the_job(files: list[BundleFile], rec: Records) -> list[str]:
    """A job's own output that printed ``squeue``/``scontrol`` about itself before its log
    lines shows the job as it was then (running), not how it ended: that row does not
    decide the job's state; its log does. Returns a note for each such job."""
    from cockpit.diagnosis.slurm_states import ENDED_STATES

    notes = []
    for f in files:
        if f.role != "log":
            continue
        owner = file_subject(f.name, f.kind, f.data)
        job = rec.jobs.get(owner) if owner else None
        where = rec.origins.get(("job", owner))
        if job is None or where is None or where[0] != f.name or job.state in ENDED_STATES:
            continue
        printed = any(t.embedded and t.name == f.name and t.line <= where[1] for t in files)
        # a paste's later 'cat' of the job's output in which slurmstepd ended it: the row
        # above is the queue before the end (squeue, scancel, cat slurm-N.out in one paste)
        ended_later = f.line > where[1] and _STEPD_END.search(f.data) is not None
        if not (printed or ended_later):
            continue
        del rec.jobs[owner]
        seen = "the job saw then" if printed else "the queue held before its log's end"
        notes.append(
            f"{f.name}: job {owner} is {job.state} in the table at line {where[1]} (what "
            f"{seen}, not how it ended): diagnosed from its log"
        )
    return notes


# evidence the engine words as a live poll's command -> record kinds that hold it
_SCHEDULER = {
    "squeue": ("job",),
    "scontrol show job": ("job",),
    "sacct": ("acct", "job"),
    "scontrol show node": ("node",),
    "scontrol show partition": ("partition",),
}


class _Citer:
    """Scheduler evidence not yet pointing at a file line names the file and row its
    record was read from: a bundle of ``sacct.txt`` never cites a ``squeue`` it lacks."""

    def __init__(self, bundle: Bundle) -> None:
        self.origins = bundle.origins
        self.parts: dict[str, list[BundleFile]] = {}
        for bf in bundle.files:
            if bf.role in STRUCTURED:
                self.parts.setdefault(bf.name, []).append(bf)
        self.lines: dict[int, list[bytes]] = {}  # a part's lines, split once

    def _text(self, name: str, line: int) -> tuple[str, str] | None:
        """(text, path) of file line ``line`` of ``name``, from the table part holding it."""
        from cockpit.diagnosis.logscan import decode_line

        for bf in self.parts.get(name, ()):
            i = line - bf.line
            if i < 0:
                continue
            lines = self.lines.get(id(bf))
            if lines is None:
                lines = self.lines[id(bf)] = bf.data.split(b"\n")
            if i < len(lines) - (1 if bf.data.endswith(b"\n") else 0):
                return decode_line(lines[i]), bf.path
        return None

    def __call__(self, f: Finding) -> Finding:
        from cockpit.model import Evidence

        if not any(e.line is None and e.where in _SCHEDULER for e in f.evidence):
            return f
        out: dict[tuple, Evidence] = {}
        for e in f.evidence:
            if e.line is None and e.where in _SCHEDULER:
                keys = [f.subject.id] + (e.text.split()[:1] if e.text else [])
                where = next(
                    (
                        at
                        for k in keys
                        for kind in _SCHEDULER[e.where]
                        if (at := self.origins.get((kind, k))) is not None
                    ),
                    None,
                )
                got = self._text(*where) if where is not None else None
                if where is not None and got is not None:
                    e = Evidence(
                        where[0], got[0], line=where[1], path=got[1], tier=e.tier, quoted=True
                    )
            out.setdefault((e.where, e.line, e.text), e)
        return replace(f, evidence=tuple(out.values()))


def _shown(path: str) -> str:
    return "stdin" if path == "-" else path


_ISO = re.compile(rb"(20\d\d-\d\d-\d\d[T ]\d\d:\d\d:\d\d)")


def _bundle_time(files: list[BundleFile]) -> datetime:
    """Bundles are old: 'now' is the newest ISO timestamp seen in the files (else the epoch)."""
    best = None
    for f in files:
        for m in _ISO.finditer(f.data[:262144]):
            try:
                t = datetime.fromisoformat(m.group(1).decode().replace(" ", "T"))
            except ValueError:
                continue
            t = t.replace(tzinfo=UTC)
            if best is None or t > best:
                best = t
    return best or datetime(1970, 1, 1, tzinfo=UTC)


# --------------------------------------------------------------------------- diagnosis


def unrecognised_failure(snap: Snapshot, line: FirstError, job_id: str = "") -> Finding:
    """The honest finding for error evidence no rule knows: its domain from the line's words,
    the line as its headline; critical when a job or training job failed, else a warning.
    ``job_id``: the job whose log holds the line (one of a folder's ``slurm-N.out``)."""
    from cockpit.diagnosis.domains import describe, domain_of_line, unrecognised_texts
    from cockpit.diagnosis.kind_words import refine
    from cockpit.diagnosis.slurm_states import FAILED_STATES

    if job_id:  # only that job's state counts
        snap = replace(snap, jobs=tuple(j for j in snap.jobs if j.job_id == job_id))
    failed = any(
        j.state in FAILED_STATES or bool(j.exit_code and (j.exit_code.code or j.exit_code.signal))
        for j in snap.jobs
    ) or any(t.phase in {"Failed", "Abnormal"} for t in snap.training_jobs)
    if job_id:  # its log names it (slurm-N.out), whether or not a table lists the job
        subject = Subject("job", snap.source, job_id)
    elif len(snap.jobs) == 1:
        subject = Subject("job", snap.source, snap.jobs[0].job_id)
    elif len(snap.training_jobs) == 1:
        subject = Subject("training_job", snap.source, snap.training_jobs[0].job_id)
    else:
        subject = Subject("file", snap.source, line.file)
    domain = describe(domain_of_line(line.text))
    text = clean(line.text, 200)
    title, explanation, remedy = unrecognised_texts(line.file, line.line, domain, text)
    # the cause the line's own words name, when they name one (kind_words): still no rule's
    return refine(
        Finding(
            "unrecognised_failure",
            "critical" if failed else "warning",
            subject,
            title,
            explanation=explanation,
            remedy=remedy,
            evidence=(Evidence(line.file, text, line.line, tier=2, quoted=True),),
            confidence=0.3,
        ),
        line.text,
    )


def _unrecognised_logs(bundle: Bundle, located: list[Finding]) -> list[Finding]:
    """An unrecognised failure for each job log (``slurm-N.out``) that holds an error line
    while no finding cites that log or names its job; after the recognised ones."""
    cited = {e.where for f in located for e in f.evidence}
    named = {f.subject.id for f in located if f.subject.kind == "job"}
    out = []
    for bf in bundle.files:
        if bf.role != "log" or bf.name in cited or (bf.subject_id and bf.subject_id in named):
            continue
        if not bf.subject_id and bf.kind != "app":  # a daemon's log: its lines are not a job's
            continue
        line = unrecognised_error([bf])
        if line is not None:
            out.append(unrecognised_failure(bundle.snapshot, line, bf.subject_id))
    return out


def diagnose_bundle(
    path: str, now: datetime | None = None, stdin: BinaryIO | None = None
) -> BundleReport:
    """Load what is at ``path``, run the engine, pick the first red error.

    ``now`` defaults to the newest timestamp inside the bundle (tickets are old). Raises
    UserError when ``path`` does not exist or holds nothing readable.
    """
    bundle = load_bundle(path, stdin)
    findings = diagnose(bundle.snapshot, bundle.artifacts, now=now or bundle.snapshot.taken_at)
    cite = _Citer(bundle)
    order = {bf.name: i for i, bf in enumerate(bundle.files)}

    def pasted(f: Finding) -> tuple:
        # findings alike in all but subject come in the order the operator pasted them (the
        # first row of a squeue paste, not job "10" before "3" by the id's spelling)
        at = next(((order.get(e.where, 0), e.line) for e in f.evidence if e.line), (1 << 30, 0))
        return (*sort_key(f)[:-1], at, f.subject.id)

    located = sorted((cite(locate(f, bundle.files)) for f in findings), key=pasted)
    top = located[0] if located else None
    first = first_error(top, bundle.files)
    # rows a parser could not use are input not read, too
    notes = [*bundle.notes, *bundle.warnings, *findings.errors]
    if top is None or top.root_cause == "no_failure":
        # never "nothing wrong" while a log holds an error line: no rule knows it yet
        line = unrecognised_error(bundle.files)
        if line is not None:
            first = line
            # a job's own log (slurm-N.out) is that job's, alone as in a folder
            job = next((bf.subject_id for bf in bundle.files if bf.name == line.file), "")
            located = [unrecognised_failure(bundle.snapshot, line, job or ""), *located]
            # and each other job log's own (no rule knew slurm-1.out's nor slurm-2.out's)
            located += _unrecognised_logs(bundle, located)
        elif top is None:
            notes.append("no finding and no error line")
    else:
        # the same for each job's log of a folder (slurm-2.out beside slurm-1.out): one
        # job's recognised cause said nothing of the others' error lines
        located += _unrecognised_logs(bundle, located)
    return BundleReport(
        bundle=bundle,
        findings=tuple(located),
        first_error=first,
        warnings=bundle.warnings,
        notes=tuple(notes),
    )
