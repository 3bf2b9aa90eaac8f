"""Incidents: findings folded by cause, so one sick node or one user's limit is one line.

A node's DRAIN/DOWN finding absorbs the job findings it explains; jobs that share a cause
and a scope (one user's held jobs, one user at a QOS limit, the jobs of a cluster starved by
backfill) are one incident with a count, its members in ``findings``; every other critical or
warning finding is an incident of its own. At a 100k-job site that is hundreds of incidents,
not tens of thousands.

Incident keys are the identity of the failure, not its current label, so an acknowledgement
or a stored incident survives the cause being refined (``non-zero exit`` becoming ``command
not found`` once the evidence arrives):

* one job: ``job|<source>|<job id>|<end time, else submit time>`` (a requeued or re-used job
  id is another failure);
* a node: ``node|<source>|<node>|<time of its DRAIN/DOWN reason>`` (empty when Slurm does not
  report it: the store keeps the time it was first seen);
* jobs sharing a cause and a signature: ``group|<source>|<cause>|<scope>|<signature digest>``
  (scope: the user, or empty for the whole cluster).

A group is one cause *and* one signature: what the failure itself names (the missing program
or library, the signal, the partition limit, the node, the image), read from the finding's
title without the facts that differ from job to job of one failure (how long each ran, each
task's peak memory). Three jobs missing three programs are three incidents; the group's title
is that signature, never one member's own text.
"""

from __future__ import annotations

import hashlib
import operator
import re
from dataclasses import replace
from datetime import timedelta
from functools import lru_cache
from itertools import compress

from cockpit.diagnosis.engine import sort_findings
from cockpit.i18n import _, catalogue_words, ngettext
from cockpit.model import SEVERITY_RANK, Finding, Incident, Subject

# Job causes that a sick node explains (the job is a symptom of the node).
_NODE_SYMPTOMS = frozenset(
    {
        "node_not_responding",
        "application_error",
        "oom_killed",
        "node_down_unexpected_reboot",
        "gpu_hardware_error",
        "mpi_network_error",
        "nccl_communication_error",
        "disk_full",
        "node_drain_kill_task_failed",
        "node_drain_prolog_epilog_failed",
        "pending_launch_failed_held",
        "node_boot_failed",
        "host_memory_error",
    }
)

# Job causes that are a node's state (its drain reason): a casualty of that node's incident.
# Once the node is no longer DRAIN/DOWN (resumed) that incident resolves, and its jobs make no
# new one (a cluster group of the same jobs would be a second verdict on one failure): the
# job's own view still shows its finding, the stored node incident still lists them.
_NODE_CASUALTIES = frozenset({"node_drain_kill_task_failed", "node_drain_prolog_epilog_failed"})


# A job that ended this long before its node's DRAIN/DOWN reason was set can still be that
# node's casualty: slurmctld drains a node for "Kill task failed" after UnkillableStepTimeout
# (60 s by default) and a few retries. A job that ended earlier than this is not.
NODE_GRACE = timedelta(minutes=5)
# drains a person set (the reason names no fault; an OOM loop is read from the jobs that ended
# before it, which are its evidence, not its casualties): only what ended after is theirs
_NO_GRACE = frozenset({"node_drain_admin", "node_drain_loop"})

# Facts in a title that differ between the jobs of one failure: how long each ran, whether it
# died at once, each task's peak memory, whether sacct had its exit code yet (a headline that
# names the cause ends with the exit: "x: command not found (exit 127)", "(non-zero exit)").
# Each in English and in the engine's Chinese (engine.po), so both group the same jobs.
_PER_JOB = (
    re.compile(r" \((?:exit \d+|non-zero exit|非零退出)(?: within seconds|, 几秒内)?\)$"),
    re.compile(r" after \d[\d:\-]*|, 运行 \d[\d:\-]* 后"),
    re.compile(r" within seconds|, 几秒内"),
    re.compile(r"MaxRSS [\d.]+ ?[KMGTP]?i?B?(?: \([^)]*\))? (?:of|/) "),
)
_OOM_NODES = re.compile(r"(?: on|, 节点) \S+$")  # the node an OOM job ran on is not the failure


@lru_cache(maxsize=1 << 14)
def _signature(cause: str, title: str) -> str:
    for rx in _PER_JOB:
        title = rx.sub("", title)
    if cause == "oom_killed":
        title = _OOM_NODES.sub("", title)
    return title


def signature(f: Finding) -> str:
    """What a job finding's failure names, the same for every job of that one failure (see the
    module's docstring): the jobs of a group share it, and it is the group's title."""
    return _signature(f.root_cause, f.title)


_FACT = re.compile(r"[A-Za-z0-9_.:/+=%-]+")


