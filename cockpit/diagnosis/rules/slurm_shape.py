"""A pending job's per-task and per-node request against the nodes' topology and local disk.

Two requests squeue never shows and Slurm never rejects at submit when the partition has no
limit for them, so the job pends forever with Reason=Resources or Priority:

* ``--cpus-per-task`` (scontrol ``CPUs/Task=``): one task's CPUs must be on one node, so a task
  wider than the largest node's ``CPUTot`` never starts, whatever ``--nodes`` says. Slurm counts
  hardware threads as CPUs: with ``ThreadsPerCore=2`` a 48-CPU node has 24 cores, so a task of
  more than 24 CPUs only fits if it may use both threads of a core (not with
  ``--hint=nomultithread`` or ``--threads-per-core=1``).
* ``--tmp`` (``MinTmpDiskNode=``): compared with each node's ``TmpDisk`` (slurm.conf, MB). The
  default ``TmpDisk=0`` means any ``--tmp`` above 0 fits no node.

Pure: the numbers come from the SlurmJob/SlurmNode fields (``scontrol show job`` / ``show
node``), or, for a queue row from squeue, from the ``scontrol show job`` text a drill-down
fetched (``Artifacts.commands``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cockpit.diagnosis.rules.slurm_common import fmt_mib
from cockpit.i18n import _, ngettext
from cockpit.model import SlurmJob, SlurmNode

_CPT = re.compile(r"(?:^|\s)CPUs/Task=(\d+)")
_TMP = re.compile(r"(?:^|\s)MinTmpDiskNode=(\d+(?:\.\d+)?)([KMGT]?)", re.I)
_UNIT = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}


def task_request(job: SlurmJob, commands: dict | None = None) -> tuple[int | None, int | None]:
    """(CPUs per task, --tmp MiB per node) of ``job``: its own fields, else the ``scontrol show
    job`` text among ``commands`` (squeue rows carry neither)."""
    cpt, tmp = job.cpus_per_task, job.min_tmp_disk_mib
    if (cpt is None or tmp is None) and commands:
        text = commands.get(f"scontrol show job {job.job_id}") or ""
        if cpt is None and (m := _CPT.search(text)):
            cpt = int(m.group(1))
        if tmp is None and (m := _TMP.search(text)):
            tmp = int(round(float(m.group(1)) * _UNIT[m.group(2).upper()]))
    return cpt, tmp


def topology(node: SlurmNode) -> str:
    """``2 sockets x 12 cores x 2 threads = 48 CPUs`` (what is known of it)."""
    parts = [
        words(n).format(n=n)
        for n, words in (
            (node.sockets, lambda n: ngettext("{n} socket", "{n} sockets", n)),
            (node.cores_per_socket, lambda n: ngettext("{n} core", "{n} cores", n)),
            (node.threads_per_core, lambda n: ngettext("{n} thread", "{n} threads", n)),
        )
        if n
    ]
    total = f"{node.cpus_total} CPUs" if node.cpus_total else ""
    return " x ".join(parts) + (f" = {total}" if parts and total else total)


def physical_cores(node: SlurmNode) -> int | None:
    """Cores of one node (sockets x cores per socket), None when not reported."""
    if node.sockets and node.cores_per_socket:
        return node.sockets * node.cores_per_socket
    if node.cpus_total and node.threads_per_core:
        return node.cpus_total // max(node.threads_per_core, 1)
    return None


def shape_problems(
    cpus_per_task: int | None, tmp_mib: int | None, nodes: Iterable[SlurmNode]
) -> list[str]:
    """Why a task or node of this request fits none of ``nodes`` (the partition's), each with
    both numbers; empty when it fits one of them or nothing is known."""
    nodes = list(nodes)
    out: list[str] = []
    cpus = [n for n in nodes if n.cpus_total]
    if cpus_per_task and cpus_per_task > 1 and cpus:
        big = max(cpus, key=lambda n: n.cpus_total or 0)
        if cpus_per_task > (big.cpus_total or 0):
            out.append(
                _(
                    "--cpus-per-task {cpt} > largest node's {cpus} CPUs "
                    "({topology}; a task's CPUs must be on one node)"
                ).format(cpt=cpus_per_task, cpus=big.cpus_total, topology=topology(big))
            )
    disks = [n for n in nodes if n.tmp_disk_mib is not None]
    if tmp_mib and disks:
        big_tmp = max(n.tmp_disk_mib or 0 for n in disks)
        if tmp_mib > big_tmp:
            have = f"TmpDisk {fmt_mib(big_tmp)}" if big_tmp else _("TmpDisk=0 (none configured)")
            out.append(
                _("--tmp {tmp} > every node's {have}").format(tmp=fmt_mib(tmp_mib), have=have)
            )
    return out


def hyperthread_note(cpus_per_task: int | None, nodes: Iterable[SlurmNode]) -> str:
    """When the task fits only by counting hardware threads as CPUs: say so (else "")."""
    if not cpus_per_task:
        return ""
    fits = [n for n in nodes if n.cpus_total and cpus_per_task <= n.cpus_total]
    cores = [c for c in (physical_cores(n) for n in fits) if c]
    if not fits or not cores or cpus_per_task <= max(cores):
        return ""
    n = max(fits, key=lambda x: physical_cores(x) or 0)
    return _(
        "--cpus-per-task {cpt} is more than the {cores} cores of a node "
        "({topology}): it fits only by using both hardware threads of each core, so it "
        "never starts with --hint=nomultithread or --threads-per-core=1."
    ).format(cpt=cpus_per_task, cores=physical_cores(n), topology=topology(n))


def tmp_remedy(problems: Iterable[str]) -> str:
    """The words a remedy needs for these problems (``--tmp`` is not in the generic text)."""
    ps = list(problems)
    extra = []
    if any(p.startswith("--tmp") for p in ps):
        extra.append(
            _(
                "drop or lower --tmp (TmpDisk is per node, from slurm.conf; 0 means the admin "
                "configured none: ask them, or use a shared scratch path instead)"
            )
        )
    if any(p.startswith("--cpus-per-task") for p in ps):
        extra.append(
            _(
                "use at most one node's CPUs per task (more tasks, fewer CPUs each: "
                "--ntasks N --cpus-per-task C)"
            )
        )
    return "; ".join(extra)


_SBATCH_ERROR = re.compile(
    r"\b(?:sbatch|salloc|srun): error: (?!Batch job submission failed)"
    r"(?!Unable to allocate resources)([^'\"\n]+?)\s*(?:$|['\"\]])"
)
_REQUEST_FLAG = re.compile(
    r"(?<![\w-])(--(?:cpus-per-task|tmp|mem|mem-per-cpu|gres|gpus|nodes|ntasks(?:-per-node)?)"
    r"[= ]['\"]?[\w.:/]+)"
)


def submit_fact(line: str) -> str:
    """What a rejected submission says, request first: ``submit rejected: CPU count per node
    can not be satisfied (--cpus-per-task=200)``; "" when the line has no such message."""
    m = _SBATCH_ERROR.search(line)
    if m is None:
        return ""
    flags = list(
        dict.fromkeys(
            f.replace(" ", "=").replace("'", "").replace('"', "")
            for f in _REQUEST_FLAG.findall(line)
        )
    )
    return _("submit rejected: {message}").format(message=m.group(1).strip()) + (
        f" ({', '.join(flags)})" if flags else ""
    )
