"""Slurm's job reason codes as data: every code Slurm 22.05 to 26.05 prints, classified.

The list is Slurm's own (``enum job_state_reason`` in ``slurm/slurm.h`` and the strings of
``job_state_reason_string()``), taken from the last release of each series. Each code is
classified by what it takes for the job to start:

* ``runs``: it starts by itself (wait),
* ``admin``: it never starts until an administrator acts,
* ``user``: it never starts as submitted; the user must change the request,
* ``depends``: it depends on why (``ReqNodeNotAvail``: drained nodes need an admin, a
  reservation ends by itself, a ``--nodelist`` is the user's choice),
* ``ended``: a code Slurm leaves on a job that already ended (why it ended).

The ~170 QOS and association limit codes are one family (``QOSMaxGRESPerUser``,
``AssocGrpCPURunMinutesLimit``, ``MaxCpuPerAccount``...), in
:mod:`cockpit.diagnosis.slurm_limits`: the limit a code names is read out of its spelling,
and its classification follows from the limit's kind.
A code not in :data:`REASONS` is unknown (a newer Slurm): :func:`reason_info` still
returns an entry, classified ``unknown``, so rules can say so instead of nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from cockpit.diagnosis.slurm_limits import LIMIT_CODES, LIMIT_SINCE, Limit, limit_of, limit_remedy

__all__ = ["LIMIT_CODES", "REASONS", "SERIES", "Reason", "limit_of", "reason_info"]

Outcome = Literal["runs", "admin", "user", "depends", "ended", "none", "unknown"]

# The release series covered, oldest first (the codes are those of each series' last release).
SERIES: tuple[str, ...] = ("22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11", "26.05")

OUTCOME_PHRASE: dict[str, str] = {
    "runs": "will run",
    "admin": "never runs until an admin acts",
    "user": "never runs as submitted",
    "depends": "may not run by itself",
    "ended": "ended",
    "none": "",
    "unknown": "unknown reason",
}


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason code: ``outcome`` (see the module doc), the root-cause ``label`` a pending
    job with it gets, ``what`` it means, ``remedy`` (a template: ``{id} {part} {user}
    {account} {qos}``), and the series it exists in."""

    code: str
    outcome: Outcome
    label: str
    what: str
    remedy: str
    since: str = SERIES[0]
    until: str = SERIES[-1]

    def in_series(self, series: str) -> bool:
        return SERIES.index(self.since) <= SERIES.index(series) <= SERIES.index(self.until)


_WAIT = "Nothing to fix: it starts by itself; `squeue --start -j {id}` shows the estimate."
_RELEASE = "scontrol release {id}"
_ACCOUNTS = (
    "sacctmgr show assoc user={user} format=Account,Partition,QOS shows what {user} may use: "
    "scontrol update JobId={id} Account=<a> QOS=<q>, or ask an admin to grant it "
    "(sacctmgr modify user {user} set qos+=<q>)."
)
_PARTITION_FIT = (
    "scontrol show partition {part} shows the limits; shrink the request to fit "
    "(scontrol update JobId={id} TimeLimit=/NumNodes=/MinMemoryNode=) or move it: "
    "scontrol update JobId={id} Partition=<p>."
)

_PART_UP = (
    "Ask an admin: scontrol update PartitionName={part} State=UP; or move the job: "
    "scontrol update JobId={id} Partition=<p>."
)
_BAD_CONSTRAINTS = (
    "sinfo -o '%P %c %m %f %G' shows what the nodes have; fix --constraint/--gres/--mem "
    "(scontrol update JobId={id} ...), or scancel {id} and resubmit."
)
_LAUNCH = (
    "slurmd.log on the batch host (spool dir, prolog, munge, the script's interpreter); "
    "then resubmit."
)
_PLAIN: list[Reason] = []


def _r(code: str, outcome: Outcome, label: str, what: str, remedy: str = _WAIT, **kw) -> None:
    _PLAIN.append(Reason(code, outcome, label, what, remedy, **kw))


