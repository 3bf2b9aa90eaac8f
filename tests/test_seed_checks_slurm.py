"""Slurm seed checks: ``--cpus-per-task`` against the nodes' cores and threads, ``--tmp``
against TmpDisk, the pending surge against recent polls, and right-sizing that never reads a
run that failed at start as a measurement.

Inputs are the text Slurm prints (``scontrol show job`` / ``show node``), parsed by the
cockpit's own parsers."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from cockpit.diagnosis.engine import diagnose
from cockpit.diagnosis.rightsize import suggest
from cockpit.model import AcctRecord, Artifacts, ExitCode, SlurmJob, Snapshot
from cockpit.slurm.parse import parse_scontrol_job, parse_scontrol_nodes
from cockpit.watch.surge import PendingHistory

NOW = datetime(2024, 3, 4, 12, 0, tzinfo=UTC)


def job_text(cpt: int, tmp: str = "0", ntasks: int = 1, nodes: str = "1-1") -> str:
    return (
        "JobId=81234 JobName=bwa_mem UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A "
        "Priority=4294901720 Nice=0 Account=genomics QOS=normal JobState=PENDING "
        "Reason=Resources Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 "
        "ExitCode=0:0 RunTime=00:00:00 TimeLimit=1-00:00:00 TimeMin=N/A "
        "SubmitTime=2024-03-04T10:12:01 EligibleTime=2024-03-04T10:12:01 StartTime=Unknown "
        "EndTime=Unknown Deadline=N/A Partition=compute AllocNode:Sid=login1:2231 "
        "ReqNodeList=(null) ExcNodeList=(null) NodeList=(null) "
        f"NumNodes={nodes} NumCPUs={cpt * ntasks} NumTasks={ntasks} CPUs/Task={cpt} "
        f"ReqB:S:C:T=0:0:*:* TRES=cpu={cpt * ntasks},mem=64G,node=1,billing={cpt * ntasks} "
        "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* "
        f"MinCPUsNode={cpt} MinMemoryNode=64G MinTmpDiskNode={tmp} Features=(null) "
        "DelayBoot=00:00:00 Command=/home/alice/bwa.sh WorkDir=/home/alice "
        "StdOut=/home/alice/slurm-81234.out"
    )


def node_text(name: str, tmp_disk: int = 0, threads: int = 2) -> str:
    return (
        f"NodeName={name} Arch=x86_64 CoresPerSocket=12 CPUAlloc=0 CPUTot={24 * threads} "
        f"CPULoad=0.01 AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) "
        f"NodeAddr={name} NodeHostName={name} Version=23.02.7 RealMemory=191000 AllocMem=0 "
        f"FreeMem=185000 Sockets=2 Boards=1 State=IDLE ThreadsPerCore={threads} "
        f"TmpDisk={tmp_disk} Weight=1 Owner=N/A MCS_label=N/A Partitions=compute "
        "BootTime=2024-02-20T08:00:00 SlurmdStartTime=2024-02-20T08:01:00"
    )


def site(job_txt: str, *node_txts: str, commands=None, from_squeue=False):
    (job,) = parse_scontrol_job(job_txt)[0]
    if from_squeue:  # what the queue row knows: no CPUs/Task, no --tmp
        job = dataclasses.replace(job, cpus_per_task=None, min_tmp_disk_mib=None)
    nodes = parse_scontrol_nodes("\n".join(node_txts))[0]
    snap = Snapshot(source="hpc", kind="slurm", taken_at=NOW, jobs=(job,), nodes=tuple(nodes))
    return list(diagnose(snap, Artifacts(commands=commands or {}), now=NOW))


def test_parsers_read_cpus_per_task_tmp_and_topology():
    (job,) = parse_scontrol_job(job_text(8, tmp="100G"))[0]
    assert (job.cpus_per_task, job.min_tmp_disk_mib) == (8, 102400)
    (node,) = parse_scontrol_nodes(node_text("cn01", tmp_disk=200000))[0]
    assert (node.sockets, node.cores_per_socket, node.threads_per_core) == (2, 12, 2)
    assert node.tmp_disk_mib == 200000 and node.cpus_total == 48


def test_a_task_wider_than_every_node_never_runs_even_over_two_nodes():
    """64 CPUs per task over --nodes=2 looks like 32 per node, but one task's CPUs must be on
    one node: Slurm keeps it PENDING (Reason=Resources) forever."""
    (top, *_) = site(job_text(64, nodes="2-2"), node_text("cn01"), node_text("cn02"))
    assert top.root_cause == "pending_partition_limit" and top.severity == "critical"
    assert top.title.startswith("never runs: --cpus-per-task 64 > largest node's 48 CPUs")
    assert "2 sockets x 12 cores x 2 threads" in top.title
    node_ev = [e.text for e in top.evidence if e.where == "scontrol show node"]
    assert node_ev and "ThreadsPerCore=2" in node_ev[0]
    assert top.remedy.startswith("Use at most one node's CPUs per task")


def test_a_task_that_fits_only_with_hyperthreads_runs_but_says_so():
    (top, *_) = site(job_text(40), node_text("cn01"))
    assert top.root_cause == "pending_resources" and top.severity == "info"
    assert "more than the 24 cores" in top.explanation
    assert "--hint=nomultithread" in top.explanation


def test_a_task_within_the_cores_says_nothing_about_threads():
    (top, *_) = site(job_text(16), node_text("cn01"))
    assert top.root_cause == "pending_resources" and "cores" not in top.explanation


def test_tmp_above_every_nodes_tmpdisk_never_runs():
    (top, *_) = site(job_text(8, tmp="100G"), node_text("cn01"), node_text("cn02"))
    assert top.root_cause == "pending_partition_limit"
    assert top.title == "never runs: --tmp 100G > every node's TmpDisk=0 (none configured)"
    assert "--tmp" in top.remedy.split(";")[0]


def test_tmp_that_one_node_has_runs():
    fs = site(job_text(8, tmp="100G"), node_text("cn01"), node_text("cn02", tmp_disk=400 * 1024))
    assert fs[0].root_cause == "pending_resources"


def test_a_queue_row_is_checked_with_the_scontrol_text_a_drill_down_fetched():
    text = job_text(64)
    fs = site(text, node_text("cn01"), from_squeue=True)
    assert fs[0].root_cause == "pending_resources"  # squeue alone cannot know
    fs = site(text, node_text("cn01"), from_squeue=True, commands={"scontrol show job 81234": text})
    assert fs[0].root_cause == "pending_partition_limit"


# --------------------------------------------------------------------------- surge


def _queue(pending: int, cancelled: int = 0, users=("ines",)) -> tuple[SlurmJob, ...]:
    jobs = [
        SlurmJob(
            str(1000 + k),
            f"sweep-{k}",
            users[k % len(users)],
            "gpu",
            "PENDING",
            "Priority",
            qos="short",
        )
        for k in range(pending)
    ]
    jobs += [
        SlurmJob(
            str(5000 + k),
            f"old-{k}",
            "bob",
            "gpu",
            "CANCELLED",
            "None",
            end_time=NOW - timedelta(minutes=10),
        )
        for k in range(cancelled)
    ]
    return tuple(jobs)


def _snap(pending: int, cancelled: int = 0, history=()) -> Snapshot:
    return Snapshot(
        source="hpc",
        kind="slurm",
        taken_at=NOW,
        jobs=_queue(pending, cancelled),
        pending_history=tuple(history),
    )


def surge(snap: Snapshot):
    return [f for f in diagnose(snap, None, now=NOW) if f.root_cause == "priority_qos_surge"]


def hist(*counts: int):
    return [(NOW - timedelta(minutes=10 * (len(counts) - i)), c) for i, c in enumerate(counts)]


def test_pending_spike_against_recent_polls_is_a_surge_without_any_cancellation():
    (f,) = surge(_snap(150, history=hist(40, 45, 50, 44)))
    assert f.title == "surge: 150 jobs pending, 3.4x the recent median 44.5"
    texts = " | ".join(e.text for e in f.evidence)
    assert "median PENDING 44.5 over the last 40 min (4 polls)" in texts
    assert "most pending: ines qos=short: 150" in texts


def test_a_site_whose_queue_is_always_long_has_no_surge():
    """The fixed counts (50 pending, 20 cancelled) would fire every poll at a busy site."""
    assert surge(_snap(150, cancelled=30, history=hist(140, 150, 145, 160))) == []


def test_without_history_the_fixed_counts_remain_the_floor():
    assert surge(_snap(60, cancelled=25)) and not surge(_snap(60, cancelled=5))


def test_a_few_polls_seconds_apart_are_no_baseline_the_surge_stays():
    # three 1 s polls of the same long queue: that queue is not yet "the site's normal";
    # it used to become the baseline at the third poll and the surge incident vanished
    seconds = [(NOW - timedelta(seconds=3 - i), 69) for i in range(3)]
    assert surge(_snap(69, cancelled=21, history=seconds))
    # the same three counts over half an hour are a baseline: a queue this long is normal
    assert surge(_snap(69, cancelled=21, history=hist(69, 69, 69))) == []


def test_a_small_queue_doubling_is_not_a_surge():
    assert surge(_snap(12, history=hist(3, 4, 5))) == []


def test_pending_history_is_kept_across_polls_and_bounded_in_time():
    h = PendingHistory(window=timedelta(minutes=30))
    seen = []
    for k, n in enumerate((10, 20, 30, 40)):
        s = dataclasses.replace(_snap(n), taken_at=NOW + timedelta(minutes=15 * k))
        seen.append([c for _, c in h.observe(s).pending_history])
    assert seen == [[], [10], [10, 20], [20, 30]]
    # a replay that starts over (the clock goes back) starts a new history
    again = h.observe(dataclasses.replace(_snap(5), taken_at=NOW))
    assert again.pending_history == ()


# --------------------------------------------------------------------------- right-sizing


def _acct(jid, state, elapsed, rss, req=65536, limit=4 * 3600):
    code = ExitCode(1, 0) if state == "FAILED" else ExitCode(0, 0)
    head = AcctRecord(jid, "", "align", "cpu", state, code, req, None, elapsed, limit, "cn01")
    step = AcctRecord(jid, "batch", "batch", "cpu", state, code, None, rss, elapsed, None, "cn01")
    return [head, step]


def test_a_run_that_failed_in_a_second_sizes_neither_mem_nor_time():
    rows = _acct("1", "FAILED", 1, 0) + _acct("2", "COMPLETED", 5400, 30 * 1024)
    rs = suggest(rows)
    assert rs.elapsed_max_s == 5400 and rs.time_arg == "--time=02:00:00"
    assert rs.mem_peak_mib == 30 * 1024
    assert "peak 0" not in rs.summary
    assert any("not used for --time" in n for n in rs.notes)


def test_only_runs_that_failed_at_start_give_no_time_and_no_zero_peak():
    rs = suggest(_acct("1", "FAILED", 1, 0) + _acct("2", "FAILED", 3, 0))
    assert rs.time_arg == "" and rs.mem_arg == ""
    assert rs.summary == "no usable history"


def test_a_rejected_submit_leads_with_the_message_and_the_request_it_refused():
    """cactus#1792 (tests/fixtures/cases/067-...): --cpus-per-task=200 on 64-CPU nodes."""
    from pathlib import Path

    from cockpit.ingest.bundle import diagnose_bundle

    case = (
        Path(__file__).parent
        / "fixtures"
        / "cases"
        / "067-slurm-submit-cpus-per-task-above-node-cpus"
    )
    top = diagnose_bundle(str(case)).to_json()["findings"][0]
    assert top["title"].startswith(
        "submit rejected: CPU count per node can not be satisfied (--mem=138492, "
        "--cpus-per-task=200)"
    )


def test_sbatch_refusing_tmp_says_so_in_the_title(tmp_path):
    """What sbatch printed on the lab (Slurm 22.05) for --tmp=1G on nodes with TmpDisk=0."""
    from cockpit.ingest.bundle import diagnose_bundle

    (tmp_path / "sbatch.txt").write_text(
        "$ sbatch -p debug --tmp=1G --wrap true\n"
        "sbatch: error: Temporary disk specification can not be satisfied\n"
        "sbatch: error: Batch job submission failed: Requested node configuration is not "
        "available\n"
    )
    report = diagnose_bundle(str(tmp_path)).to_json()
    top = report["findings"][0]
    assert top["root_cause"] == "submit_rejected_unsatisfiable"
    assert top["title"].startswith(
        "submit rejected: Temporary disk specification can not be satisfied"
    )
    assert report["first_error"]["line"] == 2
