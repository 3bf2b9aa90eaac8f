"""A poll's diagnosis as a patch of the last one: only the subjects that changed are folded again.

:func:`cockpit.diagnosis.incremental.diagnose_site` already runs rules only for the rows that
changed, but it used to fold and sort every finding of the site each poll (60k at a 100k-job
site) and hand every later stage a brand-new list. Here the answer is kept per *bucket* (one
subject: its kind, source and id) and a poll works on the buckets whose contributions changed:

* a job or node whose rules ran again (its row changed) and gave findings not equal to the kept
  ones, one that arrived or left;
* the findings the site rules (starvation, surge, storage: they read the clock, so they run
  every poll) and partition rules give about a subject, when they are not the same objects;
* a subject whose evidence arrived, left, was replaced, or whose focused diagnosis changed.

Each dirty bucket is folded again exactly as ``engine.diagnose`` folds it (its own rules'
findings first, then the other producers' in registry order), the evidence overlay applied as
``diagnose_site`` applies it, and the sorted list patched in place (findings have a total
order: their sort key ends with the subject's id, and a key is unique per subject and cause).
The answer's :attr:`Delta.dirty` names the buckets that changed, for verdicts and rows.

Anything this does not model exactly falls back to the full path (``None``): the context
token changed (partitions, nodes' states), a rule raised, two rows share a job id, a job or
node rule spoke about another subject, training jobs or pools in the snapshot.
``tests/test_delta.py`` checks the answer against a from-scratch run over random polls.
"""

from __future__ import annotations

import dataclasses
import operator
import os
from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime
from itertools import compress
from operator import attrgetter, is_
from typing import TYPE_CHECKING

from cockpit.diagnosis.context import build_context
from cockpit.diagnosis.engine import (
    Diagnosis,
    _key_prefix,
    _sort_into,
    fold,
    plan,
    run_steps,
    sort_key,
)
from cockpit.model import Artifacts, Finding, SlurmJob, Snapshot, Subject

if TYPE_CHECKING:
    from cockpit.diagnosis.incremental import Reuse

Bucket = tuple[str, str, str]  # (subject kind, source, id)


@dataclass
class DeltaState:
    """What :func:`patch` keeps from one poll to the next (one source)."""

    jobs: tuple = ()
    nodes: tuple = ()
    others: dict[Bucket, list[Finding]] = field(default_factory=dict)
    site_lists: tuple = ()  # the partition and site rules' outputs of the last poll
    focused: dict[Subject, list[Finding]] = field(default_factory=dict)
    live: dict[Subject, Artifacts] = field(default_factory=dict)
    final: dict[Bucket, list[Finding]] = field(default_factory=dict)
    ordered: list[Finding] = field(default_factory=list)
    keys: list[tuple] = field(default_factory=list)
    pos: dict[int, int] | None = None  # id(finding) -> its place in ordered (lazily)
    result: Diagnosis | None = None


@dataclass
class Delta:
    """A patched diagnosis: ``diagnosis`` (sorted, like the full path's) and ``dirty`` (the
    buckets whose findings changed since the last answer; None: everything may have)."""

    diagnosis: Diagnosis
    dirty: frozenset[Bucket] | None


# States whose job rules never read ``elapsed_s`` (only the rules of ended jobs do, and an
# ended job's time no longer moves): a row whose TIME alone changed keeps its findings.
# tests/test_delta.py checks the rules against it.
ELAPSED_BLIND = frozenset({"RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STOPPED"})
_CLOCK_FIELDS = ("elapsed_s", "elapsed_at")  # a job's time and when it was read
_JOB_FIELDS = tuple(f.name for f in dataclasses.fields(SlurmJob) if f.name not in _CLOCK_FIELDS)
_but_elapsed = attrgetter(*_JOB_FIELDS)


def _only_elapsed(old: SlurmJob, new: SlurmJob) -> bool:
    """Whether two rows of a job differ at most in their elapsed time."""
    return _but_elapsed(old) == _but_elapsed(new)


def context_token(snap: Snapshot) -> tuple:
    """What job rules read besides the job itself (see the module's docstring)."""
    nodes = tuple(
        (
            n.name,
            n.state,
            n.flags,
            n.partitions,
            n.cpus_total,
            n.real_memory_mib,
            n.gres,
            n.reason,
            n.reason_user,
            n.reason_time,
            n.boot_time,
        )
        for n in snap.nodes
    )
    return (snap.source, snap.kind, tuple(snap.partitions), nodes, snap.storage)


