"""Where a job slurmctld forgot wrote its output: from sacct's WorkDir and SubmitLine (and the
batch script's ``#SBATCH`` lines where the site keeps it), as slurmstepd names the file.

The SubmitLine inputs are real 22.05 output (tests/fixtures/backfill, captured on the lab):
sacct prints the submit argv joined with spaces, no quoting, newlines of a ``--wrap`` as they
are."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cockpit.slurm.acct_paths import (
    JobNames,
    expand,
    output_candidates,
    script_outputs,
    submit_line_outputs,
)
from cockpit.slurm.backfill import split_rows
from cockpit.slurm.commands import DETAIL_FIELDS

FIX = Path(__file__).parent / "fixtures" / "backfill"
FIELDS = [*DETAIL_FIELDS, "WorkDir", "SubmitLine"]  # what the captures asked for


def _record(name: str) -> dict[str, str]:
    rows, warnings = split_rows((FIX / name).read_bytes().decode("utf-8", "replace"), len(FIELDS))
    assert not warnings and len(rows) == 1
    return dict(zip(FIELDS, rows[0], strict=True))


def _names(r: dict[str, str]) -> JobNames:
    return JobNames(r["JobID"], r["JobIDRaw"], r["User"], r["JobName"], r["NodeList"], r["WorkDir"])


def test_a_wrap_job_with_no_output_option_writes_slurm_jobid_out_in_its_workdir():
    r = _record("sacct_detail_2.txt")  # sbatch -D /tmp -J bwa-run --wrap ...
    out, err = output_candidates(_names(r), submit_line=r["SubmitLine"])
    assert out == ("/tmp/slurm-2.out",)
    assert err == out  # no --error: stderr goes to the same file


def test_an_array_task_expands_A_and_a_and_its_own_job_id():
    r = _record("sacct_detail_3_1.txt")  # -a 1-2 -o arr-%A_%a.log ; task 3_1 is job 5
    out, _ = output_candidates(_names(r), submit_line=r["SubmitLine"])
    assert out[0] == "/tmp/slurmlab/jobs/arr-3_1.log"
    job = _names(r)
    assert expand("%j-%A-%a-%J.out", job) == "/tmp/slurmlab/jobs/5-3-1-5.batch.out"


def test_a_wrap_holding_a_newline_keeps_its_row_together():
    r = _record("sacct_detail_4.txt")
    assert r["SubmitLine"].endswith("--wrap echo one\nno_such_prog_h3 two")
    out, _ = output_candidates(_names(r), submit_line=r["SubmitLine"])
    assert out == ("/tmp/slurmlab/jobs/slurm-4.out",)


JOB = JobNames("42", "42", "ana", "train", "c3", "/home/ana/run")


@pytest.mark.parametrize(
    "line, stdout, stderr",
    [
        ("sbatch -o x.out job.sh", "/home/ana/run/x.out", "/home/ana/run/x.out"),
        ("sbatch --output=/abs/%j.o job.sh", "/abs/42.o", "/abs/42.o"),
        ("sbatch --output /abs/%x.o job.sh", "/abs/train.o", "/abs/train.o"),
        ("sbatch -o/abs/%u-%N.o job.sh", "/abs/ana-c3.o", "/abs/ana-c3.o"),
        ("sbatch -e err.%j job.sh", "/home/ana/run/slurm-42.out", "/home/ana/run/err.42"),
        ("sbatch --error=e.log -o o.log job.sh", "/home/ana/run/o.log", "/home/ana/run/e.log"),
        ("sbatch -p gpu -t 5 -o logs/%4j.txt job.sh", "/home/ana/run/logs/0042.txt", None),
        ("sbatch -o 100%%.log job.sh", "/home/ana/run/100%.log", None),
        ("sbatch -o a\\%j.log job.sh", "/home/ana/run/a%j.log", None),  # backslash: literal
        ("/usr/bin/sbatch --parsable --hold -o x.out job.sh", "/home/ana/run/x.out", None),
    ],
)
def test_output_options_in_every_spelling(line, stdout, stderr):
    out, err = output_candidates(JOB, submit_line=line)
    assert out[0] == stdout
    assert err[0] == (stderr or stdout)


def test_options_after_the_script_are_its_arguments_and_come_after_the_script_directives():
    script = "#!/bin/bash\n#SBATCH -o from-script.log\npython run.py\n"
    out, _ = output_candidates(JOB, submit_line="sbatch job.sh -o not-sbatch.log", script=script)
    assert out[0] == "/home/ana/run/from-script.log"
    assert "/home/ana/run/not-sbatch.log" in out  # a guess, tried later


def test_the_command_line_overrides_the_script():
    script = "#!/bin/bash\n#SBATCH --output=script.log\n"
    out, _ = output_candidates(JOB, submit_line="sbatch -o cli.log job.sh", script=script)
    assert out[0] == "/home/ana/run/cli.log"


def test_sbatch_directives_stop_at_the_first_command_and_honour_quotes():
    script = (
        "#!/bin/bash\n"
        "# a comment\n"
        "\n"
        '#SBATCH --error="my logs/%x.err"  # where errors go\n'
        "#SBATCHX -o ignored.log\n"
        "#SBATCH -o first.log\n"
        "#SBATCH -o last.log\n"
        "echo start\n"
        "#SBATCH -o after-command.log\n"
    )
    spec = script_outputs(script)
    assert spec.stdout == ("last.log",)
    assert spec.stderr == ("my logs/%x.err",)
    assert script_outputs("#SBATCH -o 'unbalanced\n").stdout == ("'unbalanced",)


def test_a_value_with_a_space_is_tried_as_one_path_and_as_its_first_word():
    out, _ = output_candidates(
        JobNames("7", "7", "u", "h3 probe", "c1", "/w"),
        submit_line="sbatch -J h3 probe -o out dir/%x-%j.log --wrap echo hi",
    )
    # the job name with its space is skipped as -J's value (sacct's JobName says it is one)
    assert out[:2] == ("/w/out", "/w/out dir/h3 probe-7.log")
    assert out[-1] == "/w/slurm-7.out"


def test_an_output_option_inside_a_wrapped_command_is_only_a_late_guess():
    main, late = submit_line_outputs("sbatch -p debug --wrap grep -o pattern file")
    assert main.stdout == ()
    assert late.stdout[0] == "pattern"
    out, _ = output_candidates(JOB, submit_line="sbatch -p debug --wrap grep -o pattern file")
    assert out[0] == "/home/ana/run/pattern"  # tried first, kept only if it exists (see below)
    assert out[-1] == "/home/ana/run/slurm-42.out"


@pytest.mark.parametrize(
    "line",
    [
        "",
        "sbatch",
        "sbatch -o",
        "sbatch --output=",
        "sbatch -J 'it''s' -o \"x y.out\" --wrap echo \"unbalanced",
        "sbatch -o %",
        "sbatch -o %Z%9999999999j",  # a width slurmstepd caps at 10
        "sbatch -o \ufffd\ufffd/%j.out job.sh",  # non-UTF-8 bytes, as decoded with replacement
        "sbatch " + "-o x " * 5000,
        "sbatch -o ../../etc/%j job.sh",
    ],
    ids=lambda v: repr(v[:40]),
)
def test_hostile_submit_lines_give_paths_not_exceptions(line):
    out, err = output_candidates(JOB, submit_line=line)
    assert out and err
    assert all(p.startswith("/") for p in (*out, *err))


def test_non_utf8_submit_line_from_sacct_bytes():
    raw = (
        b"42\x1f42\x1ftrain\x1fana\x1f1000\x1f1000\x1fc3\x1f/home/ana/run\x1f"
        b"sbatch -o r\xe9sultat.out job.sh\n"
    )
    rows, _ = split_rows(raw.decode("utf-8", "replace"), len(FIELDS))
    r = dict(zip(FIELDS, rows[0], strict=True))
    out, _ = output_candidates(_names(r), submit_line=r["SubmitLine"])
    assert out[0] == "/home/ana/run/r\ufffdsultat.out"


def test_the_first_candidate_that_exists_is_read(tmp_path):
    from cockpit.slurm.forgotten import _pick
    from cockpit.transport import LocalTransport

    class Src:
        transport = LocalTransport("t")

    (tmp_path / "out dir").mkdir()
    real = tmp_path / "out dir" / "h3 probe-7.log"
    real.write_text("hi\n")
    job = JobNames("7", "7", "u", "h3 probe", "c1", str(tmp_path))
    out, _ = output_candidates(job, submit_line="sbatch -J h3 probe -o out dir/%x-%j.log")
    assert asyncio.run(_pick(Src(), out)) == str(real)
    # none exists: the most likely one, so the read says which file is missing
    missing = output_candidates(job, submit_line="sbatch -o gone dir/x.log")[0]
    assert asyncio.run(_pick(Src(), missing)) == missing[0]


def test_a_huge_pad_width_is_capped_as_slurmstepd_does():
    assert expand("%9999999999j.out", JOB) == "/home/ana/run/0000000042.out"
