"""`scontrol requeuehold 159` on the lab (Slurm 22.05): scontrol and squeue print the pending
job's reason as ``job_requeued_in_held_state`` (the description, its spaces as '_'), which the
cockpit read as 'unknown reason … not in Slurm 22.05-26.05's list' though it knew the spaced
spelling."""

from __future__ import annotations

from datetime import UTC, datetime

from cockpit.diagnosis.engine import diagnose
from cockpit.model import Artifacts, SlurmJob, Snapshot

NOW = datetime(2026, 12, 5, 12, 2, tzinfo=UTC)


def test_a_job_requeued_in_held_state_is_held_not_unknown():
    job = SlurmJob(
        "159", "brk2-rq", "root", "debug", "PENDING", "job_requeued_in_held_state",
        cpus=1, node_count=1, submit_time=NOW,
    )  # fmt: skip
    (f,) = [f for f in diagnose(Snapshot("lab", "slurm", NOW, jobs=(job,)), Artifacts(), now=NOW)
            if f.subject.id == "159"]  # fmt: skip
    assert f.root_cause != "unknown_slurm_code", f.title
    assert "held" in f.title and "release" in f.remedy, (f.title, f.remedy)
