"""Engine + Slurm rules on snapshots built from real lab captures (tests/fixtures/lab)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cockpit.diagnosis import registry
from cockpit.diagnosis.context import Rule
from cockpit.diagnosis.correlate import correlate
from cockpit.diagnosis.engine import diagnose
from cockpit.diagnosis.rules.slurm_common import explain_exit, suggest_mem_mib
from cockpit.diagnosis.verdict import verdicts
from cockpit.model import (
    Artifacts,
    ExitCode,
    LogText,
    Partition,
    SlurmJob,
    SlurmNode,
    Snapshot,
    SourceError,
)
from cockpit.slurm import parse as slurm

LAB = Path(__file__).parent / "fixtures" / "lab"
NOW = datetime(2026, 11, 29, 20, 30, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setenv("COCKPIT_STRICT_RULES", "1")


def _read(case: str, name: str) -> str:
    p = LAB / case / name
    return p.read_text(errors="replace") if p.exists() else ""


def _sacct_P(text: str):
    """The captures used `sacct -P` with a header and '|' (the source uses \\x1f and -n)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    header, rows = lines[0].split("|"), lines[1:]
    from cockpit.ingest.bundle import parse_sacct_any

    return parse_sacct_any("\n".join(["|".join(header), *rows]))


def lab_case(case: str, *, nodes_from: str | None = None) -> tuple[Snapshot, Artifacts]:
    jobs, _ = (
        slurm.parse_scontrol_job(_read(case, "scontrol_show_job.txt"))
        if _read(case, "scontrol_show_job.txt")
        else ([], [])
    )
    ncase = nodes_from or case
    nodes = (
        slurm.parse_scontrol_nodes(_read(ncase, "scontrol_show_node.txt"))[0]
        if _read(ncase, "scontrol_show_node.txt")
        else []
    )
    parts = (
        slurm.parse_scontrol_partitions(_read(ncase, "scontrol_show_partition.txt"))[0]
        if _read(ncase, "scontrol_show_partition.txt")
        else []
    )
    acct = _sacct_P(_read(case, "sacct_P.txt")) if _read(case, "sacct_P.txt") else []
    logs = []
    jid = jobs[0].job_id if jobs else ""
    for p in sorted((LAB / case).iterdir()):
        kind = {"slurmctld_log.txt": "slurmctld", "slurmd_log.txt": "slurmd"}.get(p.name)
        if p.name.startswith("slurm-") and p.name.endswith(".out") and "after" not in p.name:
            kind = "stdout"
        if kind:
            logs.append(LogText(p.name, kind, p.read_bytes(), path=str(p), subject_id=jid))
    snap = Snapshot(
        source="lab",
        kind="slurm",
        taken_at=NOW,
        jobs=tuple(jobs),
        nodes=tuple(nodes),
        partitions=tuple(parts),
    )
    return snap, Artifacts(acct=tuple(acct), logs=tuple(logs))


def _top_for(findings, kind, sid):
    return verdicts(findings)[(kind, "lab", sid)]


@pytest.mark.parametrize(
    "case,label,words",
    [
        ("oom", "oom_killed", "OUT_OF_MEMORY"),
        ("oom_nocgroup", "oom_killed", "out of memory"),
        ("timeout", "time_limit", "TIMEOUT after 00:01:27 (Timelimit 00:01:00)"),
        ("exit127", "command_not_found", "command not found"),
        ("cancelled", "cancelled_by_user", "cancelled by uid 0"),
        ("dependency", "dependency_failed", "afterok:3(failed)"),
        ("partition_down", "pending_partition_down", "maint"),
        ("pending_timelimit", "pending_partition_limit", "never runs"),
        ("completed", "no_failure", "completed"),
    ],
)
def test_lab_job_cases(case, label, words):
    snap, arts = lab_case(case, nodes_from="drained")
    job = snap.jobs[0]
    top = _top_for(diagnose(snap, arts, NOW), "job", job.job_id)
    assert top.root_cause == label, top
    assert words in top.title
    assert "\n" not in top.title and len(top.title) <= 120
    # evidence ordered scheduler -> node -> application
    tiers = [e.tier for e in top.evidence]
    assert tiers == sorted(tiers)