_OOM_LAST: list = [((), ())]  # (rows, their token): polls of one source hand the same rows


def _oom_token(snap: Snapshot) -> tuple:
    jobs = snap.jobs
    rows, token = _OOM_LAST[0]
    if rows is jobs or (len(rows) == len(jobs) and all(map(operator.is_, rows, jobs))):
        return token
    oom = compress(jobs, map("OUT_OF_MEMORY".__eq__, map(_state, jobs)))
    token = tuple((j.job_id, j.nodes) for j in oom)
    _OOM_LAST[0] = (jobs, token)
    return token


_state = attrgetter("state")


def rows_delta(old: tuple, new: tuple, reuse: Reuse | None = None) -> tuple[list[int], bool] | None:
    """Where two polls' rows differ, by position: (positions whose row is another object,
    whether each of those differs from the old row only in ``elapsed_s`` in a state whose
    rules do not read it, see ``delta.ELAPSED_BLIND``); None when rows arrived or left.
    Computed once per pair of polls (every stage that keeps something asks)."""
    last = reuse.rows_delta if reuse is not None else None
    if last is not None and last[0] is old and last[1] is new:
        return last[2]
    if len(old) != len(new):
        ans = None
    else:
        moved = list(compress(range(len(new)), map(operator.is_not, old, new)))
        blind = ELAPSED_BLIND
        only = all(new[i].state in blind and _only_elapsed(old[i], new[i]) for i in moved)
        ans = (moved, only)
    if reuse is not None:  # dropped at the end of the poll's diagnosis (no old rows held)
        reuse.rows_delta = (old, new, ans)
    return ans


class _Fallback(Exception):
    """Something :func:`patch` does not model: take the full path."""


def _bucket(s: Subject) -> Bucket:
    return (s.kind, s.source, s.id)


def _own(kind: str, source: str, ident: str, produced: list[Finding]) -> None:
    for f in produced:
        s = f.subject
        if s.kind != kind or s.id != ident or s.source != source:
            raise _Fallback("a rule spoke about another subject")


def _intern_list(new: list[Finding], old: list[Finding] | None) -> list[Finding]:
    """``old`` itself when ``new`` equals it (the same findings, parsed anew)."""
    if old is not None and len(old) == len(new) and (new == old):
        return old
    return new


def _same_items(a, b) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


def patch(
    snap: Snapshot,
    live: dict[Subject, Artifacts],
    now: datetime,
    reuse: Reuse,
    site_out: list,
    focused,
) -> Delta | None:
    """The site's findings with evidence, as ``diagnose_site``'s full path gives them, paying
    for the buckets that changed; None when the full path must run (it then calls
    :func:`record`). ``site_out``: the poll's shared site-rule outputs; ``focused(subject,
    arts)``: the focused diagnosis of one subject with its evidence."""
    st: DeltaState | None = reuse.delta
    if st is None or snap.training_jobs or snap.pools:
        return None
    try:
        return _patch(snap, live, now, reuse, st, site_out, focused)
    except _Fallback:
        reuse.delta = None
        return None