@lru_cache(maxsize=1 << 14)
def _digest(sig: str) -> str:
    """A group's key part, the same whatever language its title was written in: the facts the
    title quotes (a program, a library, a number, a Slurm setting), without the cockpit's own
    words (:func:`cockpit.i18n.catalogue_words`) and in no particular order, so a Chinese TUI
    and an English ``watch`` sharing a store keep one key (and one ack) per failure."""
    prose = catalogue_words()
    facts = sorted(
        t
        for t in (m.strip(".:,;") for m in _FACT.findall(sig))
        # a lone letter is English grammar ("ines's" -> s), never a fact
        if t and not (t.isalpha() and (len(t) < 2 or t.lower() in prose))
    )
    return hashlib.blake2s("\x1f".join(facts).encode("utf-8", "replace"), digest_size=6).hexdigest()


def correlate(
    findings: list[Finding], presorted: bool = False, memo: dict | None = None
) -> list[Incident]:
    """Fold findings into incidents: one cause, many symptoms.

    A node finding (DRAIN/DOWN with its reason) absorbs the critical/warning job findings
    whose ``related`` names that node and whose cause a sick node explains (NODE_FAIL,
    Killed, OOM, ...): one incident naming the node, the jobs in ``affected``. Job findings
    sharing a cause and a scope are one incident (``title`` counts them, ``findings`` lists
    them); other critical/warning findings are one incident each; info findings (will run)
    are none. Keys: see the module's docstring. Sorted by severity, then oldest.
    ``presorted``: ``findings`` are already in ``sort_findings`` order (a diagnosis is), so
    the non-info ones are only picked out. ``memo``: a dict the caller keeps from one call to
    the next (one per source): each group's incident is kept while its members are the same
    objects, and findings replaced in place only re-fold their groups (see ``_patched``).
    """
    # info findings (will run) are never part of an incident: sorting only the rest (~13k of
    # 60k at a big site) keeps the same relative order, the sort being stable
    if presorted:
        ordered = [f for f in findings if f.severity != "info"]
    else:
        ordered = sort_findings(f for f in findings if f.severity != "info")
    if memo is not None:
        got = _patched(ordered, memo)
        if got is not None:
            return _one_per_key(got)
        memo.pop("struct", None)
    node_heads: dict[tuple[str, str], Finding] = {}
    for f in ordered:
        if f.subject.kind == "node" and f.severity != "info":
            node_heads.setdefault((f.subject.source, f.subject.id), f)
    grouped: dict[tuple[str, str], list[Finding]] = {k: [] for k in node_heads}
    singles: list[Finding] = []
    for f in ordered:
        if f.subject.kind == "node":
            if node_heads.get((f.subject.source, f.subject.id)) is not f:
                grouped[(f.subject.source, f.subject.id)].append(f)
            continue
        target = None
        if f.root_cause in _NODE_SYMPTOMS:
            for rel in f.related:
                head = node_heads.get((rel.source, rel.id)) if rel.kind == "node" else None
                if head is not None and _in_window(f, head):
                    target = (rel.source, rel.id)
                    break
        if target is not None:
            grouped[target].append(f)
        elif not _casualty(f):
            singles.append(f)
    singles = _fold_bulk(singles, memo)
    n_nodes = len(node_heads)
    incidents: list[Incident] = []
    for (source, node), head in node_heads.items():
        members = grouped[(source, node)]
        affected = tuple(dict.fromkeys(m.subject for m in members if m.subject.kind != "node"))
        firsts = [x.first_seen for x in (head, *members) if x.first_seen is not None]
        title = head.title + (
            " ("
            + ngettext("{n} job affected", "{n} jobs affected", len(affected)).format(
                n=len(affected)
            )
            + ")"
            if affected
            else ""
        )
        incidents.append(
            Incident(
                key=f"node|{source}|{node}|{_stamp(head)}",
                root_cause=head.root_cause,
                severity=min((head, *members), key=lambda x: SEVERITY_RANK[x.severity]).severity,
                subject=head.subject,
                title=title,
                findings=(head, *members),
                affected=affected,
                first_seen=min(firsts) if firsts else None,
            )
        )
    # a one-finding incident is its finding's alone: last call's while the finding is the
    # same object (a churning site correlates from scratch every poll; ~1k such incidents
    # at 10k jobs, ~500 of their findings new)
    kept = memo.get("singles", {}) if memo is not None else {}
    made: dict[int, tuple[Finding, Incident]] = {}
    for item in singles:
        if isinstance(item, Incident):
            incidents.append(item)
            continue
        e = kept.get(id(item))
        inc = e[1] if e is not None and e[0] is item else _single(item)
        made[id(item)] = (item, inc)
        incidents.append(inc)
    if memo is not None:
        memo["singles"] = made
    result = sorted(incidents, key=_inc_key)
    if memo is not None and "layout" in memo:
        plain, gpos = memo.pop("layout")
        where: dict[int, tuple] = {}
        groups: dict[tuple, tuple[int, list[Finding]]] = {}
        for k, (at, members) in gpos.items():
            groups[k] = (n_nodes + at, members)
            for m_idx, m in enumerate(members):
                where[id(m)] = (m, k, m_idx)
        for fid, (f, at) in plain.items():
            where[fid] = (f, None, n_nodes + at)
        memo["struct"] = {
            "ordered": ordered,
            "pre": incidents,
            "where": where,
            "groups": groups,
            "node_heads": frozenset(node_heads),
            "result": result,
        }
    return _one_per_key(result)


