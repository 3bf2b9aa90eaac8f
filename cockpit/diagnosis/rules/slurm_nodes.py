"""Why a Slurm node is DRAIN, DOWN, FAIL or otherwise out of service: its state flags
(:mod:`cockpit.diagnosis.slurm_states`), its reason text, refined by the node's own logs and
by the jobs that ended OUT_OF_MEMORY on it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from itertools import compress
from operator import attrgetter

from cockpit.diagnosis.context import RuleContext, log_evidence
from cockpit.diagnosis.rules.slurm_common import (
    REQUEUED_NODE_FAIL,
    classify_reason,
    ev_sorted,
    node_check,
)
from cockpit.diagnosis.slurm_states import NODE_STATES, node_kinds, unknown_node_states
from cockpit.i18n import N_, _, ngettext
from cockpit.model import Evidence, Finding, Severity, SlurmNode, Subject

_SHORT = {
    "node_drain_prolog_epilog_failed": N_("prolog/epilog failed"),
    "gpu_hardware_error": N_("GPU hardware fault"),
    "host_memory_error": N_("host memory (DIMM) errors"),
    "oom_killed": N_("out of memory"),
    "disk_full": N_("disk full"),
    "node_config_mismatch": N_("config differs from hardware"),
    "node_down_unexpected_reboot": N_("unexpected reboot"),
    "node_drain_loop": N_("drains again after resume (OOM loop)"),
    "node_boot_failed": N_("failed to boot/resume"),
}
# Causes a node's own logs name more precisely than its drain reason does.
_NODE_LOG_CAUSES = {
    "node_drain_prolog_epilog_failed",
    "gpu_hardware_error",
    "host_memory_error",
    "oom_killed",
    "disk_full",
    "node_config_mismatch",
    "node_down_unexpected_reboot",
}
# Reasons that only summarise: a cause found in the node's logs replaces them.
_VAGUE = {"node_drain_kill_task_failed", "node_not_responding", "node_drain_admin"}

# Reasons slurmctld itself sets (or admins write by habit) that the log catalogue does not
# cover, checked before it: (regex, label).
_REASONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ResumeTimeout reached|reboot timed out|fail\w* to (?:resume|power)", re.I),
     "node_boot_failed"),
    (re.compile(r"Low CPUs|Low socket\*core\*thread|Low TmpDisk|gres/\S+ count", re.I),
     "node_config_mismatch"),
    (re.compile(r"NO NETWORK ADDRESS FOUND", re.I), "node_not_responding"),
)  # fmt: skip
# A reason naming the GPU itself (not only "ECC") is a GPU fault even without GRES data.
_GPU_WORDS = re.compile(r"\bXid\b|\bGPU\b|NVRM|nvidia|fallen off the bus|\bHBM\b|NPU", re.I)
# slurmctld's own words when it refuses a node's registration for too little hardware
_REFUSED = re.compile(r"has low (?:socket\*core\*thread|cpu) count|has low real_memory", re.I)
# A drain someone planned: a requested reboot, maintenance, power saving.
_PLANNED_REASON = re.compile(r"Reboot ASAP|reboot requested|[Ss]cheduled reboot")


_state = attrgetter("state")

# Slurm's log stamp: [2026-12-01T21:09:30.123] (local time, no zone)
_STAMP = re.compile(r"^\[?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)")
# A line this long before the node's reason was set is not why it was set (the reason's time
# is when slurmctld recorded it, a little after the node's own log said why)
_BEFORE_REASON = timedelta(minutes=2)
_SAME_EVENT = timedelta(seconds=5)


def _before_the_problem(text: str, node: SlurmNode, slack: timedelta = _BEFORE_REASON) -> bool:
    """Whether a log line is stamped before the node's DRAIN/DOWN reason was set: an old or
    benign line (a startup's config note, a drain already resumed) is not this problem's cause.
    A line without a stamp, or a node without a reason time, is kept."""
    if node.reason_time is None:
        return False
    m = _STAMP.match(text)
    if m is None:
        return False
    try:
        at = datetime.fromisoformat(m.group(1)).replace(tzinfo=node.reason_time.tzinfo)
    except ValueError:
        return False
    return at < node.reason_time - slack


def _oom_jobs_by_node(ctx: RuleContext) -> dict[str, int]:
    """node -> jobs of the snapshot that ended OUT_OF_MEMORY on it; once per snapshot."""
    ooms = ctx.cache.get("oom_by_node")
    if ooms is None:
        ooms = {}
        jobs = ctx.snapshot.jobs
        # the OOM rows picked out in C: a 100k-job queue has a handful
        for j in compress(jobs, map("OUT_OF_MEMORY".__eq__, map(_state, jobs))):
            for n in j.nodes:
                ooms[n] = ooms.get(n, 0) + 1
        ctx.cache["oom_by_node"] = ooms
    return ooms


def _has_gpus(node: SlurmNode) -> bool:
    return "gpu" in node.gres.lower() or "npu" in node.gres.lower()


def reason_label(node: SlurmNode) -> str | None:
    """The cause a node's reason text names (None: no recognised cause). An "ECC" reason on
    a node without GPUs is host memory, not a GPU: no nvidia-smi where there is no GPU."""
    reason = node.reason or ""
    if not reason:
        return None
    for rx, label in _REASONS:
        if rx.search(reason):
            return label
    label = classify_reason(reason)
    if label == "gpu_hardware_error" and not _has_gpus(node) and not _GPU_WORDS.search(reason):
        return "host_memory_error"
    return label


def _registering(node: SlurmNode) -> bool:
    """UNKNOWN with no reason: slurmctld restarted and slurmd has not registered yet (a
    state that passes in seconds; its drain and reason, if any, come back with it)."""
    return node.state == "UNKNOWN" and not node.reason and "NOT_RESPONDING" not in node.flags


def node_state(node: SlurmNode, ctx: RuleContext) -> Iterator[Finding]:
    """What a node's state means, when it is out of service or unknown: its reason, what to
    check before resuming it, and who must act."""
    kinds = node_kinds(node.state, node.flags)
    unknown = unknown_node_states(node.state, node.flags)
    out_of_service = bool(kinds & {"unavailable", "bad"})
    if _registering(node):
        yield _finding(
            node,
            ctx,
            "node_state_unknown",
            "info",
            f"UNKNOWN: {_(NODE_STATES['UNKNOWN'].what)}",
            _(
                "Node {node} is {state}: slurmctld has not heard from its slurmd "
                "since it (re)started. This passes within a minute of a controller restart; a "
                "drain set before the restart comes back with its reason."
            ).format(node=node.name, state=node.state_label),
            _(
                "Wait a minute; if it stays UNKNOWN: scontrol ping; on {node}: systemctl "
                "status slurmd munge."
            ).format(node=node.name),
            [_state_evidence(node)],
            0.6,
        )
        return
    if not out_of_service and "unknown" not in kinds:
        if unknown:
            yield _unknown_flags(node, ctx, unknown)
        return
    yield _out_of_service(node, ctx, kinds, unknown)


def _out_of_service(node: SlurmNode, ctx: RuleContext, kinds: set[str], unknown: list[str]):
    reason = node.reason or ""
    label = reason_label(node)
    if label is None:
        label = "node_drain_admin" if reason or not node.is_down else "node_not_responding"
    if "INVALID_REG" in node.flags and label == "node_drain_admin" and not reason:
        label = "node_config_mismatch"
    ev = [_state_evidence(node)]
    conf = 0.85 if reason else 0.5
    stopped = _slurmd_last_words(node, ctx) if label == "node_not_responding" else None
    if stopped is not None and stopped[1] is not None:
        ev.append(stopped[1])
    # the node's own logs often name the cause the drain reason only summarises
    for lt in ctx.logs_for(node.name):
        for h in ctx.strong_hits(lt, 20):
            if _before_the_problem(h.text, node):
                continue
            hl = h.label
            if (
                hl == "node_config_mismatch"
                and "INVALID_REG" not in node.flags
                and not (lt.kind == "slurmctld" and _REFUSED.search(h.text))
            ):
                # slurmd notes a differing config at every start and runs on: the cause only
                # when slurmctld refused the registration (INVALID_REG, or its own log saying
                # the node has fewer CPUs than configured: it drains the node for that)
                continue
            if hl == "gpu_hardware_error" and not _has_gpus(node) and not _GPU_WORDS.search(h.text):
                hl = "host_memory_error"
            if hl in _NODE_LOG_CAUSES and hl != label:
                if label in _VAGUE:
                    label, conf = hl, 0.9
                ev.append(log_evidence(lt, h, 1))
                break
            if hl == label:
                ev.append(log_evidence(lt, h, 1))
                break
    ooms = _oom_jobs_by_node(ctx)
    # an operator's drain whose reason names no fault stays theirs: jobs that ran out of
    # memory there earlier do not make it an OOM loop (and whether they still show depends on
    # MinJobAge and the backfill, so heads of one moment read it differently)
    if node.is_drain and (
        (ooms.get(node.name, 0) >= 2 and label != "node_drain_admin")
        or re.search(r"\boom\b|out of memory", reason, re.I)
    ):
        label, conf = "node_drain_loop", 0.85
        ev.append(
            Evidence(
                "squeue",
                _("{n} jobs ended OUT_OF_MEMORY on {node}").format(
                    n=ooms.get(node.name, 0), node=node.name
                ),
                tier=0,
            )
        )
    what, check = node_check(label, N_("Check slurmd.log on {n}."))
    word = _word(node)
    planned = _planned(node, label)
    sev: Severity = "info" if planned else "warning" if label == "node_drain_admin" else "critical"
    refined = label != "node_drain_admin" and reason and reason_label(node) != label
    title = f"{word}: {reason or node.state_label}"
    if refined:
        short = _SHORT.get(label)
        title += "; " + _("cause: {cause}").format(cause=_(short) if short else label)
    if planned:
        title += " (" + _("{planned}; returns by itself").format(planned=planned) + ")"
    if stopped is not None and label == "node_not_responding":
        title += f"; {stopped[0]}"
    extra = ""
    remedy = check.format(n=node.name, u=node.reason_user or _("see reason"))
    if label == "host_memory_error":
        if _has_gpus(node):  # an ECC line naming no device: rule the GPUs out too
            remedy += " " + _(
                "{node} has GPUs (Gres={gres}): nvidia-smi -q -d ECC rules them out."
            ).format(node=node.name, gres=node.gres)
        else:
            extra = " " + _("The node has no GPUs (Gres={gres}): this is host memory.").format(
                gres=node.gres or "(null)"
            )
    if unknown:
        extra += " " + _("State parts this cockpit does not know: {parts}.").format(
            parts=", ".join(unknown)
        )
    return _finding(
        node,
        ctx,
        label,
        sev,
        title,
        _("Node {node} is {state}: {what}.").format(
            node=node.name, state=node.state_label, what=what
        )
        + extra,
        remedy,
        ev,
        conf,
    )


# slurmd's own last words when it was stopped (systemctl stop, SIGTERM, a crash handler)
_SLURMD_STOPPED = re.compile(
    r"Slurmd shutdown completing|got shutdown request|Caught SIG(?:TERM|INT)|"
    r"slurmd: (?:terminated|exiting)",
    re.I,
)


def _slurmd_last_words(node: SlurmNode, ctx: RuleContext) -> tuple[str, Evidence | None] | None:
    """For a node that stopped responding: what its slurmd log says last (a clean shutdown,
    or silence since a time) and how many jobs slurmctld requeued because of it, as a title
    tail and the evidence line. None when neither log says anything."""
    tail, ev = "", None
    for lt in ctx.logs_for(node.name):
        if lt.kind != "slurmd" or not lt.data:
            continue
        lines = lt.data.decode("utf-8", "replace").splitlines()
        i = len(lines) - 1
        while i >= 0 and not lines[i].strip():
            i -= 1
        if i < 0:
            continue
        text = lines[i].strip()
        m = _STAMP.match(text)
        when = _clock_time(m.group(1), node) if m else ""
        if _SLURMD_STOPPED.search(text):
            tail = (
                _("slurmd was stopped at {when}").format(when=when)
                if when
                else _("slurmd was stopped")
            )
        elif when:
            tail = _("slurmd log silent since {when}").format(when=when)
        else:
            tail = _("slurmd log silent since its last line")
        ev = Evidence(lt.name, text, line=lt.file_line(i + 1), path=lt.path, tier=1, quoted=True)
        break
    requeued = _requeued_for(node, ctx)
    if requeued:
        more = ngettext("{n} job requeued", "{n} jobs requeued", requeued).format(n=requeued)
        tail = f"{tail}; {more}" if tail else more
    return (tail, ev) if tail else None


def _clock_time(stamp: str, node: SlurmNode) -> str:
    """A log stamp's time of day, with its date when that is not the day the node's reason
    was set ("since 17:30:00" three days ago read as this afternoon)."""
    day, _, clock = stamp.partition("T")
    same = node.reason_time is not None and node.reason_time.strftime("%Y-%m-%d") == day
    return clock if same else f"{day} {clock}"


def _requeued_for(node: SlurmNode, ctx: RuleContext) -> int:
    """Jobs slurmctld requeued because ``node`` failed, from the node's slurmctld.log lines."""
    seen: set[str] = set()
    for lt in ctx.logs_for(node.name):
        if lt.kind == "slurmctld":
            for text in lt.data.decode("utf-8", "replace").splitlines():
                m = REQUEUED_NODE_FAIL.search(text)
                # slurmctld requeues in the same second it sets the node DOWN: an earlier
                # requeue was another outage's
                if m and m.group(2) == node.name:
                    if not _before_the_problem(text, node, _SAME_EVENT):
                        seen.add(m.group(1))
    return len(seen)


def _word(node: SlurmNode) -> str:
    """DOWN, DRAIN, FAIL: what takes the node out of service, as the title's first word."""
    if node.is_down:
        return "DOWN"
    if "FAIL" in node.flags or node.state == "FAIL":
        return "FAIL"
    if node.is_drain:
        return "DRAIN"
    return node.state_label


def _planned(node: SlurmNode, label: str) -> str:
    """Why an out-of-service node is planned (a requested reboot, maintenance, power
    saving), or "" when it is not: only an admin reason without a named fault qualifies."""
    if label != "node_drain_admin" or node.is_down:
        return ""
    if {"REBOOT_REQUESTED", "REBOOT_ISSUED"} & set(node.flags) or _PLANNED_REASON.search(
        node.reason or ""
    ):
        return _("reboot requested")
    if "MAINT" in node.flags:
        return _("maintenance reservation")
    if {"POWER_DOWN", "POWER_DRAIN", "POWERING_DOWN"} & set(node.flags):
        return _("powering down")
    return ""


def _unknown_flags(node: SlurmNode, ctx: RuleContext, unknown: list[str]) -> Finding:
    return _finding(
        node,
        ctx,
        "unknown_slurm_code",
        "info",
        _("{state}: unknown state {parts} (not in Slurm 22.05-26.05)").format(
            state=node.state_label, parts=", ".join(unknown)
        ),
        _(
            "Node {node} reports {parts}, which this cockpit does not know; "
            "the rest of its state is healthy."
        ).format(node=node.name, parts=", ".join(unknown)),
        _(
            "scontrol show node {node}; the sinfo man page (NODE STATE CODES) of the "
            "cluster's Slurm version."
        ).format(node=node.name),
        [_state_evidence(node)],
        0.4,
    )


def _state_evidence(node: SlurmNode) -> Evidence:
    who = (
        f" [{node.reason_user}@{node.reason_time:%Y-%m-%dT%H:%M:%S}]"
        if node.reason_user and node.reason_time
        else ""
    )
    return Evidence(
        "scontrol show node",
        f"NodeName={node.name} State={node.state_label} Reason={node.reason}"
        + who
        + (f" Gres={node.gres}" if node.gres else ""),
        tier=0,
    )


def _finding(
    node: SlurmNode,
    ctx: RuleContext,
    label: str,
    sev: Severity,
    title: str,
    explanation: str,
    remedy: str,
    ev: list[Evidence],
    conf: float,
) -> Finding:
    return Finding(
        root_cause=label,
        severity=sev,
        subject=Subject("node", ctx.snapshot.source, node.name),
        title=title,
        explanation=explanation,
        remedy=remedy,
        evidence=ev_sorted(ev),
        confidence=conf,
        first_seen=node.reason_time,
    )
