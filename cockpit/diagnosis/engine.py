"""The diagnosis engine: a pure function from (snapshot, artifacts, now) to findings.

A rule receives one subject (SlurmJob, SlurmNode, Partition, TrainingJob, Pool, or the
Snapshot itself for kind "site") and a :class:`~cockpit.diagnosis.context.RuleContext`,
and returns Findings; the rules and their order are listed in
:mod:`cockpit.diagnosis.registry`. Rules never do I/O. :func:`diagnose` runs them all and
orders the findings, most likely root cause first; :mod:`cockpit.diagnosis.verdict` picks
one per subject and :mod:`cockpit.diagnosis.correlate` folds them into incidents.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import datetime
from functools import lru_cache
from operator import attrgetter

from cockpit.diagnosis import registry
from cockpit.diagnosis.context import FirstOf, Rule, RuleContext, RuleFn, build_context
from cockpit.diagnosis.kind_words import GENERIC, refine
from cockpit.model import SEVERITY_RANK, Artifacts, Evidence, Finding, Snapshot, Subject


class Diagnosis(list[Finding]):
    """What :func:`diagnose` returns: the findings, most likely root cause first (a plain
    ``list`` to every caller), and ``errors``: one ``"module.rule: Type: message"`` line per
    rule that raised, so a caller can show that the diagnosis is incomplete. A rule that
    raises is skipped for that subject; the other rules' findings are all there."""

    errors: tuple[str, ...] = ()

    def __init__(self, findings: Iterable[Finding] = (), errors: Iterable[str] = ()) -> None:
        super().__init__(findings)
        self.errors = tuple(errors)


def rules_for(kind: str) -> list[RuleFn]:
    """Every rule function registered for subjects of ``kind``, in registry order."""
    out: list[RuleFn] = []
    for entry in registry.RULES.get(kind, ()):
        out.extend(entry.rules if isinstance(entry, FirstOf) else (entry.fn,))
    return out


def iter_subjects(snapshot: Snapshot) -> Iterator[tuple[str, object]]:
    """(subject kind, subject) for every rule subject of ``snapshot``, kind by kind."""
    for kind, subjects in _subjects_by_kind(snapshot):
        for subject in subjects:
            yield kind, subject


def _subjects_by_kind(snapshot: Snapshot) -> Iterator[tuple[str, Iterable[object]]]:
    """:func:`iter_subjects` grouped by kind (the rule list is looked up once per kind)."""
    yield "job", snapshot.jobs
    yield "node", snapshot.nodes
    yield "partition", snapshot.partitions
    yield "training_job", snapshot.training_jobs
    yield "pool", snapshot.pools
    yield "site", (snapshot,)


# A step is the rules of one registry entry: tried in order, the first that finds something
# ends the step (a plain Rule is a step of one).
_Steps = tuple[tuple[RuleFn, ...], ...]


@lru_cache(maxsize=64)
def _plan(entries: tuple[Rule | FirstOf, ...]) -> tuple[_Steps, dict[str, _Steps]]:
    """(steps for a subject of any state, steps per state named by an entry). Computed once
    per registry tuple: a RUNNING job then costs one dict lookup to find its few rules."""

    def step(e: Rule | FirstOf) -> tuple[RuleFn, ...]:
        return e.rules if isinstance(e, FirstOf) else (e.fn,)

    default = tuple(step(e) for e in entries if e.states is None)
    states = {s for e in entries if e.states is not None for s in e.states}
    by_state = {
        s: tuple(step(e) for e in entries if e.states is None or s in e.states) for s in states
    }
    return default, by_state


# --------------------------------------------------------------------------- ordering

# Lower = more likely the root cause when severity and confidence tie: infrastructure and
# specific causes before their symptoms (Kill task failed is often the symptom of an epilog
# or a D-state process; a generic application error is the symptom of everything).
_SYMPTOM_RANK: dict[str, int] = {
    "node_drain_kill_task_failed": 1,
    "node_not_responding": 1,
    "node_drain_admin": 2,
    "cancelled_by_user": 2,
    "pending_resources": 3,
    "pending_priority": 3,
    "pending_dependency": 3,
    "application_error": 4,
    "no_failure": 9,
}
_KIND_RANK = {
    "cluster": 0,
    "node": 1,
    "partition": 2,
    "pool": 2,
    "job": 3,
    "training_job": 3,
    "file": 4,
}

# (severity, confidence, cause, kind) -> the first four parts of sort_key
_KEY_PREFIX: dict[tuple, tuple] = {}


