"""Every Slurm job reason code, job state and node state of 22.05-26.05 gives a classified
finding with a remedy and the right label; and the lab's situations, on snapshots built from
model objects."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cockpit.diagnosis.engine import diagnose
from cockpit.diagnosis.logscan import first_error
from cockpit.diagnosis.slurm_codes import (
    LIMIT_CODES,
    REASONS,
    SERIES,
    codes_in,
    limit_of,
    never_runs,
    reason_info,
)
from cockpit.diagnosis.slurm_states import JOB_STATES, NODE_STATES, node_state
from cockpit.diagnosis.verdict import verdicts
from cockpit.model import (
    AcctRecord,
    Artifacts,
    ExitCode,
    LogText,
    Partition,
    SlurmJob,
    SlurmNode,
    Snapshot,
    TrainingJob,
)

NOW = datetime(2026, 11, 29, 20, 30, tzinfo=UTC)
DOCS = Path(__file__).parent.parent / "docs" / "root-causes.md"
PART = Partition("debug", nodes=("c1", "c2"), max_time_s=3600, total_nodes=2)
NODES = (
    SlurmNode("c1", "IDLE", cpus_total=8, real_memory_mib=16000, partitions=("debug",)),
    SlurmNode("c2", "IDLE", cpus_total=8, real_memory_mib=16000, partitions=("debug",)),
)


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setenv("COCKPIT_STRICT_RULES", "1")


def _job(state="PENDING", reason="None", **kw) -> SlurmJob:
    kw.setdefault("cpus", 1)
    kw.setdefault("node_count", 1)
    kw.setdefault("time_limit_s", 600)
    return SlurmJob("7", "j", "alice", "debug", state, reason, account="chem", qos="normal", **kw)


def _verdict(job: SlurmJob, arts: Artifacts | None = None, nodes=NODES):
    snap = Snapshot("lab", "slurm", NOW, jobs=(job,), nodes=nodes, partitions=(PART,))
    return verdicts(diagnose(snap, arts, NOW)).get(("job", "lab", job.job_id))


# --------------------------------------------------------------------------- the lists


def test_every_series_has_slurms_count_of_codes():
    # counts of distinct strings job_state_reason_string() returns per series (Slurm source)
    want = dict(zip(SERIES, (197, 197, 198, 216, 216, 215, 216, 216), strict=True))
    assert {s: len(codes_in(s)) for s in SERIES} == want
    assert "MpiPortsBusy" in codes_in("24.05") and "MpiPortsBusy" not in codes_in("23.11")
    assert "FrontEndDown" in codes_in("24.11") and "FrontEndDown" not in codes_in("25.05")
    assert "NvidiaImexChannels" in codes_in("25.11") and "RaisedSignal" not in codes_in("22.05")


@pytest.mark.parametrize("code", LIMIT_CODES)
def test_every_limit_code_names_its_limit(code):
    lim = limit_of(code)
    assert lim is not None and lim.setting and lim.tres
    r = REASONS[code]
    assert r.label == "pending_qos_limit" and r.outcome in {"runs", "user", "admin"}
    assert ("QOS" in r.what) == (lim.scope == "QOS") and lim.setting in r.what


@pytest.mark.parametrize(
    ("code", "outcome", "words"),
    [
        ("QOSMaxGRESPerUser", "runs", "the QOS caps GPUs (GRES) per user (MaxTRESPU)"),
        ("QOSMaxWallDurationPerJobLimit", "user", "wall time per job (MaxWall)"),
        ("AssocGrpCPUMinutesLimit", "admin", "CPU-minutes used (a budget) in total"),
        ("AssocGrpCPURunMinutesLimit", "runs", "CPU-minutes of running jobs"),
        ("MaxCpuPerAccount", "runs", "the QOS caps CPUs per account (MaxTRESPA)"),
        ("QOSMinCpuNotSatisfied", "user", "minimum of CPUs per job (MinTRES)"),
        ("QOSMaxJobsPerUserLimit", "runs", "running jobs per user (MaxJobsPU)"),
        ("AssocMaxMemPerNode", "user", "memory per node (MaxTRESPerNode)"),
    ],
)
def test_limit_family_examples(code, outcome, words):
    r = REASONS[code]
    assert r.outcome == outcome and words in r.what


_PHRASE = {
    "runs": "will run",
    "admin": "never runs until an admin acts",
    "user": "never runs",
    "depends": "",
}


@pytest.mark.parametrize("code", sorted(REASONS))
def test_every_reason_code_gives_a_classified_finding(code):
    r = REASONS[code]
    f = _verdict(_job(reason=code))
    if r.outcome == "none":
        assert f is None
        return
    assert f is not None, code
    assert f.root_cause == r.label, (code, f)
    assert f.remedy and "{" not in f.remedy and "<?>" not in f.remedy, f.remedy
    assert code in f.title or code in f.explanation or f.title.startswith(("never runs", "waiting"))
    assert len(f.title) <= 160 and "\n" not in f.title
    if r.outcome == "ended":  # a pending job with an end reason was requeued: it runs again
        assert f.severity == "info" and "requeued" in f.title
    elif r.outcome == "runs":
        assert ("will run" in f.title or "runs as" in f.title) and (
            f.severity == "info" or r.label == "pending_qos_limit"
        )
    elif r.outcome in {"admin", "user"}:
        assert f.severity in {"warning", "critical"} and "never runs" in f.title, f.title
    else:
        assert f.severity == "warning"


@pytest.mark.parametrize(
    ("code", "label", "who"),
    [
        ("Dependency", "pending_dependency", "will run"),
        ("DependencyNeverSatisfied", "dependency_failed", "never runs as submitted"),
        ("PartitionDown", "pending_partition_down", "never runs until an admin acts"),
        ("ReqNodeNotAvail", "pending_node_unavailable", "depends on why"),
        ("QOSMaxWallDurationPerJobLimit", "pending_qos_limit", "never runs as submitted"),
        ("JobHeldUser", "pending_held", "never runs until released"),
        ("InvalidQOS", "pending_invalid_account", "never runs as submitted"),
        ("ReservationDeleted", "pending_reservation", "never runs as submitted"),
    ],
)
def test_reason_examples(code, label, who):
    f = _verdict(_job(reason=code))
    assert f.root_cause == label and who in f.title, f.title
    if code == "QOSMaxWallDurationPerJobLimit":
        assert "TimeLimit=" in f.remedy and f.title.startswith(code)


def test_unknown_reason_is_said_not_hidden():
    f = _verdict(_job(reason="WaitForQuantumAnnealer"))
    assert f.root_cause == "unknown_slurm_code" and f.severity == "warning"
    assert f.title.startswith("unknown reason WaitForQuantumAnnealer")
    assert reason_info("QOSMaxQubitsPerUser").label == "pending_qos_limit"  # a newer limit


def test_reason_descriptions_squeue_prints():
    assert reason_info("ReqNodeNotAvail, UnavailableNodes:c[1-2]").code == "ReqNodeNotAvail"
    assert reason_info("RaisedSignal:11(Segmentation fault)").code == "RaisedSignal"
    assert reason_info("(Resources)").code == "Resources"
    assert never_runs("PartitionConfig") and never_runs("JobHeldAdmin")
    assert not never_runs("Priority") and not never_runs("QOSMaxJobsPerUserLimit")


def test_req_node_not_avail_names_the_drained_nodes():
    nodes = (NODES[0], SlurmNode("c2", "IDLE", ("DRAIN",), reason="bad fan"))
    f = _verdict(_job(reason="ReqNodeNotAvail, UnavailableNodes:c2"), nodes=nodes)
    assert f.title.startswith("ReqNodeNotAvail: nodes c2 IDLE+DRAIN")
    assert "State=RESUME" in f.remedy and "ReqNodeList=" in f.remedy


# --------------------------------------------------------------------------- job states


def _ended(state: str, **kw) -> tuple[SlurmJob, Artifacts]:
    kw.setdefault("exit_code", ExitCode(1, 0) if state == "FAILED" else ExitCode(0, 0))
    kw.setdefault("elapsed_s", 300)
    job = _job(state, "None", nodes=("c1",), node_list="c1", **kw)
    row = AcctRecord(
        "7", "", "j", "debug", state, kw["exit_code"], 100, 50, kw["elapsed_s"], 600, "c1"
    )
    return job, Artifacts(acct=(row,))


@pytest.mark.parametrize("state", sorted(JOB_STATES))
def test_every_job_state_is_classified(state):
    st = JOB_STATES[state]
    job, arts = _ended(state)
    f = _verdict(job, arts)
    if not st.label:
        assert f is None or f.severity == "info", (state, f)
        return
    assert f is not None and f.root_cause == st.label, (state, f)
    assert f.remedy
    if st.kind == "held":
        assert "never runs until released" in f.title
    if st.kind == "failed":
        assert f.severity in {"warning", "critical"}


def test_unknown_job_state_is_said():
    f = _verdict(_job("HIBERNATING"))
    assert f.root_cause == "unknown_slurm_code" and "HIBERNATING" in f.title


# --------------------------------------------------------------------------- node states


@pytest.mark.parametrize("name", sorted(NODE_STATES))
def test_every_node_state_is_classified(name):
    st = NODE_STATES[name]
    node = SlurmNode("c9", name) if not st.flag else SlurmNode("c9", "IDLE", (name,), reason="")
    snap = Snapshot("lab", "slurm", NOW, nodes=(node,))
    f = verdicts(diagnose(snap, None, NOW)).get(("node", "lab", "c9"))
    if st.kind in {"ok", "transient", "planned"}:
        assert f is None, (name, f)
    elif st.kind == "unknown":
        assert f.root_cause == "node_state_unknown" and f.severity == "info"
    else:
        assert f is not None and f.severity in {"warning", "critical"} and f.remedy, (name, f)


def test_node_spellings_and_unknown_flags():
    assert node_state("DRAINING").name == "DRAIN" and node_state("MAINTENANCE").name == "MAINT"
    snap = Snapshot("lab", "slurm", NOW, nodes=(SlurmNode("c9", "IDLE", ("WARP_DRIVE",)),))
    f = verdicts(diagnose(snap, None, NOW))[("node", "lab", "c9")]
    assert f.root_cause == "unknown_slurm_code" and f.severity == "info"


def test_planned_reboot_drain_is_info():
    node = SlurmNode("c9", "IDLE", ("DRAIN", "REBOOT_REQUESTED"), reason="Reboot ASAP")
    f = verdicts(diagnose(Snapshot("lab", "slurm", NOW, nodes=(node,)), None, NOW))
    assert f[("node", "lab", "c9")].severity == "info"


def test_resume_timeout_is_a_boot_failure_and_its_job_a_victim():
    node = SlurmNode("c9", "DOWN", ("POWERED_DOWN",), reason="ResumeTimeout reached")
    job = _job("BOOT_FAIL", "None", nodes=("c9",), node_list="c9")
    v = verdicts(diagnose(Snapshot("lab", "slurm", NOW, jobs=(job,), nodes=(node,)), None, NOW))
    assert v[("node", "lab", "c9")].root_cause == "node_boot_failed"
    assert v[("job", "lab", "7")].root_cause == "node_boot_failed"
    assert v[("job", "lab", "7")].title.startswith("BOOT_FAIL")


# --------------------------------------------------------------------------- the lab's situations


def test_host_memory_ecc_drain_is_not_a_gpu_fault():
    reason = "DIMM B2 uncorrectable ECC errors (mcelog 2026-11-29T20:28)"
    cpu = SlurmNode("c2", "IDLE", ("DRAIN",), reason=reason, reason_user="root")
    f = verdicts(diagnose(Snapshot("lab", "slurm", NOW, nodes=(cpu,)), None, NOW))[
        ("node", "lab", "c2")
    ]
    assert f.root_cause == "host_memory_error" and "nvidia-smi" not in f.remedy
    assert "no GPUs" in f.explanation
    # the same words without a DIMM on a node without GPUs: still host memory
    bare = SlurmNode("c3", "IDLE", ("DRAIN",), reason="uncorrectable ECC errors")
    f = verdicts(diagnose(Snapshot("lab", "slurm", NOW, nodes=(bare,)), None, NOW))[
        ("node", "lab", "c3")
    ]
    assert f.root_cause == "host_memory_error" and "nvidia-smi" not in f.remedy
    # a GPU's Xid on a GPU node is a GPU fault
    gpu = SlurmNode("g1", "IDLE", ("DRAIN",), reason="GPU Xid 79 fallen off the bus", gres="gpu:8")
    f = verdicts(diagnose(Snapshot("lab", "slurm", NOW, nodes=(gpu,)), None, NOW))[
        ("node", "lab", "g1")
    ]
    assert f.root_cause == "gpu_hardware_error" and "nvidia-smi" in f.remedy


def test_rejected_at_submit_is_not_a_crash():
    # sbatch -p debug --mem=5000: "Requested node configuration is not available"; Slurm keeps
    # a FAILED record (squeue JSON's exit_code 1 reads as signal 1) with no node
    job = _job("FAILED", "BadConstraints", exit_code=ExitCode(0, 1), elapsed_s=0,
               min_memory_mib=50000)  # fmt: skip
    f = _verdict(job)
    assert f.root_cause == "submit_rejected_unsatisfiable" and f.severity == "warning"
    assert f.title.startswith("rejected at submit: BadConstraints")
    assert "SIGHUP" not in f.title + f.explanation and "largest node" in f.title


def test_a_submit_refusal_slurmctld_forgot_is_still_no_crash():
    """After MinJobAge squeue's BadConstraints is gone: sacct keeps FAILED, ExitCode 1:0,
    Reason None, no node, no run time, no step (the lab's own record of such a job). It read
    'exit 1 within seconds: a generic error from the program' and joined real failures' group.
    A job that ran, however briefly, on a node keeps its exit code's verdict."""
    job = _job("FAILED", "None", exit_code=ExitCode(1, 0), elapsed_s=0, min_memory_mib=50000)
    row = AcctRecord("7", "", "j", "debug", "FAILED", ExitCode(1, 0), None, 50000, 0, 600, "")
    f = _verdict(job, Artifacts(acct=(row,)))
    assert f.root_cause == "submit_rejected_unsatisfiable" and f.severity == "warning"
    assert f.title.startswith("rejected at submit: never placed on a node")
    assert "largest node" in f.title  # the request no node of the partition holds
    ran, arts = _ended("FAILED", elapsed_s=0)
    assert _verdict(ran, arts).root_cause == "application_error"
    batch = dataclasses.replace(row, step="batch")
    unplaced = dataclasses.replace(job, min_memory_mib=None)
    f = _verdict(unplaced, Artifacts(acct=(row, batch)))  # a step: it was placed somewhere
    assert f.root_cause != "submit_rejected_unsatisfiable"


def test_sigsegv_headline_leads_with_the_signal():
    job, arts = _ended("FAILED", exit_code=ExitCode(0, 11))
    f = _verdict(job, arts)
    assert f.title.startswith("SIGSEGV (signal 11)") and f.root_cause == "application_error"
    # squeue's RaisedSignal reason alone is enough
    f = _verdict(_job("FAILED", "RaisedSignal:11(Segmentation fault)", nodes=("c1",)))
    assert f.title.startswith("SIGSEGV (signal 11)")
    # Slurm 22.05 gives a batch script killed by SIGSEGV Reason=JobLaunchFailure: it did launch
    job, arts = _ended("FAILED", exit_code=ExitCode(0, 11))
    f = _verdict(dataclasses.replace(job, reason="JobLaunchFailure"), arts)
    assert f.title.startswith("SIGSEGV (signal 11)") and f.root_cause == "application_error"
    f = _verdict(dataclasses.replace(job, reason="JobLaunchFailure", exit_code=ExitCode(1, 0)))
    assert f.root_cause == "job_launch_failed"


def test_launch_failure_with_slurms_own_code_is_a_launch_failure_not_a_signal():
    """The 22.05 lab: a batch script that could not start ends FAILED, Reason=JobLaunchFailure,
    ExitCode 0:53 in squeue and sacct. 53 is past the standard signals: not 'signal 53'."""
    job, arts = _ended("FAILED", exit_code=ExitCode(0, 53), elapsed_s=0)
    f = _verdict(dataclasses.replace(job, reason="JobLaunchFailure"), arts)
    assert f.root_cause == "job_launch_failed" and f.title.startswith("JobLaunchFailure")


def test_exit_127_and_oom_and_timeout_headlines():
    job, arts = _ended("FAILED", exit_code=ExitCode(127, 0))
    # the cause leads, the exit code follows: an 80-column title keeps what tells jobs apart
    assert _verdict(job, arts).title == "command not found on the compute node (exit 127)"
    job, arts = _ended("OUT_OF_MEMORY", exit_code=ExitCode(0, 125))
    assert _verdict(job, arts).title.startswith("OUT_OF_MEMORY")
    job = _job("TIMEOUT", "TimeLimit", elapsed_s=43200, time_limit_s=43200, nodes=("c1",))
    assert _verdict(job).title.startswith("TIMEOUT after 12:00:00")


def test_slurm_daemon_lines_of_a_crash_signal_are_error_lines():
    d = (
        b"[2026-11-29T20:12:54.100] slurmd version 22.05.8 started\n"
        b"[2026-11-29T20:28:02.000] [22.batch] get_exit_code task 0 died by signal: 11\n"
    )
    hit = first_error(d, kind="slurmd")
    assert hit is not None and hit.line == 2
    hit = first_error(
        b"[2026-11-29T20:28:02.1] _job_complete: JobId=22 WTERMSIG 11\n", kind="slurmctld"
    )
    assert hit is not None and hit.label == "application_error"


def test_completed_with_a_missing_program_is_a_warning_everywhere():
    job, arts = _ended("COMPLETED", elapsed_s=1)
    log = LogText(
        "slurm-7.out",
        "stdout",
        b"/var/spool/slurmd/job00007/slurm_script: line 2: nosuchprog: command not found\ndone\n",
        subject_id="7",
    )
    arts = Artifacts(acct=arts.acct, logs=(log,))
    f = _verdict(job, arts)
    assert f.root_cause == "command_not_found" and f.severity == "warning"
    assert f.title.startswith("exit 0, but: nosuchprog: command not found")
    snap = Snapshot("lab", "slurm", NOW, jobs=(job,), nodes=NODES, partitions=(PART,))
    from cockpit.model import Subject

    focused = diagnose(snap, arts, NOW, focus=Subject("job", "lab", "7"))
    assert (focused[0].root_cause, focused[0].severity) == (f.root_cause, f.severity)


def test_unknown_drain_after_a_controller_restart_is_no_phantom_incident():
    from cockpit.diagnosis.correlate import correlate

    before = SlurmNode("c1", "IDLE", ("DRAIN",), reason="Kill task failed")
    restarting = SlurmNode("c1", "UNKNOWN", ("DRAIN",))
    restarted = SlurmNode("c1", "UNKNOWN", ("DRAIN",), reason="Kill task failed")
    keys = []
    for node in (before, restarting, restarted, before):
        found = diagnose(Snapshot("lab", "slurm", NOW, nodes=(node,)), None, NOW)
        keys.append({i.key for i in correlate(list(found))})
    # the node's key is its identity and the time of its reason (none reported here), not the
    # label of the reason: it stays when the reason is reworded
    assert keys[0] == keys[2] == keys[3] == {"node|lab|c1|"}
    assert keys[1] == set()  # registering: info, no incident named "DRAIN: UNKNOWN"


def test_initializing_alert_uses_the_engines_threshold():
    from cockpit.watch.transitions import detect

    t0 = NOW - timedelta(minutes=2, seconds=30)

    def tj(public: bool) -> TrainingJob:
        return TrainingJob(
            job_id="t1", name="x", phase="Pending", pool_public=public, create_time=t0
        )

    def snaps(public: bool):
        a = Snapshot("p", "modelarts", NOW, training_jobs=(tj(public),))
        b = Snapshot("p", "modelarts", NOW + timedelta(minutes=1), training_jobs=(tj(public),))
        return a, b

    prev, cur = snaps(public=False)  # dedicated pool: 3 min
    assert [a.rule for a in detect(prev, cur, [], cur.taken_at)] == ["init_slow"]
    prev, cur = snaps(public=True)  # public pool: 10 min
    assert detect(prev, cur, [], cur.taken_at) == []


# --------------------------------------------------------------------------- the docs


def test_docs_list_every_label_with_its_codes():
    text = DOCS.read_text()
    labels = {r.label for r in REASONS.values() if r.label} | {
        s.label for s in JOB_STATES.values() if s.label
    }
    labels |= {"node_state_unknown", "node_boot_failed", "host_memory_error", "unknown_slurm_code"}
    for label in labels:
        assert f"| `{label}` |" in text, label
    generated = text[text.index("## Slurm reason codes by label") :]
    for code, r in REASONS.items():
        if code == "None":
            continue
        line = next(ln for ln in generated.splitlines() if ln.startswith(f"- `{r.label}` "))
        assert re.search(rf"`{re.escape(code)}`", line), (code, r.label)
