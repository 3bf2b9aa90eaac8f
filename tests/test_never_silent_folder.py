"""Never silent, job by job: a folder of slurm-N.out files where one job's cause is known
and another's log holds only a program's error line. Alone, slurm-2.out was an unrecognised
failure; beside slurm-1.out's out-of-memory it was dropped, and `diagnose jobs/` named two
of five failed jobs (a new-user trial on the lab's own output files)."""

from __future__ import annotations

import json

from cockpit.cli import main

OOM = (
    "allocating memory\n"
    "/var/spool/slurmd/job00001/slurm_script: line 9: 17590 Killed  python3 train.py\n"
    "slurmstepd-c1: error: Detected 1 oom-kill event(s) in StepId=1.batch. Some of your "
    "processes may have been killed by the cgroup out-of-memory handler.\n"
)
APP = "starting analysis\nERROR: input file /data/missing.csv not found\n"
CLEAN = "step 1\nstep 2\ndone\n"


def test_each_job_log_with_an_error_line_is_a_finding(tmp_path, capsys):
    (tmp_path / "slurm-1.out").write_text(OOM)
    (tmp_path / "slurm-2.out").write_text(APP)
    (tmp_path / "slurm-3.out").write_text(CLEAN)
    assert main(["diagnose", str(tmp_path), "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert findings[0]["root_cause"] == "oom_killed"  # the known cause still leads
    cited = {e["file"] for f in findings for e in f["evidence"]}
    assert "slurm-2.out" in cited
    app = next(f for f in findings if any(e["file"] == "slurm-2.out" for e in f["evidence"]))
    assert app["root_cause"] == "unrecognised_failure"
    assert any("missing.csv not found" in e["text"] for e in app["evidence"])
    assert "slurm-3.out" not in cited  # a clean log says nothing
    # the same verdict as the file alone
    assert main(["diagnose", str(tmp_path / "slurm-2.out"), "--json"]) in (0, 1)
    (alone,) = json.loads(capsys.readouterr().out)["findings"]
    assert (alone["root_cause"], alone["title"]) == (app["root_cause"], app["title"])
