"""A folder of thousands of job logs that failed the same way: `cockpit diagnose` prints the
first findings in full, then one line per kind of failure naming the jobs it covers, where it
printed one line per job (a new-user trial's 5,000 unrecognised entries); `--json` keeps every
finding, and a log alone is its job's, as in the folder."""

from __future__ import annotations

import json

from cockpit.cli import main

MISSING = (
    "loading\nTraceback (most recent call last):\n"
    '  File "run.py", line 3, in <module>\n'
    "ModuleNotFoundError: No module named 'torchvision'\n"
)


def _folder(tmp_path):
    for i in range(1001, 1301):
        (tmp_path / f"slurm-{i}.out").write_text(MISSING)
    for i in range(2001, 2051):
        (tmp_path / f"slurm-{i}.out").write_text(f"step 1\nERROR: calibration failed for {i}\n")
    (tmp_path / "slurm-3001.out").write_text("ERROR: disk /scratch/x is gone\n")
    (tmp_path / "slurm-3002.out").write_text("ERROR: disk /scratch/y is gone\n")


def test_alike_failures_fold_into_one_line_per_kind_with_their_jobs(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    _folder(tmp_path)
    assert main(["diagnose", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) < 40, out  # was one line per job: 350+
    assert any("295 jobs [1006-1300]" in ln and "python_module_missing" in ln for ln in lines), out
    assert any("50 jobs [2001-2050]" in ln and "unrecognised_failure" in ln for ln in lines), out
    # two alike are still two lines: nothing to fold
    assert sum("job 300" in ln for ln in lines) == 2, out
    assert main(["diagnose", str(tmp_path), "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert len(findings) == 352
    assert {f["subject"] for f in findings if f["root_cause"] == "unrecognised_failure"} >= {
        "job 2001",
        "job 3002",
    }


def test_a_job_log_alone_is_that_jobs_as_in_a_folder(tmp_path, capsys):
    (tmp_path / "slurm-2001.out").write_text("step 1\nERROR: calibration failed for 2001\n")
    assert main(["diagnose", str(tmp_path / "slurm-2001.out"), "--json"]) == 0
    (alone,) = json.loads(capsys.readouterr().out)["findings"]
    assert alone["subject"] == "job 2001", alone


def test_failures_differing_in_their_status_code_are_not_folded_as_one(
    tmp_path, capsys, monkeypatch
):
    """A download that got HTTP 404 (a wrong URL: the user's to fix) and one that got HTTP 503
    (the server: retry later) are two failures; their job ids, dates and sizes set aside, each
    is a line of its own. Before: '300 jobs …: HTTP 404', the 150 jobs of 503 under it."""
    monkeypatch.setenv("COLUMNS", "200")
    for i in range(1001, 1301):
        code = 404 if i % 2 else 503
        (tmp_path / f"slurm-{i}.out").write_text(
            f"step 1 of job {i}\nERROR: fetch of weights for job {i} failed at "
            f"2026-12-0{1 + i % 9}T10:{i % 60:02d}:00 after {i * 7 % 900} MB: HTTP {code}\n"
        )
    main(["diagnose", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    folded = [ln for ln in lines if " jobs [" in ln]
    assert len(folded) == 2, folded
    assert sum("HTTP 404" in ln for ln in folded) == 1, folded
    assert sum("HTTP 503" in ln for ln in folded) == 1, folded
