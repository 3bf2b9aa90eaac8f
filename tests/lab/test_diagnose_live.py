"""Live: ``cockpit diagnose JOBID --cluster lab --json`` on real Slurm jobs in the lab.

Skipped with a reason when the lab (/tmp/slurmlab) is not up; never starts or stops it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import LabEnv, wait_for

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def lab_config(lab_env: LabEnv, tmp_path_factory) -> str:
    cfg = tmp_path_factory.mktemp("cfg") / "config.toml"
    cfg.write_text(
        "[clusters.lab]\n"
        'transport = "local"\n'
        f'slurmctld_log = "{lab_env.ctld_log}"\n'
        f'slurmd_log = "{lab_env.slurmd_log_pattern}"\n'
    )
    return str(cfg)


def diagnose(lab_env: LabEnv, config: str, job_id: str) -> dict:
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "cockpit",
            "diagnose",
            "--config",
            config,
            job_id,
            "--cluster",
            "lab",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, **lab_env.env},
    )
    assert res.returncode in (0, 1), res.stderr
    return json.loads(res.stdout)


def _top(report: dict, job_id: str) -> dict:
    return next(f for f in report["findings"] if f["subject"] == f"job {job_id}")


def _ended(lab_env: LabEnv, jid: str, timeout: float = 90) -> None:
    final = {"OUT_OF_MEMORY", "FAILED", "CANCELLED", "COMPLETED", "TIMEOUT", "NODE_FAIL"}
    lab_env.wait_state(jid, final, timeout)


def test_oom(lab_env, lab_config):
    jid = lab_env.sbatch(
        "-p",
        "batch",
        "-t",
        "2",
        "--mem=100M",
        "-J",
        "cockpit-diag-oom",
        "--wrap",
        "perl -e '$x = \"x\" x (400*1024*1024); sleep 5'",
    )
    _ended(lab_env, jid)
    report = diagnose(lab_env, lab_config, jid)
    assert _top(report, jid)["root_cause"] == "oom_killed"
    assert "--mem=" in _top(report, jid)["remedy"]


def test_exit_127(lab_env, lab_config):
    jid = lab_env.sbatch(
        "-p",
        "debug",
        "-t",
        "2",
        "-J",
        "cockpit-diag-127",
        "--wrap",
        "echo start; no_such_program_xyz --flag",
    )
    _ended(lab_env, jid)
    report = diagnose(lab_env, lab_config, jid)
    top = _top(report, jid)
    assert top["root_cause"] == "command_not_found"
    assert "no_such_program_xyz" in top["title"]
    fe = report["first_error"]
    assert (
        fe
        and fe["file"].startswith("slurm-")
        and "no_such_program_xyz" in fe["text"]
        and fe["line"] == 2
    )


def test_partition_config(lab_env, lab_config):
    jid = lab_env.sbatch("-p", "debug", "-c", "8", "-J", "cockpit-diag-wide", "--wrap", "true")
    try:
        wait_for(lambda: lab_env.job_state(jid)[1] not in ("", "None"), 20, "a pending reason")
        top = _top(diagnose(lab_env, lab_config, jid), jid)
        assert top["root_cause"] == "pending_partition_limit"
        assert top["title"].startswith("never runs: 8 CPUs")
    finally:
        lab_env.scancel(jid)


def test_dependency_never_satisfied(lab_env, lab_config):
    bad = lab_env.sbatch("-p", "debug", "-t", "1", "-J", "cockpit-diag-parent", "--wrap", "exit 3")
    _ended(lab_env, bad)
    jid = lab_env.sbatch(
        "-p",
        "debug",
        "-t",
        "1",
        f"--dependency=afterok:{bad}",
        "-J",
        "cockpit-diag-child",
        "--wrap",
        "true",
    )
    try:
        wait_for(
            lambda: lab_env.job_state(jid)[1] == "DependencyNeverSatisfied",
            30,
            "DependencyNeverSatisfied",
        )
        assert _top(diagnose(lab_env, lab_config, jid), jid)["root_cause"] == "dependency_failed"
    finally:
        lab_env.scancel(jid)


def test_drained_node(lab_env, lab_config):
    reason = "cockpit diag test: Kill task failed"
    lab_env.run("scontrol", "update", "NodeName=c2", "State=DRAIN", f"Reason={reason}")
    jid = lab_env.sbatch(
        "-p", "debug", "-w", "c2", "-t", "1", "-J", "cockpit-diag-drained", "--wrap", "true"
    )
    try:
        wait_for(
            lambda: lab_env.job_state(jid)[1].startswith("ReqNodeNotAvail"), 30, "ReqNodeNotAvail"
        )
        report = diagnose(lab_env, lab_config, jid)
        assert _top(report, jid)["root_cause"] == "pending_node_unavailable"
        node = next(f for f in report["findings"] if f["subject"] == "node c2")
        assert node["root_cause"] == "node_drain_kill_task_failed"
    finally:
        lab_env.scancel(jid)
        lab_env.run("scontrol", "update", "NodeName=c2", "State=RESUME", check=False)