def _patch(snap, live, now, reuse, st: DeltaState, site_out, focused) -> Delta:
    token = context_token(snap)
    node_token = (token, _oom_token(snap))
    if token != reuse.token or node_token != reuse.node_token:
        raise _Fallback("context changed")
    token, node_token = reuse.token, reuse.node_token
    src = snap.source
    strict = bool(os.environ.get("COCKPIT_STRICT_RULES"))
    kept = reuse.kept
    dirty: set[Bucket] = set()
    ctx = None
    # ---- jobs: the rows that are not last poll's objects
    jobs = snap.jobs
    if not _same_items(jobs, st.jobs):
        d = rows_delta(st.jobs, jobs, reuse)
        before = st.jobs
        if d is not None and all(jobs[i].job_id == before[i].job_id for i in d[0]):
            # rows replaced in place (the common poll): no dict of every row
            new_objs = [jobs[i] for i in d[0]]
            gone_objs = [before[i] for i in d[0]]
        else:
            d = None
            # built again from the last rows, not kept between polls: one dict a poll
            # (~1 ms at 10k jobs) against ~0.8 MB held at 10k, ~8 MB at 100k
            old_objs = dict(zip(map(id, before), before, strict=True))
            job_objs = dict(zip(map(id, jobs), jobs, strict=True))
            if len(job_objs) != len(jobs):
                raise _Fallback("a row twice")
            new_objs = [job_objs[k] for k in job_objs.keys() - old_objs.keys()]
            gone_objs = [old_objs[k] for k in old_objs.keys() - job_objs.keys()]
        gone_ids = {id(o) for o in gone_objs}
        ticked = d is not None and d[1]  # every replaced row differs only in elapsed time
        arrived: set[str] = set()
        default, by_state = plan("job")
        for j in new_objs:
            ident = ("job", j.job_id)
            if ident[1] in arrived:
                raise _Fallback("a job id twice")
            arrived.add(ident[1])
            e = kept.get(ident)
            if e is not None and id(e[0]) not in gone_ids:
                raise _Fallback("a job id twice")  # its old row is still there
            if e is not None and (ticked or (j.state in ELAPSED_BLIND and _only_elapsed(e[0], j))):
                kept[ident] = (j, e[1], e[2])  # squeue's TIME ticked: no job rule reads it
                continue
            if ctx is None:
                ctx = build_context(snap, Artifacts(), now)
            errs: list[str] = []
            produced = run_steps(by_state.get(j.state, default), j, ctx, errs, strict)
            reuse.runs += 1
            if errs or (e is not None and e[2]):
                raise _Fallback("rule errors")
            _own("job", src, j.job_id, produced)
            old = e[1] if e is not None else None
            # an empty answer is the shared () the full path keeps (see incremental)
            produced = _intern_list(produced or (), old)
            if produced is not old:
                dirty.add(("job", src, j.job_id))
            kept[ident] = (j, produced, ())  # errs is empty here (else a fallback)
        for o in gone_objs:
            if o.job_id in arrived:
                continue
            e = kept.pop(("job", o.job_id), None)
            if e is not None and e[2]:
                raise _Fallback("rule errors")
            dirty.add(("job", src, o.job_id))
        reuse.hits += len(jobs) - len(new_objs)
    else:
        reuse.hits += len(jobs)
    # ---- nodes: parsed anew every poll, compared by value
    nodes = snap.nodes
    if not (_same_items(nodes, st.nodes) or nodes == st.nodes):
        default, by_state = plan("node")
        names = set()
        for n in nodes:
            ident = ("node", n.name)
            if n.name in names:
                raise _Fallback("a node twice")
            names.add(n.name)
            e = kept.get(ident)
            if e is not None and (e[0] is n or e[0] == n):
                kept[ident] = (n, e[1], e[2])
                continue
            if ctx is None:
                ctx = build_context(snap, Artifacts(), now)
            errs = []
            produced = run_steps(by_state.get(n.state, default), n, ctx, errs, strict)
            reuse.runs += 1
            if errs or (e is not None and e[2]):
                raise _Fallback("rule errors")
            _own("node", src, n.name, produced)
            old = e[1] if e is not None else None
            # an empty answer is the shared () the full path keeps (see incremental)
            produced = _intern_list(produced or (), old)
            if produced is not old:
                dirty.add(("node", src, n.name))
            kept[ident] = (n, produced, ())  # errs is empty here (else a fallback)
        for n in st.nodes:
            if n.name not in names:
                e = kept.pop(("node", n.name), None)
                if e is not None and e[2]:
                    raise _Fallback("rule errors")
                dirty.add(("node", src, n.name))
    # ---- partition and site rules: what they say about each subject
    lists = _other_lists(snap, now, reuse, site_out, strict)
    others = st.others
    if not (len(lists) == len(st.site_lists) and all(map(_same_items, lists, st.site_lists))):
        others = _by_bucket(lists)
        old_others = st.others
        for b, fs in others.items():
            if not _same_items(fs, old_others.get(b, ())):
                dirty.add(b)
        for b in old_others.keys() - others.keys():
            dirty.add(b)
    # ---- evidence: each subject with live evidence has its focused diagnosis
    focused_now: dict[Subject, list[Finding]] = {}
    for s, arts in live.items():
        mine = focused(s, arts)
        if mine.errors:
            raise _Fallback("rule errors")
        prev = st.focused.get(s)
        got = _intern_list(list(mine), prev)
        focused_now[s] = got
        if got is not prev or st.live.get(s) is None:
            dirty.add(_bucket(s))
    for s in st.focused.keys() - focused_now.keys():
        dirty.add(_bucket(s))
    overlay = {_bucket(s): fs for s, fs in focused_now.items() if fs}
    # ---- fold the dirty buckets again, patch the sorted list
    final = st.final
    changed: list[tuple[list[Finding], list[Finding]]] = []
    touched: set[Bucket] = set()
    for b in dirty:
        fs = overlay.get(b)
        if fs is None:
            found: dict = {}
            kind = b[0]
            if kind in ("job", "node") and b[1] == src:
                e = kept.get((kind, b[2]))
                if e is not None:
                    fold(found, e[1])
            fold(found, others.get(b, ()))
            fs = sorted(found.values(), key=sort_key)
        old = final.get(b)
        if old is not None and (fs is old or fs == old):
            continue
        changed.append((old or [], fs))
        touched.add(b)
        if fs:
            final[b] = fs
        else:
            final.pop(b, None)
    ordered, keys = st.ordered, st.keys
    if changed:
        # findings replaced under the same sort keys (a starved job's count of later jobs: ~500
        # a poll at 10k jobs with churn) keep their places; only the rest (arrivals,
        # departures, a new cause) are merged in, or the list sorted again when they are many
        same, moved = _split_same_keys(changed)
        if sum(len(a) + len(b) for a, b in moved) * 4 > len(ordered):
            ordered = _sort_into((f for fs in final.values() for f in fs), [])
            keys = list(map(sort_key, ordered))
            st.pos = None
        else:
            if same:
                _in_place(ordered, same, st)
            if moved:
                ordered, keys = _merge_sorted(ordered, keys, moved)
                st.pos = None
        result = Diagnosis(ordered)
        result.errors = []
    else:
        result = st.result
    st.jobs, st.nodes = jobs, nodes
    st.others, st.site_lists = others, lists
    st.focused, st.live = focused_now, dict(live)
    st.ordered, st.keys, st.result = ordered, keys, result
    reuse.token, reuse.node_token = token, node_token
    return Delta(result, frozenset(touched))


