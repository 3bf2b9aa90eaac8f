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
from cockpit.i18n import N_, _

__all__ = ["LIMIT_CODES", "REASONS", "SERIES", "Reason", "limit_of", "reason_info"]

Outcome = Literal["runs", "admin", "user", "depends", "ended", "none", "unknown"]

# The release series covered, oldest first (the codes are those of each series' last release).
SERIES: tuple[str, ...] = ("22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11", "26.05")

OUTCOME_PHRASE: dict[str, str] = {
    "runs": N_("will run"),
    "admin": N_("never runs until an admin acts"),
    "user": N_("never runs as submitted"),
    "depends": N_("may not run by itself"),
    "ended": N_("ended"),
    "none": "",
    "unknown": N_("unknown reason"),
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


_WAIT = N_("Nothing to fix: it starts by itself; `squeue --start -j {id}` shows the estimate.")
_RELEASE = "scontrol release {id}"
_ACCOUNTS = N_(
    "sacctmgr show assoc user={user} format=Account,Partition,QOS shows what {user} may use: "
    "scontrol update JobId={id} Account=<a> QOS=<q>, or ask an admin to grant it "
    "(sacctmgr modify user {user} set qos+=<q>)."
)
_PARTITION_FIT = N_(
    "scontrol show partition {part} shows the limits; shrink the request to fit "
    "(scontrol update JobId={id} TimeLimit=/NumNodes=/MinMemoryNode=) or move it: "
    "scontrol update JobId={id} Partition=<p>."
)

_PART_UP = N_(
    "Ask an admin: scontrol update PartitionName={part} State=UP; or move the job: "
    "scontrol update JobId={id} Partition=<p>."
)
_BAD_CONSTRAINTS = N_(
    "sinfo -o '%P %c %m %f %G' shows what the nodes have; fix --constraint/--gres/--mem "
    "(scontrol update JobId={id} ...), or scancel {id} and resubmit."
)
_LAUNCH = N_(
    "slurmd.log on the batch host (spool dir, prolog, munge, the script's interpreter); "
    "then resubmit."
)
_PLAIN: list[Reason] = []


def _r(code: str, outcome: Outcome, label: str, what: str, remedy: str = _WAIT, **kw) -> None:
    _PLAIN.append(Reason(code, outcome, label, what, remedy, **kw))


# Every code that is not a QOS/association limit. Labels are those of docs/root-causes.md.
_r("None", "none", "", N_("no reason set (running, or not yet looked at)"), "")
# --- starts by itself
_r("Priority", "runs", "pending_priority", N_("jobs of higher priority are ahead of it"))
_r("Dependency", "runs", "pending_dependency", N_("waiting for the jobs it depends on"))
_r("Resources", "runs", "pending_resources", N_("waiting for nodes to free up"))
_r("BeginTime", "runs", "pending_dependency", N_("waiting for its --begin time"))
_r("Licenses", "runs", "pending_resources", N_("waiting for licenses (--licenses)"))
_r("Reservation", "runs", "pending_reservation", N_("waiting for its reservation"))
_r("SchedDefer", "runs", "pending_resources", N_("scheduling deferred to the next cycle"))
_r("Cleaning", "runs", "pending_resources", N_("requeued; its last run is still cleaning up"))
_r("Prolog", "runs", "pending_resources", N_("the controller's prolog is running for it"))
_r("FedJobLock", "runs", "pending_resources", N_("waiting for the federation's job lock"))
_r("BurstBufferResources", "runs", "pending_resources", N_("waiting for burst buffer space"))
_r("BurstBufferStageIn", "runs", "pending_resources", N_("staging its files in (burst buffer)"))
_r("PowerNotAvail", "runs", "pending_resources", N_("waiting for power budget"), until="23.11")
_r("PowerReserved", "runs", "pending_resources", N_("power is reserved for others"), until="23.11")
_r("MaxPoweredUpNodes", "runs", "pending_resources", N_("MaxPoweredUpNodes reached"), since="24.05")
_r("MpiPortsBusy", "runs", "pending_resources", N_("waiting for free MPI ports"), since="24.05")
_r(
    "NvidiaImexChannels",
    "runs",
    "pending_resources",
    N_("waiting for IMEX channels"),
    since="25.11",
)
_r("BlockFreeAction", "runs", "pending_resources", N_("waiting for a block to free"), until="22.05")
_r(
    "JobArrayTaskLimit",
    "runs",
    "pending_qos_limit",
    N_("the array's %N limit of running tasks is reached; more start as tasks end"),
)
_r("QOSJobLimit", "runs", "pending_qos_limit", N_("the QOS's job limit is reached"))
_r("QOSResourceLimit", "runs", "pending_qos_limit", N_("the QOS's resource limit is reached"))
_r("AssociationJobLimit", "runs", "pending_qos_limit", N_("the association's job limit is reached"))
_r(
    "AssociationResourceLimit",
    "runs",
    "pending_qos_limit",
    N_("the association's resource limit is reached"),
)
# --- never starts until an admin acts
_r("PartitionDown", "admin", "pending_partition_down", N_("its partition is DOWN"), _PART_UP)
_r(
    "PartitionInactive",
    "admin",
    "pending_partition_down",
    N_("its partition is INACTIVE"),
    _PART_UP,
)
_r(
    "FrontEndDown",
    "admin",
    "pending_node_unavailable",
    N_("no front end node is available"),
    N_("An admin brings a front end node back (scontrol show frontend)."),
    until="24.11",
)
_r(
    "BlockMaxError",
    "admin",
    "pending_node_unavailable",
    N_("its block has too many errors"),
    N_("An admin repairs the block."),
    until="22.05",
)
_r(
    "JobHeldAdmin",
    "admin",
    "pending_held",
    N_("held by an administrator (or by Slurm after a launch failure)"),
    N_("An admin releases it: scontrol release {id} (scontrol show job {id} says why)."),
)
_r(
    "JobHoldMaxRequeue",
    "admin",
    "pending_launch_failed_held",
    N_("requeued too many times (MAX_BATCH_REQUEUE) and held"),
    N_("Find why its launches fail (slurmd.log on the batch host), then scontrol release {id}."),
)
_r(
    "QOSUsageThreshold",
    "admin",
    "pending_qos_limit",
    N_("the QOS's usage is above its UsageThreshold"),
    N_(
        "It waits for the usage to decay, or an admin lowers UsageThreshold "
        "(sacctmgr show qos {qos} format=Name,UsageThres)."
    ),
)
# --- the user must change the request
_r("JobHeldUser", "user", "pending_held", N_("held by its user (scontrol hold)"), _RELEASE)
_r(
    "PartitionConfig",
    "user",
    "pending_partition_limit",
    N_("the request does not fit the partition's configuration"),
    _PARTITION_FIT,
)
_r(
    "PartitionNodeLimit",
    "user",
    "pending_partition_limit",
    N_("its node count is outside the partition's MinNodes/MaxNodes"),
    _PARTITION_FIT,
)
_r(
    "PartitionTimeLimit",
    "user",
    "pending_partition_limit",
    N_("its --time is above the partition's MaxTime"),
    _PARTITION_FIT,
)
_r(
    "MaxMemPerLimit",
    "user",
    "pending_partition_limit",
    N_("its memory is above MaxMemPerCPU/MaxMemPerNode"),
    _PARTITION_FIT,
)
_r(
    "BadConstraints",
    "user",
    "pending_partition_limit",
    N_("no node can satisfy its constraints (features, GRES, memory)"),
    _BAD_CONSTRAINTS,
)
_r("InvalidAccount", "user", "pending_invalid_account", N_("its account is invalid"), _ACCOUNTS)
_r("InvalidQOS", "user", "pending_invalid_account", N_("its QOS is invalid"), _ACCOUNTS)
_r(
    "AccountNotAllowed",
    "user",
    "pending_invalid_account",
    N_("its account may not use the partition"),
    _ACCOUNTS,
)
_r(
    "QOSNotAllowed",
    "user",
    "pending_invalid_account",
    N_("its QOS may not use the partition"),
    _ACCOUNTS,
)
_r(
    "QOSTimeLimit",
    "user",
    "pending_qos_limit",
    N_("its --time is above the QOS's time limit"),
    N_(
        "scontrol update JobId={id} TimeLimit=<within MaxWall> "
        "(sacctmgr show qos {qos} format=Name,MaxWall)."
    ),
)
_r(
    "AssociationTimeLimit",
    "user",
    "pending_qos_limit",
    N_("its --time is above the association's time limit"),
    N_(
        "scontrol update JobId={id} TimeLimit=<within MaxWall> "
        "(sacctmgr show assoc user={user} format=Account,MaxWall)."
    ),
)
_r(
    "DependencyNeverSatisfied",
    "user",
    "dependency_failed",
    N_("the job it depends on ended the wrong way"),
    N_(
        "scancel {id} and resubmit once the parent succeeds, or drop the dependency: "
        "scontrol update JobId={id} Dependency="
    ),
)
_r(
    "ReservationDeleted",
    "user",
    "pending_reservation",
    N_("its reservation was deleted"),
    N_("Drop it: scontrol update JobId={id} Reservation= (or use another reservation)."),
)
_r(
    "ReservationInvalid",
    "user",
    "pending_reservation",
    N_("its reservation is invalid (ended, or not open to this job)"),
    N_("Drop it: scontrol update JobId={id} Reservation= (scontrol show res lists valid ones)."),
    since="23.02",
)
# --- depends on why
_r(
    "ReqNodeNotAvail",
    "depends",
    "pending_node_unavailable",
    N_("nodes it needs are down, drained or reserved"),
    N_(
        "Drop a --nodelist/--reservation it does not need (scontrol update JobId={id} "
        "ReqNodeList=), or get the nodes back (sinfo -R)."
    ),
)
_r(
    "Constraints",
    "depends",
    "pending_node_unavailable",
    N_("no node with its --constraint/--prefer features is available now"),
    N_("sinfo -o '%N %f %T' shows which nodes have the features and their state."),
    since="23.11",
)
_r(
    "AccountingPolicy",
    "depends",
    "pending_qos_limit",
    N_("an accounting (QOS/association) limit holds it"),
    N_(
        "scontrol show job {id} names the limit; sacctmgr show assoc user={user}; "
        "sacctmgr show qos {qos}."
    ),
)
# --- why a job ended
_r(
    "NodeDown",
    "ended",
    "node_not_responding",
    N_("a node of its allocation failed"),
    N_("Check the node (scontrol show node, slurmd.log); resubmit, or sbatch --requeue."),
)
_r(
    "NonZeroExitCode",
    "ended",
    "application_error",
    N_("the program exited with a non-zero status"),
    N_("Read its first error; sacct -j {id} -o JobID,State,ExitCode shows which step failed."),
)
_r(
    "RaisedSignal",
    "ended",
    "application_error",
    N_("a signal ended the program"),
    N_("Read its first error; sacct -j {id} -o JobID,State,ExitCode shows which step."),
    since="23.02",
)
_r(
    "TimeLimit",
    "ended",
    "time_limit",
    N_("it reached its --time limit"),
    N_("Resubmit with a longer --time (within the partition MaxTime), or checkpoint."),
)
_r(
    "OutOfMemory",
    "ended",
    "oom_killed",
    N_("it used more memory than it asked for"),
    N_("Resubmit with more --mem (sacct -j {id} -o MaxRSS shows the peak)."),
)
_r("JobLaunchFailure", "ended", "job_launch_failed", N_("Slurm could not launch it"), _LAUNCH)
_r("SystemFailure", "ended", "job_launch_failed", N_("a Slurm system failure ended it"), _LAUNCH)
_r(
    "BurstBufferOperation",
    "ended",
    "job_launch_failed",
    N_("a burst buffer operation failed"),
    N_("scontrol show job {id} (the StateReason text); an admin checks the burst buffer."),
)
_r(
    "InactiveLimit",
    "ended",
    "inactive_limit",
    N_("its srun/salloc stopped answering (InactiveLimit)"),
    N_("Keep the submitting session alive (tmux/screen), or use sbatch instead of salloc/srun."),
)
_r(
    "DeadLine",
    "ended",
    "deadline_reached",
    N_("it could not finish before its --deadline"),
    N_("Resubmit with a later --deadline or a shorter --time."),
)


_PLAIN_CODES = frozenset(r.code for r in _PLAIN)


def _plain() -> dict[str, Reason]:
    return {r.code: r for r in _PLAIN}


_BB_BOTH = N_("Slurm gives this code for a QOS's MaxTRESMinsPerJob too: check both. {remedy}")


def _limit_reason(code: str, lim: Limit) -> Reason:
    remedy = limit_remedy(lim)
    if code == "AssocMaxBBMinutesPerJob":  # Slurm prints it for the QOS's limit too
        remedy = _BB_BOTH.format(remedy=remedy)
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
    ("job_requeued_in_held_state", "JobHeldAdmin"),  # scontrol requeuehold (22.05 lab)
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
        _UNKNOWN_WHAT.format(code=code),
        _UNKNOWN_REMEDY,
    )


