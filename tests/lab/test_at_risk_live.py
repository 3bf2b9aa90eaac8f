"""Live: a running job near its time limit is named at risk before Slurm kills it, by every
head, and the warning gives way to the TIMEOUT once it is killed.

Skipped with a reason when the lab is not up; never starts or stops it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.conftest import LabEnv, wait_for

pytestmark = pytest.mark.lab


def _snapshot_verdict(lab_env: LabEnv, cfg: str, env: dict, jid: str) -> dict:
    res = subprocess.run(
        [sys.executable, "-m", "cockpit", "snapshot", "--json", "--config", cfg],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    verdicts = {v["subject"]["id"]: v for s in json.loads(res.stdout) for v in s["verdicts"]}
    return verdicts.get(jid, {})


def test_a_job_near_its_time_limit_is_at_risk_then_timed_out(lab_env, tmp_path):
    cfg = tmp_path / "lab.toml"
    cfg.write_text(
        '[clusters.lab]\ntransport = "local"\n'
        f'slurmctld_log = "{lab_env.ctld_log}"\nslurmd_log = "{lab_env.slurmd_log_pattern}"\n'
    )
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    jid = lab_env.sbatch("-p", "debug", "-t", "1", "-J", "h-near-limit", "--wrap", "sleep 600")
    try:
        lab_env.wait_state(jid, {"RUNNING"}, 60)
        # past 90 % of its minute, before Slurm's kill at 60 s or later
        time.sleep(54.5)
        at_risk = _snapshot_verdict(lab_env, str(cfg), env, jid)
        assert at_risk.get("root_cause") == "time_limit_near", at_risk
        assert "killed at" in at_risk["title"]
        lab_env.wait_state(jid, {"TIMEOUT"}, 150)
        wait_for(
            lambda: (
                _snapshot_verdict(lab_env, str(cfg), env, jid).get("root_cause") == "time_limit"
            ),
            60,
            "the TIMEOUT verdict",
        )
    finally:
        lab_env.scancel(jid)
