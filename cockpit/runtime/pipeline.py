"""The stages one poll's data goes through, off the UI thread, in order, each once per pass.

``evidence -> diagnose -> verdicts -> incidents -> views``: the evidence (kept per source by
:class:`~cockpit.runtime.evidence.EvidenceCache`) is looked up by the poller, then
:func:`analyse` diagnoses the snapshot with it, picks one verdict per subject, correlates
incidents over every source and builds the rows of each pane. Plain data in, a frozen
:class:`Analysis` out: nothing here touches the hub, the app or a widget, so the same
functions serve the TUI and a benchmark.

A stage that fails either degrades (diagnosis: no findings, a warning; incidents: the hub
keeps the ones it has, a warning) or raises :class:`StageError` naming the stage, which the
poller shows as the source's error while the last good data stays on screen.
"""

from __future__ import annotations

import dataclasses
import logging
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from cockpit import gcpolicy
from cockpit.model import Artifacts, ExitCode, Finding, Incident, Snapshot, Subject
from cockpit.views import RowList, RowMemo, job_rows, node_rows, training_rows

if TYPE_CHECKING:
    from cockpit.diagnosis.incremental import Reuse
    from cockpit.views import Row

log = logging.getLogger(__name__)

T = TypeVar("T")

Basis = tuple[tuple[Finding, ...], ...]

MAX_RULE_ERRORS = 20  # distinct rule errors kept per poll: enough to name the broken rule


class StageError(Exception):
    """A pipeline stage raised; ``stage`` names it for the source's status line."""

    def __init__(self, stage: str, cause: BaseException) -> None:
        super().__init__(f"{stage} failed: {type(cause).__name__}: {cause}")
        self.stage = stage


def _stage(name: str, fn: Callable[..., T], *args: object) -> T:
    try:
        return fn(*args)
    except Exception as exc:  # the poller shows it as this source's error and polls again
        raise StageError(name, exc) from exc


@dataclass(frozen=True)
class IncidentTally:
    """Incident counts built beside the incidents, off the UI thread: ``severity`` incident
    key -> severity, ``counts`` severity -> number of incidents. The incidents strip takes the
    acknowledged ones out (a few) instead of counting 10k+ incidents on every repaint."""

    severity: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


def tally(incidents: tuple[Incident, ...]) -> IncidentTally:
    counts: dict[str, int] = {}
    for i in incidents:
        counts[i.severity] = counts.get(i.severity, 0) + 1
    return IncidentTally({i.key: i.severity for i in incidents}, counts)


@dataclass(frozen=True)
class Analysis:
    """One pass of the pipeline over a snapshot, handed to the UI thread to publish.

    ``verdicts``: one per subject (``diagnosis.verdict.verdicts``); ``rows``: the ``RowList``
    of each pane ("jobs", "nodes", "training"); ``incidents``: over every source, correlated
    from ``basis`` (the findings tuples of all sources, in source order; None: not correlated
    yet); ``incidents`` None: correlation failed and the hub keeps the incidents it has.
    ``warnings``: what went wrong in a stage that degraded (rule errors, a failed diagnosis),
    to be added to the snapshot's warnings.
    """

    findings: tuple[Finding, ...]
    verdicts: dict
    rows: dict[str, list[Row]]
    incidents: tuple[Incident, ...] | None
    basis: Basis | None
    tally: IncidentTally = field(default_factory=IncidentTally)
    warnings: tuple[str, ...] = ()


# ------------------------------------------------------------------ stages


def diagnose_stage(
    snap: Snapshot,
    evidence: dict[Subject, Artifacts],
    now: datetime,
    memo: dict | None,
    reuse: Reuse | None = None,
) -> tuple[tuple[Finding, ...], tuple[str, ...]]:
    """Findings of the site with each subject's evidence, and the rule errors as warnings (a
    rule that raised is skipped by the engine; the operator should still learn of it).

    ``reuse``: what the source's previous poll kept (:mod:`cockpit.diagnosis.incremental`:
    rules run only for subjects whose row or context changed; same findings as from scratch).
    ``memo`` is the evidence cache's findings of ended jobs, which the incremental path
    supersedes (kept for callers that diagnose without it)."""
    findings, warnings, dirty = diagnose_delta_stage(snap, evidence, now, reuse)
    if reuse is not None:
        reuse.dirty = dirty  # for analyse: which subjects changed
    return findings, warnings


def diagnose_delta_stage(
    snap: Snapshot,
    evidence: dict[Subject, Artifacts],
    now: datetime,
    reuse: Reuse | None = None,
) -> tuple[tuple[Finding, ...], tuple[str, ...], frozenset | None]:
    """:func:`diagnose_stage` and the subjects (kind, source, id) whose findings changed since
    ``reuse``'s last answer (None: any may have; see :mod:`cockpit.diagnosis.delta`)."""
    from cockpit.diagnosis.incremental import Reuse, diagnose_delta

    reuse = reuse if reuse is not None else Reuse()
    last = reuse.delta.result if reuse.delta is not None else None
    d = diagnose_delta(snap, evidence, now, reuse)
    found = d.diagnosis
    if found is last and reuse.last_findings is not None:
        return reuse.last_findings, (), d.dirty  # the same answer: the same tuple
    errors = list(dict.fromkeys(found.errors))
    if len(errors) > MAX_RULE_ERRORS:  # a rule broken for every job would fail 100k times
        more = len(errors) - MAX_RULE_ERRORS
        errors[MAX_RULE_ERRORS:] = [f"... and {more} more"]
    findings = SortedFindings(found)
    reuse.last_findings = findings if not errors else None
    return findings, tuple(f"rule error: {e}" for e in errors), d.dirty