def test_oom_without_cgroup_is_found_from_the_output():
    snap, arts = lab_case("oom_nocgroup", nodes_from="drained")
    top = _top_for(diagnose(snap, arts, NOW), "job", snap.jobs[0].job_id)
    assert top.root_cause == "oom_killed"


def test_oom_remedy_is_1_2_times_maxrss_rounded():
    assert suggest_mem_mib(1000) == 1536  # 1200 -> next 512 MiB (below 4 GiB)
    assert suggest_mem_mib(10 * 1024) == 12 * 1024  # exactly 12 GiB
    assert suggest_mem_mib(11 * 1024) == 14 * 1024  # 13.2 GiB -> 14G (whole GiB below 64 GiB)
    assert suggest_mem_mib(64 * 1024) == 80 * 1024  # 76.8 GiB -> 80G (4 GiB steps above 64 GiB)
    job = SlurmJob(
        "9",
        "x",
        "u",
        "batch",
        "FAILED",
        "None",
        cpus=1,
        nodes=("c3",),
        node_list="c3",
        min_memory_mib=4096,
        exit_code=ExitCode(0, 9),
    )
    from cockpit.model import AcctRecord

    acct = (
        AcctRecord("9", "", "x", "batch", "FAILED", ExitCode(0, 9), 4096, None, 100, 3600, "c3"),
        AcctRecord(
            "9", "batch", "batch", "", "FAILED", ExitCode(0, 9), None, 4000, 100, None, "c3"
        ),
    )
    snap = Snapshot("lab", "slurm", NOW, jobs=(job,))
    f = diagnose(snap, Artifacts(acct=acct), NOW)[0]
    assert f.root_cause == "oom_killed"
    assert (
        "--mem=5G (1.2 x MaxRSS 3.9G, rounded up)" in f.remedy
        and "MaxRSS 3.9G of ReqMem 4G" in f.title
    )
    assert f.remedy.count("--mem=") == 1


def _oom_job(rss_mib, history=()):
    from cockpit.model import AcctRecord

    job = SlurmJob(
        "9",
        "x",
        "u",
        "batch",
        "OUT_OF_MEMORY",
        "OutOfMemory",
        cpus=1,
        nodes=("c3",),
        node_list="c3",
        min_memory_mib=4096,
        exit_code=ExitCode(0, 125),
    )
    acct = (
        AcctRecord(
            "9", "", "x", "batch", "OUT_OF_MEMORY", ExitCode(0, 125), 4096, None, 100, 3600, "c3"
        ),
        AcctRecord(
            "9",
            "batch",
            "batch",
            "",
            "OUT_OF_MEMORY",
            ExitCode(0, 125),
            None,
            rss_mib,
            100,
            None,
            "c3",
        ),
    )
    snap = Snapshot("lab", "slurm", NOW, jobs=(job,))
    return diagnose(snap, Artifacts(acct=acct, history=tuple(history)), NOW)[0]


def test_oom_without_maxrss_sizes_on_reqmem_and_says_so():
    f = _oom_job(None)
    assert f.title == "OUT_OF_MEMORY: ReqMem 4G on c3"  # no "MaxRSS -"
    assert (
        "--mem=5G (1.2 x ReqMem 4G, rounded up)" in f.remedy
        and "MaxRSS was not recorded" in f.remedy
    )


def test_oom_with_history_uses_the_history_peak_once():
    from cockpit.model import AcctRecord

    past = [
        AcctRecord(
            "5", "", "x", "batch", "COMPLETED", ExitCode(0, 0), 8192, None, 50, 3600, "c3", user="u"
        ),
        AcctRecord(
            "5", "batch", "batch", "", "COMPLETED", ExitCode(0, 0), None, 6000, 50, None, "c3"
        ),
    ]
    f = _oom_job(4200, past)
    # peak 6000 MiB x 1.2 = 7200 -> 8G: one value, the history's, never a second --mem
    assert f.remedy.count("--mem=") == 1 and "--mem=8G (1.2 x peak MaxRSS 5.9G of 1 run" in f.remedy
    assert "MaxRSS 4.1G of ReqMem 4G" in f.title