# Every code that is not a QOS/association limit. Labels are those of docs/root-causes.md.
_r("None", "none", "", "no reason set (running, or not yet looked at)", "")
# --- starts by itself
_r("Priority", "runs", "pending_priority", "jobs of higher priority are ahead of it")
_r("Dependency", "runs", "pending_dependency", "waiting for the jobs it depends on")
_r("Resources", "runs", "pending_resources", "waiting for nodes to free up")
_r("BeginTime", "runs", "pending_dependency", "waiting for its --begin time")
_r("Licenses", "runs", "pending_resources", "waiting for licenses (--licenses)")
_r("Reservation", "runs", "pending_reservation", "waiting for its reservation")
_r("SchedDefer", "runs", "pending_resources", "scheduling deferred to the next cycle")
_r("Cleaning", "runs", "pending_resources", "requeued; its last run is still cleaning up")
_r("Prolog", "runs", "pending_resources", "the controller's prolog is running for it")
_r("FedJobLock", "runs", "pending_resources", "waiting for the federation's job lock")
_r("BurstBufferResources", "runs", "pending_resources", "waiting for burst buffer space")
_r("BurstBufferStageIn", "runs", "pending_resources", "staging its files in (burst buffer)")
_r("PowerNotAvail", "runs", "pending_resources", "waiting for power budget", until="23.11")
_r("PowerReserved", "runs", "pending_resources", "power is reserved for others", until="23.11")
_r("MaxPoweredUpNodes", "runs", "pending_resources", "MaxPoweredUpNodes reached", since="24.05")
_r("MpiPortsBusy", "runs", "pending_resources", "waiting for free MPI ports", since="24.05")
_r("NvidiaImexChannels", "runs", "pending_resources", "waiting for IMEX channels", since="25.11")
_r("BlockFreeAction", "runs", "pending_resources", "waiting for a block to free", until="22.05")
_r(
    "JobArrayTaskLimit",
    "runs",
    "pending_qos_limit",
    "the array's %N limit of running tasks is reached; more start as tasks end",
)
_r("QOSJobLimit", "runs", "pending_qos_limit", "the QOS's job limit is reached")
_r("QOSResourceLimit", "runs", "pending_qos_limit", "the QOS's resource limit is reached")
_r("AssociationJobLimit", "runs", "pending_qos_limit", "the association's job limit is reached")
_r(
    "AssociationResourceLimit",
    "runs",
    "pending_qos_limit",
    "the association's resource limit is reached",
)
# --- never starts until an admin acts
_r("PartitionDown", "admin", "pending_partition_down", "its partition is DOWN", _PART_UP)
_r("PartitionInactive", "admin", "pending_partition_down", "its partition is INACTIVE", _PART_UP)
_r(
    "FrontEndDown",
    "admin",
    "pending_node_unavailable",
    "no front end node is available",
    "An admin brings a front end node back (scontrol show frontend).",
    until="24.11",
)
_r(
    "BlockMaxError",
    "admin",
    "pending_node_unavailable",
    "its block has too many errors",
    "An admin repairs the block.",
    until="22.05",
)
_r(
    "JobHeldAdmin",
    "admin",
    "pending_held",
    "held by an administrator (or by Slurm after a launch failure)",
    "An admin releases it: scontrol release {id} (scontrol show job {id} says why).",
)
_r(
    "JobHoldMaxRequeue",
    "admin",
    "pending_launch_failed_held",
    "requeued too many times (MAX_BATCH_REQUEUE) and held",
    "Find why its launches fail (slurmd.log on the batch host), then scontrol release {id}.",
)
_r(
    "QOSUsageThreshold",
    "admin",
    "pending_qos_limit",
    "the QOS's usage is above its UsageThreshold",
    "It waits for the usage to decay, or an admin lowers UsageThreshold "
    "(sacctmgr show qos {qos} format=Name,UsageThres).",
)
# --- the user must change the request
_r("JobHeldUser", "user", "pending_held", "held by its user (scontrol hold)", _RELEASE)
_r(
    "PartitionConfig",
    "user",
    "pending_partition_limit",
    "the request does not fit the partition's configuration",
    _PARTITION_FIT,
)
_r(
    "PartitionNodeLimit",
    "user",
    "pending_partition_limit",
    "its node count is outside the partition's MinNodes/MaxNodes",
    _PARTITION_FIT,
)
_r(
    "PartitionTimeLimit",
    "user",
    "pending_partition_limit",
    "its --time is above the partition's MaxTime",
    _PARTITION_FIT,
)
_r(
    "MaxMemPerLimit",
    "user",
    "pending_partition_limit",
    "its memory is above MaxMemPerCPU/MaxMemPerNode",
    _PARTITION_FIT,
)
_r(
    "BadConstraints",
    "user",
    "pending_partition_limit",
    "no node can satisfy its constraints (features, GRES, memory)",
    _BAD_CONSTRAINTS,
)
_r("InvalidAccount", "user", "pending_invalid_account", "its account is invalid", _ACCOUNTS)
_r("InvalidQOS", "user", "pending_invalid_account", "its QOS is invalid", _ACCOUNTS)
_r(
    "AccountNotAllowed",
    "user",
    "pending_invalid_account",
    "its account may not use the partition",
    _ACCOUNTS,
)
_r(
    "QOSNotAllowed",
    "user",
    "pending_invalid_account",
    "its QOS may not use the partition",
    _ACCOUNTS,
)
_r(
    "QOSTimeLimit",
    "user",
    "pending_qos_limit",
    "its --time is above the QOS's time limit",
    "scontrol update JobId={id} TimeLimit=<within MaxWall> "
    "(sacctmgr show qos {qos} format=Name,MaxWall).",
)
_r(
    "AssociationTimeLimit",
    "user",
    "pending_qos_limit",
    "its --time is above the association's time limit",
    "scontrol update JobId={id} TimeLimit=<within MaxWall> "
    "(sacctmgr show assoc user={user} format=Account,MaxWall).",
)
_r(
    "DependencyNeverSatisfied",
    "user",
    "dependency_failed",
    "the job it depends on ended the wrong way",
    "scancel {id} and resubmit once the parent succeeds, or drop the dependency: "
    "scontrol update JobId={id} Dependency=",
)
_r(
    "ReservationDeleted",
    "user",
    "pending_reservation",
    "its reservation was deleted",
    "Drop it: scontrol update JobId={id} Reservation= (or use another reservation).",
)
_r(
    "ReservationInvalid",
    "user",
    "pending_reservation",
    "its reservation is invalid (ended, or not open to this job)",
    "Drop it: scontrol update JobId={id} Reservation= (scontrol show res lists valid ones).",
    since="23.02",
)
# --- depends on why
_r(
    "ReqNodeNotAvail",
    "depends",
    "pending_node_unavailable",
    "nodes it needs are down, drained or reserved",
    "Drop a --nodelist/--reservation it does not need (scontrol update JobId={id} "
    "ReqNodeList=), or get the nodes back (sinfo -R).",
)
_r(
    "Constraints",
    "depends",
    "pending_node_unavailable",
    "no node with its --constraint/--prefer features is available now",
    "sinfo -o '%N %f %T' shows which nodes have the features and their state.",
    since="23.11",
)
_r(
    "AccountingPolicy",
    "depends",
    "pending_qos_limit",
    "an accounting (QOS/association) limit holds it",
    "scontrol show job {id} names the limit; sacctmgr show assoc user={user}; "
    "sacctmgr show qos {qos}.",
)
# --- why a job ended
_r(
    "NodeDown",
    "ended",
    "node_not_responding",
    "a node of its allocation failed",
    "Check the node (scontrol show node, slurmd.log); resubmit, or sbatch --requeue.",
)
_r(
    "NonZeroExitCode",
    "ended",
    "application_error",
    "the program exited with a non-zero status",
    "Read its first error; sacct -j {id} -o JobID,State,ExitCode shows which step failed.",
)
_r(
    "RaisedSignal",
    "ended",
    "application_error",
    "a signal ended the program",
    "Read its first error; sacct -j {id} -o JobID,State,ExitCode shows which step.",
    since="23.02",
)
_r(
    "TimeLimit",
    "ended",
    "time_limit",
    "it reached its --time limit",
    "Resubmit with a longer --time (within the partition MaxTime), or checkpoint.",
)
_r(
    "OutOfMemory",
    "ended",
    "oom_killed",
    "it used more memory than it asked for",
    "Resubmit with more --mem (sacct -j {id} -o MaxRSS shows the peak).",
)
_r("JobLaunchFailure", "ended", "job_launch_failed", "Slurm could not launch it", _LAUNCH)
_r("SystemFailure", "ended", "job_launch_failed", "a Slurm system failure ended it", _LAUNCH)
_r(
    "BurstBufferOperation",
    "ended",
    "job_launch_failed",
    "a burst buffer operation failed",
    "scontrol show job {id} (the StateReason text); an admin checks the burst buffer.",
)
_r(
    "InactiveLimit",
    "ended",
    "inactive_limit",
    "its srun/salloc stopped answering (InactiveLimit)",
    "Keep the submitting session alive (tmux/screen), or use sbatch instead of salloc/srun.",
)
_r(
    "DeadLine",
    "ended",
    "deadline_reached",
    "it could not finish before its --deadline",
    "Resubmit with a later --deadline or a shorter --time.",
)


