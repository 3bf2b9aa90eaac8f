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