def sort_key(f: Finding) -> tuple:
    """(severity rank, -confidence, cause-before-symptom rank, subject kind rank, subject id)."""
    return (*_key_prefix(f), f.subject.id)


def _key_prefix(f: Finding) -> tuple:
    """The first four parts of :func:`sort_key`, one shared tuple per combination."""
    p = (f.severity, f.confidence, f.root_cause, f.subject.kind)
    pre = _KEY_PREFIX.get(p)
    if pre is None:  # a few dozen combinations per site: computed once, shared by 100k findings
        if len(_KEY_PREFIX) > 4096:
            _KEY_PREFIX.clear()
        pre = _KEY_PREFIX[p] = (
            SEVERITY_RANK.get(f.severity, 3),
            -round(f.confidence, 3),
            _SYMPTOM_RANK.get(f.root_cause, 0),
            _KIND_RANK.get(f.subject.kind, 5),
        )
    return pre


_subject_id = attrgetter("subject.id")


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """``sorted(findings, key=sort_key)``, faster for many findings: grouped by the first four
    parts of the key (a few dozen groups: 50k "will run" findings share one), each group sorted
    by subject id alone (a C-level key). Same order, ties kept in input order."""
    return _sort_into(findings, [])


def _sort_into(findings: Iterable[Finding], out: list[Finding]) -> list[Finding]:
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        pre = _key_prefix(f)
        g = groups.get(pre)
        if g is None:
            groups[pre] = [f]
        else:
            g.append(f)
    for pre in sorted(groups):
        g = groups[pre]
        g.sort(key=_subject_id)
        out += g
    return out


# --------------------------------------------------------------------------- running the rules


def _merge(a: Finding, b: Finding) -> Finding:
    """Two findings with one key: keep the stronger, pool their evidence."""
    keep, other = (a, b) if sort_key(a) <= sort_key(b) else (b, a)
    seen = {(e.where, e.line, e.text) for e in keep.evidence}
    extra = tuple(e for e in other.evidence if (e.where, e.line, e.text) not in seen)
    if not extra:
        return keep
    ev = tuple(sorted(keep.evidence + extra, key=lambda e: e.tier))[:12]
    return replace(keep, evidence=ev)


def diagnose(
    snapshot: Snapshot,
    artifacts: Artifacts | None = None,
    now: datetime | None = None,
    kinds: frozenset[str] | None = None,
    focus: Subject | None = None,
) -> Diagnosis:
    """Every registered rule over every subject of ``snapshot``; most likely root cause first.

    ``artifacts``: on-demand sacct rows and log excerpts (None = none). ``now``: the clock
    (defaults to ``snapshot.taken_at``). Findings sharing a :attr:`Finding.key` are merged.
    Order: severity, then confidence, then cause-before-symptom. ``kinds``: run only the
    rules of these subject kinds (None = all), for a caller that keeps only some subjects'
    findings. ``focus``: only that subject's findings, its rules run in the context of the
    whole snapshot (the other jobs, partitions and nodes a verdict may depend on) and the
    site rules' findings about it kept: a drill-down gets the verdict the dashboard gives.

    Pure, and never raises for bad data: a rule that raises is skipped for that subject and
    reported in the result's :attr:`Diagnosis.errors` (``COCKPIT_STRICT_RULES=1`` re-raises,
    for tests).
    """
    ctx = build_context(snapshot, artifacts or Artifacts(), now or snapshot.taken_at)
    strict = bool(os.environ.get("COCKPIT_STRICT_RULES"))
    # Keyed like Finding.key, as a tuple: no string formatted per finding (60k at a big site).
    found: dict[tuple[str, str, str, str], Finding] = {}
    errors: list[str] = []
    groups = _subjects_by_kind(snapshot) if focus is None else _focused(snapshot, focus)
    for kind, subjects in groups:
        if kinds is not None and kind not in kinds:
            continue
        default, by_state = _plan(registry.RULES.get(kind, ()))
        for subject in subjects:
            # only job rules name states, and every job has one
            steps = by_state.get(subject.state, default) if by_state else default
            fold(found, run_steps(steps, subject, ctx, errors, strict))
    return finish(found, errors, focus)


def finish(
    found: dict[tuple[str, str, str, str], Finding], errors: list[str], focus: Subject | None
) -> Diagnosis:
    """The :class:`Diagnosis` of folded findings: sorted, only ``focus``'s when given."""
    if focus is not None:
        mine = (focus.kind, focus.source, focus.id)
        kept = [
            f for f in found.values() if (f.subject.kind, f.subject.source, f.subject.id) == mine
        ]
        return _sort_into(kept, Diagnosis(errors=errors))  # type: ignore[return-value]
    return _sort_into(found.values(), Diagnosis(errors=errors))  # type: ignore[return-value]


