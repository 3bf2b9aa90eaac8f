"""Live: a job Slurm refused at submit never ran, so it has no output file. Every command
printed "evidence for job 49 @lab: stdout: …/slurm-49.out: No such file" for it (a new-user
trial); its verdict needs no output, and none is asked for.

Skipped with a reason when the lab is not up; never starts or stops it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import wait_for

pytestmark = pytest.mark.lab


def test_a_job_refused_at_submit_is_diagnosed_without_asking_for_its_output(lab_env, tmp_path):
    cfg = tmp_path / "lab.toml"
    if not lab_env.ssh_key:
        pytest.skip("the lab's sshd is not up (lab/sshd-up.sh)")
    # over SSH, where the missing file came back as an SFTP error on every poll
    cfg.write_text(
        f'[clusters.lab]\nhost = "{lab_env.ssh_host}"\nport = {lab_env.ssh_port}\n'
        f'user = "{lab_env.ssh_user}"\nkey = "{lab_env.ssh_key}"\n'
        f'known_hosts = "{lab_env.ssh_known_hosts}"\n'
    )
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    # more memory per node than any debug node has: sbatch refuses it, sacct keeps FAILED
    res = lab_env.run(
        "sbatch", "-D", lab_env.jobs_dir, "-p", "debug", "-c", "2", "--mem-per-cpu=600",
        "-J", "h-refused", "--wrap", "true", check=False,
    )  # fmt: skip
    assert res.returncode != 0 and "not available" in res.stderr, res.stderr

    def refused() -> list[str]:  # slurmdbd writes the FAILED record a moment later
        rows = lab_env.run("sacct", "-X", "-n", "-P", "-S", "now-5minutes", "-o", "JobID,JobName")
        return [ln.split("|")[0] for ln in rows.stdout.splitlines() if ln.endswith("|h-refused")]

    jid = wait_for(refused, 30, "sacct's record of the refused job")[-1]
    # the heads that fetch every failed job's evidence in the background (the poll's warnings)
    for head in (["snapshot"], ["incidents"], ["diagnose", jid]):
        out = subprocess.run(
            [sys.executable, "-m", "cockpit", *head, "--cluster", "lab", "--config", str(cfg)],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        # its own lines: the shared lab holds other jobs whose output is gone (another
        # helper's launch failures, past MinJobAge)
        said = (out.stderr + out.stdout).splitlines()
        mine = [ln for ln in said if "No such file" in ln and re.search(rf"\b{jid}\b", ln)]
        assert not mine, (head, mine)
        if head[0] == "diagnose":
            assert re.search(rf"job {jid}: rejected at submit", out.stdout), out.stdout
