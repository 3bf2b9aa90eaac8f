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

from cockpit.i18n import N_, _

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
        """``the QOS caps GPUs (GRES) per user (MaxTRESPU)``: the limit in words (in the
        current language: the pieces are whole phrases of the catalogue)."""
        who = _("the QOS") if self.scope == "QOS" else _("the association")
        tres = _(self.tres)
        unit = _(_UNIT.get(self.tres, self.tres))
        amount = {
            "": tres,
            "minutes": _("{unit}-minutes used (a budget)").format(unit=unit),
            "run-minutes": _("{unit}-minutes of running jobs").format(unit=unit),
        }[self.usage]
        if self.usage == "minutes" and self.per == "job":
            amount = _("{unit}-minutes (size x --time)").format(unit=unit)
        if self.kind == "Min":
            return _("{who} requires a minimum of {tres} per job ({setting})").format(
                who=who, tres=tres, setting=self.setting
            )
        per = self.per
        if self.tres in {"running jobs", "submitted jobs"} and not self.per:
            per = "total" if self.kind == "Grp" else ""
        template = {
            "": N_("{who} caps {amount} ({setting})"),
            "total": N_("{who} caps {amount} in total ({setting})"),
            "job": N_("{who} caps {amount} per job ({setting})"),
            "node": N_("{who} caps {amount} per node ({setting})"),
            "user": N_("{who} caps {amount} per user ({setting})"),
            "account": N_("{who} caps {amount} per account ({setting})"),
        }[per or ("" if self.tres in {"running jobs", "submitted jobs"} else "total")]
        return _(template).format(who=who, amount=amount, setting=self.setting)


_UNIT = {
    "CPUs": N_("CPU"),
    "GPUs (GRES)": N_("GPU (GRES)"),
    "nodes": N_("node"),
    "licenses": N_("license"),
    "a TRES": "TRES",
}
_TRES = {
    "Cpu": N_("CPUs"),
    "CPU": N_("CPUs"),
    "Mem": N_("memory"),
    "Memory": N_("memory"),
    "Node": N_("nodes"),
    "GRES": N_("GPUs (GRES)"),
    "License": N_("licenses"),
    "BB": N_("burst buffer"),
    "Billing": N_("billing TRES"),
    "Energy": N_("energy"),
    "Unknown": N_("a TRES"),
    "Jobs": N_("running jobs"),
    "Job": N_("running jobs"),
    "SubmitJobs": N_("submitted jobs"),
    "SubmitJob": N_("submitted jobs"),
    "Wall": N_("wall time"),
    "WallDuration": N_("wall time"),
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
    scope = N_("association") if m["scope"] == "Assoc" else "QOS"  # MaxXPerAccount: a QOS limit
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
    # a template itself: {id} {user} {account} {qos} are filled in by the rule ({{id}} here)
    if lim.outcome == "user":
        return _(
            "{show}; the user shrinks the request to fit (scontrol update JobId={{id}} "
            "NumCPUs=/MinMemoryNode=/TimeLimit=/Gres=) or uses another QOS/account "
            "(scontrol update JobId={{id}} QOS=<q>)."
        ).format(show=show)
    if lim.outcome == "admin":
        return _(
            "{show}; sshare -l -A {{account}} shows the usage. An admin raises the limit or "
            "resets the usage (sacctmgr modify ... set GrpTRESMins=... / RawUsage=0); "
            "otherwise it waits for the usage to decay."
        ).format(show=show)
    return _(
        "Nothing broken: it starts as the running jobs under this limit end (squeue -u {{user}} "
        "-t R). {show}; to start sooner, an admin raises the limit."
    ).format(show=show)
