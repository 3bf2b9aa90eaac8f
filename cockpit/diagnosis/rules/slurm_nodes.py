"""Why a Slurm node is DRAIN or DOWN: its reason text, refined by the node's own logs and by
the jobs that ended OUT_OF_MEMORY on it."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cockpit.diagnosis.context import RuleContext, log_evidence
from cockpit.diagnosis.rules.slurm_common import NODE_CHECKS, classify_reason, ev_sorted
from cockpit.model import Evidence, Finding, Severity, SlurmNode, Subject

_SHORT = {
    "node_drain_prolog_epilog_failed": "prolog/epilog failed",
    "gpu_hardware_error": "GPU hardware fault",
    "oom_killed": "out of memory",
    "disk_full": "disk full",
    "node_config_mismatch": "config differs from hardware",
    "node_down_unexpected_reboot": "unexpected reboot",
    "node_drain_loop": "drains again after resume (OOM loop)",
}
# Causes a node's own logs name more precisely than its drain reason does.
_NODE_LOG_CAUSES = {
    "node_drain_prolog_epilog_failed",
    "gpu_hardware_error",
    "oom_killed",
    "disk_full",
    "node_config_mismatch",
    "node_down_unexpected_reboot",
}
# Reasons that only summarise: a cause found in the node's logs replaces them.
_VAGUE = {"node_drain_kill_task_failed", "node_not_responding", "node_drain_admin"}


def _oom_jobs_by_node(ctx: RuleContext) -> dict[str, int]:
    """node -> jobs of the snapshot that ended OUT_OF_MEMORY on it; once per snapshot."""
    ooms = ctx.cache.get("oom_by_node")
    if ooms is None:
        ooms = {}
        for j in ctx.snapshot.jobs:
            if j.state == "OUT_OF_MEMORY":
                for n in j.nodes:
                    ooms[n] = ooms.get(n, 0) + 1
        ctx.cache["oom_by_node"] = ooms
    return ooms


def node_state(node: SlurmNode, ctx: RuleContext) -> Iterator[Finding]:
    """A DRAIN/DOWN node: what its reason means and what to check before resuming it."""
    if not node.is_unhealthy:
        return
    reason = node.reason or ""
    label = classify_reason(reason) if reason else None
    if label is None:
        if reason:
            label = "node_drain_admin"
        else:
            label = "node_not_responding" if node.is_down else "node_drain_admin"
    who = (
        f" [{node.reason_user}@{node.reason_time:%Y-%m-%dT%H:%M:%S}]"
        if node.reason_user and node.reason_time
        else ""
    )
    ev = [
        Evidence(
            "scontrol show node",
            f"NodeName={node.name} State={node.state_label} Reason={reason}" + who,
            tier=0,
        )
    ]
    conf = 0.85 if reason else 0.5
    # the node's own logs often name the cause the drain reason only summarises
    for lt in ctx.logs_for(node.name):
        for h in ctx.strong_hits(lt, 20):
            if h.label in _NODE_LOG_CAUSES and h.label != label:
                if label in _VAGUE:
                    label, conf = h.label, 0.9
                ev.append(log_evidence(lt, h, 1))
                break
            if h.label == label:
                ev.append(log_evidence(lt, h, 1))
                break
    ooms = _oom_jobs_by_node(ctx)
    if node.is_drain and (
        ooms.get(node.name, 0) >= 2 or re.search(r"\boom\b|out of memory", reason, re.I)
    ):
        label, conf = "node_drain_loop", 0.85
        ev.append(
            Evidence(
                "squeue",
                f"{ooms.get(node.name, 0)} jobs ended OUT_OF_MEMORY on {node.name}",
                tier=0,
            )
        )
    what, check = NODE_CHECKS.get(label, ("", "Check slurmd.log on {n}."))
    word = "DOWN" if node.is_down else "DRAIN"
    sev: Severity = "warning" if label == "node_drain_admin" else "critical"
    refined = label != "node_drain_admin" and reason and classify_reason(reason) != label
    yield Finding(
        root_cause=label,
        severity=sev,
        subject=Subject("node", ctx.snapshot.source, node.name),
        title=f"{word}: {reason or node.state_label}"
        + (f"; cause: {_SHORT.get(label, label)}" if refined else ""),
        explanation=f"Node {node.name} is {node.state_label}: {what}.",
        remedy=check.format(n=node.name, u=node.reason_user or "see reason"),
        evidence=ev_sorted(ev),
        confidence=conf,
        first_seen=node.reason_time,
    )
