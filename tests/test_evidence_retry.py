"""A failed evidence fetch is not final: an SSH blip must not leave an ended job (whose
fingerprint never changes) with a symptom-only verdict for ever."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.diagnosis.verdict import verdicts
from cockpit.model import Artifacts, LogText, SlurmJob, Snapshot, Subject
from cockpit.runtime.evidence import EvidenceCache, diagnose_with_evidence
from cockpit.transport import ConnectError
from tests.ui_support import BareSource

T = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
CAUSE = b"/var/spool/slurmd/job/slurm_script: line 3: fastqc: command not found\n"


def _failed(i: int) -> SlurmJob:
    return SlurmJob(
        job_id=str(100 + i),
        name=f"j{i}",
        user="ana",
        partition="cpu",
        state="FAILED",
        reason="NonZeroExitCode",
        cpus=1,
        node_count=1,
        nodes=("c1",),
        node_list="c1",
        start_time=T - timedelta(seconds=10),
        end_time=T - timedelta(seconds=8),
        elapsed_s=2,
    )


class Blip(BareSource):
    """Evidence fails ``fail`` times (raised, or recorded as ``error:`` commands), then works."""

    name = "hpc"

    def __init__(self, fail: int = 1, raises: bool = False) -> None:
        self.fail, self.raises, self.calls = fail, raises, 0

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        self.calls += 1
        if self.fail:
            self.fail -= 1
            if self.raises:
                raise ConnectError("ssh hpc: connection lost")
            return Artifacts(commands={"error: sacct -j 100": "ssh hpc: connection lost"})
        log = LogText("slurm-100.out", "stdout", CAUSE, subject_id=subject.id)
        return Artifacts(logs=(log,))


def _verdict(cache: EvidenceCache, snap: Snapshot, evidence) -> str:
    found = diagnose_with_evidence(snap, evidence, T, cache.memo)
    v = verdicts(found).get(("job", "hpc", "100"))
    return f"{v.root_cause} {v.title}" if v is not None else ""


async def test_evidence_that_failed_once_names_the_cause_on_the_next_poll():
    snap = Snapshot("hpc", "slurm", T, jobs=(_failed(0),))
    for raises in (False, True):
        src, cache = Blip(raises=raises), EvidenceCache()
        first = await cache.refresh(src, snap)
        assert "connection lost" in " ".join(cache.errors)
        assert any("connection lost" in w for w in cache.warnings())
        assert "command not found" not in _verdict(cache, snap, first)
        assert cache.missing(snap) == [Subject("job", "hpc", "100")]  # due again
        second = await cache.refresh(src, snap)
        assert src.calls == 2
        assert "command not found" in _verdict(cache, snap, second).lower()
        assert cache.warnings() == [] and cache.errors == []
        assert cache.missing(snap) == []  # good evidence: fetched once, kept


async def test_retries_back_off_and_keep_the_last_good_artifacts():
    snap = Snapshot("hpc", "slurm", T, jobs=(_failed(0),))
    src, cache = Blip(fail=100), EvidenceCache()
    fetched = []
    for _poll in range(20):
        todo = cache.missing(snap)
        fetched.append(bool(todo))
        await cache.refresh(src, snap, todo)
    # polls 1, 2, then after 2, 4, 8, 16 polls: never more often, never given up
    assert [i for i, f in enumerate(fetched) if f] == [0, 1, 3, 7, 15]
    src.fail = 0
    cache = EvidenceCache()
    await cache.refresh(src, snap)
    src.fail = 1  # a drill-down's failed re-fetch must not replace the good evidence
    bad = Artifacts(commands={"error: sacct -j 100": "timeout"})
    cache.remember(snap, Subject("job", "hpc", "100"), bad)
    held = cache.lookup(snap, Subject("job", "hpc", "100"))
    assert held is not None and held.logs and held.logs[0].data == CAUSE


async def test_a_missing_or_refused_log_is_an_answer_not_retried():
    snap = Snapshot("hpc", "slurm", T, jobs=(_failed(0),))

    class Answers(Blip):
        async def artifacts(self, subject, snapshot):
            self.calls += 1
            return Artifacts(
                commands={
                    "error: stdout": "not read: /root/x is not readable by ana",
                    "error: stderr": "/home/ana/e.log: No such file or directory",
                }
            )

    src, cache = Answers(), EvidenceCache()
    for _poll in range(5):
        await cache.refresh(src, snap, cache.missing(snap))
    assert src.calls == 1 and cache.warnings() == []
