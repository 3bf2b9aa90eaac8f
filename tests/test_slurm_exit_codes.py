"""The same real failure gets the same verdict on Slurm 22.05, 24.11 and 26.05.

Before 25.11 sacct printed an exit status of 128 or more less 128 (src/sacct/print.c: a batch
script that ran ``exit 137`` shows ``9:0``, exactly like one that ran ``exit 9``); 25.11 dropped
the subtraction so sacct agrees with ``scontrol show job`` (``137:0``). A job killed by SIGKILL
itself reads ``0:9`` everywhere. The fixtures were captured from the labs
(``lab/slurm-up.sh``, ``SLURMV_ACCOUNTING=1 lab/version-up.sh 24|26``): three jobs each,
``exit 137``, ``kill -9 $$`` and ``exit 9``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.diagnosis.engine import diagnose
from cockpit.model import ExitCode, SlurmJob, Snapshot, Subject
from cockpit.slurm.backfill import parse_backfill
from cockpit.slurm.commands import scontrol_job_argv
from cockpit.slurm.parse import parse_sacct, unfold_exits
from cockpit.slurm.source import SlurmSource
from cockpit.slurm.versions import parse_version_output, sacct_folds_exit
from cockpit.transport import CommandResult, FileStat

BASE = Path(__file__).parent / "fixtures" / "slurm-versions"
SERIES = ("22.05", "24.11", "26.05")
NOW = datetime(2026, 12, 2, 0, 20, tzinfo=UTC)


def fx(series: str, name: str) -> str:
    return (BASE / series / name).read_text()


def version(series: str) -> str:
    return parse_version_output(fx(series, "scontrol_version.txt"))


def ids(series: str) -> dict[str, str]:
    return json.loads(fx(series, "exit_jobs.json"))


def job_rows(series: str, ver: str | None = None) -> dict[str, object]:
    rows = parse_sacct(
        fx(series, "sacct_exit_codes.txt"), UTC, version(series) if ver is None else ver
    )
    return {r.job_id: r for r in rows[0] if not r.step}


def test_releases_that_fold():
    assert [sacct_folds_exit(v) for v in ("22.05.8", "24.11.5", "25.05.3")] == [True] * 3
    assert [sacct_folds_exit(v) for v in ("25.11.0", "26.05.5", "")] == [False] * 3
    assert [version(s) for s in SERIES] == ["22.05.8", "24.11.5", "26.05.5"]


@pytest.mark.parametrize("series", SERIES)
def test_what_sacct_prints_for_exit_137(series):
    """The change itself, as each real sacct printed it."""
    job = job_rows(series)
    ec = job[ids(series)["exit137"]].exit_code
    if series < "25.11":
        assert (ec.code, ec.signal, ec.folded) == (9, 0, True)  # indistinguishable from exit 9
        assert job[ids(series)["exit9"]].exit_code == ec
    else:
        assert ec == ExitCode(137, 0)
    # killed by the signal itself: the same on every release, and never folded
    assert job[ids(series)["signal9"]].exit_code == ExitCode(0, 9)


@pytest.mark.parametrize("series", SERIES)
def test_scontrol_settles_a_folded_code(series):
    rows = parse_sacct(fx(series, "sacct_exit_codes.txt"), UTC, version(series))[0]
    want = {"exit137": ExitCode(137, 0), "signal9": ExitCode(0, 9)}
    for name, jid in ids(series).items():
        line = next(ln for ln in fx(series, "scontrol_job_exit_codes.txt").splitlines()
                    if ln.startswith(f"JobId={jid} "))  # fmt: skip
        exact = parse_exit_code_of(line)
        mine = [r for r in unfold_exits(rows, exact) if r.job_id == jid and r.step in ("", "batch")]
        if name in want:
            assert {r.exit_code for r in mine} == {want[name]}, (series, name)
        else:  # exit 9: scontrol's 9:0 says it is really 9
            assert {r.exit_code for r in mine} == {ExitCode(9, 0)}


def parse_exit_code_of(line: str) -> ExitCode:
    from cockpit.slurm.parse import parse_scontrol_job

    return parse_scontrol_job(line)[0][0].exit_code


class Lab:
    """Answers as one version's lab did: scontrol --version, sacct -j, scontrol show job."""

    name = "fake"

    def __init__(self, series: str) -> None:
        self.series = series
        self.calls: list[tuple[str, ...]] = []

    async def run(self, argv, timeout=30.0):
        argv = tuple(argv)
        self.calls.append(argv)
        s = self.series
        if argv == ("scontrol", "--version"):
            out = fx(s, "scontrol_version.txt")
        elif argv[0] == "sacct" and "-j" in argv:
            want = set(argv[argv.index("-j") + 1].split(","))
            out = "".join(
                ln + "\n"
                for ln in fx(s, "sacct_exit_codes.txt").splitlines()
                if ln.split("\x1f", 1)[0].split(".")[0] in want
            )
        elif argv[:3] == ("scontrol", "show", "job"):
            out = "".join(
                ln + "\n"
                for ln in fx(s, "scontrol_job_exit_codes.txt").splitlines()
                if ln.startswith(f"JobId={argv[-1]} ")
            )
        else:
            out = ""
        return CommandResult(argv, out.encode(), b"", 0)

    async def read_range(self, path, offset, length):
        return b""

    async def stat(self, path):
        return FileStat(0, 0.0)

    async def close(self):
        pass


