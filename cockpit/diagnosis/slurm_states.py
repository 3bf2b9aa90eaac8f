"""Slurm's job states and node states as data, each classified for the rules.

From ``slurm/slurm.h`` (``enum job_states`` and the ``JOB_*`` state flags, ``enum
node_states`` and the ``NODE_STATE_*`` flags) and the strings Slurm prints for them
(``job_state_string()``, ``node_state_string()``, the node flag table), Slurm 22.05 to
26.05. squeue prints a job's flag instead of its base state when one is set
(``REQUEUE_HOLD``, ``COMPLETING``...), so flags are job states here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cockpit.diagnosis.slurm_codes import SERIES
from cockpit.i18n import N_

# A job that ends within this many seconds failed to start, not to compute (its verdict says
# "within seconds", and a COMPLETED one this fast is worth a look at its output).
FAST_FAIL_S = 60

# pending | active (running or between steps) | held (never runs until released) | paused |
# ended_ok | ended_choice (cancelled, revoked) | failed
JobKind = Literal["pending", "active", "held", "paused", "ended_ok", "ended_choice", "failed"]


@dataclass(frozen=True, slots=True)
class JobState:
    """One job state or state flag: what kind of state it is, the label a job in it gets,
    what it means; ``flag``: a JOB_* flag (shown instead of the base state)."""

    name: str
    kind: JobKind
    label: str
    what: str
    flag: bool = False
    since: str = SERIES[0]
    until: str = SERIES[-1]


_J: list[JobState] = []


def _j(name: str, kind: JobKind, label: str, what: str, **kw) -> None:
    _J.append(JobState(name, kind, label, what, **kw))


_j("PENDING", "pending", "", N_("queued, waiting to start"))
_j("RUNNING", "active", "", N_("running"))
_j("SUSPENDED", "paused", "job_suspended", N_("suspended (by an admin or by gang preemption)"))
_j("COMPLETED", "ended_ok", "no_failure", N_("ended with exit 0 in every step"))
_j("CANCELLED", "ended_choice", "cancelled_by_user", N_("cancelled by its user or an admin"))
_j("FAILED", "failed", "application_error", N_("ended with a non-zero exit code or a signal"))
_j("TIMEOUT", "failed", "time_limit", N_("killed at its time limit"))
_j("NODE_FAIL", "failed", "node_not_responding", N_("killed because a node of it failed"))
_j("PREEMPTED", "failed", "preempted", N_("stopped to make room for a higher-priority job"))
_j("BOOT_FAIL", "failed", "node_boot_failed", N_("its node(s) failed to boot for it"))
_j("DEADLINE", "failed", "deadline_reached", N_("could not finish before its --deadline"))
_j("OUT_OF_MEMORY", "failed", "oom_killed", N_("killed for using more memory than requested"))
# flags
_j("LAUNCH_FAILED", "failed", "job_launch_failed", N_("its launch failed"), flag=True)
_j("UPDATE_DB", "active", "", N_("its record is being sent to slurmdbd"), flag=True, until="24.05")
_j(
    "GETENV_FAILED",
    "failed",
    "job_launch_failed",
    N_("reading the user's environment (--get-user-env) failed"),
    flag=True,
    since="25.05",
)
_j("REQUEUED", "active", "", N_("being requeued"), flag=True)
_j(
    "REQUEUE_HOLD",
    "held",
    "pending_held",
    N_("requeued and held (scontrol requeuehold)"),
    flag=True,
)
_j(
    "SPECIAL_EXIT",
    "held",
    "pending_held",
    N_("exited with a special exit code: requeued and held"),
    flag=True,
)
_j("RESIZING", "active", "", N_("changing size"), flag=True)
_j("CONFIGURING", "active", "", N_("its nodes are booting or being configured"), flag=True)
_j("COMPLETING", "active", "", N_("ending: epilog and process cleanup running"), flag=True)
_j("STOPPED", "paused", "job_suspended", N_("stopped (SIGSTOP) while keeping its nodes"), flag=True)
_j(
    "RECONFIG_FAIL",
    "failed",
    "job_launch_failed",
    N_("reconfiguring its nodes (features, reboot) failed"),
    flag=True,
)
_j("POWER_UP_NODE", "active", "", N_("waiting for powered-down nodes to boot"), flag=True)
_j("REVOKED", "ended_choice", "", N_("revoked: a sibling cluster runs it"), flag=True)
_j("REQUEUE_FED", "active", "", N_("being requeued by the federation"), flag=True)
_j(
    "RESV_DEL_HOLD",
    "held",
    "pending_held",
    N_("held because its reservation was deleted"),
    flag=True,
)
_j("SIGNALING", "active", "", N_("a signal is being delivered to it"), flag=True)
_j("STAGE_OUT", "active", "", N_("staging files out (burst buffer)"), flag=True)
_j("EXPEDITING", "active", "", N_("checking for an expedited requeue"), flag=True, since="25.11")

JOB_STATES: dict[str, JobState] = {s.name: s for s in _J}

# Ended states whose cause is worth fetching evidence for and alerting on.
FAILED_STATES: frozenset[str] = frozenset(
    {
        "FAILED",
        "OUT_OF_MEMORY",
        "TIMEOUT",
        "NODE_FAIL",
        "BOOT_FAIL",
        "DEADLINE",
        "LAUNCH_FAILED",
        "GETENV_FAILED",
        "RECONFIG_FAIL",
    }
)
# Every state an ended job can be in (the ended-job rules run for these).
ENDED_STATES: frozenset[str] = frozenset(
    s.name for s in _J if s.kind in {"failed", "ended_ok", "ended_choice"}
)
HELD_STATES: frozenset[str] = frozenset(s.name for s in _J if s.kind == "held")
PAUSED_STATES: frozenset[str] = frozenset(s.name for s in _J if s.kind == "paused")


def job_state(name: str) -> JobState | None:
    """The entry of a job state as squeue/sacct print it (``CANCELLED by 0`` included)."""
    return JOB_STATES.get(name.split(" ", 1)[0].upper()) if name else None


# ------------------------------------------------------------------ nodes

# ok (serves jobs) | transient (passes by itself) | planned (someone chose it: maintenance,
# power saving, a requested reboot) | unavailable (serves no new jobs until someone acts) |
# bad (broken) | unknown (not registered yet)
NodeKind = Literal["ok", "transient", "planned", "unavailable", "bad", "unknown"]


@dataclass(frozen=True, slots=True)
class NodeState:
    """One node base state or state flag; ``shown``: other spellings Slurm prints for it."""

    name: str
    kind: NodeKind
    what: str
    flag: bool = True
    shown: tuple[str, ...] = ()
    since: str = SERIES[0]
    until: str = SERIES[-1]


_N: list[NodeState] = []


def _n(name: str, kind: NodeKind, what: str, **kw) -> None:
    _N.append(NodeState(name, kind, what, **kw))


_n("UNKNOWN", "unknown", N_("slurmd has not registered since slurmctld started"), flag=False)
_n("DOWN", "bad", N_("unavailable: down"), flag=False)
_n("IDLE", "ok", N_("idle"), flag=False)
_n("ALLOCATED", "ok", N_("fully allocated"), flag=False)
_n("MIXED", "ok", N_("partly allocated"), flag=False)
_n("ERROR", "bad", N_("in an error state"), flag=False)
_n("FUTURE", "planned", N_("defined for future use, not in service"), flag=False)
_n("INVALID", "bad", N_("in a state Slurm cannot name"), flag=False, shown=("INVAL",))
# flags
_n("DRAIN", "unavailable", N_("drained: takes no new jobs"), shown=("DRAINED", "DRAINING", "DRNG"))
_n("NOT_RESPONDING", "bad", N_("not responding to slurmctld"), shown=("*",))
_n(
    "FAIL",
    "unavailable",
    N_("set to FAIL: no new jobs, DOWN once its jobs end"),
    shown=("FAILING",),
)
_n("INVALID_REG", "bad", N_("its registration was rejected (hardware differs from slurm.conf)"))
_n("COMPLETING", "transient", N_("cleaning up after jobs"))
_n("MAINT", "planned", N_("in a maintenance reservation"), shown=("MAINTENANCE", "$"))
_n("REBOOT_REQUESTED", "planned", N_("a reboot was requested (scontrol reboot)"), shown=("@",))
_n("REBOOT_ISSUED", "planned", N_("rebooting on request"), shown=("^", "REBOOT"))
_n("REBOOT_CANCEL", "transient", N_("a requested reboot was cancelled"), shown=("CANCEL_REBOOT",))
_n("POWERED_DOWN", "planned", N_("powered down by power saving"), shown=("~",))
_n("POWERING_UP", "transient", N_("powering up"), shown=("#",))
_n("POWERING_DOWN", "transient", N_("powering down"), shown=("%",))
_n("POWER_DOWN", "planned", N_("to be powered down on request"), shown=("!",))
_n("POWER_UP", "transient", N_("to be powered up on request"))
_n("POWER_DRAIN", "planned", N_("to be powered down as soon as its jobs end"))
_n("CLOUD", "ok", N_("a cloud node"))
_n("EXTERNAL", "ok", N_("external: no slurmd"), since="25.05")
_n("RES", "ok", N_("in a reservation"), shown=("RESERVED",))
_n("PLANNED", "ok", N_("planned for a pending job (backfill)"), shown=("-",))
_n("BLOCKED", "ok", N_("blocked by an exclusive topology job"), since="24.05")
_n("NET", "ok", N_("network performance counters in use"), shown=("PERFCTRS",), until="23.11")
_n("DYNAMIC_FUTURE", "planned", N_("a dynamic node not yet registered"))
_n("DYNAMIC_NORM", "ok", N_("a dynamic node"))
_n("RESUME", "transient", N_("being resumed"))
_n("UNDRAIN", "transient", N_("being undrained"))

NODE_STATES: dict[str, NodeState] = {s.name: s for s in _N}
_BY_SHOWN: dict[str, str] = {alias: s.name for s in _N for alias in s.shown if len(alias) > 1}


def node_state(name: str) -> NodeState | None:
    """The entry of a node base state or flag, under any spelling Slurm prints."""
    key = name.upper()
    return NODE_STATES.get(key) or NODE_STATES.get(_BY_SHOWN.get(key, ""))


def unknown_node_states(state: str, flags: tuple[str, ...]) -> list[str]:
    """The parts of a node's state this list does not know (a newer Slurm)."""
    return [p for p in (state, *flags) if p and node_state(p) is None]


def node_kinds(state: str, flags: tuple[str, ...]) -> set[str]:
    """The kinds of a node's base state and flags (``{"ok", "unavailable"}`` for IDLE+DRAIN)."""
    return {s.kind for p in (state, *flags) if (s := node_state(p)) is not None}