def _one_per_key(incidents: list[Incident]) -> list[Incident]:
    """One incident per key: a subject with two findings of its own (a training job whose log
    says the input path is missing and whose volume mapping is malformed) is one incident led by
    the first in severity order, the other finding in it as well. Two incidents under one key
    showed the same job twice, and whichever the store or the views kept won at random."""
    seen: dict[str, int] = {}
    out: list[Incident] = []
    for inc in incidents:
        at = seen.get(inc.key)
        if at is None:
            seen[inc.key] = len(out)
            out.append(inc)
            continue
        head = out[at]
        extra = tuple(f for f in inc.findings if f not in head.findings)
        more = tuple(s for s in inc.affected if s not in head.affected)
        out[at] = replace(head, findings=head.findings + extra, affected=head.affected + more)
    return out if len(out) != len(incidents) else incidents


def _inc_key(i: Incident) -> tuple:
    ts = i.first_seen.timestamp() if i.first_seen else float("inf")
    return (SEVERITY_RANK.get(i.severity, 3), ts, i.key)


def _single(f: Finding) -> Incident:
    """The incident of one finding."""
    return Incident(
        key=single_key(f),
        root_cause=f.root_cause,
        severity=f.severity,
        subject=f.subject,
        title=f.title,
        findings=(f,),
        affected=f.related,
        first_seen=f.first_seen,
    )


def _node_target(f: Finding, node_heads: frozenset | dict) -> bool:
    """Whether a sick node's incident may take ``f`` in (see :func:`correlate`): the patch
    path then correlates from scratch, where the time window is checked."""
    return f.root_cause in _NODE_SYMPTOMS and any(
        rel.kind == "node" and (rel.source, rel.id) in node_heads for rel in f.related
    )


def _in_window(f: Finding, head: Finding) -> bool:
    """Whether job finding ``f`` failed on the node after the node's problem began (within
    :data:`NODE_GRACE`): a job that ended before a drain is not that drain's casualty. Either
    time unknown: linked, as the node names it."""
    if f.first_seen is None or head.first_seen is None:
        return True
    # the grace is for a fault slurmctld notes after the job it hit (Kill task failed, a
    # health check's drain); a drain an operator set names no fault, so only what ended
    # after it can be its casualty
    grace = NODE_GRACE if head.root_cause not in _NO_GRACE else timedelta(0)
    return f.first_seen >= head.first_seen - grace


def _casualty(f: Finding) -> bool:
    """A job's node-state cause naming a node that no longer heads an incident (resumed)."""
    return f.root_cause in _NODE_CASUALTIES and any(rel.kind == "node" for rel in f.related)


def _patched(ordered: list[Finding], memo: dict) -> list[Incident] | None:
    """The last call's incidents with the findings that were replaced in place (same count,
    same places: a starved job's minutes, a cause refined by its evidence) folded in, when
    each keeps its group (or stays an incident of its own); None: correlate from scratch."""
    st = memo.get("struct")
    if st is None:
        return None
    old = st["ordered"]
    if len(old) != len(ordered):
        return None
    at = list(compress(range(len(ordered)), map(operator.is_not, old, ordered)))
    if not at:
        return st["result"]
    if len(at) * 4 > len(ordered):
        return None
    where, groups, heads = st["where"], st["groups"], st["node_heads"]
    touched: dict[tuple, list[Finding]] = {}
    moved: set[tuple] = set()  # groups a member of which is now about another subject
    plain: list[tuple[int, Finding]] = []
    placed: list[tuple[int, tuple | None, int]] = []  # (place in ordered, group, index)
    for i in at:
        f, g = old[i], ordered[i]
        w = where.get(id(f))
        if w is None or w[0] is not f or g.subject.kind == "node" or _node_target(g, heads):
            return None
        if _casualty(g):
            return None
        if g.root_cause == "priority_qos_surge":
            return None
        if w[1] is None:  # an incident of its own (not a job)
            if g.subject.kind == "job":
                return None
            plain.append((w[2], g))
            placed.append((i, None, w[2]))
            continue
        if g.subject.kind != "job":
            return None
        if (g.subject.source, g.root_cause, _scope(g), signature(g)) != w[1]:
            return None  # it moves to another group
        members = touched.get(w[1])
        if members is None:
            members = touched[w[1]] = list(groups[w[1]][1])
        members[w[2]] = g
        placed.append((i, w[1], w[2]))
        if g.subject != f.subject:
            moved.add(w[1])
    pre = list(st["pre"])
    for i in at:  # the state is this call's now: updated in place
        del where[id(old[i])]
    for idx, g in plain:
        pre[idx] = _single(g)
    for k, members in touched.items():
        idx = groups[k][0]
        if len(members) == 1:
            pre[idx] = _single(members[0])
        else:
            # the same subjects in the same places: the old incident's affected list
            kept = pre[idx].affected if k not in moved else None
            pre[idx] = _group(k, members, kept)
        groups[k] = (idx, members)
    for i, k, x in placed:
        where[id(ordered[i])] = (ordered[i], k, x)
    result = sorted(pre, key=_inc_key)
    memo["struct"] = dict(st, ordered=ordered, pre=pre, result=result)
    return result