def test_pending_impossible_says_both_numbers():
    snap, arts = lab_case("pending_impossible", nodes_from="drained")
    top = _top_for(diagnose(snap, arts, NOW), "job", "5")
    assert top.root_cause == "pending_partition_limit"
    assert top.title == "never runs: 8 CPUs per node > 2 (largest debug node)"
    part = Partition("gpu", nodes=("g1",), max_cpus_per_node=48, total_nodes=1)
    job = SlurmJob("7", "big", "u", "gpu", "PENDING", "Resources", cpus=64, node_count=1)
    snap = Snapshot(
        "lab",
        "slurm",
        NOW,
        jobs=(job,),
        partitions=(part,),
        nodes=(SlurmNode("g1", "IDLE", cpus_total=96, partitions=("gpu",)),),
    )
    assert diagnose(snap, None, NOW)[0].title == "never runs: 64 CPUs > MaxCPUsPerNode 48"


def test_will_run_is_info_and_not_an_incident():
    snap, arts = lab_case("pending_resources", nodes_from="drained")
    findings = diagnose(snap, arts, NOW)
    top = _top_for(findings, "job", snap.jobs[0].job_id)
    assert top.severity == "info" and top.root_cause in {"pending_resources", "pending_priority"}
    assert not [i for i in correlate(findings) if i.subject.id == snap.jobs[0].job_id]


def test_drained_node_reason_and_host_memory_label():
    snap, _ = lab_case("drained")
    v = verdicts(diagnose(snap, None, NOW))
    c2 = v[("node", "lab", "c2")]
    # DIMM ECC on a node without GPUs (Gres=(null)) is host memory: no nvidia-smi remedy
    assert c2.root_cause == "host_memory_error" and "ECC errors on DIMM B2" in c2.title
    assert "nvidia-smi" not in c2.remedy and "edac" in c2.remedy.lower()
    assert ("node", "lab", "c1") not in v  # healthy nodes cost nothing and say nothing


def test_node_fail_job_and_not_responding_node_are_one_incident():
    snap, arts = lab_case("node_down")
    nodes = tuple(
        n
        if n.name != "c3"
        else SlurmNode("c3", "DOWN", ("NOT_RESPONDING",), reason="Not responding")
        for n in snap.nodes
    )
    if not any(n.name == "c3" for n in nodes):
        nodes += (SlurmNode("c3", "DOWN", ("NOT_RESPONDING",), reason="Not responding"),)
    snap = Snapshot("lab", "slurm", NOW, jobs=snap.jobs, nodes=nodes, partitions=snap.partitions)
    findings = diagnose(snap, arts, NOW)
    assert _top_for(findings, "job", "15").root_cause == "node_not_responding"
    incidents = correlate(findings)
    inc = next(i for i in incidents if i.subject.kind == "node" and i.subject.id == "c3")
    assert [a.id for a in inc.affected] == ["15"]
    assert not any(i.subject.kind == "job" and i.subject.id == "15" for i in incidents)
    # stable keys across polls
    assert [i.key for i in correlate(diagnose(snap, arts, NOW + timedelta(minutes=1)))] == [
        i.key for i in incidents
    ]


def test_kill_task_failed_incident_lists_killed_jobs():
    node = SlurmNode(
        "c05",
        "IDLE",
        ("DRAIN",),
        reason="Kill task failed",
        reason_user="root",
        reason_time=NOW - timedelta(minutes=5),
    )
    jobs = tuple(
        SlurmJob(
            str(100 + i),
            "j",
            "u",
            "p",
            "FAILED",
            "NonZeroExitCode",
            nodes=("c05",),
            node_list="c05",
            exit_code=ExitCode(0, 9),
            end_time=NOW,
        )
        for i in range(12)
    )
    snap = Snapshot("lab", "slurm", NOW, jobs=jobs, nodes=(node,))
    incidents = correlate(diagnose(snap, None, NOW))
    assert len(incidents) == 1
    assert (
        incidents[0].root_cause == "node_drain_kill_task_failed"
        and len(incidents[0].affected) == 12
    )
    assert "12 jobs affected" in incidents[0].title


