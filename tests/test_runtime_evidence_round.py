"""An evidence round reads slurmctld.log's tail once for all its jobs (not 8 MiB per job over
SSH) and searches the logs in threads, not on the event loop that draws the UI."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

from cockpit.model import SlurmJob, Snapshot, Subject
from cockpit.runtime.evidence import EvidenceCache
from cockpit.slurm import evidence as slurm_evidence
from cockpit.slurm.source import SlurmSource
from cockpit.transport import CommandResult, LocalTransport

T = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


class CountingTransport(LocalTransport):
    """Files from disk, counted per path; every command fails (sacct, scontrol)."""

    def __init__(self) -> None:
        super().__init__("lab")
        self.reads: Counter[str] = Counter()

    async def run(self, argv, timeout: float = 30.0) -> CommandResult:
        return CommandResult(tuple(argv), b"", b"slurm_load_jobs error", 1)

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        self.reads[path] += 1
        return await super().read_range(path, offset, length)


def _job(i: int) -> SlurmJob:
    return SlurmJob(
        job_id=str(100 + i),
        name=f"j{i}",
        user="ana",
        partition="cpu",
        state="FAILED",
        reason="NonZeroExitCode",
        nodes=(f"c{i % 2}",),
        node_list=f"c{i % 2}",
        end_time=T - timedelta(seconds=i),
        elapsed_s=2,
    )


async def test_one_evidence_round_reads_the_slurmctld_tail_once(tmp_path, monkeypatch):
    ctld = tmp_path / "slurmctld.log"
    ctld.write_text(
        "".join(f"[2026-11-29T19:59:5{i}] _job_complete: JobId={100 + i} done\n" for i in range(8))
    )
    for n in ("c0", "c1"):
        (tmp_path / f"slurmd-{n}.log").write_text(f"[x] [{100}.batch] error: on {n}\n")
    tr = CountingTransport()
    src = SlurmSource(
        "lab",
        tr,
        slurmctld_log=str(ctld),
        slurmd_log=str(tmp_path / "slurmd-%n.log"),
    )
    threads: list[str] = []
    real = slurm_evidence.grep_excerpt

    def spy(*args):
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(slurm_evidence, "grep_excerpt", spy)
    jobs = tuple(_job(i) for i in range(8))
    snap = Snapshot("lab", "slurm", T, jobs=jobs)
    got = await EvidenceCache(first_budget=8).refresh(src, snap)
    assert len(got) == 8
    assert tr.reads[str(ctld)] == 1  # one tail for the whole round
    lines = got[Subject("job", "lab", "103")].logs
    ctld_lines = next(x for x in lines if x.kind == "slurmctld")
    assert ctld_lines.data == b"[2026-11-29T19:59:53] _job_complete: JobId=103 done\n"
    assert threads and threading.main_thread().name not in threads  # never on the loop