@dataclass
class Carry:
    """What the pipeline keeps for one source from one poll to the next, so a poll pays for
    what changed: each subject's findings (``diagnosis``), each job's row (``rows``), and the
    verdicts and incidents of the last findings (reused when the findings are the same
    objects). Everything kept is checked against the new poll, never trusted: a stale carry
    costs a full pass, not a wrong answer."""

    diagnosis: Reuse | None = None
    rows: RowMemo = field(default_factory=RowMemo)
    findings: tuple[Finding, ...] = ()
    verdicts: dict | None = None
    incidents: tuple | None = None  # (basis, incidents, tally)
    snap: Snapshot | None = None  # the snapshot of the last pass, and its clock
    now: datetime | None = None
    node_rows: tuple | None = None  # (nodes, their rows) of the last pass
    correlated: dict = field(default_factory=dict)  # correlate's memo


def _interned(new: tuple[Incident, ...], old: tuple[Incident, ...]) -> tuple[Incident, ...]:
    """``new`` with each incident equal to the last poll's of its key replaced by that object
    (cheap: equal incidents hold the same finding objects), so what reads incidents after the
    pipeline (the store's sync, the alerts) can skip the unchanged ones by identity."""
    by_key = {i.key: i for i in old}
    out = []
    for i in new:
        prev = by_key.get(i.key)
        out.append(prev if prev is not None and (prev is i or prev == i) else i)
    return tuple(out)