def test_drain_loop_after_repeated_oom():
    node = SlurmNode("c7", "IDLE", ("DRAIN",), reason="Kill task failed")
    jobs = tuple(
        SlurmJob(str(i), "j", "u", "p", "OUT_OF_MEMORY", "OutOfMemory", nodes=("c7",))
        for i in range(3)
    )
    f = verdicts(diagnose(Snapshot("lab", "slurm", NOW, jobs=jobs, nodes=(node,)), None, NOW))[
        ("node", "lab", "c7")
    ]
    assert f.root_cause == "node_drain_loop"


def test_controller_unreachable():
    snap = Snapshot(
        "lab", "slurm", NOW, error=SourceError("unreachable", "Unable to contact slurm controller")
    )
    f = diagnose(snap, None, NOW)[0]
    assert f.root_cause == "controller_unreachable" and f.subject.kind == "cluster"


def test_backfill_starvation_and_surge():
    sub = NOW - timedelta(hours=5)
    big = SlurmJob(
        "1", "big", "u", "p", "PENDING", "Resources", cpus=256, node_count=4, submit_time=sub
    )
    small = tuple(
        SlurmJob(
            str(10 + i),
            "s",
            "v",
            "p",
            "RUNNING",
            "None",
            cpus=4,
            submit_time=sub + timedelta(hours=1),
            start_time=NOW,
        )
        for i in range(5)
    )
    f = verdicts(diagnose(Snapshot("lab", "slurm", NOW, jobs=(big, *small)), None, NOW))
    assert f[("job", "lab", "1")].root_cause == "backfill_starvation"

    # its text moves with the hours waited, not each minute: a minute's tick made a new
    # incident body (encoded, written and read back by the store) for every starved job
    def starved(at):
        snap = Snapshot("lab", "slurm", at, jobs=(big, *small))
        return next(x for x in diagnose(snap, None, at) if x.root_cause == "backfill_starvation")

    assert starved(NOW) == starved(NOW + timedelta(minutes=40))
    later = starved(NOW + timedelta(minutes=61))
    assert "pending 6h" in later.title and "over 6 h" in later.explanation
    pend = tuple(SlurmJob(str(100 + i), "p", "u", "p", "PENDING", "Priority") for i in range(60))
    canc = tuple(
        SlurmJob(str(200 + i), "c", "u", "p", "CANCELLED", "None", end_time=NOW) for i in range(25)
    )
    f = verdicts(diagnose(Snapshot("lab", "slurm", NOW, jobs=pend + canc), None, NOW))
    assert f[("cluster", "lab", "lab")].root_cause == "priority_qos_surge"


def test_exit_codes_explained():
    assert "SIGKILL" in explain_exit(ExitCode(0, 9))
    assert "SIGTERM" in explain_exit(ExitCode(0, 15))
    assert "command not found" in explain_exit(ExitCode(127, 0))


def test_a_broken_rule_does_not_blind_the_engine(monkeypatch):
    monkeypatch.delenv("COCKPIT_STRICT_RULES")

    def boom(job, ctx):
        raise RuntimeError("bad rule")

    monkeypatch.setitem(registry.RULES, "job", (Rule(boom), *registry.RULES["job"]))
    snap, arts = lab_case("exit127")
    found = diagnose(snap, arts, NOW)
    assert found[0].root_cause == "command_not_found"
    assert found.errors and "bad rule" in found.errors[0]
    assert diagnose(Snapshot("lab", "slurm", NOW), None, NOW).errors == ()  # per call, not global


