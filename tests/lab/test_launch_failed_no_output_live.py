"""Live: a job whose launch failed (JobLaunchFailure: slurmstepd could not open its output
file, its -o directory missing) ran on a node for 0 s and wrote no output. `cockpit snapshot`
over SSH warned "evidence for 162: stdout: …/slurm-162.out: No such file (retrying)" on every
run; slurmd's log, which says why, is its evidence.

Skipped with a reason when the lab is not up; never starts or stops it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.lab


def test_a_job_whose_launch_failed_is_not_asked_for_its_output(lab_env, tmp_path):
    if not lab_env.ssh_key:
        pytest.skip("the lab's sshd is not up (lab/sshd-up.sh)")
    cfg = tmp_path / "lab.toml"
    cfg.write_text(
        f'[clusters.lab]\nhost = "{lab_env.ssh_host}"\nport = {lab_env.ssh_port}\n'
        f'user = "{lab_env.ssh_user}"\nkey = "{lab_env.ssh_key}"\n'
        f'known_hosts = "{lab_env.ssh_known_hosts}"\n'
    )
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    out = f"{tmp_path}/missing-dir/slurm-%j.out"
    jid = lab_env.sbatch("-p", "debug", "-J", "h-launch-failed", "-o", out, "--wrap", "true")
    try:
        lab_env.wait_state(jid, {"FAILED"}, 60)
        for head in (["snapshot"], ["diagnose", jid]):
            res = subprocess.run(
                [sys.executable, "-m", "cockpit", *head, "--cluster", "lab", "--config", str(cfg)],
                capture_output=True, text=True, timeout=120, env=env,
            )  # fmt: skip
            said = (res.stdout + res.stderr).splitlines()  # snapshot's '# warning:' lines
            mine = [ln for ln in said if f"evidence for {jid}:" in ln]
            assert not any("No such file" in ln for ln in mine), (head, mine)
            if head[0] == "diagnose":
                assert "Could not open stdout file" in res.stdout, res.stdout
    finally:
        lab_env.scancel(jid)
