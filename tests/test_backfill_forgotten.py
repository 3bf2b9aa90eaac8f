"""Evidence after MinJobAge: when ``scontrol show job`` answers ``Invalid job id specified``,
the drill-down, ``cockpit diagnose`` and ``cockpit collect`` still find the job's output file
from what sacct keeps (WorkDir, SubmitLine, the batch script where stored), read it under the
same job-path check, and fall back on the evidence the store captured at first sight.

sacct answers are real 22.05 output captured on the lab (tests/fixtures/backfill), placed in a
temporary directory; the output files are real files read through a LocalTransport."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.model import Artifacts, LogText, Snapshot, Subject
from cockpit.slurm.source import SlurmSource
from cockpit.transport import CommandResult, LocalTransport

FIX = Path(__file__).parent / "fixtures" / "backfill"
T = datetime(2026, 12, 1, 21, 30, tzinfo=UTC)
FORGOTTEN = b"slurm_load_jobs error: Invalid job id specified\n"
# sacct -j 2 -o <SACCT_FIELDS> as the lab printed it for this job
ACCT = (
    "2\x1fbwa-run\x1fdebug\x1fcockpitlab1\x1fFAILED\x1f127:0\x1f100M\x1f\x1f00:00:00\x1f"
    "00:01:00\x1fc1\x1fNone\x1f2026-12-01T21:09:30\x1f2026-12-01T21:09:30\n"
    "2.batch\x1fbatch\x1f\x1f\x1fFAILED\x1f127:0\x1f\x1f0\x1f00:00:00\x1f\x1fc1\x1f\x1f"
    "2026-12-01T21:09:30\x1f2026-12-01T21:09:30\n"
)
LOG = b"aligning\n/var/spool/slurmd/job00002/slurm_script: line 2: bwa-mem2: command not found\n"


class Cluster(LocalTransport):
    """slurmctld has forgotten job 2; slurmdbd answers as the lab's did, with the job's WorkDir
    moved to ``work``. Files come from disk."""

    def __init__(
        self, work: Path, script: str | None = None, forgot: bool = True, series: str = "22.05"
    ) -> None:
        super().__init__("lab")
        self.work, self.script, self.forgot, self.series = work, script, forgot, series
        self.argvs: list[tuple[str, ...]] = []

    async def run(self, argv, timeout: float = 30.0) -> CommandResult:
        argv = tuple(argv)
        self.argvs.append(argv)
        out, err, rc = b"", b"", 0
        if argv[:3] == ("scontrol", "show", "job"):
            if self.forgot:
                err, rc = FORGOTTEN, 1
            else:
                out = (
                    "JobId=2 JobName=bwa-run UserId=cockpitlab1(1001) GroupId=cockpitlab1(1001) "
                    "JobState=FAILED Reason=NonZeroExitCode ExitCode=127:0 NodeList=c1 "
                    f"WorkDir={self.work} StdOut={self.work}/slurm-2.out "
                    f"StdErr={self.work}/slurm-2.out\n"
                ).encode()
        elif argv[:2] == ("sacct", "--helpformat"):
            out = (FIX / f"sacct_helpformat_{self.series}.txt").read_bytes()
        elif argv[:2] == ("sacct", "-B"):
            if self.script is None:
                out = (FIX / "sacct_B_not_stored.txt").read_bytes()
            else:
                out = f"Batch Script for 2\n{'-' * 80}\n{self.script}\n\n".encode()
        elif argv[:2] == ("sacct", "-X") and "StdOut" in argv[-1]:
            # 24.05+: the job's own StdOut/StdErr patterns (the row is made here: the 26.05 lab
            # runs without slurmdbd); fields in the order asked
            row = {
                "JobID": "2", "JobIDRaw": "2", "JobName": "bwa-run", "User": "cockpitlab1",
                "UID": "1001", "GID": "1001", "NodeList": "c1", "WorkDir": str(self.work),
                "StdOut": "out/%x-%j.log", "StdErr": "out/%x-%j.err",
                "SubmitLine": "sbatch -o out/%x-%j.log -e out/%x-%j.err run.sh",
            }  # fmt: skip
            out = ("\x1f".join(row[f] for f in argv[-1].split(",")) + "\n").encode()
        elif argv[:2] == ("sacct", "-X"):
            out = (
                (FIX / "sacct_detail_2.txt")
                .read_bytes()
                .replace(b"\x1f/tmp\x1f", b"\x1f%s\x1f" % str(self.work).encode())
            )
        elif argv[0] == "sacct":
            out = ACCT.encode()
        return CommandResult(argv, out, err, rc)


@pytest.fixture
def work():
    """A world-searchable directory (the job's WorkDir); tmp_path's parents are root's 0700."""
    base = Path(tempfile.mkdtemp(prefix="cockpit-forgot-", dir="/tmp"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base)


def _source(tr: Cluster, work: Path) -> SlurmSource:
    (work / "ctld.log").write_text("")
    return SlurmSource(
        "lab", tr, slurmctld_log=str(work / "ctld.log"), slurmd_log=str(work / "slurmd-%n.log")
    )


def _artifacts(tr: Cluster, work: Path, store=None) -> tuple[Artifacts, SlurmSource]:
    async def main():
        src = _source(tr, work)
        if store is not None:
            src.use_store(store)
        snap = Snapshot("lab", "slurm", T)
        arts = await src.artifacts(Subject("job", "lab", "2"), snap)
        await src.close()
        return arts, src

    return asyncio.run(main())


def _verdict(arts: Artifacts):
    from cockpit.commands.diagnose import with_job
    from cockpit.diagnosis.engine import diagnose

    snap = with_job(Snapshot("lab", "slurm", T), "2", arts)
    findings = [f for f in diagnose(snap, arts, now=T) if f.subject.id == "2"]
    return findings[0]


def test_past_minjobage_the_output_file_is_found_from_sacct_and_names_the_program(work):
    (work / "slurm-2.out").write_bytes(LOG)
    arts, src = _artifacts(Cluster(work), work)
    stdout = [x for x in arts.logs if x.kind == "stdout"]
    assert [x.path for x in stdout] == [f"{work}/slurm-2.out"]
    assert b"bwa-mem2: command not found" in stdout[0].data
    # the controller forgetting the job is an answer, not a failure to retry
    assert "error: scontrol show job 2" not in arts.commands
    assert "past MinJobAge" in arts.commands["note: scontrol show job 2"]
    assert "not stored by this site" in arts.commands["note: sacct -B -j 2"]
    top = _verdict(arts)
    assert top.root_cause == "command_not_found"
    assert "bwa-mem2" in top.title
    # the log viewer opens the same file later (the controller will not tell it)
    locs = dict(src.log_locations(Subject("job", "lab", "2"), Snapshot("lab", "slurm", T)))
    assert locs["stdout"].path == f"{work}/slurm-2.out"


def test_slurm_24_05_and_later_give_stdout_and_stderr_themselves(work):
    (work / "out").mkdir()
    (work / "out" / "bwa-run-2.log").write_bytes(b"aligning\n")
    (work / "out" / "bwa-run-2.err").write_bytes(LOG.split(b"\n", 1)[1])
    tr = Cluster(work, series="26.05")
    arts, _ = _artifacts(tr, work)
    (detail,) = [a for a in tr.argvs if a[:2] == ("sacct", "-X")]
    assert "StdOut" in detail[-1] and "StdErr" in detail[-1]  # asked: --helpformat lists them
    paths = {x.kind: x.path for x in arts.logs}
    assert paths["stdout"] == f"{work}/out/bwa-run-2.log"
    assert paths["stderr"] == f"{work}/out/bwa-run-2.err"
    assert "bwa-mem2" in _verdict(arts).title


def test_while_the_controller_still_answers_sacct_is_not_asked_for_more(work):
    (work / "slurm-2.out").write_bytes(LOG)
    tr = Cluster(work, forgot=False)
    arts, _ = _artifacts(tr, work)
    assert [x.kind for x in arts.logs if x.kind == "stdout"] == ["stdout"]
    assert not [a for a in tr.argvs if a[:2] in (("sacct", "-X"), ("sacct", "-B"))]


def test_the_scripts_sbatch_output_line_is_followed(work):
    (work / "logs").mkdir()
    (work / "logs" / "bwa-run.2.log").write_bytes(LOG)
    script = "#!/bin/bash\n#SBATCH -o logs/%x.%j.log\nbwa-mem2 mem ref.fa r1.fq\n"
    arts, _ = _artifacts(Cluster(work, script=script), work)
    assert [x.path for x in arts.logs if x.kind == "stdout"] == [f"{work}/logs/bwa-run.2.log"]
    assert arts.commands["sacct -B -j 2"].startswith("#!/bin/bash\n#SBATCH -o logs/%x.%j.log")


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_the_job_path_check_still_applies_with_the_owner_from_sacct(work):
    secret = work / "slurm-2.out"
    secret.write_bytes(b"db password=hunter2\n")
    os.chown(secret, 0, 0)
    secret.chmod(0o600)  # root's: job 2 runs as cockpitlab1 (UID 1001, from sacct)
    arts, _ = _artifacts(Cluster(work), work)
    assert not [x for x in arts.logs if x.kind == "stdout"]
    assert arts.commands["error: stdout"].startswith(
        f"not read: {secret} is not readable by cockpitlab1"
    )


def test_the_store_fills_in_what_no_live_source_has_any_more(work, tmp_path):
    sql = pytest.importorskip("cockpit.store.sql", reason="the store (H1) is not there yet")
    from cockpit.store import open_store

    store = open_store(f"sqlite:///{tmp_path / 'cockpit.db'}")
    assert isinstance(store, sql.Store)
    subject = Subject("job", "lab", "2")
    captured = Artifacts(
        logs=(
            LogText(
                name="slurm-2.out",
                kind="stdout",
                data=LOG,
                path=f"{work}/slurm-2.out",
                subject_id="2",
            ),
        ),
        commands={"scontrol show job 2": "JobId=2 JobName=bwa-run UserId=cockpitlab1(1001)"},
    )
    store.save_evidence("lab", subject, captured, T)
    # the user cleaned up: the output file is gone, the controller forgot the job
    arts, _ = _artifacts(Cluster(work), work, store=store)
    store.close()
    stdout = [x for x in arts.logs if x.kind == "stdout"]
    assert stdout and b"bwa-mem2: command not found" in stdout[0].data
    assert arts.commands["scontrol show job 2"].startswith("JobId=2")
    assert "note: stored evidence" in arts.commands
    assert "bwa-mem2" in _verdict(arts).title


def test_collect_bundles_the_output_file_of_a_forgotten_job(work, tmp_path):
    from cockpit.commands.collect import write_bundle
    from cockpit.commands.diagnose import with_job

    (work / "slurm-2.out").write_bytes(LOG)
    arts, _ = _artifacts(Cluster(work), work)
    snap = with_job(Snapshot("lab", "slurm", T), "2", arts)
    out = tmp_path / "bundle"
    written = write_bundle(str(out), "2", snap, arts)
    assert "slurm-2.out" in written
    assert b"bwa-mem2: command not found" in (out / "slurm-2.out").read_bytes()
    record = (out / "sacct-job-record.txt").read_text()
    assert f"WorkDir: {work}" in record and "SubmitLine: sbatch" in record
    assert "past MinJobAge" in (out / "collect-notes.txt").read_text()
    assert "FAILED" in (out / "sacct.txt").read_text()


def test_the_demo_diagnoses_its_failures_hours_after_squeue_dropped_them():
    from datetime import timedelta

    from cockpit.demo.site import DEMO_START, SLURMCTLD_LOG, SLURMD_LOG, DemoSite, DemoTransport
    from cockpit.runtime.evidence import subject_findings

    async def main():
        clock = [DEMO_START + timedelta(hours=7)]  # the demo's MinJobAge is 6 h
        site = DemoSite(seed=7, clock=lambda: clock[0])
        src = SlurmSource(
            "demo-hpc", DemoTransport(site), clock=lambda: clock[0],
            slurmctld_log=SLURMCTLD_LOG, slurmd_log=SLURMD_LOG,
        )  # fmt: skip
        snap = await src.poll()
        subject = Subject("job", "demo-hpc", "48104")  # qc-fastqc: exit 127
        assert "48104" in {j.job_id for j in snap.jobs}
        arts = await src.artifacts(subject, snap)
        await src.close()
        assert "note: scontrol show job 48104" in arts.commands
        return [
            f for f in subject_findings(snap, arts, subject, snap.taken_at) if f.subject == subject
        ]

    top = asyncio.run(main())[0]
    assert top.root_cause == "command_not_found" and "fastqc" in top.title
