"""`cockpit diagnose <array id>` on arrays as sites have them: 1,000 tasks (the lab's
MaxArraySize), and an array whose tasks still pend as one record (squeue's ``130_[1-3]``,
scontrol's ``ArrayTaskId=1-3``). Records as the lab's Slurm 22.05 printed them."""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime

from cockpit.commands.diagnose import _array, array_tasks
from cockpit.model import Artifacts, SlurmJob, Snapshot

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)

FAILED_TASK = (  # `scontrol show job -o 131` on the lab, task 20 of `exit 3`
    "JobId={jid} ArrayJobId=131 ArrayTaskId={task} JobName=brk2-arr UserId=root(0) "
    "GroupId=root(0) MCS_label=N/A Priority=4294901672 Nice=0 Account=root QOS=normal "
    "JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 "
    "Reboot=0 ExitCode=3:0 RunTime=00:00:00 TimeLimit=00:10:00 TimeMin=N/A "
    "SubmitTime=2026-12-05T11:57:04 EligibleTime=2026-12-05T11:57:05 "
    "AccrueTime=2026-12-05T11:57:05 StartTime=2026-12-05T11:57:13 EndTime=2026-12-05T11:57:13 "
    "Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-05T11:57:13 "
    "Scheduler=Main Partition=debug AllocNode:Sid=localhost:24944 ReqNodeList=(null) "
    "ExcNodeList=(null) NodeList=c2 BatchHost=c2 NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 "
    "ReqB:S:C:T=0:0:*:* TRES=cpu=1,mem=100M,node=1,billing=1 Socks/Node=* "
    "NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryCPU=100M MinTmpDiskNode=0 "
    "Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) "
    "Network=(null) Command=(null) WorkDir=/work StdErr=/work/slurm-131_{task}.out "
    "StdIn=/dev/null StdOut=/work/slurm-131_{task}.out Power="
)

PENDING_RECORD = (  # `scontrol show job -o 130` of `sbatch -H -a 1-3`
    "JobId=130 ArrayJobId=130 ArrayTaskId=1-3 JobName=brk2-pend UserId=root(0) GroupId=root(0) "
    "MCS_label=N/A Priority=0 Nice=0 Account=root QOS=normal JobState=PENDING "
    "Reason=JobHeldAdmin Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 "
    "ExitCode=0:0 RunTime=00:00:00 TimeLimit=00:10:00 TimeMin=N/A "
    "SubmitTime=2026-12-05T11:56:50 EligibleTime=Unknown AccrueTime=Unknown StartTime=Unknown "
    "EndTime=Unknown Deadline=N/A SuspendTime=None SecsPreSuspend=0 "
    "LastSchedEval=2026-12-05T11:56:50 Scheduler=Main Partition=debug "
    "AllocNode:Sid=localhost:24944 ReqNodeList=(null) ExcNodeList=(null) NodeList= NumNodes=1 "
    "NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,mem=100M,node=1,billing=1 "
    "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryCPU=100M "
    "MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 "
    "Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp StdErr=/tmp/slurm-130.out "
    "StdIn=/dev/null StdOut=/tmp/slurm-130.out Power="
)


class _Source:
    """The lab's source as _array meets it: each failed task's own evidence (here none)."""

    name = "lab"

    async def artifacts(self, subject, snap):
        return Artifacts()


def _diagnose(snap: Snapshot, arts: Artifacts, array_id: str):
    tasks = array_tasks(snap, arts, array_id)
    mine, _ = asyncio.run(_array(argparse.Namespace(timeout=60), _Source(), snap, arts, tasks))
    return tasks, mine


def test_a_1000_task_array_is_diagnosed_in_seconds_each_task_once():
    """Before: 65 s (scontrol's 1,000 records parsed again for each task)."""
    text = "\n".join(FAILED_TASK.format(jid=1000 + t, task=t) for t in range(1, 1001)) + "\n"
    arts = Artifacts(commands={"scontrol show job 131": text})
    started = time.monotonic()
    tasks, mine = _diagnose(Snapshot("lab", "slurm", NOW), arts, "131")
    took = time.monotonic() - started
    assert len(tasks) == 1000
    assert sorted(f.subject.id for f in mine) == sorted(f"131_{t}" for t in range(1, 1001))
    assert all("exit 3" in f.title for f in mine), mine[0].title
    assert took < 15, f"{took:.1f} s"


def test_a_pending_array_record_is_named_once():
    """squeue's ``130_[1-3]`` and scontrol's ``130_1-3`` are the same record: diagnose 130 said
    'held' twice, once for each spelling."""
    pending = SlurmJob(
        "130_[1-3]", "brk2-pend", "root", "debug", "PENDING", "JobHeldAdmin",
        cpus=1, node_count=1, submit_time=NOW,
    )  # fmt: skip
    snap = Snapshot("lab", "slurm", NOW, jobs=(pending,))
    arts = Artifacts(commands={"scontrol show job 130": PENDING_RECORD + "\n"})
    tasks, mine = _diagnose(snap, arts, "130")
    assert tasks == ["130_[1-3]"]
    assert [f.subject.id for f in mine] == ["130_[1-3]"], [f.title for f in mine]
