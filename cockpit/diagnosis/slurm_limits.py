"""The QOS and association limit reason codes of Slurm 22.05 to 26.05, as one family.

About 170 of Slurm's job reason codes name a limit: its scope (QOS, association), kind (a
group's total, a maximum, a minimum), the TRES (CPUs, memory, GPUs...), per what (job,
node, user, account) and whether it counts what is in use, a budget of TRES-minutes or the
TRES-minutes of running jobs. Slurm spells all of that in the code (``QOSMaxGRESPerUser``,
``AssocGrpCPURunMinutesLimit``, ``MaxCpuPerAccount``), so :func:`limit_of` reads it back,
and what it takes for the job to start follows from it (:attr:`Limit.outcome`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# Every QOS/association limit code of 22.05-26.05, as Slurm spells them. Their meaning is
# read from the spelling (limit_of); since/until only where a code is not in every series.
LIMIT_CODES: tuple[str, ...] = tuple(
    """
    AssocGrpBB AssocGrpBBMinutes AssocGrpBBRunMinutes AssocGrpBilling AssocGrpBillingMinutes
    AssocGrpBillingRunMinutes AssocGrpCPUMinutesLimit AssocGrpCPURunMinutesLimit AssocGrpCpuLimit
    AssocGrpEnergy AssocGrpEnergyMinutes AssocGrpEnergyRunMinutes AssocGrpGRES AssocGrpGRESMinutes
    AssocGrpGRESRunMinutes AssocGrpJobsLimit AssocGrpLicense AssocGrpLicenseMinutes
    AssocGrpLicenseRunMinutes AssocGrpMemLimit AssocGrpMemMinutes AssocGrpMemRunMinutes
    AssocGrpNodeLimit AssocGrpNodeMinutes AssocGrpNodeRunMinutes AssocGrpSubmitJobsLimit
    AssocGrpUnknown AssocGrpUnknownMinutes AssocGrpUnknownRunMinutes AssocGrpWallLimit
    AssocMaxBBMinutesPerJob AssocMaxBBPerJob AssocMaxBBPerNode AssocMaxBillingMinutesPerJob
    AssocMaxBillingPerJob AssocMaxBillingPerNode AssocMaxCpuMinutesPerJobLimit
    AssocMaxCpuPerJobLimit AssocMaxCpuPerNode AssocMaxEnergyMinutesPerJob AssocMaxEnergyPerJob
    AssocMaxEnergyPerNode AssocMaxGRESMinutesPerJob AssocMaxGRESPerJob AssocMaxGRESPerNode
    AssocMaxJobsLimit AssocMaxLicenseMinutesPerJob AssocMaxLicensePerJob AssocMaxMemMinutesPerJob
    AssocMaxMemPerJob AssocMaxMemPerNode AssocMaxNodeMinutesPerJob AssocMaxNodePerJobLimit
    AssocMaxSubmitJobLimit AssocMaxUnknownMinutesPerJob AssocMaxUnknownPerJob
    AssocMaxUnknownPerNode AssocMaxWallDurationPerJobLimit
    MaxBBPerAccount MaxBillingPerAccount MaxCpuPerAccount MaxEnergyPerAccount MaxGRESPerAccount
    MaxJobsPerAccount MaxLicensePerAccount MaxMemoryPerAccount MaxNodePerAccount
    MaxSubmitJobsPerAccount MaxUnknownPerAccount
    QOSGrpBB QOSGrpBBMinutes QOSGrpBBRunMinutes QOSGrpBilling QOSGrpBillingMinutes
    QOSGrpBillingRunMinutes QOSGrpCPUMinutesLimit QOSGrpCPURunMinutesLimit QOSGrpCpuLimit
    QOSGrpEnergy QOSGrpEnergyMinutes QOSGrpEnergyRunMinutes QOSGrpGRES QOSGrpGRESMinutes
    QOSGrpGRESRunMinutes QOSGrpJobsLimit QOSGrpLicense QOSGrpLicenseMinutes
    QOSGrpLicenseRunMinutes QOSGrpMemLimit QOSGrpMemoryMinutes QOSGrpMemoryRunMinutes
    QOSGrpNodeLimit QOSGrpNodeMinutes QOSGrpNodeRunMinutes QOSGrpSubmitJobsLimit QOSGrpUnknown
    QOSGrpUnknownMinutes QOSGrpUnknownRunMinutes QOSGrpWallLimit QOSMaxBBPerJob QOSMaxBBPerNode
    QOSMaxBBPerUser QOSMaxBillingMinutesPerJob QOSMaxBillingPerJob QOSMaxBillingPerNode
    QOSMaxBillingPerUser QOSMaxCpuMinutesPerJobLimit QOSMaxCpuPerJobLimit QOSMaxCpuPerNode
    QOSMaxCpuPerUserLimit QOSMaxEnergyMinutesPerJob QOSMaxEnergyPerJob QOSMaxEnergyPerNode
    QOSMaxEnergyPerUser QOSMaxGRESMinutesPerJob QOSMaxGRESPerJob QOSMaxGRESPerNode
    QOSMaxGRESPerUser QOSMaxJobsPerUserLimit QOSMaxLicenseMinutesPerJob QOSMaxLicensePerJob
    QOSMaxLicensePerUser QOSMaxMemoryMinutesPerJob QOSMaxMemoryPerJob QOSMaxMemoryPerNode
    QOSMaxMemoryPerUser QOSMaxNodeMinutesPerJob QOSMaxNodePerJobLimit QOSMaxNodePerUserLimit
    QOSMaxSubmitJobPerUserLimit QOSMaxUnknownMinutesPerJob QOSMaxUnknownPerJob
    QOSMaxUnknownPerNode QOSMaxUnknownPerUser QOSMaxWallDurationPerJobLimit QOSMinBB
    QOSMinBilling QOSMinCpuNotSatisfied QOSMinEnergy QOSMinGRES QOSMinLicense QOSMinMemory
    QOSMinNode QOSMinUnknown
    """.split()
) + tuple(
    f"Max{t}RunMinsPer{p}"
    for t in ("BB", "Billing", "Cpu", "Energy", "GRES", "License", "Memory", "Node", "Unknown")
    for p in ("Account", "User")
)
LIMIT_SINCE: dict[str, str] = {c: "24.05" for c in LIMIT_CODES if "RunMinsPer" in c}


@dataclass(frozen=True, slots=True)
class Limit:
    """What a limit code names: ``scope`` QOS | association; ``kind`` Grp (a group's
    total) | Max | Min; ``tres`` (CPUs, memory, GPUs (GRES)...); ``per`` job | node | user |
    account | "" (the group); ``usage`` "" (in use now), "minutes" (accumulated TRES-minutes,
    a budget) or "run-minutes" (TRES-minutes of the running jobs)."""

    scope: str
    kind: str
    tres: str
    per: str
    usage: str

    @property
    def outcome(self) -> Literal["runs", "user", "admin"]:
        if self.kind == "Min" or self.per in {"job", "node"}:
            return "user"  # the request itself is outside the limit
        if self.usage == "minutes" or self.tres == "wall time":
            return "admin"  # a spent budget: frees only by decay or an admin
        return "runs"  # frees as the group's/user's running jobs end

    @property
    def setting(self) -> str:
        """The sacctmgr setting behind the code: ``MaxTRESPU``, ``GrpTRESRunMins``..."""
        assoc = self.scope == "association"
        if self.tres in {"running jobs", "submitted jobs"}:
            base = "Jobs" if self.tres == "running jobs" else "SubmitJobs"
            if self.kind == "Grp":
                return f"Grp{base}"
            return f"Max{base}" + {"user": "PU", "account": "PA"}.get(self.per, "")
        if self.tres == "wall time":
            return "GrpWall" if self.kind == "Grp" else "MaxWall"
        if self.kind == "Min":
            return "MinTRES"
        mins = {"": "", "minutes": "Mins", "run-minutes": "RunMins"}[self.usage]
        if self.kind == "Grp":
            return f"GrpTRES{mins}"
        if self.per == "job":
            return f"MaxTRES{mins}" if assoc else f"MaxTRES{mins}PerJob"
        if self.per == "node":
            return "MaxTRESPerNode"
        return f"MaxTRES{mins}" + {"user": "PU", "account": "PA"}.get(self.per, "")

    def sentence(self) -> str:
        """``the QOS caps GPUs (GRES) per user (MaxTRESPU)``: the limit in words."""
        who = "the QOS" if self.scope == "QOS" else "the association"
        unit = _UNIT.get(self.tres, self.tres)
        amount = {
            "": self.tres,
            "minutes": f"{unit}-minutes used (a budget)",
            "run-minutes": f"{unit}-minutes of running jobs",
        }[self.usage]
        if self.usage == "minutes" and self.per == "job":
            amount = f"{unit}-minutes (size x --time)"
        if self.kind == "Min":
            return f"{who} requires a minimum of {self.tres} per job ({self.setting})"
        per = f" per {self.per}" if self.per else " in total"
        if self.tres in {"running jobs", "submitted jobs"} and not self.per:
            per = " in total" if self.kind == "Grp" else ""
        return f"{who} caps {amount}{per} ({self.setting})"


_UNIT = {
    "CPUs": "CPU",
    "GPUs (GRES)": "GPU (GRES)",
    "nodes": "node",
    "licenses": "license",
    "a TRES": "TRES",
}
_TRES = {
    "Cpu": "CPUs",
    "CPU": "CPUs",
    "Mem": "memory",
    "Memory": "memory",
    "Node": "nodes",
    "GRES": "GPUs (GRES)",
    "License": "licenses",
    "BB": "burst buffer",
    "Billing": "billing TRES",
    "Energy": "energy",
    "Unknown": "a TRES",
    "Jobs": "running jobs",
    "Job": "running jobs",
    "SubmitJobs": "submitted jobs",
    "SubmitJob": "submitted jobs",
    "Wall": "wall time",
    "WallDuration": "wall time",
}
_LIMIT_RE = re.compile(
    r"^(?P<scope>QOS|Assoc)?(?P<kind>Grp|Max|Min)"
    r"(?P<tres>SubmitJobs?|Jobs?|WallDuration|Wall|Cpu|CPU|Memory|Mem|Node|GRES|License|BB|"
    r"Billing|Energy|Unknown)"
    r"(?P<usage>RunMinutes|RunMins|Minutes)?(?:Per(?P<per>Job|Node|User|Account))?"
    r"(?:Limit|NotSatisfied)?$"
)


# A limit of a TRES this list does not name yet (a newer Slurm): the family's spelling.
_NEW_LIMIT_RE = re.compile(
    r"^(?P<scope>QOS|Assoc)(?P<kind>Grp|Max|Min)(?P<tres>[A-Z][A-Za-z]*?)"
    r"(?P<usage>RunMinutes|RunMins|Minutes)?(?:Per(?P<per>Job|Node|User|Account))?"
    r"(?:Limit|NotSatisfied)?$"
)


def limit_of(code: str) -> Limit | None:
    """The limit a QOS/association reason code names; None when ``code`` is not one."""
    if code in {"MaxMemPerLimit", "MaxPoweredUpNodes"}:
        return None
    m = _LIMIT_RE.match(code) or _NEW_LIMIT_RE.match(code)
    if m is None:
        return None
    scope = "association" if m["scope"] == "Assoc" else "QOS"  # MaxXPerAccount: a QOS limit
    usage = {"RunMinutes": "run-minutes", "RunMins": "run-minutes", "Minutes": "minutes"}.get(
        m["usage"] or "", ""
    )
    per = (m["per"] or "").lower()
    if m["tres"] == "WallDuration" and not per:
        per = "job"
    return Limit(scope, m["kind"], _TRES.get(m["tres"], m["tres"]), per, usage)


def limit_remedy(lim: Limit) -> str:
    show = (
        "sacctmgr show qos {qos} format=Name,GrpTRES,GrpTRESMins,MaxTRESPU,MaxTRESPA,MaxJobsPU,"
        "MaxTRESPerJob,MaxWall,MinTRES"
        if lim.scope == "QOS"
        else "sacctmgr show assoc user={user} format=Account,Partition,GrpTRES,GrpTRESMins,"
        "GrpJobs,MaxJobs,MaxTRES,MaxWall"
    )
    if lim.outcome == "user":
        return (
            f"{show}; the user shrinks the request to fit (scontrol update JobId={{id}} "
            "NumCPUs=/MinMemoryNode=/TimeLimit=/Gres=) or uses another QOS/account "
            "(scontrol update JobId={id} QOS=<q>)."
        )
    if lim.outcome == "admin":
        return (
            f"{show}; sshare -l -A {{account}} shows the usage. An admin raises the limit or "
            "resets the usage (sacctmgr modify ... set GrpTRESMins=... / RawUsage=0); "
            "otherwise it waits for the usage to decay."
        )
    return (
        f"Nothing broken: it starts as the running jobs under this limit end (squeue -u {{user}} "
        f"-t R). {show}; to start sooner, an admin raises the limit."
    )