def test_100k_jobs_every_unhealthy_job_found_healthy_ones_silent():
    # Speed at this size is a benchmark goal (bench/bench_poll.py), not a pytest assertion.
    parts = (
        Partition("p", nodes=tuple(f"n{i}" for i in range(100)), max_time_s=86400, total_nodes=100),
    )
    nodes = tuple(
        SlurmNode(f"n{i}", "MIXED", cpus_total=64, real_memory_mib=256000, partitions=("p",))
        for i in range(100)
    )
    jobs = []
    for i in range(100_000):
        state = "RUNNING" if i % 10 else ("PENDING" if i % 20 else "FAILED")
        jobs.append(
            SlurmJob(
                str(i),
                "j",
                "u",
                "p",
                state,
                "Resources" if state == "PENDING" else "None",
                cpus=4,
                node_count=1,
                nodes=(f"n{i % 100}",),
                submit_time=NOW - timedelta(minutes=5),
                exit_code=ExitCode(1, 0) if state == "FAILED" else None,
            )
        )
    snap = Snapshot("lab", "slurm", NOW, jobs=tuple(jobs), nodes=nodes, partitions=parts)
    findings = diagnose(snap, None, NOW)
    assert len(findings) == 10_000
    by_job = {f.subject.id: f for f in findings if f.subject.kind == "job"}
    # every FAILED and every PENDING job has its finding; no RUNNING job has one
    assert set(by_job) == {str(i) for i in range(0, 100_000, 10)}
    assert {by_job[str(i)].severity for i in range(0, 100_000, 20)} == {"critical"}  # FAILED
    assert all(
        by_job[str(i)].severity == "info" for i in range(10, 100_000, 20)
    )  # Resources: will run


def test_gpu_oom_is_not_a_host_memory_problem():
    job = SlurmJob(
        "12",
        "train",
        "u",
        "gpu",
        "FAILED",
        "NonZeroExitCode",
        cpus=8,
        nodes=("g1",),
        node_list="g1",
        min_memory_mib=65536,
        exit_code=ExitCode(1, 0),
    )
    out = (
        b'epoch 0\nTraceback (most recent call last):\n  File "train.py", line 3\n'
        b"torch.cuda.OutOfMemoryError: CUDA out of memory. "
        b"Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total)\n"
    )
    snap = Snapshot("lab", "slurm", NOW, jobs=(job,))
    f = _top_for(
        diagnose(
            snap, Artifacts(logs=(LogText("slurm-12.out", "stdout", out, subject_id="12"),)), NOW
        ),
        "job",
        "12",
    )
    assert f.root_cause == "gpu_out_of_memory"
    assert "GPU/NPU memory" in f.title
    assert (
        "gradient accumulation" in f.remedy
        and "nvidia-smi" in f.remedy
        and "--mem=" not in f.remedy
    )
    assert any(e.line == 4 and "CUDA out of memory" in e.text for e in f.evidence)


def test_oom_maxrss_far_below_the_limit_sizes_on_reqmem():
    f = _oom_job(2048)  # sampled 2G, killed at 4G: 1.2 x 2G would ask for less than what failed
    assert "--mem=5G (1.2 x ReqMem 4G, rounded up)" in f.remedy and "sampled MaxRSS 2G" in f.remedy


def test_mem_usage_omits_the_unknown_half():
    from cockpit.diagnosis.rules.slurm_common import mem_usage

    assert mem_usage(65625, 65536) == "MaxRSS 64.1G of ReqMem 64G"
    assert mem_usage(None, 65536) == "ReqMem 64G"  # job row: no "MaxRSS -"
    assert mem_usage(65625, None) == "MaxRSS 64.1G"  # step row: no "of -"
    assert mem_usage(None, None) == ""