def _plain() -> dict[str, Reason]:
    return {r.code: r for r in _PLAIN}


def _limit_reason(code: str, lim: Limit) -> Reason:
    remedy = limit_remedy(lim)
    if code == "AssocMaxBBMinutesPerJob":  # Slurm prints it for the QOS's limit too
        remedy = "Slurm gives this code for a QOS's MaxTRESMinsPerJob too: check both. " + remedy
    since = LIMIT_SINCE.get(code, SERIES[0])
    return Reason(code, lim.outcome, "pending_qos_limit", lim.sentence(), remedy, since)


def _all() -> dict[str, Reason]:
    out = _plain()
    for code in LIMIT_CODES:
        lim = limit_of(code)
        if lim is None:  # pragma: no cover - the spelling rule covers every listed code
            raise ValueError(f"limit code {code} does not parse")
        out[code] = _limit_reason(code, lim)
    return out


REASONS: dict[str, Reason] = _all()

# Codes whose job ended; on a pending job they describe a requeued one.
ENDED_CODES = frozenset(c for c, r in REASONS.items() if r.outcome == "ended")


# ------------------------------------------------------------------ lookups


def base_code(reason: str) -> str:
    """The code of a squeue reason: ``ReqNodeNotAvail, UnavailableNodes:c1`` ->
    ``ReqNodeNotAvail``; ``RaisedSignal:11(Segmentation fault)`` -> ``RaisedSignal``;
    ``(Resources)`` -> ``Resources``. A description squeue prints instead of a code
    (``launch failed requeued held``...) maps to the code it stands for."""
    r = reason.strip().strip("()").strip()
    if not r:
        return "None"
    low = r.lower()
    for phrase, code in _DESCRIPTIONS:
        if phrase in low:
            return code
    return re.split(r"[,:(\s]", r, maxsplit=1)[0]


