"""Diagnosis that pays for what changed: a subject's findings are kept from one poll to the next.

A poller diagnoses a 100k-job queue every few seconds, and most of it is the same as last
time: squeue prints a pending job's row unchanged for days, and the parser hands back the
very same :class:`~cockpit.model.SlurmJob` object for an unchanged row (``SqueueCarry``).
:class:`Reuse` keeps, per subject, what its rules produced and the context they produced it
in; :func:`diagnose_site` gives exactly what
``runtime.evidence.diagnose_with_evidence(snap, evidence, now)`` gives from scratch
(``tests/test_incremental.py`` checks it over random sequences of polls), running rules only
for subjects whose row or context changed.

What a kept finding depends on, and so what invalidates it:

* a job: its row (the same object), the partitions, the nodes' names, states, flags,
  sizes and reasons (not their load or allocation, which change every poll and no job rule
  reads), the storage usage and the source's name; job rules never read the clock;
* a node: the node (equal fields), the same context, and the OUT_OF_MEMORY jobs per node;
* a subject with evidence: the above, the same :class:`~cockpit.model.Artifacts` object, and
  whether the subjects its logs name are in the snapshot;
* site rules that read the snapshot and the clock (starvation, surge, storage): run once per
  poll, shared by every subject's diagnosis with evidence (they do not read artifacts);
* training jobs and pools: not kept (their rules read the clock).
"""

from __future__ import annotations

import heapq
import operator
import os
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any

from cockpit.diagnosis.context import RuleContext, build_context
from cockpit.diagnosis.delta import Delta, _oom_token, context_token, patch, record, rows_delta
from cockpit.diagnosis.engine import (
    Diagnosis,
    _sort_into,
    _subjects_by_kind,
    diagnose,
    fold,
    plan,
    run_steps,
)
from cockpit.diagnosis.rules import slurm_risk, slurm_site, storage
from cockpit.model import Artifacts, Finding, Snapshot, Subject

# Site rules that read only the snapshot and the clock, never artifacts: their findings for a
# snapshot are the same with or without a subject's evidence.
SNAPSHOT_SITE_RULES = frozenset(
    {
        slurm_site.controller_unreachable,
        slurm_site.backfill_starvation,
        slurm_site.priority_surge,
        slurm_risk.time_limit_near,
        slurm_risk.memory_near_request,
        slurm_risk.job_output_silent,
        storage.site_storage,
    }
)
KEPT_KINDS = frozenset({"job", "node"})

_Key = tuple[str, str, str, str]
# (site rule, findings it produced, rule errors) in registry order
_SiteOut = list[tuple[object, list[Finding], list[str]]]


_NOTHING = ((), ())  # a subject's findings and rule errors when it has neither


class Kept:
    """``(kind, id) -> (subject, its findings, rule errors)`` for every job and node of the
    last poll, held as one dict per kind keyed by the id itself (the job's own ``job_id``
    string) and, for a subject with neither findings nor errors (most nodes, many jobs), the
    subject alone: ~150 bytes a subject less than a dict of key and value tuples (#33).
    ``get`` and ``pop`` hand back the tuple."""

    __slots__ = ("by_kind",)

    def __init__(self) -> None:
        self.by_kind: dict[str, dict[str, object]] = {}

    def get(self, ident: tuple[str, str], default: Any = None) -> Any:
        d = self.by_kind.get(ident[0])
        v = d.get(ident[1], _NOTHING) if d is not None else _NOTHING
        if v is _NOTHING:
            return default
        return v if type(v) is tuple else (v, (), ())

    def __setitem__(self, ident: tuple[str, str], value: tuple) -> None:
        d = self.by_kind.get(ident[0])
        if d is None:
            d = self.by_kind[ident[0]] = {}
        subject, produced, errs = value
        d[ident[1]] = subject if not produced and not errs else value

    def pop(self, ident: tuple[str, str], default: Any = None) -> Any:
        d = self.by_kind.get(ident[0])
        v = d.pop(ident[1], _NOTHING) if d is not None else _NOTHING
        if v is _NOTHING:
            return default
        return v if type(v) is tuple else (v, (), ())

    def __len__(self) -> int:
        return sum(map(len, self.by_kind.values()))