def test_a_timeout_is_never_an_exit_the_program_chose():
    """The lab's TIMEOUT job: sacct says ExitCode 0:0 for the job, yet Slurm killed it."""
    snap, arts = lab_case("timeout", nodes_from="drained")
    top = _top_for(diagnose(snap, arts, NOW), "job", snap.jobs[0].job_id)
    assert top.root_cause == "time_limit"
    assert "exited normally" not in top.explanation
    assert "exited normally" not in explain_exit(ExitCode(0, 0), "TIMEOUT")
    assert "exited normally" in explain_exit(ExitCode(0, 0), "COMPLETED")


def _down_node(reason: str, log: str):
    from cockpit.model import SlurmNode

    at = datetime(2026, 11, 29, 20, 10, tzinfo=UTC)
    node = SlurmNode(
        "c3", "DOWN", ("NOT_RESPONDING",), ("debug",), reason=reason, reason_user="slurm",
        reason_time=at,
    )  # fmt: skip
    snap = Snapshot(source="lab", kind="slurm", taken_at=NOW, nodes=(node,))
    logs = (LogText("slurmd-c3.log", "slurmd", log.encode(), subject_id="c3"),)
    top = _top_for(diagnose(snap, Artifacts(logs=logs), NOW), "node", "c3")
    return top


def test_a_killed_slurmd_is_not_responding_not_an_old_config_line():
    """slurmd killed at 20:10: its log holds a benign 'config differs' line from its start 20
    minutes earlier, then its shutdown. The node is not responding; the old line is not why."""
    log = (
        "[2026-11-29T19:50:01.002] error: Node configuration differs from hardware: CPUs=4:8(hw)"
        "\n[2026-11-29T19:50:01.100] slurmd version 22.05.8 started\n"
        "[2026-11-29T20:09:58.414] Slurmd shutdown completing\n"
    )
    top = _down_node("Not responding", log)
    assert top.root_cause == "node_not_responding", top
    assert "config" not in top.title


def test_a_nodes_log_line_after_its_reason_still_names_the_cause():
    log = (
        "[2026-11-29T20:10:30.000] error: write /var/spool/slurmd/job00042/slurm_script: "
        "No space left on device\n"
    )
    assert _down_node("Not responding", log).root_cause == "disk_full"


def test_a_config_note_is_the_cause_only_when_slurmctld_refused_the_registration():
    """slurmd logs "configuration differs" at every start and runs on; only a registration
    slurmctld refused (INVALID_REG) makes it why the node is out."""
    from cockpit.model import SlurmNode

    log = "[2026-11-29T20:10:30.000] error: Node configuration differs from hardware: CPUs=4\n"
    assert _down_node("Not responding", log).root_cause == "node_not_responding"
    at = datetime(2026, 11, 29, 20, 10, tzinfo=UTC)
    node = SlurmNode(
        "c3", "DOWN", ("INVALID_REG",), ("debug",), reason="Not responding",
        reason_user="slurm", reason_time=at,
    )  # fmt: skip
    snap = Snapshot(source="lab", kind="slurm", taken_at=NOW, nodes=(node,))
    logs = (LogText("slurmd-c3.log", "slurmd", log.encode(), subject_id="c3"),)
    top = _top_for(diagnose(snap, Artifacts(logs=logs), NOW), "node", "c3")
    assert top.root_cause == "node_config_mismatch", top


def test_a_stopped_slurmd_and_the_jobs_requeued_for_it_are_named():
    log = (
        "[2026-11-29T19:50:01.100] slurmd version 22.05.8 started\n"
        "[2026-11-29T20:09:58.414] Slurmd shutdown completing\n"
    )
    top = _down_node("Not responding", log)
    assert "slurmd was stopped at 20:09:58" in top.title, top.title
    assert any("Slurmd shutdown completing" in e.text and e.line == 2 for e in top.evidence)