_UNKNOWN_WHAT = N_("Slurm reason '{code}' is not in this cockpit's list (22.05-26.05)")
_UNKNOWN_REMEDY = N_(
    "scontrol show job {id} (Reason and StateReason text); check the Slurm version's "
    "squeue man page (JOB REASON CODES)."
)


# ------------------------------------------------------------------ the words, translated
# REASONS is built at import time in English (its texts are the msgids); these give an
# entry's words in the language chosen since.


def reason_what(r: Reason) -> str:
    """What the code means, in the current language."""
    if r.outcome == "unknown":
        return _(_UNKNOWN_WHAT).format(code=r.code)
    lim = limit_of(r.code) if r.code not in _PLAIN_CODES else None
    if lim is not None:
        return lim.sentence()
    return _(r.what) if r.what else ""


def reason_remedy(r: Reason) -> str:
    """The code's remedy template (``{id} {part} {user} {account} {qos}``), translated."""
    if r.outcome == "unknown":
        return _(_UNKNOWN_REMEDY)
    lim = limit_of(r.code) if r.code not in _PLAIN_CODES else None
    if lim is not None:
        remedy = limit_remedy(lim)
        return _(_BB_BOTH).format(remedy=remedy) if r.code == "AssocMaxBBMinutesPerJob" else remedy
    return _(r.remedy) if r.remedy else ""


def outcome_phrase(outcome: str) -> str:
    phrase = OUTCOME_PHRASE.get(outcome, "")
    return _(phrase) if phrase else ""


def never_runs(reason: str) -> bool:
    """The job will not start without someone acting (admin or user)."""
    return reason_info(reason).outcome in {"admin", "user"}


def codes_in(series: str) -> list[str]:
    """Every reason code of one release series."""
    return [c for c, r in REASONS.items() if r.in_series(series)]
