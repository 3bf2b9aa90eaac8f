"""Breaker: a folder of slurm-N.out files, each job's log with an error line that no rule
knows, must name every such job (never silent, job by job), also when no rule recognised
any of them."""

from __future__ import annotations

from cockpit.ingest.bundle import diagnose_bundle


def test_a_folder_where_no_rule_knows_any_log_names_each_jobs_error(tmp_path):
    (tmp_path / "slurm-1.out").write_text("starting\nERROR: input file /data/a.csv not found\n")
    (tmp_path / "slurm-2.out").write_text("starting\nERROR: input file /data/b.csv not found\n")
    report = diagnose_bundle(str(tmp_path))
    said = " ".join(f"{f.title} {[e.text for e in f.evidence]}" for f in report.findings)
    assert "/data/a.csv" in said
    assert "/data/b.csv" in said, [f.title for f in report.findings]  # was dropped


def test_a_job_log_whose_name_holds_no_job_id_is_not_dropped(tmp_path):
    # beside a recognised out-of-memory, logs named by hand or by an unexpanded pattern
    (tmp_path / "slurm-5.out").write_text(
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=5.batch cgroup.\n"
    )
    (tmp_path / "slurm-%j.out").write_text("ERROR: input file /data/pct.csv not found\n")
    (tmp_path / "slurm-7 (copy).out").write_text("ERROR: input file /data/sp.csv not found\n")
    report = diagnose_bundle(str(tmp_path))
    assert report.findings[0].root_cause == "oom_killed"
    said = " ".join(f"{f.title} {[e.text for e in f.evidence]}" for f in report.findings)
    assert "/data/pct.csv" in said and "/data/sp.csv" in said, said