def test_an_oom_remedy_never_sizes_from_a_maxrss_that_was_not_recorded():
    """The lab's OOM job: MaxRSS 0 (cgroup killed it before a sample) and a history of runs
    killed at the same 200M request. The remedy says MaxRSS was not recorded and sizes from the
    request; it never calls the request a 'peak MaxRSS'."""
    from cockpit.model import AcctRecord

    job = SlurmJob(
        "8", "eat-mem", "ana", "debug", "OUT_OF_MEMORY", "OutOfMemory", cpus=1, node_count=1,
        nodes=("c1",), node_list="c1", min_memory_mib=200, end_time=NOW,
        exit_code=ExitCode(0, 125),
    )  # fmt: skip

    def run(jid: str) -> tuple[AcctRecord, ...]:
        return (
            AcctRecord(jid, "", "eat-mem", "debug", "OUT_OF_MEMORY", ExitCode(0, 125), 200, 0,
                       12, 300, "c1"),
            AcctRecord(jid, "batch", "batch", "", "OUT_OF_MEMORY", ExitCode(0, 125), None, 0,
                       12, None, "c1"),
        )  # fmt: skip

    snap = Snapshot(source="lab", kind="slurm", taken_at=NOW, jobs=(job,))
    arts = Artifacts(acct=run("8"), history=(*run("6"), *run("7"), *run("8")))
    top = _top_for(diagnose(snap, arts, NOW), "job", "8")
    assert top.root_cause == "oom_killed"
    assert "MaxRSS was not recorded" in top.remedy and "ReqMem 200M" in top.remedy
    assert "peak MaxRSS" not in top.remedy


def test_a_running_job_near_its_time_limit_is_at_risk_before_it_is_killed():
    start = NOW - timedelta(minutes=55)

    def job(jid: str, limit_min: int) -> SlurmJob:
        return SlurmJob(
            jid, "train", "ana", "gpu", "RUNNING", "None", cpus=4, node_count=1,
            nodes=("c1",), node_list="c1", start_time=start, elapsed_s=55 * 60,
            time_limit_s=limit_min * 60,
        )  # fmt: skip

    snap = Snapshot(source="lab", kind="slurm", taken_at=NOW, jobs=(job("1", 60), job("2", 120)))
    found = diagnose(snap, Artifacts(), NOW)
    v = verdicts(found)
    near = v[("job", "lab", "1")]
    assert near.root_cause == "time_limit_near" and near.severity == "warning"
    assert "killed at 20:35" in near.title and "scontrol update JobId=1 TimeLimit=" in near.remedy
    assert ("job", "lab", "2") not in v or v[("job", "lab", "2")].root_cause != "time_limit_near"
    # the same finding a minute later: its incident is not rewritten every poll
    again = verdicts(diagnose(snap, Artifacts(), NOW + timedelta(minutes=1)))[("job", "lab", "1")]
    assert again == near


def test_a_job_requeued_because_its_node_failed_says_so_not_begin_time():
    """After slurmd on c3 stopped, slurmctld requeued job 15 (NODE_FAIL) and squeue shows it
    PENDING with Reason=BeginTime: the verdict names the failed node, not a --begin wait."""
    from cockpit.model import SlurmNode

    job = SlurmJob(
        "15", "train", "u", "batch", "PENDING", "BeginTime",
        submit_time=datetime(2026, 11, 29, 20, 10, 47, tzinfo=UTC),
        start_time=datetime(2026, 11, 29, 20, 32, 47, tzinfo=UTC),
    )  # fmt: skip
    node = SlurmNode(
        "c3", "DOWN", ("NOT_RESPONDING",), ("batch",), reason="Not responding",
        reason_user="slurm", reason_time=datetime(2026, 11, 29, 20, 10, 47, tzinfo=UTC),
    )  # fmt: skip
    ctld = (
        "[2026-11-29T20:10:47.404] requeue job JobId=15 due to failure of node c3\n"
        "[2026-11-29T20:10:47.405] Requeuing JobId=15\n"
    )
    snap = Snapshot(source="lab", kind="slurm", taken_at=NOW, jobs=(job,), nodes=(node,))
    logs = (
        LogText("slurmctld.log", "slurmctld", ctld.encode(), subject_id="15"),
        LogText("slurmctld.log", "slurmctld", ctld.encode(), subject_id="c3"),
    )
    findings = diagnose(snap, Artifacts(logs=logs), NOW)
    top = _top_for(findings, "job", "15")
    assert top.root_cause == "node_not_responding" and top.severity == "warning", top
    assert "node c3 failed" in top.title and "begin" not in top.title.lower(), top.title
    assert "after 20:32" in top.title
    assert top.first_seen == job.submit_time  # not squeue's estimated end
    assert any("due to failure of node c3" in e.text for e in top.evidence)
    c3 = _top_for(findings, "node", "c3")
    assert "1 job requeued" in c3.title, c3.title
    # without slurmctld's word, the same row is a plain --begin wait
    plain = _top_for(diagnose(snap, Artifacts(), NOW), "job", "15")
    assert plain.root_cause != "node_not_responding"


