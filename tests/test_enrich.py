"""Evidence fetching: bounded per poll, once per subject state; causes replace symptoms."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from cockpit.model import Artifacts, LogText, SlurmJob, Snapshot, Subject
from cockpit.runtime.evidence import EvidenceCache, diagnose_with_evidence, evidence_subjects
from tests.ui_support import BareSource

T = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


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
        end_time=T - timedelta(seconds=8 - i % 5),
        elapsed_s=2,
    )


class CountingSource(BareSource):
    name = "hpc"

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        self.calls.append(subject.id)
        out = b"/var/spool/slurmd/job/slurm_script: line 3: fastqc: command not found\n"
        return Artifacts(
            logs=(LogText(f"slurm-{subject.id}.out", "stdout", out, subject_id=subject.id),)
        )


async def test_each_failed_job_is_fetched_once_and_within_the_budget():
    snap = Snapshot("hpc", "slurm", T, jobs=tuple(_failed(i) for i in range(10)))
    src = CountingSource()
    cache = EvidenceCache(budget=3, first_budget=5)
    await cache.refresh(src, snap)
    assert len(src.calls) == 5  # first round
    await cache.refresh(src, snap)
    assert len(src.calls) == 8  # then the per-poll budget
    await cache.refresh(src, snap)
    await cache.refresh(src, snap)
    assert sorted(src.calls) == sorted(j.job_id for j in snap.jobs)  # each once, none twice
    await cache.refresh(src, snap)
    assert len(src.calls) == 10  # nothing new: no controller calls


async def test_a_changed_job_is_fetched_again_and_a_gone_one_forgotten():
    job = _failed(0)
    snap = Snapshot("hpc", "slurm", T, jobs=(job,))
    src = CountingSource()
    cache = EvidenceCache()
    await cache.refresh(src, snap)
    requeued = dataclasses.replace(job, end_time=T + timedelta(minutes=5))
    await cache.refresh(src, dataclasses.replace(snap, jobs=(requeued,)))
    assert src.calls == ["100", "100"]
    assert cache.cached(Snapshot("hpc", "slurm", T)) == {}


async def test_evidence_turns_a_symptom_into_the_cause():
    snap = Snapshot("hpc", "slurm", T, jobs=(_failed(0),))
    plain = diagnose_with_evidence(snap, {}, T)
    assert {f.root_cause for f in plain if f.subject.id == "100"} != {"command_not_found"}
    cache = EvidenceCache()
    evidence = await cache.refresh(CountingSource(), snap)
    causes = [
        f.root_cause for f in diagnose_with_evidence(snap, evidence, T) if f.subject.id == "100"
    ]
    assert causes[0] == "command_not_found"


def test_cancelled_and_running_jobs_need_no_evidence():
    cancelled = dataclasses.replace(_failed(1), job_id="7", state="CANCELLED")
    running = dataclasses.replace(_failed(2), job_id="8", state="RUNNING", end_time=None)
    snap = Snapshot("hpc", "slurm", T, jobs=(cancelled, running, _failed(3)))
    assert [s.id for s in evidence_subjects(snap)] == ["103"]


async def test_an_ended_jobs_verdict_is_remembered_not_rescanned(monkeypatch):
    import cockpit.diagnosis.engine as engine

    snap = Snapshot("hpc", "slurm", T, jobs=(_failed(0),))
    cache = EvidenceCache()
    evidence = await cache.refresh(CountingSource(), snap)
    first = diagnose_with_evidence(snap, evidence, T, cache.memo)
    calls = []
    real = engine.diagnose
    monkeypatch.setattr(
        engine, "diagnose", lambda s, a=None, now=None: calls.append(a) or real(s, a, now=now)
    )
    again = diagnose_with_evidence(snap, evidence, T + timedelta(seconds=15), cache.memo)
    assert [f.root_cause for f in again] == [f.root_cause for f in first]
    assert all(a is None for a in calls)  # only the snapshot-wide pass ran; no log re-scan


async def test_a_long_completed_job_opened_once_keeps_its_drill_down_verdict_on_the_dashboard():
    """A script that ran 5 minutes, hit `command not found` and still exited 0 is not fetched
    in the background (only quick COMPLETED jobs are); once an operator opened it, the
    dashboard row must say what the drill-down said, and forget it when squeue does."""
    job = dataclasses.replace(
        _failed(0),
        state="COMPLETED",
        reason="None",
        elapsed_s=300,
        start_time=T - timedelta(seconds=310),
        end_time=T - timedelta(seconds=10),
    )
    snap = Snapshot("hpc", "slurm", T, jobs=(job,))
    subject = Subject("job", "hpc", job.job_id)
    cache = EvidenceCache()
    assert subject not in evidence_subjects(snap)
    before = diagnose_with_evidence(snap, cache.cached(snap), T)
    arts = await CountingSource().artifacts(subject, snap)
    drill = [f for f in diagnose_with_evidence(snap, {subject: arts}, T) if f.subject == subject]
    assert drill and drill[0].root_cause == "command_not_found"
    assert not [f for f in before if f.subject == subject and f.root_cause == "command_not_found"]

    cache.remember(snap, subject, arts)
    row = [f for f in diagnose_with_evidence(snap, cache.cached(snap), T) if f.subject == subject]
    assert [(f.root_cause, f.severity) for f in row][:1] == [
        (drill[0].root_cause, drill[0].severity)
    ]

    gone = Snapshot("hpc", "slurm", T + timedelta(minutes=6), jobs=())
    assert cache.cached(gone) == {} and len(cache) == 0


def test_a_job_that_looks_requeued_gets_evidence_a_fresh_submission_does_not():
    """slurmctld resets a requeued job's submit time and holds it ~2 min (Reason=None, then
    BeginTime): its slurmctld.log lines say which node failed under it. A job just submitted
    (its start estimate = its submit time) or one asking for --begin days ahead is not read."""
    t = datetime(2026, 12, 4, 21, 57, 56, tzinfo=UTC)

    def pending(jid: str, reason: str, begin: timedelta) -> SlurmJob:
        return SlurmJob(
            jid, "j", "u", "batch", "PENDING", reason, submit_time=t, start_time=t + begin
        )

    jobs = (
        pending("40", "None", timedelta(seconds=121)),
        pending("41", "BeginTime", timedelta(seconds=121)),
        pending("42", "None", timedelta(0)),
        pending("43", "BeginTime", timedelta(days=2)),
        pending("44", "Priority", timedelta(seconds=121)),
    )
    snap = Snapshot(source="lab", kind="slurm", taken_at=t, jobs=jobs)
    assert [s.id for s in evidence_subjects(snap)] == ["40", "41"]
