"""What Slurm 22.05, 24.11 and 26.05 print for the same jobs, read by the cockpit's parsers.

The fixtures in tests/fixtures/slurm-versions/<series>/ were captured from the real daemons
(``lab/capture_versions.py`` against ``lab/slurm-up.sh`` and ``lab/version-up.sh 24|26``):
the same submissions on each, so each test states what an operator sees the same on every
version, or what differs and how the cockpit reads it. No lab needed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.model import ExitCode
from cockpit.slurm.parse import (
    parse_scontrol_job,
    parse_scontrol_nodes,
    parse_scontrol_partitions,
    split_node_state,
)
from cockpit.slurm.parse_json import (
    parse_partitions_json,
    parse_sinfo_json,
    parse_squeue_json,
)
from cockpit.slurm.rest import newest_parser, payload_version, server_version, unchanged
from cockpit.slurm.squeue import parse_squeue

BASE = Path(__file__).parent / "fixtures" / "slurm-versions"
SERIES = ("22.05", "24.11", "26.05")
REST_SERIES = ("24.11", "26.05")
JOBS_DIR = {
    "22.05": "/tmp/slurmlab/jobs",
    "24.11": "/tmp/slurmv24/jobs",
    "26.05": "/tmp/slurmv26/jobs",
}


def text(series: str, name: str) -> str:
    return (BASE / series / name).read_text()


def ids(series: str) -> dict[str, str]:
    return json.loads(text(series, "jobs.json"))


def squeue_jobs(series: str) -> dict:
    return {j.job_id: j for j in parse_squeue(text(series, "squeue_o.txt"))[0]}


def scontrol_job(series: str, name: str):
    return parse_scontrol_job(text(series, f"scontrol_job_{name}.txt"))[0]


@pytest.mark.parametrize("series", SERIES)
def test_versions_print_their_release(series):
    version = text(series, "version.txt").strip()
    assert version.startswith(series + ".")
    nodes = text(series, "scontrol_nodes.txt")
    assert f"Version={version}" in nodes


@pytest.mark.parametrize("series", SERIES)
def test_same_situations_read_the_same_on_every_version(series):
    jobs, job_ids = squeue_jobs(series), ids(series)
    run = jobs[job_ids["running"]]
    assert (run.state, run.partition, run.nodes, run.name) == (
        "RUNNING",
        "batch",
        ("c3",),
        "cap-run",
    )
    assert (run.min_memory_mib, run.time_limit_s) == (100, 1800)
    failed = jobs[job_ids["exit127"]]
    assert (failed.state, failed.reason) == ("FAILED", "NonZeroExitCode")
    slow = jobs[job_ids["timeout"]]
    assert (slow.state, slow.reason, slow.time_limit_s) == ("TIMEOUT", "TimeLimit", 60)
    # array tasks keep their ids, as strings
    arr = job_ids["array"]
    assert {f"{arr}_1", f"{arr}_2"} <= set(jobs)
    assert all(j.state == "RUNNING" for k, j in jobs.items() if k.startswith(arr + "_"))


@pytest.mark.parametrize("series", SERIES)
def test_exit_127_is_read_as_exit_127(series):
    (job,) = scontrol_job(series, "exit127")
    assert job.exit_code == ExitCode(127, 0) and job.state == "FAILED"


def test_memory_overrun_differs_with_cgroups():
    """22.05 lab runs with cgroups (the kernel's OOM killer: OUT_OF_MEMORY); the 24.11/26.05
    roots have none, so jobacct_gather's OverMemoryKill kills the step: FAILED with
    RaisedSignal:9 - a different state for the same cause."""
    oom22 = squeue_jobs("22.05")[ids("22.05")["oom"]]
    assert (oom22.state, oom22.reason) == ("OUT_OF_MEMORY", "OutOfMemory")
    for series in ("24.11", "26.05"):
        job = squeue_jobs(series)[ids(series)["oom"]]
        assert (job.state, job.reason) == ("FAILED", "RaisedSignal:9(Killed)")


def test_pending_too_wide_job():
    """-c 8 on 2-CPU nodes: 22.05 and 26.05 keep it PENDING (PartitionConfig); 24.11 refuses
    it at sbatch and keeps a FAILED record with BadConstraints."""
    for series in ("22.05", "26.05"):
        job = squeue_jobs(series)[ids(series)["pending_partition"]]
        assert (job.state, job.reason, job.cpus) == ("PENDING", "PartitionConfig", 8)
    rejected = json.loads(text("24.11", "rejected.json"))
    assert "Requested node configuration is not available" in rejected["pending_partition"]
    bad = [j for j in squeue_jobs("24.11").values() if j.name == "cap-wide"]
    assert bad and all((j.state, j.reason) == ("FAILED", "BadConstraints") for j in bad)


@pytest.mark.parametrize("series", SERIES)
def test_output_patterns_resolved_on_every_version(series):
    """24.05+ stopped expanding %x/%j/%A/%a in some outputs; the paths the cockpit reads
    are always the real file names."""
    jid = ids(series)["running"]
    (job,) = scontrol_job(series, "running")
    assert job.stdout_path == f"{JOBS_DIR[series]}/cap-run-{jid}.out"
    assert job.stderr_path in ("", job.stdout_path)
    arr = ids(series)["array"]
    got = {j.job_id: j.stdout_path for j in scontrol_job(series, "array")}
    assert got == {f"{arr}_{t}": f"{JOBS_DIR[series]}/{arr}_{t}.out" for t in (1, 2)}


def test_26_05_json_paths_as_typed_and_expanded():
    """26.05's JSON keeps standard_output as typed (%x-%j.out) and adds stdout_expanded."""
    doc = json.loads(text("26.05", "squeue_json.txt"))
    jid = ids("26.05")["running"]
    raw = next(j for j in doc["jobs"] if str(j["job_id"]) == jid)
    assert raw["standard_output"].endswith("%x-%j.out")
    job = {j.job_id: j for j in parse_squeue_json(text("26.05", "squeue_json.txt"))[0]}[jid]
    assert job.stdout_path == f"/tmp/slurmv26/jobs/cap-run-{jid}.out"


def test_26_05_sluid_from_json_matches_squeue_and_logs():
    sluids = dict(
        line.split("|") for line in text("26.05", "squeue_sluid.txt").splitlines() if line
    )
    jobs = parse_squeue_json(text("26.05", "squeue_json.txt"))[0]
    assert jobs and all(j.sluid == sluids[j.job_id] for j in jobs if j.job_id in sluids)
    assert all(j.sluid.startswith("s") and len(j.sluid) == 14 for j in jobs)
    jid = ids("26.05")["running"]
    assert f"JobId={jid} SLUID={sluids[jid]}" in text("26.05", "slurmctld_log.txt")
    # older versions have none
    assert all(j.sluid == "" for j in parse_squeue_json(text("22.05", "squeue_json.txt"))[0])


@pytest.mark.parametrize("series", ("24.11", "26.05"))
def test_drained_node_long_reason(series):
    nodes = {n.name: n for n in parse_scontrol_nodes(text(series, "scontrol_nodes.txt"))[0]}
    c2 = nodes["c2"]
    want = "cockpit capture: ECC errors on DIMM B2, replace before resume (ticket 4711)"
    assert c2.is_drain and c2.reason == want and c2.reason_user == "root" and c2.reason_time
    rest = {n.name: n for n in parse_sinfo_json(text(series, "rest_nodes.json"))[0]}
    assert (rest["c2"].reason, rest["c2"].reason_user, rest["c2"].is_drain) == (want, "root", True)
    assert rest["c2"].reason_time == c2.reason_time


def test_no_accounting_is_said_plainly():
    for series in ("24.11", "26.05"):
        rc, _, err = text(series, "sacct_rc_stdout_stderr.txt").split("\n", 2)
        assert rc == "1" and "accounting storage is disabled" in err


# --------------------------------------------------------------------------- slurmrestd


@pytest.mark.parametrize("series", REST_SERIES)
def test_rest_gives_the_same_jobs_as_squeue(series):
    by_rest = {j.job_id: j for j in parse_squeue_json(text(series, "rest_jobs.json"))[0]}
    by_squeue = squeue_jobs(series)
    # captured a moment apart: compare the jobs both saw, ended ones included
    common = set(by_rest) & set(by_squeue)
    assert len(common) >= len(by_squeue) - 2 and ids(series)["running"] in common
    for jid in common:
        a, b = by_rest[jid], by_squeue[jid]
        assert (a.state, a.reason, a.partition, a.name, a.user) == (
            b.state,
            b.reason,
            b.partition,
            b.name,
            b.user,
        ), jid
        assert (a.nodes, a.cpus, a.time_limit_s, a.min_memory_mib) == (
            b.nodes,
            b.cpus,
            b.time_limit_s,
            b.min_memory_mib,
        ), jid


@pytest.mark.parametrize("series", REST_SERIES)
def test_rest_exit_codes(series):
    by_rest = {j.job_id: j for j in parse_squeue_json(text(series, "rest_jobs.json"))[0]}
    i = ids(series)
    assert by_rest[i["exit127"]].exit_code == ExitCode(127, 0)
    assert by_rest[i["exit137"]].exit_code == ExitCode(137, 0)
    assert by_rest[i["signal9"]].exit_code == ExitCode(0, 9)
    # refused at submission: never ran, Slurm's plain exit code 1 (not "signal 1")
    refused = [j for j in by_rest.values() if j.reason == "BadConstraints"]
    assert all(j.exit_code == ExitCode(1, 0) for j in refused)


def test_22_05_bad_constraints_exit_code_is_not_a_signal():
    doc = {
        "jobs": [
            {
                "job_id": 5,
                "job_state": "FAILED",
                "state_reason": "BadConstraints",
                "exit_code": 1,
                "nodes": "",
            }
        ]
    }
    (job,) = parse_squeue_json(json.dumps(doc))[0]
    assert job.exit_code == ExitCode(1, 0)
    # a real wait status 1 of a job that ran is SIGHUP
    doc["jobs"][0]["state_reason"] = "RaisedSignal:1(Hangup)"
    (job,) = parse_squeue_json(json.dumps(doc))[0]
    assert job.exit_code == ExitCode(0, 1)


@pytest.mark.parametrize("series", REST_SERIES)
def test_rest_partitions_match_scontrol(series):
    rest = {p.name: p for p in parse_partitions_json(text(series, "rest_partitions.json"))[0]}
    ctl = {p.name: p for p in parse_scontrol_partitions(text(series, "scontrol_partitions.txt"))[0]}
    assert set(rest) == set(ctl) == {"debug", "batch", "tiny", "maint"}
    for name, p in ctl.items():
        r = rest[name]
        assert (r.nodes, r.max_time_s, r.state) == (p.nodes, p.max_time_s, p.state), name
    assert rest["maint"].state == "DOWN" and ctl["debug"].default
    # 24.11's v0.0.42 partitions carry no flags at all: which one is the default is unknown
    assert rest["debug"].default == (series != "24.11")


def test_rest_negotiates_newest_parser():
    assert (
        newest_parser(
            {"paths": {p: {} for p in json.loads(text("24.11", "rest_openapi_paths.json"))}}
        )
        == "v0.0.42"
    )
    assert (
        newest_parser(
            {"paths": {p: {} for p in json.loads(text("26.05", "rest_openapi_paths.json"))}}
        )
        == "v0.0.45"
    )
    assert (
        newest_parser({"paths": {"/slurm/v0.0.9/jobs": {}, "/slurm/v0.0.10/jobs/": {}}})
        == "v0.0.10"
    )
    assert newest_parser({"paths": {"/slurmdb/v0.0.45/jobs": {}}}) == ""
    assert server_version({"info": {"version": "Slurm-24.11.5&openapi/slurmctld"}}) == "24.11.5"
    assert payload_version(json.loads(text("26.05", "rest_jobs.json"))) == "26.05.5"


def test_unchanged_answer_is_not_an_empty_cluster():
    said = {"jobs": [], "warnings": [{"description": "No job changes since update_time[17]=x"}]}
    assert unchanged(said, "jobs")
    assert not unchanged({"jobs": [], "warnings": []}, "jobs")


# --------------------------------------------------------------------------- newer spellings


def test_node_flags_of_newer_versions():
    assert split_node_state("IDLE+BLOCKED") == ("IDLE", ("BLOCKED",))
    assert split_node_state("IDLE+EXTERNAL") == ("IDLE", ("EXTERNAL",))
    nodes = parse_scontrol_nodes(
        "NodeName=g1 State=IDLE+DRAIN Reason=Kill task failed (JobId=42 StepId=0) "
        "[root@2026-11-30T10:00:00]\n"
    )[0]
    assert nodes[0].reason == "Kill task failed (JobId=42 StepId=0)" and nodes[0].is_drain


def test_state_flag_appended_to_squeue_state():
    row = squeue_jobs("24.11")[ids("24.11")["running"]]
    line = next(
        ln
        for ln in text("24.11", "squeue_o.txt").splitlines()
        if ln.startswith(row.job_id + "\x1f")
    )
    flagged = line.replace("\x1fRUNNING\x1f", "\x1fRUNNING+EXPEDITING\x1f")
    (job,), warnings = parse_squeue(flagged)
    assert job.state == "RUNNING" and not warnings
