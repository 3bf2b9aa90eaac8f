"""Live: a job that failed with ``command not found`` is still diagnosed, collected and shown
after slurmctld forgot it (MinJobAge), from what sacct keeps.

An unprivileged user submits a job whose program does not exist; once ``scontrol show job``
answers ``Invalid job id specified``: ``cockpit diagnose ID`` names the missing program,
``cockpit collect ID`` bundles ``slurm-ID.out``, and a new SlurmSource resumed from a cursor
before the failure shows the job in its snapshot through the sacct backfill, though squeue no
longer lists it.

The wait is MinJobAge plus slurmctld's purge pass (up to a minute): run the lab with
``SLURM_LAB_MINJOBAGE=10 bash lab/slurm-up.sh`` (~40-70 s); with Slurm's default 300 s the test
is skipped unless ``COCKPIT_LAB_LONG=1`` (then it waits ~6 min). Skipped with a reason when the
lab is not up; creates the user ``cockpitlab1`` when missing, like test_job_paths_live.
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import re
import shlex
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import LabEnv, make_lab_source, wait_for

pytestmark = pytest.mark.lab

USER = "cockpitlab1"
SHORT_ENOUGH = 60  # s of MinJobAge this test waits for without COCKPIT_LAB_LONG


def _min_job_age(lab: LabEnv) -> int:
    out = lab.run("scontrol", "show", "config").stdout
    m = re.search(r"^MinJobAge\s*=\s*(\d+)", out, re.M)
    return int(m.group(1)) if m else 300


@pytest.fixture(scope="module")
def lab_user(lab_env: LabEnv) -> str:
    try:
        pwd.getpwnam(USER)
    except KeyError:
        res = subprocess.run(
            ["useradd", "-M", "-d", "/nonexistent", "-s", "/bin/sh", USER],
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            pytest.skip(f"cannot create the lab user {USER}: {res.stderr.strip()}")
    return USER


def _submit_as(lab: LabEnv, user: str, *args: str) -> str:
    conf = {**os.environ, **lab.env}.get("SLURM_CONF", "/etc/slurm/slurm.conf")
    cmd = shlex.join(["env", f"SLURM_CONF={conf}", "sbatch", "--parsable", *args])
    res = subprocess.run(
        ["su", user, "-s", "/bin/sh", "-c", cmd],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **lab.env},
    )
    assert res.returncode == 0, res.stderr
    return res.stdout.strip().split(";")[0]


def _forgotten(lab: LabEnv, jid: str) -> bool:
    res = lab.run("scontrol", "show", "job", "-o", jid, check=False)
    return res.returncode != 0 and "Invalid job id" in res.stderr


def _cockpit(lab: LabEnv, tmp: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cockpit", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        # the store (evidence captured at first sight) in a throwaway state dir: here the
        # evidence must come from sacct and the files alone
        env={**os.environ, **lab.env, "XDG_STATE_HOME": str(tmp / "state")},
    )


def test_a_failed_job_outlives_minjobage(lab_env, lab_user, tmp_path):
    age = _min_job_age(lab_env)
    if age > SHORT_ENOUGH and os.environ.get("COCKPIT_LAB_LONG") != "1":
        pytest.skip(
            f"the lab's MinJobAge is {age} s: start it with SLURM_LAB_MINJOBAGE=10 "
            "(lab/slurm-up.sh), or set COCKPIT_LAB_LONG=1 to wait that long"
        )
    config = tmp_path / "config.toml"
    config.write_text(
        "[clusters.lab]\n"
        'transport = "local"\n'
        f'slurmctld_log = "{lab_env.ctld_log}"\n'
        f'slurmd_log = "{lab_env.slurmd_log_pattern}"\n'
        "backfill_hours = 1\n"
    )
    before = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=2)
    # the job's own PATH (su keeps root's, whose directories the user cannot search); bash
    # for its "command not found" wording
    jid = _submit_as(
        lab_env, lab_user, "-p", "debug", "-t", "1", "-D", "/tmp", "-J", "mja-bwa",
        "--export=PATH=/usr/bin:/bin",
        "--wrap", "echo aligning; bash -c 'bwa-mem2 mem ref.fa r1.fq'",
    )  # fmt: skip
    segv = lab_env.sbatch("-p", "debug", "-t", "1", "-J", "mja-segv", "--wrap", "kill -SEGV $$")
    out_file = Path(f"/tmp/slurm-{jid}.out")
    try:
        wait_for(lambda: _forgotten(lab_env, jid), age + 90, f"slurmctld to forget job {jid}")
        wait_for(lambda: _forgotten(lab_env, segv), 90, f"slurmctld to forget job {segv}")
        _heads_agree_after_minjobage(lab_env, tmp_path, config, (jid, segv))
        assert b"bwa-mem2: command not found" in out_file.read_bytes()  # what there is to find
        assert lab_env.job_state(jid) == ("", "")  # squeue no longer lists it

        res = _cockpit(
            lab_env, tmp_path, "diagnose", "--config", str(config), jid, "--cluster", "lab",
            "--json",
        )  # fmt: skip
        assert res.returncode == 1, res.stderr  # a critical finding
        report = json.loads(res.stdout)
        top = next(f for f in report["findings"] if f["subject"] == f"job {jid}")
        assert top["root_cause"] == "command_not_found"
        assert "bwa-mem2" in top["title"]

        bundle = tmp_path / "bundle"
        res = _cockpit(
            lab_env, tmp_path, "collect", "--config", str(config), jid, "--cluster", "lab",
            "--out", str(bundle),
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
        assert b"bwa-mem2: command not found" in (bundle / f"slurm-{jid}.out").read_bytes()
        assert "SubmitLine: sbatch" in (bundle / "sacct-job-record.txt").read_text()

        async def fresh_poll():
            src = make_lab_source(lab_env, "local")
            src.resume_from(before)  # the store's cursor: a poll before the failure
            try:
                return await src.poll()
            finally:
                await src.close()

        snap = asyncio.run(fresh_poll())
        assert snap.ok, snap.error
        job = next((j for j in snap.jobs if j.job_id == jid), None)
        assert job is not None, f"job {jid} not in the backfilled snapshot"
        assert (job.state, job.user, job.exit_code.code) == ("FAILED", lab_user, 127)
    finally:
        lab_env.scancel(jid, segv)
        out_file.unlink(missing_ok=True)


def _heads_agree_after_minjobage(lab_env: LabEnv, tmp: Path, config: Path, ids: tuple) -> None:
    """From sacct alone, snapshot, incidents and diagnose give each forgotten job one cause,
    severity, title and first-seen; the segfault reads one way (signal 11, never 'exit code
    11:0' beside 'exit 139', never 'an error status')."""
    res = _cockpit(lab_env, tmp, "snapshot", "--config", str(config), "--json")
    assert res.returncode in (0, 1), res.stderr
    verdicts = {v["subject"]["id"]: v for s in json.loads(res.stdout) for v in s["verdicts"]}
    res = _cockpit(lab_env, tmp, "incidents", "--config", str(config), "--json")
    assert res.returncode in (0, 1), res.stderr
    incidents = json.loads(res.stdout)["incidents"]
    for jid in ids:
        v = verdicts[jid]
        res = _cockpit(
            lab_env, tmp, "diagnose", "--config", str(config), jid, "--cluster", "lab", "--json"
        )
        top = next(f for f in json.loads(res.stdout)["findings"] if f["subject"] == f"job {jid}")
        for k in ("root_cause", "severity", "title", "first_seen"):
            assert v[k] == top[k], (jid, k, v[k], top[k])
        mine = [
            i
            for i in incidents
            if i["subject"]["id"] == jid or any(a["id"] == jid for a in i.get("affected", []))
        ]
        assert len(mine) == 1 and mine[0]["root_cause"] == v["root_cause"], (jid, mine)
    segv = json.loads(
        _cockpit(
            lab_env, tmp, "diagnose", "--config", str(config), ids[1], "--cluster", "lab", "--json"
        ).stdout
    )
    said = json.dumps(segv["findings"])
    assert "SIGSEGV" in said, said[:2000]
    assert "11:0" not in said and "an error status" not in said, said[:2000]