# squeue shows a job's state description instead of its code when Slurm set one.
_DESCRIPTIONS: tuple[tuple[str, str], ...] = (
    # 26.05: the topology plugin's description of a job no block/switch can hold now, where
    # older series said Resources (squeue prints spaces as '_')
    ("no_suitable_topology_unit_found", "Resources"),
    ("no suitable topology unit found", "Resources"),
    ("launch failed requeued held", "JobHeldAdmin"),
    ("launch_failed_requeued_held", "JobHeldAdmin"),
    ("job requeued in held state", "JobHeldAdmin"),
    ("requeue-hold exit", "JobHeldAdmin"),
    ("nodes required for job are down", "ReqNodeNotAvail"),
    ("job is at or exceeds qos", "AccountingPolicy"),
    ("job is at or exceeds association", "AccountingPolicy"),
    ("not permitted to use this partition", "AccountNotAllowed"),
    ("not in group permitted to use this partition", "AccountNotAllowed"),
    ("which this job was running under, has ended", "ReservationInvalid"),
)


def reason_info(reason: str) -> Reason:
    """The entry of a squeue reason (its code's); an ``unknown`` one for a code not listed."""
    code = base_code(reason)
    got = REASONS.get(code)
    if got is not None:
        return got
    lim = limit_of(code)  # a limit spelled the family's way but newer than this list
    if lim is not None:
        return _limit_reason(code, lim)
    return Reason(
        code,
        "unknown",
        "unknown_slurm_code",
        f"Slurm reason {code!r} is not in this cockpit's list (22.05-26.05)",
        "scontrol show job {id} (Reason and StateReason text); check the Slurm version's "
        "squeue man page (JOB REASON CODES).",
    )


def never_runs(reason: str) -> bool:
    """The job will not start without someone acting (admin or user)."""
    return reason_info(reason).outcome in {"admin", "user"}


def codes_in(series: str) -> list[str]:
    """Every reason code of one release series."""
    return [c for c, r in REASONS.items() if r.in_series(series)]