def run_steps(
    steps: _Steps, subject: object, ctx: RuleContext, errors: list[str], strict: bool = False
) -> list[Finding]:
    """The findings ``steps`` produce for one subject, in the order the rules gave them
    (before merging: :func:`fold` merges them, so a caller may keep and replay them).
    A rule that raises is noted in ``errors`` and ends its step."""
    produced: list[Finding] = []
    for step in steps:
        for fn in step:
            hit = False
            try:
                out = fn(subject, ctx)
                if out is None:
                    continue
                for f in out:
                    hit = True
                    # a generic cause its cited line's words name more precisely (kind_words)
                    produced.append(refine(f) if f.root_cause in GENERIC else f)
            except Exception as exc:  # noqa: BLE001
                if strict:
                    raise
                # one bad rule must not blind the cockpit: note it, run the others
                errors.append(f"{fn.__module__}.{fn.__name__}: {type(exc).__name__}: {exc}")
                break  # a FirstOf ends here: a later rule's verdict would be unfounded
            if hit:
                break
    return produced


def fold(found: dict[tuple[str, str, str, str], Finding], produced: Iterable[Finding]) -> None:
    """Add ``produced`` to ``found`` (keyed like :attr:`Finding.key`), merging equal keys."""
    for f in produced:
        s = f.subject
        k = (f.root_cause, s.kind, s.source, s.id)
        prev = found.get(k)
        found[k] = f if prev is None else _merge(prev, f)


def plan(kind: str) -> tuple[_Steps, dict[str, _Steps]]:
    """(steps for any state, steps per state) of the rules of ``kind`` (see :func:`_plan`)."""
    return _plan(registry.RULES.get(kind, ()))


_ID = {"job": "job_id", "training_job": "job_id", "pool": "pool_id"}


def _focused(snapshot: Snapshot, focus: Subject) -> Iterator[tuple[str, Iterable[object]]]:
    """:func:`_subjects_by_kind` for one subject: its own object (if the snapshot has it) and
    the site, whose rules also speak about jobs and files (starvation, storage)."""
    for kind, subjects in _subjects_by_kind(snapshot):
        if kind == "site":
            yield kind, subjects
        elif kind == focus.kind:
            attr = _ID.get(kind, "name")
            yield (
                kind,
                [
                    o
                    for o in subjects
                    if getattr(o, attr) == focus.id or getattr(o, "name", None) == focus.id
                ],
            )


def subject_label(s: Subject) -> str:
    """``job 191``, ``node c05``, ``training job abc``: the subject without its source."""
    return f"{ {'training_job': 'training job'}.get(s.kind, s.kind) } {s.id}"


def first_red_error(f: Finding) -> Evidence | None:
    """The line a finding's cause is read from: the evidence with a log line whose text names
    the finding's own cause, the deepest tier first (the job's or the node's own log before the
    controller's summary of it: "Detected 1 oom-kill event" in slurm-8.out, not slurmctld's
    "OOM failure"); else the first evidence with a line. ``cockpit diagnose``'s first_error and
    the TUI's ``l`` both open this one."""
    from cockpit.diagnosis.patterns import classify

    with_line = [e for e in f.evidence if e.line is not None]
    if not with_line:
        return None
    match = [
        e
        for e in with_line
        if (p := classify(e.text.encode("utf-8", "replace"))) is not None
        and p.label == f.root_cause
    ]
    if match:
        return max(match, key=lambda e: e.tier)  # max keeps the first of the deepest tier
    return with_line[0]


def unrecognised_domain(f: Finding) -> str:
    """An unrecognised failure's domain (read from its error line), "" for any other finding."""
    if f.root_cause != "unrecognised_failure":
        return ""
    from cockpit.diagnosis.domains import domain_of_line

    return domain_of_line(f.evidence[0].text if f.evidence else f.title)


def finding_json(f: Finding) -> dict:
    """One finding in the JSON contract of ``cockpit diagnose`` (live, bundle and paste)."""
    from cockpit.diagnosis.domains import domain_of

    return {
        "root_cause": f.root_cause,
        "domain": unrecognised_domain(f) or domain_of(f.root_cause),
        "severity": f.severity,
        "subject": subject_label(f.subject),
        "title": f.title,
        "explanation": f.explanation,
        "remedy": f.remedy,
        "first_seen": f.first_seen.isoformat() if f.first_seen else None,
        "evidence": [{"file": e.where, "line": e.line, "text": e.text} for e in f.evidence],
    }