def test_the_failed_nodes_incident_takes_in_the_job_it_requeued():
    from cockpit.diagnosis.correlate import correlate
    from cockpit.model import SlurmNode

    job = SlurmJob(
        "15", "train", "u", "batch", "PENDING", "BeginTime",
        submit_time=datetime(2026, 11, 29, 20, 10, 47, tzinfo=UTC),
    )  # fmt: skip
    node = SlurmNode(
        "c3", "DOWN", ("NOT_RESPONDING",), ("batch",), reason="Not responding",
        reason_user="slurm", reason_time=datetime(2026, 11, 29, 20, 10, 47, tzinfo=UTC),
    )  # fmt: skip
    line = b"[2026-11-29T20:10:47.404] requeue job JobId=15 due to failure of node c3\n"
    snap = Snapshot(source="lab", kind="slurm", taken_at=NOW, jobs=(job,), nodes=(node,))
    logs = (
        LogText("slurmctld.log", "slurmctld", line, subject_id="15"),
        LogText("slurmctld.log", "slurmctld", line, subject_id="c3"),
    )
    incidents = correlate(diagnose(snap, Artifacts(logs=logs), NOW))
    (inc,) = [i for i in incidents if i.subject.id == "c3"]
    assert any(s.kind == "job" and s.id == "15" for s in inc.affected), inc
    assert not any(i.subject.kind == "job" and i.subject.id == "15" for i in incidents)


def test_a_slurmd_log_silent_for_days_says_since_which_day():
    log = "[2026-11-26T17:30:00.000] launch task StepId=9.0 request from UID:0\n"
    top = _down_node("Not responding", log)
    assert "slurmd log silent since 2026-11-26 17:30:00" in top.title, top.title


def test_a_cancelled_job_is_never_said_to_have_exited_normally():
    from cockpit.diagnosis.rules.slurm_common import explain_exit

    for state in ("CANCELLED", "CANCELLED by 1012"):
        said = explain_exit(ExitCode(0, 0), state)
        assert "exited normally" not in said and "cancelled" in said, said


def test_an_operators_drain_is_not_an_oom_loop_because_jobs_ran_out_of_memory_there():
    node = SlurmNode("c7", "IDLE", ("DRAIN",), reason="maint window 12-05", reason_user="root")
    jobs = tuple(
        SlurmJob(str(i), "j", "u", "p", "OUT_OF_MEMORY", "OutOfMemory", nodes=("c7",))
        for i in range(3)
    )
    f = verdicts(diagnose(Snapshot("lab", "slurm", NOW, jobs=jobs, nodes=(node,)), None, NOW))[
        ("node", "lab", "c7")
    ]
    assert f.root_cause == "node_drain_admin" and "maint window" in f.title


def test_a_missing_program_is_named_in_the_preflight_it_asks_for():
    """The lab's exit-127 job: its log says which program is missing; the remedy's preflight
    runs `which` on that program, not on a `<cmd>` the operator must fill in."""
    snap, arts = lab_case("exit127")
    top = diagnose(snap, arts, NOW)[0]
    assert top.root_cause == "command_not_found"
    missing = top.title.split(":")[0]  # "nosuchcommand_xyz: command not found on …"
    assert f"which {missing};" in top.remedy and "<cmd>" not in top.remedy