def _same_items(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


def incident_stage(
    basis: Basis, memo: dict | None = None
) -> tuple[tuple[Incident, ...], IncidentTally]:
    """Incidents over every source's findings, and their tally (``memo``: kept by the caller
    from one call to the next, see ``correlate``)."""
    # the engine (and its rule modules) load with the first poll, not before the first frame
    from cockpit.diagnosis.correlate import correlate

    with gcpolicy.bulk():
        if len(basis) == 1 and isinstance(basis[0], SortedFindings):
            incidents = tuple(correlate(list(basis[0]), presorted=True, memo=memo))
        else:
            incidents = tuple(correlate([f for fs in basis for f in fs], memo=memo))
        return incidents, tally(incidents)


class SortedFindings(tuple):
    """A diagnosis's findings, in ``engine.sort_findings`` order (so correlating one source
    need not sort them again). Built only from a ``Diagnosis``."""

    __slots__ = ()


def view_stage(
    snap: Snapshot,
    v: dict,
    now: datetime,
    memo: RowMemo | None = None,
    evidence: dict[Subject, Artifacts] | None = None,
    dirty: frozenset | None = None,
    carry: Carry | None = None,
) -> dict[str, list[Row]]:
    """The rows of each pane, with the verdicts' causes in them (``memo``: the source's job
    rows of its last poll, see :class:`~cockpit.views.RowMemo`; ``evidence``: the ended jobs'
    sacct rows give the EXIT column what squeue does not print; ``dirty``: the subjects whose
    verdict may have changed since ``memo``'s last rows, None: any; ``carry``: keeps the node
    rows while the nodes are equal and no node's verdict changed)."""
    jobs_dirty = None if dirty is None else frozenset(b[2] for b in dirty if b[0] == "job")
    nodes = None
    if carry is not None and dirty is not None and carry.node_rows is not None:
        kept_nodes, kept_rows = carry.node_rows
        if not any(b[0] == "node" for b in dirty) and (
            kept_nodes is snap.nodes or kept_nodes == snap.nodes
        ):
            nodes = RowList(kept_rows)  # the same rows in a new list, as every poll hands
            nodes.key_index, nodes.haystack = kept_rows.key_index, kept_rows.haystack
    if nodes is None:
        nodes = node_rows(snap, v)
    if carry is not None:
        carry.node_rows = (snap.nodes, nodes)
    return {
        "jobs": job_rows(snap, v, now, memo, exit_codes(evidence), jobs_dirty),
        "nodes": nodes,
        "training": training_rows(snap, v, now),
    }


def patch_verdicts(old: dict, dirty: frozenset, final: dict) -> dict:
    """``verdicts`` of the patched findings: the last poll's with the dirty subjects' redone
    (each subject's findings in ``final`` are sorted: its verdict is the first)."""
    if not dirty:
        return old
    v = dict(old)
    for b in dirty:
        fs = final.get(b)
        if fs:
            v[b] = fs[0]
        else:
            v.pop(b, None)
    return v


def exit_codes(evidence: dict[Subject, Artifacts] | None) -> dict[str, ExitCode]:
    """Job id -> ExitCode of its sacct job row (not a step's), for the jobs with evidence."""
    out: dict[str, ExitCode] = {}
    for subject, arts in (evidence or {}).items():
        if subject.kind != "job" or not isinstance(arts, Artifacts):
            continue
        row = next((r for r in arts.acct if not r.step and r.exit_code is not None), None)
        if row is not None:
            out[subject.id] = row.exit_code
    return out


def queue_first(snap: Snapshot, now: datetime) -> Analysis:
    """A source's first poll as parsed: its rows without verdicts, published before the first
    diagnosis (seconds at a 100k-job site) so the queue is on screen at once; the incidents
    the hub holds stay (``incidents`` None)."""
    with gcpolicy.bulk():
        rows = _stage("views", view_stage, snap, {}, now)
    return Analysis((), {}, rows, None, None)


def analyse(
    snap: Snapshot,
    now: datetime,
    evidence: dict[Subject, Artifacts] | None = None,
    memo: dict | None = None,
    basis: Iterable[tuple[Finding, ...] | None] | None = None,
    carry: Carry | None = None,
    views: bool = True,
) -> Analysis:
    """Diagnose, verdicts, incidents and views for one good snapshot. Runs in a thread.

    ``memo``: the evidence cache's findings of ended jobs (see ``diagnose_with_evidence``).
    ``basis``: every source's findings in source order with None in this source's slot, filled
    here with the findings computed (None: incidents are left to the caller). ``carry``: what
    the source's previous poll kept (its hub holds one per source; None: nothing kept, a full
    pass: a process-wide carry let one hub's polls leak into another's); a second pass
    over the same snapshot (the evidence round) keeps the first pass's ``now``. ``views``
    False: no rows (a headless head: ``watch``, the one-shot commands). Raises
    :class:`StageError` when the rows cannot be built.
    """
    from cockpit.diagnosis.incremental import Reuse
    from cockpit.diagnosis.verdict import verdicts

    c = carry if carry is not None else Carry()
    if c.diagnosis is None:
        c.diagnosis = Reuse()
    if c.snap is snap and c.now is not None:
        # the evidence round's pass over the same poll: the first pass's clock, so the site
        # rules (they read it) are not run again over the whole queue for a few seconds' drift
        now = c.now
    c.snap, c.now = snap, now
    warnings: list[str] = []
    # acyclic objects by the million: no collections while building
    with gcpolicy.bulk():
        dirty: frozenset | None = None
        try:
            c.diagnosis.dirty = None
            findings, rule_errors = diagnose_stage(snap, evidence or {}, now, memo, c.diagnosis)
            dirty = c.diagnosis.dirty
            if c.verdicts is not None and (
                findings is c.findings or _same_items(findings, c.findings)
            ):
                findings, v = c.findings, c.verdicts  # the same objects: downstream compares `is`
                dirty = frozenset() if dirty is not None else None
            elif c.verdicts is not None and dirty is not None and c.diagnosis.delta is not None:
                v = patch_verdicts(c.verdicts, dirty, c.diagnosis.delta.final)
                c.findings, c.verdicts = findings, v
            else:
                v = verdicts(list(findings))
                c.findings, c.verdicts = findings, v
                dirty = None
            warnings += rule_errors
        except Exception as exc:  # an engine bug must not blank the panes: rows without causes
            log.exception("diagnosis of %s failed", snap.source)
            findings, v = (), {}
            c.findings, c.verdicts = (), None
            dirty = None
            warnings.append(f"diagnosis failed: {exc}")
        # the rows only for a head that draws them (``views``): a headless one reads verdicts
        rows = (
            _stage("views", view_stage, snap, v, now, c.rows, evidence, dirty, c) if views else {}
        )
        incidents: tuple[Incident, ...] | None = ()
        counted = IncidentTally()
        full: Basis | None = None
        if basis is not None:
            full = tuple(findings if fs is None else fs for fs in basis)
            try:
                kept = c.incidents
                if (
                    kept is not None
                    and len(kept[0]) == len(full)
                    and all(_same_items(a, b) for a, b in zip(kept[0], full, strict=True))
                ):
                    incidents, counted = kept[1], kept[2]
                else:
                    incidents, counted = incident_stage(full, c.correlated)
                    if kept is not None:
                        incidents = _interned(incidents, kept[1])
                    c.incidents = (full, incidents, counted)
            except Exception as exc:  # the findings and rows are still good: publish them
                log.exception("correlating incidents failed")
                incidents, full = None, None
                c.incidents = None
                warnings.append(f"incidents failed: {exc}")
    return Analysis(findings, v, rows, incidents, full, counted, tuple(warnings))


def same_basis(a: Basis, b: Basis) -> bool:
    """The same findings tuples (by identity: a source's findings are replaced, never edited)."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def with_warnings(snap: Snapshot, warnings: Iterable[str]) -> Snapshot:
    """``snap`` with ``warnings`` added (a shallow copy: O(1) in the snapshot's size)."""
    new = tuple(w for w in warnings if w not in snap.warnings)
    return dataclasses.replace(snap, warnings=(*snap.warnings, *new)) if new else snap