def _split_same_keys(
    changed: list[tuple[list[Finding], list[Finding]]],
) -> tuple[list[tuple[list[Finding], list[Finding]]], list[tuple[list[Finding], list[Finding]]]]:
    """(the changes whose new findings have the old ones' sort keys, one for one; the rest)."""
    same, moved = [], []
    for pair in changed:
        old_fs, new_fs = pair
        keep = len(old_fs) == len(new_fs) and all(map(_same_key, old_fs, new_fs))
        (same if keep else moved).append(pair)
    return same, moved


def _same_key(a: Finding, b: Finding) -> bool:
    return a.subject.id == b.subject.id and _key_prefix(a) == _key_prefix(b)


def _in_place(
    ordered: list[Finding], changed: list[tuple[list[Finding], list[Finding]]], st: DeltaState
) -> bool:
    """Replace each changed finding by its successor at its place when every change keeps
    the sort key (a starved job's minutes, a title refined): no search, no list moved.
    ``st.pos`` (finding id -> place) is built once and kept while places do not move."""
    for old_fs, new_fs in changed:
        if len(old_fs) != len(new_fs) or list(map(sort_key, old_fs)) != list(map(sort_key, new_fs)):
            return False
    pos = st.pos
    if pos is None:
        pos = st.pos = dict(zip(map(id, ordered), range(len(ordered)), strict=True))
    for old_fs, new_fs in changed:
        for f, g in zip(old_fs, new_fs, strict=True):
            i = pos.pop(id(f), None)
            if i is None or ordered[i] is not f:
                st.pos = None
                raise _Fallback("sorted list out of step")
            ordered[i] = g
            pos[id(g)] = i
    return True


