"""Incidents: findings folded by cause, so one sick node or one user's limit is one line.

A node's DRAIN/DOWN finding absorbs the job findings it explains; many jobs of one user
held by one limit become one incident; every other critical or warning finding is an
incident of its own. Incident keys are stable across polls, so acknowledgements survive.
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
    Killed, OOM, ...): one incident naming the node, the jobs in ``affected``. Other
    critical/warning findings are one incident each; info findings (will run) are none.
    Incident keys are stable across polls (acks survive). Sorted by severity, then oldest.
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
                key=f"node|{source}|{node}|{head.root_cause}",
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
                key=f.key,
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


# Causes that hit many jobs of one user at once (a QOS/association limit): one incident per
# (cluster, cause, user), or folded into the cluster's surge incident when there is one.
_BULK = frozenset({"pending_qos_limit", "cancelled_by_user"})


def _fold_bulk(singles: list[Finding]) -> list[Finding | Incident]:
    surge = {f.subject.source: f for f in singles if f.root_cause == "priority_qos_surge"}
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    out: list[Finding | Incident] = []
    for f in singles:
        if f.root_cause in _BULK and f.subject.kind == "job":
            user = next((r.id for r in f.related if r.kind == "user"), "")
            head = surge.get(f.subject.source)
            key = (
                (f.subject.source, "surge", "") if head else (f.subject.source, f.root_cause, user)
            )
            groups.setdefault(key, []).append(f)
        elif f.root_cause != "priority_qos_surge":
            out.append(f)
    for (source, cause, user), members in groups.items():
        head = surge.pop(source) if cause == "surge" else members[0]
        rest = [m for m in members if m is not head]
        affected = tuple(dict.fromkeys(m.subject for m in rest))
        firsts = [x.first_seen for x in (head, *rest) if x.first_seen is not None]
        if cause == "surge":
            title, key = head.title, head.key
        else:
            who = f" ({user})" if user else ""
            title = f"{len(members)} jobs{who}: {head.title}" if len(members) > 1 else head.title
            key = f"bulk|{source}|{cause}|{user}" if len(members) > 1 else head.key
        out.append(
            Incident(
                key=key,
                root_cause=head.root_cause,
                severity=min((head, *rest), key=lambda x: SEVERITY_RANK[x.severity]).severity,
                subject=head.subject
                if cause == "surge" or len(members) == 1
                else Subject("cluster", source, source),
                title=title,
                findings=(head, *rest),
                affected=affected,
                first_seen=min(firsts) if firsts else None,
            )
        )
    out.extend(surge.values())  # a surge with no member findings stays an incident of its own
    return out
