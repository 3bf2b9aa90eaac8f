"""Live: `cockpit diagnose 41` of an array names each task's verdict (the failed ones with
their evidence), where it said "job 41 not found on lab (not in squeue, scontrol or sacct)"
although scontrol and sacct both know the array (a new-user trial on the lab).

Skipped with a reason when the lab is not up; never starts or stops it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import wait_for

pytestmark = pytest.mark.lab

SCRIPT = (
    "echo task $SLURM_ARRAY_TASK_ID; "
    'if [ $((SLURM_ARRAY_TASK_ID % 2)) = 0 ]; then echo "ERROR: shard missing" >&2; exit 3; fi'
)


def test_diagnose_an_arrays_own_id_names_its_failed_tasks(lab_env, tmp_path):
    cfg = tmp_path / "lab.toml"
    cfg.write_text('[clusters.lab]\ntransport = "local"\n')
    env = {**os.environ, **lab_env.env, "XDG_STATE_HOME": str(tmp_path / "state")}
    base = lab_env.sbatch("-p", "debug", "-a", "1-4", "-J", "h-array-diag", "--wrap", SCRIPT)
    try:
        for task in ("1", "2", "3", "4"):
            lab_env.wait_state(f"{base}_{task}", {"COMPLETED", "FAILED"}, 90)
        res = subprocess.run(
            [sys.executable, "-m", "cockpit", "diagnose", base, "--cluster", "lab",
             "--config", str(cfg), "--json"],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert res.returncode == 1, res.stderr  # a critical finding: tasks failed
        by_task = {f["subject"]: f for f in json.loads(res.stdout)["findings"]}
        failed = {s for s, f in by_task.items() if f["severity"] == "critical"}
        assert failed == {f"job {base}_2", f"job {base}_4"}, sorted(by_task)
        # each with its own evidence: the exit and the task's own output line
        top = by_task[f"job {base}_2"]
        assert "exit 3" in top["title"], top["title"]
        assert any("shard missing" in e["text"] for e in top["evidence"]), top["evidence"]
    finally:
        lab_env.scancel(base)


def test_the_backfill_names_the_cpus_a_forgotten_job_held(lab_env):
    """Once slurmctld forgets a job, sacct's row is all the cockpit has: its N/CPU column
    read "1/-" for every ended job and a --mem-per-cpu remedy counted 1 CPU per node."""
    from datetime import UTC, datetime, timedelta

    from cockpit.slurm.backfill import BACKFILL_STATES, parse_backfill, sacct_time
    from cockpit.slurm.commands import sacct_backfill_argv

    jid = lab_env.sbatch("-p", "debug", "-c", "2", "-J", "h-bf-cpus", "--wrap", "exit 3")
    lab_env.wait_state(jid, {"FAILED"}, 60)
    since = sacct_time(datetime.now(UTC) - timedelta(minutes=10), UTC)

    def row():
        res = lab_env.run(*sacct_backfill_argv(since, BACKFILL_STATES), check=False)
        found, _ = parse_backfill(res.stdout, UTC)
        return next((j for j, _ in found if j.job_id == jid), None)

    job = wait_for(row, 30, "the failed job in sacct")
    assert job.cpus == 2, job
