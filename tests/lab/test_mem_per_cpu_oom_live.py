"""Live: a job that asked for its memory per CPU and ran out of it is told to resubmit with
--mem-per-cpu, the option its script can take: sbatch refuses --mem beside --mem-per-cpu
("mutually exclusive"), and the remedy said --mem (a new-user trial on the lab).

Skipped with a reason when the lab is not up; never starts or stops it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.lab

HOG = 'python3 -c "b=bytearray(400*2**20)\nfor i in range(0,len(b),4096): b[i]=1"'


def test_an_oom_of_a_mem_per_cpu_job_advises_mem_per_cpu(lab_env, tmp_path):
    cfg = tmp_path / "lab.toml"
    cfg.write_text(
        '[clusters.lab]\ntransport = "local"\n'
        f'slurmctld_log = "{lab_env.ctld_log}"\nslurmd_log = "{lab_env.slurmd_log_pattern}"\n'
    )
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    jid = lab_env.sbatch(
        "-p", "debug", "-t", "2", "-c", "2", "--mem-per-cpu=100M", "-J", "h-mpc-oom",
        "--wrap", HOG,
    )  # fmt: skip
    try:
        lab_env.wait_state(jid, {"OUT_OF_MEMORY", "FAILED", "CANCELLED", "COMPLETED"}, 90)
        res = subprocess.run(
            [sys.executable, "-m", "cockpit", "diagnose", jid, "--cluster", "lab",
             "--config", str(cfg), "--json"],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        top = json.loads(res.stdout)["findings"][0]
        assert top["root_cause"] == "oom_killed", top
        assert "--mem-per-cpu=" in top["remedy"] and "--mem=" not in top["remedy"], top["remedy"]
        # the figure it names is per CPU: sbatch takes it beside the script's -c 2
        per_cpu = top["remedy"].split("--mem-per-cpu=", 1)[1].split(" ", 1)[0]
        test = lab_env.run(
            "sbatch", "--test-only", "-p", "debug", "-c", "2", f"--mem-per-cpu={per_cpu}",
            "--wrap", "true", check=False,
        )  # fmt: skip
        assert test.returncode == 0, test.stderr
    finally:
        lab_env.scancel(jid)