@dataclass
class Reuse:
    """What one source's diagnosis keeps for the next poll (only the latest poll's subjects)."""

    token: tuple | None = None  # the context of the kept job findings
    node_token: tuple | None = None  # ... and of the kept node findings
    kept: Kept = field(default_factory=Kept)
    focused: dict[Subject, tuple] = field(default_factory=dict)
    site: tuple | None = None  # (snapshot, now, _SiteOut) of the latest poll
    index: tuple | None = None  # (snapshot, its lookups, kind -> (subjects, their lookups))
    about: tuple | None = None  # (site outputs, their findings by rule and subject)
    last: tuple | None = None  # (jobs, nodes, site outputs, Diagnosis) of the last snapshot
    last_site: tuple | None = None  # (snapshot Diagnosis, evidence, Diagnosis with it)
    delta: Any = None  # delta.DeltaState: the last answer per subject, patched next poll
    last_findings: tuple | None = None  # the pipeline's tuple of delta.result
    starve: dict | None = None  # the starvation rule's candidates and findings (see below)
    hits: int = 0  # subjects whose findings were kept (for benchmarks and tests)
    runs: int = 0  # subjects whose rules ran
    patched: int = 0  # polls answered by patching the last answer (delta.patch)
    rows_delta: tuple | None = None  # (old rows, new rows, delta.rows_delta) within one poll
    dirty: frozenset | None = None  # the subjects the last answer changed (None: any)


def _same(kind: str, old: object, new: object) -> bool:
    # a job row the parser carried over is the same object; nodes are parsed anew every poll
    return old is new or (kind != "job" and old == new)


def _site_outputs(
    snap: Snapshot, now: datetime, reuse: Reuse, ctx: RuleContext | None = None
) -> _SiteOut:
    """Every site rule's findings over ``snap`` without artifacts, once per (snapshot, now)."""
    if reuse.site is not None and reuse.site[0] is snap and reuse.site[1] == now:
        return reuse.site[2]
    if ctx is None or ctx.artifacts != Artifacts():
        ctx = build_context(snap, Artifacts(), now)
    strict = bool(os.environ.get("COCKPIT_STRICT_RULES"))
    default, _ = plan("site")
    before = {id(step): produced for step, produced, _ in reuse.site[2]} if reuse.site else {}
    out: _SiteOut = []
    for step in default:
        errs: list[str] = []
        if step == _STARVATION:  # its findings keep their identity already
            produced = run_steps(((_starvation_step(reuse),),), snap, ctx, errs, strict)
        else:
            produced = _interned(run_steps((step,), snap, ctx, errs, strict), before.get(id(step)))
        out.append((step, produced, errs))
    reuse.site = (snap, now, out)
    return out


_STARVATION = (slurm_site.backfill_starvation,)


