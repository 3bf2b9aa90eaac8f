"""Breaker: slurmctld.log's path is learnt from 'scontrol show config' with the first evidence
(resolve_log_paths). A path a job chose is checked against the job's user; slurmctld.log is
the operator's own read. A user whose job names the site's slurmctld.log as its StdOut, seen
before the path was learnt, must not take slurmctld.log away from every job's evidence."""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.model import SlurmJob, Snapshot, Subject
from cockpit.slurm.source import SlurmSource
from cockpit.transport import CommandResult, LocalTransport

T = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
UID, GID = 4242, 4343

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")


class Cluster(LocalTransport):
    """Files from disk; job 77 (user1) names ``ctld`` as its StdOut; slurm.conf names it too."""

    def __init__(self, ctld: str) -> None:
        super().__init__("lab")
        self.ctld = ctld

    async def run(self, argv, timeout: float = 30.0) -> CommandResult:
        argv = tuple(argv)
        if argv[:3] == ("scontrol", "show", "config"):
            text = f"SlurmctldLogFile        = {self.ctld}\nSlurmdLogFile = (null)\n"
            return CommandResult(argv, text.encode(), b"", 0)
        if argv[:3] == ("scontrol", "show", "job"):
            text = (
                f"JobId=77 JobName=x UserId=user1({UID}) GroupId=grp({GID}) "
                "JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 NodeList=c1 WorkDir=/tmp "
                f"StdErr={self.ctld} StdIn=/dev/null StdOut={self.ctld}\n"
            )
            return CommandResult(argv, text.encode(), b"", 0)
        return CommandResult(argv, b"", b"sacct: error", 1)


@needs_root
async def test_a_job_naming_slurmctld_log_as_its_output_does_not_hide_it():
    base = Path(tempfile.mkdtemp(prefix="cockpit-ctld-", dir="/tmp"))
    try:
        base.chmod(0o755)
        ctld = base / "slurmctld.log"  # the site's, not the packaged default's path
        ctld.write_bytes(b"[2026-11-29T20:00:00] _job_complete: JobId=77 WEXITSTATUS 1\n")
        ctld.chmod(0o600)  # root's (SlurmUser's): user1 cannot read it
        src = SlurmSource("lab", Cluster(str(ctld)))
        job = SlurmJob(
            "77", "x", "user1", "cpu", "FAILED", "NonZeroExitCode", nodes=("c1",),
            node_list="c1", end_time=T, stdout_path=str(ctld), stderr_path=str(ctld),
        )  # fmt: skip
        snap = Snapshot("lab", "slurm", T, jobs=(job,))
        # the operator opens job 77's logs in the viewer before any evidence was fetched
        src.log_locations(Subject("job", "lab", "77"), snap)
        await src.resolve_log_paths()  # the first evidence learns the site's path
        assert src.slurmctld_log == str(ctld)
        data = await src.read_range(src.slurmctld_log, 0, 4096)
        assert b"JobId=77" in data
    finally:
        shutil.rmtree(base)
