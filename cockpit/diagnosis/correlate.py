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
* jobs sharing a cause: ``group|<source>|<cause>|<scope>`` (scope: the user, or empty for the
  whole cluster).
"""

from __future__ import annotations

from cockpit.diagnosis.engine import sort_findings
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


def correlate(findings: list[Finding]) -> list[Incident]:
    """Fold findings into incidents: one cause, many symptoms.

    A node finding (DRAIN/DOWN with its reason) absorbs the critical/warning job findings
    whose ``related`` names that node and whose cause a sick node explains (NODE_FAIL,
    Killed, OOM, ...): one incident naming the node, the jobs in ``affected``. Job findings
    sharing a cause and a scope are one incident (``title`` counts them, ``findings`` lists
    them); other critical/warning findings are one incident each; info findings (will run)
    are none. Keys: see the module's docstring. Sorted by severity, then oldest.
    """
    # info findings (will run) are never part of an incident: sorting only the rest (~13k of
    # 60k at a big site) keeps the same relative order, the sort being stable
    ordered = sort_findings(f for f in findings if f.severity != "info")
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
                if rel.kind == "node" and (rel.source, rel.id) in node_heads:
                    target = (rel.source, rel.id)
                    break
        if target is not None:
            grouped[target].append(f)
        else:
            singles.append(f)
    singles = _fold_bulk(singles)
    incidents: list[Incident] = []
    for (source, node), head in node_heads.items():
        members = grouped[(source, node)]
        affected = tuple(dict.fromkeys(m.subject for m in members if m.subject.kind != "node"))
        firsts = [x.first_seen for x in (head, *members) if x.first_seen is not None]
        title = head.title + (
            f" ({len(affected)} job{'s' if len(affected) != 1 else ''} affected)"
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
    for item in singles:
        if isinstance(item, Incident):
            incidents.append(item)
            continue
        f = item
        incidents.append(
            Incident(
                key=single_key(f),
                root_cause=f.root_cause,
                severity=f.severity,
                subject=f.subject,
                title=f.title,
                findings=(f,),
                affected=f.related,
                first_seen=f.first_seen,
            )
        )

    def inc_key(i: Incident) -> tuple:
        ts = i.first_seen.timestamp() if i.first_seen else float("inf")
        return (SEVERITY_RANK.get(i.severity, 3), ts, i.key)

    return sorted(incidents, key=inc_key)


def _stamp(f: Finding) -> str:
    return f.first_seen.isoformat() if f.first_seen is not None else ""


def single_key(f: Finding) -> str:
    """The key of a one-finding incident: a job (or training job) by its id and end/submit
    time, whatever its current root cause; anything else by its finding's key."""
    s = f.subject
    if s.kind in {"job", "training_job"}:
        return f"{s.kind}|{s.source}|{s.id}|{_stamp(f)}"
    return f.key


def group_key(source: str, cause: str, scope: str) -> str:
    return f"group|{source}|{cause}|{scope}"


# Causes a cluster-wide surge of pending and cancelled jobs explains: folded into the surge.
_SURGE = frozenset({"pending_qos_limit", "cancelled_by_user"})


def _scope(f: Finding) -> str:
    """Whose jobs these are: the user the rule named (per-user causes: limits, holds), else
    the whole cluster."""
    return next((r.id for r in f.related if r.kind == "user"), "")


def _fold_bulk(singles: list[Finding]) -> list[Finding | Incident]:
    """Job findings sharing (source, cause, scope) become one incident; a lone one stays a
    finding (an incident of its own). A surge absorbs its source's QOS-limited and cancelled
    jobs."""
    surge = {f.subject.source: f for f in singles if f.root_cause == "priority_qos_surge"}
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    out: list[Finding | Incident] = []
    for f in singles:
        if f.subject.kind == "job":
            source = f.subject.source
            if f.root_cause in _SURGE and source in surge:
                key = (source, "surge", "")
            else:
                key = (source, f.root_cause, _scope(f))
            g = groups.get(key)
            if g is None:
                groups[key] = [f]
            else:
                g.append(f)
        elif f.root_cause != "priority_qos_surge":
            out.append(f)
    for (source, cause, scope), members in groups.items():
        if cause != "surge" and len(members) == 1:
            out.append(members[0])
            continue
        head = surge.pop(source) if cause == "surge" else members[0]
        rest = [m for m in members if m is not head]
        # the surge's head is about the cluster; a group's head is one of its jobs
        shown = rest if cause == "surge" else members
        affected = tuple(dict.fromkeys(m.subject for m in shown))
        firsts = [x.first_seen for x in (head, *rest) if x.first_seen is not None]
        if cause == "surge":
            title, key, subject = head.title, head.key, head.subject
        else:
            who = f" ({scope})" if scope else ""
            title = f"{len(members)} jobs{who}: {head.title}"
            key = group_key(source, cause, scope)
            subject = Subject("cluster", source, source)
        out.append(
            Incident(
                key=key,
                root_cause=head.root_cause,
                severity=min((head, *rest), key=lambda x: SEVERITY_RANK[x.severity]).severity,
                subject=subject,
                title=title,
                findings=(head, *rest),
                affected=affected,
                first_seen=min(firsts) if firsts else None,
            )
        )
    out.extend(surge.values())  # a surge with no member findings stays an incident of its own
    return out