def _merge_sorted(
    ordered: list[Finding], keys: list[tuple], changed: list[tuple[list[Finding], list[Finding]]]
) -> tuple[list[Finding], list[tuple]]:
    """``ordered`` (sorted, ``keys`` its sort keys) without the old findings of ``changed``
    and with the new ones at their places: a bisection per change and one copy of the list
    in slices (sort keys are unique, see the module's docstring)."""
    drop: list[int] = []
    for old_fs, _ in changed:
        for f in old_fs:
            i = bisect_left(keys, sort_key(f))
            if i >= len(ordered) or ordered[i] is not f:
                raise _Fallback("sorted list out of step")
            drop.append(i)
    adds = sorted(((sort_key(f), f) for _, new_fs in changed for f in new_fs), key=_first)
    events = sorted(
        [(i, 1, None, None) for i in drop] + [(bisect_left(keys, k), 0, k, f) for k, f in adds],
        key=_event_order,
    )
    out: list[Finding] = []
    out_keys: list[tuple] = []
    at = 0
    for pos, is_drop, k, f in events:
        if pos > at:
            out += ordered[at:pos]
            out_keys += keys[at:pos]
            at = pos
        if is_drop:
            at = pos + 1
        else:
            if out_keys and not out_keys[-1] < k:
                raise _Fallback("two findings with one sort key")
            out.append(f)
            out_keys.append(k)
    out += ordered[at:]
    out_keys += keys[at:]
    return out, out_keys


def _first(pair: tuple) -> tuple:
    return pair[0]


def _event_order(e: tuple) -> tuple:
    # by position; at one position the insertions (sorted by key) before the removal
    return (e[0], e[1], e[2] or ())


def _other_lists(snap, now, reuse, site_out, strict) -> tuple:
    """The partition rules' outputs (they run every poll: a few partitions) and the site
    rules' (shared, interned by ``_site_outputs``), in registry order."""
    out: list[list[Finding]] = []
    default, by_state = plan("partition")
    if default or by_state:
        ctx = build_context(snap, Artifacts(), now)
        prev = reuse.delta.site_lists if reuse.delta is not None else ()
        for i, p in enumerate(snap.partitions):
            errs: list[str] = []
            produced = run_steps(
                by_state.get(p.state, default) if by_state else default, p, ctx, errs, strict
            )
            if errs:
                raise _Fallback("rule errors")
            out.append(_intern_list(produced, prev[i] if i < len(prev) else None))
    for _step, produced, errs in site_out:
        if errs:
            raise _Fallback("rule errors")
        out.append(produced)
    return tuple(out)


def _by_bucket(lists: tuple) -> dict[Bucket, list[Finding]]:
    out: dict[Bucket, list[Finding]] = {}
    for produced in lists:
        for f in produced:
            s = f.subject
            b = (s.kind, s.source, s.id)
            g = out.get(b)
            if g is None:
                out[b] = [f]
            else:
                g.append(f)
    return out


def record(
    snap: Snapshot,
    live: dict[Subject, Artifacts],
    now: datetime,
    reuse: Reuse,
    site_out: list,
    focused_now: dict[Subject, list[Finding]],
    result: Diagnosis,
) -> None:
    """Keep the full path's answer so the next poll can patch it (no state when the answer
    has rule errors, rows share an id, or the snapshot has kinds :func:`patch` does not
    model)."""
    reuse.delta = None
    if result.errors or snap.training_jobs or snap.pools:
        return
    try:
        src = snap.source
        n = len(snap.jobs)
        if len(set(map(id, snap.jobs))) != n or len({j.job_id for j in snap.jobs}) != n:
            return
        for kind, objs in (("job", snap.jobs), ("node", snap.nodes)):
            for o in objs:
                ident = (kind, o.job_id if kind == "job" else o.name)
                e = reuse.kept.get(ident)
                if e is None or e[2]:
                    return
                _own(kind, src, ident[1], e[1])
        lists = _other_lists(snap, now, reuse, site_out, False)
    except _Fallback:
        return
    final: dict[Bucket, list[Finding]] = {}
    for f in result:
        final.setdefault(_bucket(f.subject), []).append(f)
    ordered = list(result)
    reuse.delta = DeltaState(
        jobs=snap.jobs,
        nodes=snap.nodes,
        others=_by_bucket(lists),
        site_lists=lists,
        focused={s: fs for s, fs in focused_now.items()},
        live=dict(live),
        final=final,
        ordered=ordered,
        keys=list(map(sort_key, ordered)),
        result=result,
    )
