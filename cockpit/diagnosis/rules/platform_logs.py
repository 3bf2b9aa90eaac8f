"""What the platform rule families (Ascend, containers, GPU hosts) share: which logs they
speak for, the line of their family in each, and the finding they file about it.

A log is *unclaimed* when no Slurm job or node of the snapshot owns it and no training job
reads it (bundle files, pastes, a dmesg without a node). Findings about it are filed under
the subject :func:`cockpit.diagnosis.rules.slurm_site.unattributed_logs` uses, with a higher
confidence, so the two merge into the platform finding when they name the same cause.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from cockpit.diagnosis import logscan
from cockpit.diagnosis.context import SCAN_CACHE, RuleContext, clip, log_evidence
from cockpit.i18n import _
from cockpit.model import Evidence, Finding, LogText, Severity, Snapshot, Subject

# Log kinds the ModelArts rules read for a training job (events, startup and app logs).
JOB_LOG_KINDS = frozenset({"startup", "app", "stdout", "stderr", "events"})
_NODE_KINDS = frozenset({"slurmd", "journal", "dmesg"})
STRONG_CONFIDENCE = 0.85  # above the generic per-file finding's 0.8: the merge keeps ours
WEAK_CONFIDENCE = 0.5
_LOOK = 500  # error lines read per log when the first one is not of the family


@dataclass(frozen=True, slots=True)
class Explained:
    """A platform line read: the cause ``label``, a short ``phrase`` for titles, what it
    means and what to do."""

    label: str
    severity: Severity
    phrase: str
    explanation: str
    remedy: str


def scan_kind(kind: str) -> str:
    return kind if kind in {"slurmctld", "slurmd", "events"} else "app"


def logs_to_read(
    snap: Snapshot, ctx: RuleContext, with_nodes: bool = False
) -> Iterator[tuple[LogText, Subject]]:
    """(log, subject) for every unclaimed log; ``with_nodes`` adds the logs of known nodes
    (their GPU and memory faults are the node's, whatever its Slurm state)."""
    if not ctx.logs:  # no log to read: not worth the ids of a 100k-job queue
        return
    claim = ctx.cache.get("platform_claims")
    if claim is None:
        claim = ctx.cache["platform_claims"] = (
            {j.job_id for j in snap.jobs},
            {j.job_id for j in snap.training_jobs},
        )
    jobs, tjobs = claim
    for sid, logs in ctx.logs.items():
        if sid and sid in jobs:
            continue
        known_node = bool(sid) and sid in ctx.nodes
        if known_node and not with_nodes:
            continue
        for lt in logs:
            if tjobs and lt.kind in JOB_LOG_KINDS and (sid == "" or sid in tjobs):
                continue  # the ModelArts rules read it for the training job
            if lt.kind in _NODE_KINDS and sid:
                kind = "node"
            else:
                kind = "job" if sid else "file"
            yield lt, Subject(kind, snap.source, sid or lt.name)


def family_hit(
    lt: LogText, ctx: RuleContext, names: frozenset[str], anywhere: bool = False
) -> logscan.ScanHit | None:
    """The line of this family that is the log's first red error; or, when that error is only
    a symptom (a traceback, a generic ERROR), the family's first line; None when another
    cause speaks for the log. ``anywhere``: the family's first line even after another cause
    (a GPU that fell off the bus matters whatever the log said before)."""
    first = ctx.scan(lt)
    if first is not None and first.pattern in names:
        return first
    if first is None or (first.strong and not anywhere):
        return None
    kind = scan_kind(lt.kind)

    def look() -> logscan.ScanHit | None:
        for n, h in enumerate(logscan.iter_errors(lt.data, kind=kind)):
            if n >= _LOOK:
                break
            if h.pattern in names:
                return logscan.past_ipython_header(lt.data, h, kind=kind)
        return None

    return SCAN_CACHE.get(("family", kind, names), lt.data, look)


def line_evidence(lt: LogText, needle: bytes, tier: int = 1, start: int = 0) -> Evidence | None:
    """Evidence for the first line of ``lt`` from byte ``start`` on containing ``needle``
    (with its file line and offset)."""
    at = lt.data.find(needle, start)
    if at < 0:
        return None
    begin = lt.data.rfind(b"\n", 0, at) + 1
    end = lt.data.find(b"\n", at)
    raw = lt.data[begin : end if end >= 0 else len(lt.data)]
    line = lt.data.count(b"\n", 0, begin) + 1
    return Evidence(
        lt.name,
        logscan.decode_line(raw).strip(),
        line=lt.file_line(line),
        path=lt.path,
        offset=lt.file_offset(line, begin),
        tier=tier,
        quoted=True,
    )


def file_finding(
    lt: LogText,
    subject: Subject,
    hit: logscan.ScanHit,
    e: Explained,
    extra: tuple[Evidence, ...] = (),
    confidence: float | None = None,
) -> Finding:
    """The finding about one log: the verdict phrase, where it is, the line as evidence."""
    where = f"{lt.name}:{lt.file_line(hit.line) or hit.line}"
    ev = (*extra, log_evidence(lt, hit))
    seen: set[tuple] = set()
    evidence = []
    for x in ev:
        if (x.where, x.line, x.text) not in seen:
            seen.add((x.where, x.line, x.text))
            evidence.append(x)
    conf = confidence or (STRONG_CONFIDENCE if hit.strong else WEAK_CONFIDENCE)
    title = f"{e.phrase} ({where})"
    return Finding(
        root_cause=e.label,
        severity=e.severity,
        subject=subject,
        title=clip(title, 160),
        # the space between the sentences is the template's (none after a Chinese full stop)
        explanation=e.explanation
        + _(" First red error in {where}: {line}").format(where=where, line=hit.text.strip()[:300]),
        remedy=e.remedy,
        evidence=tuple(evidence[:6]),
        confidence=conf,
        first_seen=None,
    )