async def _verdicts(series: str, forget_scontrol: bool = False) -> dict[str, str]:
    lab = Lab(series)
    src = SlurmSource(series, lab, clock=lambda: NOW)
    await src.poll()  # asks the release once
    assert src.version == version(series)
    out = {}
    for name, jid in ids(series).items():
        job = SlurmJob(jid, f"cap-{name}", "root", "batch", "FAILED", "NonZeroExitCode")
        snap = Snapshot(series, "slurm", NOW, jobs=(job,))
        if forget_scontrol:  # past MinJobAge: only sacct knows the job
            lab.series = series
            orig = lab.run

            async def run(argv, timeout=30.0, orig=orig, jid=jid):
                if tuple(argv) == scontrol_job_argv(jid):
                    return CommandResult(
                        tuple(argv), b"", b"slurm_load_jobs error: Invalid job id specified\n", 1
                    )
                return await orig(argv, timeout)

            lab.run = run  # type: ignore[method-assign]
        arts = await src.artifacts(Subject("job", series, jid), snap)
        top = diagnose(snap, arts, NOW)[0]
        out[name] = top.title
    return out


async def test_the_same_failure_gets_the_same_verdict_on_every_release():
    got = {s: await _verdicts(s) for s in SERIES}
    assert got["22.05"] == got["24.11"] == got["26.05"], got
    assert "137" in got["26.05"]["exit137"] and "SIGKILL" in got["26.05"]["exit137"]
    assert "SIGKILL" in got["26.05"]["signal9"]
    assert "137" not in got["26.05"]["exit9"]


async def test_without_scontrol_an_old_sacct_says_both_readings():
    """Past MinJobAge only sacct is left: a pre-25.11 9:0 is said as 'exit 9 or 137'."""
    old = await _verdicts("22.05", forget_scontrol=True)
    new = await _verdicts("26.05", forget_scontrol=True)
    assert "exit 9 or 137 (SIGKILL)" in old["exit137"], old
    assert "exit 137 (SIGKILL)" in new["exit137"] and "or" not in new["exit137"].split("(")[0]
    assert "SIGKILL (signal 9)" in old["signal9"] and "SIGKILL (signal 9)" in new["signal9"]


def test_backfill_marks_folded_codes_by_release():
    fields = "JobID JobIDRaw JobName Partition User UID GID State ExitCode ReqMem Elapsed".split()
    row = ["7", "7", "x", "batch", "root", "0", "0", "FAILED", "9:0", "100M", "00:00:01"]
    rest = ["00:30:00", "c4", "None", "2026-12-02T00:11:44", "2026-12-02T00:11:44",
            "2026-12-02T00:11:45", "/tmp", "1"]  # fmt: skip
    assert len(fields) + len(rest) == 19
    text = "\x1f".join(row + rest) + "\n"
    old = parse_backfill(text, UTC, "22.05.8")[0][0][0].exit_code
    new = parse_backfill(text, UTC, "26.05.5")[0][0][0].exit_code
    assert old.folded and not new.folded and (old.code, new.code) == (9, 9)