def _stamp(f: Finding) -> str:
    return f.first_seen.isoformat() if f.first_seen is not None else ""


def single_key(f: Finding) -> str:
    """The key of a one-finding incident: a job (or training job) by its id and end/submit
    time, whatever its current root cause; anything else by its finding's key."""
    s = f.subject
    if s.kind in {"job", "training_job"}:
        return f"{s.kind}|{s.source}|{s.id}|{_stamp(f)}"
    return f.key


def group_key(source: str, cause: str, scope: str, sig: str = "") -> str:
    return f"group|{source}|{cause}|{scope}|{_digest(sig)}"


def _scope(f: Finding) -> str:
    """Whose jobs these are: the user the rule named (per-user causes: limits, holds), else
    the whole cluster."""
    return next((r.id for r in f.related if r.kind == "user"), "")


def _fold_bulk(singles: list[Finding], memo: dict | None = None) -> list[Finding | Incident]:
    """Job findings sharing (source, cause, scope) become one incident; a lone one stays a
    finding (an incident of its own). A surge is an incident of its own about the cluster: it
    absorbs no job, so a user's QOS-limited jobs keep one key whether or not the queue counts
    as a surge this poll (the surge comes and goes with the poll history; the jobs do not)."""
    groups: dict[tuple[str, str, str, str], list[Finding]] = {}
    out: list[Finding | Incident] = []
    for f in singles:
        if f.subject.kind == "job":
            key = (f.subject.source, f.root_cause, _scope(f), signature(f))
            g = groups.get(key)
            if g is None:
                groups[key] = [f]
            else:
                g.append(f)
        else:
            out.append(f)
    built: dict = memo.get("groups", {}) if memo is not None else {}
    made: dict = {}
    if memo is not None:
        memo["groups"] = made
    layout_plain = {id(f): (f, i) for i, f in enumerate(out)} if memo is not None else {}
    layout_groups: dict[tuple, tuple[int, list[Finding]]] = {}
    for k, members in groups.items():
        layout_groups[k] = (len(out), members)
        if len(members) == 1:
            out.append(members[0])
            continue
        e = built.get(k)
        if e is not None and len(e[0]) == len(members) and all(map(operator.is_, e[0], members)):
            made[k] = e  # the same members: the same incident
            out.append(e[1])
            continue
        incident = _group(k, members)
        made[k] = (members, incident)
        out.append(incident)
    if memo is not None:
        memo["layout"] = (layout_plain, layout_groups)
    return out


def _group(
    k: tuple[str, str, str, str], members: list[Finding], affected: tuple | None = None
) -> Incident:
    """The incident of a group of job findings (not a surge): ``_fold_bulk``'s (``affected``:
    its members' subjects, when the caller knows them). Its title is the members' shared
    signature with their count; its first sight the earliest member's failure."""
    source, cause, scope, sig = k
    head = members[0]
    rest = members[1:]
    if affected is None:
        affected = tuple(dict.fromkeys(m.subject for m in members))
    firsts = [x.first_seen for x in members if x.first_seen is not None]
    return Incident(
        key=group_key(source, cause, scope, sig),
        root_cause=head.root_cause,
        severity=min(members, key=lambda x: SEVERITY_RANK[x.severity]).severity,
        subject=Subject("cluster", source, source),
        title=(
            _("{n} jobs ({scope}): {signature}") if scope else _("{n} jobs: {signature}")
        ).format(n=len(affected), scope=scope, signature=sig),
        findings=(head, *rest),
        affected=affected,
        first_seen=min(firsts) if firsts else None,
    )