def _starvation_step(reuse: Reuse):
    """``slurm_site.backfill_starvation`` keeping what it reads besides the clock (its
    candidates, while the rows are the same objects) and each finding until the clock moves
    its text: a finding changes when its job has waited another whole hour (or reaches the
    threshold), so each candidate waits in a heap for that moment and a poll touches only the
    ones due (at a 100k-job site the rule made 12k findings every poll)."""

    def backfill_starvation(snap: Snapshot, ctx: RuleContext) -> list[Finding]:
        now = ctx.now.timestamp()
        src = snap.source
        st = reuse.starve
        keep = st is not None and st["src"] == src and now >= st["now"]
        cands = None
        if keep and st is not None and st["jobs"] is not snap.jobs:
            d = rows_delta(st["jobs"], snap.jobs, reuse)
            # rows that changed only in their elapsed time: the candidates do not read it
            if d is None or (d[0] and not d[1]):
                cands = slurm_site.starvation_candidates(snap.jobs)
                keep = cands == st["cands"]  # rows compare by identity first
        if not keep or st is None:
            if cands is None:
                cands = slurm_site.starvation_candidates(snap.jobs)
            st = reuse.starve = {
                "src": src,
                "cands": cands,
                "made": st["made"] if st is not None else {},  # job id -> (job, key, finding)
                "slots": [None] * len(cands),
                "heap": [(0.0, i) for i in range(len(cands))],  # every one due now
                "out": [],
            }
        st["jobs"], st["now"] = snap.jobs, now
        cands, slots, heap, made = st["cands"], st["slots"], st["heap"], st["made"]
        due: list[int] = []
        while heap and heap[0][0] <= now + 1.0:  # a second early: the key decides below
            due.append(heapq.heappop(heap)[1])
        changed = False
        for i in due:
            j, n_later = cands[i]
            submit = j.submit_time.timestamp()
            waited = now - submit
            if waited < slurm_site.STARVE_S:
                f = None
                nxt = submit + slurm_site.STARVE_S
            else:
                hours = int(waited // 3600)
                key = (hours, n_later)  # what the finding's text says
                e = made.get(j.job_id)
                if e is not None and e[0] is j and e[1] == key:
                    f = e[2]
                else:  # the same row: its subject, remedy and squeue line are the last one's
                    like = e[2] if e is not None and e[0] is j else None
                    f = slurm_site.starvation_finding(j, n_later, waited, src, ctx, like)
                    made[j.job_id] = (j, key, f)
                nxt = submit + 3600.0 * (hours + 1)
            if f is not slots[i]:
                slots[i] = f
                changed = True
            heapq.heappush(heap, (nxt, i))  # looked at again from the next poll
        if changed:
            st["out"] = [f for f in slots if f is not None]
            if len(made) > 2 * len(cands) + 1024:
                present = {j.job_id for j, _ in cands}
                st["made"] = {k: e for k, e in made.items() if k in present}
        return st["out"]

    backfill_starvation.__module__ = slurm_site.__name__
    return backfill_starvation


def _interned(new: list[Finding], old: list[Finding] | None) -> list[Finding]:
    """``new`` with each finding equal to last poll's replaced by that object: site rules run
    every poll (they read the clock), and what did not change must stay the same object for
    the stages after diagnosis to see that nothing changed (they compare with ``is``)."""
    if not old:
        return new
    by_key = {(f.root_cause, f.subject): f for f in old}
    out = []
    for f in new:
        prev = by_key.get((f.root_cause, f.subject))
        out.append(prev if prev is not None and (prev is f or prev == f) else f)
    return out


def diagnose_snapshot(snap: Snapshot, now: datetime, reuse: Reuse) -> Diagnosis:
    """``diagnose(snap, None, now)``, running rules only for subjects that changed."""
    ctx = build_context(snap, Artifacts(), now)
    strict = bool(os.environ.get("COCKPIT_STRICT_RULES"))
    token = context_token(snap)
    node_token = (token, _oom_token(snap))
    same_jobs, same_nodes = token == reuse.token, node_token == reuse.node_token
    # the kept objects when equal: a focused diagnosis then compares its token by identity
    token = reuse.token if same_jobs else token
    node_token = reuse.node_token if same_nodes else node_token
    last = reuse.last
    if (
        last is not None
        and same_jobs
        and same_nodes
        and not (snap.training_jobs or snap.pools)
        and _same_items(snap.jobs, last[0])
        and snap.nodes == last[1]
    ):
        # every row the same object, every node equal, the same context: only the site rules
        # (they read the clock) can change the answer; if theirs is the same, so is the whole
        site = _site_outputs(snap, now, reuse, ctx)
        if len(site) == len(last[2]) and all(
            _same_items(p, q) and e == f for (_, p, e), (_, q, f) in zip(site, last[2], strict=True)
        ):
            reuse.hits += len(snap.jobs) + len(snap.nodes)
            reuse.last = (snap.jobs, snap.nodes, site, last[3])
            reuse.token, reuse.node_token = token, node_token
            return last[3]
    old, kept = reuse.kept, Kept()
    found: dict[_Key, Finding] = {}
    errors: list[str] = []
    site = []
    for kind, subjects in _subjects_by_kind(snap):
        default, by_state = plan(kind)
        if kind == "site":
            site = _site_outputs(snap, now, reuse, ctx)
            for _step, produced, errs in site:
                errors += errs
                fold(found, produced)
            continue
        valid = (same_jobs if kind == "job" else same_nodes) and kind in KEPT_KINDS
        for subject in subjects:
            if kind in KEPT_KINDS:
                ident = (kind, subject.job_id if kind == "job" else subject.name)
                e = old.get(ident) if valid else None
                if e is not None and _same(kind, e[0], subject):
                    produced, errs = e[1], e[2]
                    reuse.hits += 1
                else:
                    steps = by_state.get(subject.state, default) if by_state else default
                    errs = []
                    produced = run_steps(steps, subject, ctx, errs, strict)
                    reuse.runs += 1
                    # kept per subject until it changes: the shared () for the usual nothing
                    # (two empty lists per job were ~100 B of every job's memory)
                    errs = errs or ()
                    produced = produced or ()
                kept[ident] = (subject, produced, errs)
            else:
                steps = by_state.get(subject.state, default) if by_state else default
                errs = []
                produced = run_steps(steps, subject, ctx, errs, strict)
            errors += errs
            fold(found, produced)
    reuse.kept, reuse.token, reuse.node_token = kept, token, node_token
    result: Diagnosis = _sort_into(found.values(), Diagnosis(errors=errors))  # type: ignore[assignment]
    reuse.last = (snap.jobs, snap.nodes, site, result)
    return result


def _same_items(a: tuple | list, b: tuple | list) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


_ATTR = {"job": "job_id", "training_job": "job_id", "pool": "pool_id"}


def _name(o: object) -> object:
    return getattr(o, "name", None)


def _index(snap: Snapshot, reuse: Reuse) -> dict[str, Any]:
    """What a focused diagnosis looks up, once per snapshot: "<kind> ids" -> id -> the subject
    of that kind (what the log rules also look a log's subject up in), "<kind> names" -> the
    names of those whose name is not their id (``engine._focused`` matches either), "<kind>
    unique": no id appears twice."""
    if reuse.index is not None and reuse.index[0] is snap:
        return reuse.index[1]
    out: dict[str, Any] = {}
    before = reuse.index[2] if reuse.index is not None else {}
    parts: dict[str, tuple] = {}
    for kind, subjects in _subjects_by_kind(snap):
        if kind == "site":
            continue
        kept = before.get(kind)
        if kept is not None and (kept[0] is subjects or _same_items(kept[0], subjects)):
            out.update(kept[1])  # the same rows as the last poll's: the same lookups
            parts[kind] = kept
            continue
        attr = _ATTR.get(kind, "name")
        ids = out[f"{kind} ids"] = dict(zip(map(attrgetter(attr), subjects), subjects, strict=True))
        out[f"{kind} unique"] = len(ids) == len(subjects)  # type: ignore[arg-type]
        if attr == "name":
            out[f"{kind} names"] = set()
        else:
            # every name (a superset of the names that are not their subject's id: an id
            # found here is looked up by a scan, which is exact either way)
            try:
                out[f"{kind} names"] = set(map(attrgetter("name"), subjects))
            except AttributeError:
                out[f"{kind} names"] = set(map(_name, subjects))
        parts[kind] = (
            subjects,
            {k: out[k] for k in (f"{kind} ids", f"{kind} unique", f"{kind} names")},
        )
    reuse.index = (snap, out, parts)
    return out


def _objects(snap: Snapshot, index: dict[str, Any], subject: Subject) -> tuple:
    """The subjects ``engine._focused`` runs the rules of for ``subject``: those of its kind
    whose id or name is ``subject.id``, in snapshot order (a scan only when ids repeat or a
    name matches too)."""
    kind, ident = subject.kind, subject.id
    ids = index[f"{kind} ids"]
    if ident not in index[f"{kind} names"] and index[f"{kind} unique"]:
        return (ids[ident],) if ident in ids else ()
    attr = _ATTR.get(kind, "name")
    objs = dict(_subjects_by_kind(snap))[kind]
    return tuple(o for o in objs if getattr(o, attr) == ident or getattr(o, "name", None) == ident)


def diagnose_focused(
    snap: Snapshot, arts: Artifacts, subject: Subject, now: datetime, reuse: Reuse
) -> Diagnosis:
    """``diagnose(snap, arts, now, focus=subject)``, keeping the subject's findings while its
    row, its artifacts and their context stay the same."""
    if subject.kind not in KEPT_KINDS:
        return diagnose(snap, arts, now=now, focus=subject)
    index = _index(snap, reuse)
    objs = _objects(snap, index, subject)
    jobs, tjobs, nodes = index["job ids"], index["training_job ids"], index["node ids"]
    sids = tuple(
        (sid, sid in jobs, sid in nodes, sid in tjobs)
        for sid in dict.fromkeys(lt.subject_id for lt in arts.logs)
    )
    token = (reuse.node_token, sids)
    e = reuse.focused.get(subject)
    if (
        e is not None
        and e[1] is arts
        and e[2] == token
        and len(e[0]) == len(objs)
        and all(_same(subject.kind, a, b) for a, b in zip(e[0], objs, strict=True))
    ):
        replay = e[3]
        reuse.hits += 1
    else:
        ctx = build_context(snap, arts, now)
        # what the log rules would build from the whole queue for each subject: the
        # snapshot's ids, built once per poll here (the rules' own cache keys)
        ctx.cache["job_ids"] = jobs
        ctx.cache["platform_claims"] = (jobs, tjobs)
        replay = _focused_replay(snap, ctx, objs, subject)
        reuse.focused[subject] = (objs, arts, token, replay)
        reuse.runs += 1
    shared = _site_outputs(snap, now, reuse)
    mine = (subject.kind, subject.source, subject.id)
    about = _site_about(shared, reuse)
    found: dict[_Key, Finding] = {}
    errors: list[str] = []
    for item in replay:
        if isinstance(item, int):
            produced, errs = about.get((item, mine), ()), about[item]
        else:
            produced, errs = item
        errors += errs
        fold(found, produced)
    return _sort_into(found.values(), Diagnosis(errors=errors))  # type: ignore[return-value]


def _site_about(shared: _SiteOut, reuse: Reuse) -> dict:
    """The poll's site findings by (site rule id, subject), and each rule's errors by its id:
    a focused diagnosis keeps only its subject's findings, and findings merge only with
    findings about the same subject, so it folds only those."""
    if reuse.about is not None and reuse.about[0] is shared:
        return reuse.about[1]
    about: dict = {}
    for step, produced, errs in shared:
        about[id(step)] = errs
        for f in produced:
            s = f.subject
            about.setdefault((id(step), (s.kind, s.source, s.id)), []).append(f)
    reuse.about = (shared, about)
    return about


def _focused_replay(
    snap: Snapshot, ctx: RuleContext, objs: tuple, subject: Subject
) -> list[tuple[list[Finding], list[str]] | int]:
    """What a focused diagnosis folds, in order: (findings, errors) of the subject's rules and
    of the site rules that read artifacts, and the id of each snapshot-only site rule (whose
    findings come from the poll's shared run)."""
    strict = bool(os.environ.get("COCKPIT_STRICT_RULES"))
    mine = (subject.kind, subject.source, subject.id)

    def about(produced: list[Finding]) -> list[Finding]:
        # only the subject's findings are kept, and only they can merge with each other
        return [f for f in produced if (f.subject.kind, f.subject.source, f.subject.id) == mine]

    out: list[tuple[list[Finding], list[str]] | int] = []
    default, by_state = plan(subject.kind)
    for o in objs:
        steps = by_state.get(o.state, default) if by_state else default
        errs: list[str] = []
        out.append((about(run_steps(steps, o, ctx, errs, strict)), errs))
    site_default, _ = plan("site")
    for step in site_default:
        if all(fn in SNAPSHOT_SITE_RULES for fn in step):
            out.append(id(step))
        else:
            errs = []
            out.append((about(run_steps((step,), snap, ctx, errs, strict)), errs))
    return out


def diagnose_site(
    snap: Snapshot, evidence: dict[Subject, Artifacts], now: datetime, reuse: Reuse
) -> Diagnosis:
    """``runtime.evidence.diagnose_with_evidence(snap, evidence, now)`` (no memo), paying for
    what changed since the poll ``reuse`` last saw: the site's findings, where a subject with
    evidence has the findings of its diagnosis with its artifacts instead of its snapshot-only
    ones."""
    return diagnose_delta(snap, evidence, now, reuse).diagnosis


def diagnose_delta(
    snap: Snapshot, evidence: dict[Subject, Artifacts], now: datetime, reuse: Reuse
) -> Delta:
    """:func:`diagnose_site` and which subjects' findings changed since the last answer
    (:mod:`cockpit.diagnosis.delta`: the last answer patched where it can be, else the full
    path below, whose answer is kept for the next poll's patch)."""
    live = {s: a for s, a in evidence.items() if a.acct or a.logs or a.commands}
    if reuse.delta is not None:
        d = patch(
            snap,
            live,
            now,
            reuse,
            _site_outputs(snap, now, reuse),
            lambda s, a: diagnose_focused(snap, a, s, now, reuse),
        )
        reuse.rows_delta = None  # holds last poll's rows: not past this call
        if d is not None:
            reuse.focused = {s: e for s, e in reuse.focused.items() if s in live}
            reuse.last_site = None
            reuse.last = None  # the full path's shortcut (it holds an older poll's rows)
            reuse.patched += 1
            return d
    reuse.rows_delta = None
    focused_now: dict[Subject, list[Finding]] = {}
    result = _diagnose_full(snap, live, now, reuse, focused_now)
    record(snap, live, now, reuse, _site_outputs(snap, now, reuse), focused_now, result)
    return Delta(result, None)


def _diagnose_full(
    snap: Snapshot,
    live: dict[Subject, Artifacts],
    now: datetime,
    reuse: Reuse,
    focused_now: dict[Subject, list[Finding]],
) -> Diagnosis:
    site = diagnose_snapshot(snap, now, reuse)
    last = reuse.last_site
    if (
        last is not None
        and last[0] is site
        and len(last[1]) == len(live)
        and all(s == t and a is b for (s, a), (t, b) in zip(last[1], live.items(), strict=True))
    ):
        # the same site answer (same rows, context and site findings) and the same evidence
        # objects: every focused diagnosis would replay what it kept
        return last[2]
    errors = list(site.errors)
    found: dict[_Key, Finding] = {}
    by_subject: dict[tuple[str, str], list[_Key]] = {}
    for f in site:
        s = f.subject
        k = (f.root_cause, s.kind, s.source, s.id)
        found[k] = f
        by_subject.setdefault((s.kind, s.id), []).append(k)
    for subject, arts in live.items():
        mine = diagnose_focused(snap, arts, subject, now, reuse)
        focused_now[subject] = list(mine)
        errors += mine.errors
        if not mine:
            continue
        for k in by_subject.pop((subject.kind, subject.id), ()):
            found.pop(k, None)
        for f in mine:
            s = f.subject
            k = (f.root_cause, s.kind, s.source, s.id)
            found[k] = f
            by_subject.setdefault((s.kind, s.id), []).append(k)
    reuse.focused = {s: e for s, e in reuse.focused.items() if s in live}
    result: Diagnosis = _sort_into(found.values(), Diagnosis(errors=errors))  # type: ignore[assignment]
    reuse.last_site = (site, tuple(live.items()), result)
    return result
