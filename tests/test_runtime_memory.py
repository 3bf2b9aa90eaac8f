"""Left open for a week, the cockpit's memory follows what is on the queue: the evidence a
drill-down brought, and the critical incidents already rung for, are forgotten once their
subjects leave, and every cache is bounded by count and bytes on the way."""

from __future__ import annotations

from datetime import timedelta

from cockpit.model import Artifacts, Incident, LogText, SlurmJob, Snapshot, Subject
from cockpit.runtime.evidence import EvidenceCache
from cockpit.runtime.hub import Hub
from tests.ui_support import NOW, FakeSource, frozen

BIG = b"x" * (1 << 20)  # a MiB of log per job


def _failed(i: int) -> SlurmJob:
    return SlurmJob(
        str(1000 + i), f"j{i}", "ana", "cpu", "FAILED", "NonZeroExitCode",
        nodes=("c1",), node_list="c1", end_time=NOW - timedelta(minutes=i), elapsed_s=600,
    )  # fmt: skip


class BigLogs(FakeSource):
    background_evidence = False  # evidence = "drill-down": only what the operator opens

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        return Artifacts(logs=(LogText("slurm.out", "stdout", BIG, subject_id=subject.id),))


async def test_drilldown_evidence_is_forgotten_when_its_jobs_leave_the_queue():
    src = BigLogs(jobs=[_failed(i) for i in range(20)])
    hub = Hub([src], clock=frozen)
    st = hub.states["lab"]
    await hub.poll_once(st)
    for j in src.jobs:  # the operator opens every failed job
        await hub.artifacts(Subject("job", "lab", j.job_id))
    assert len(st.evidence._store) == 20 and st.evidence.held_bytes >= 20 * len(BIG)
    src.jobs = src.jobs[:2]  # the rest left squeue (MinJobAge)
    await hub.poll_once(st)
    assert len(st.evidence._store) == 2
    assert st.evidence.held_bytes < 3 * len(BIG)
    assert all(k[0].id in ("1000", "1001") for k in st.evidence.memo)


def test_evidence_is_bounded_by_count_and_bytes_oldest_out():
    jobs = tuple(_failed(i) for i in range(10))
    snap = Snapshot("lab", "slurm", NOW, jobs=jobs)
    cache = EvidenceCache(max_subjects=4, max_bytes=3 * len(BIG))
    for j in jobs:
        arts = Artifacts(logs=(LogText("o", "stdout", BIG, subject_id=j.job_id),))
        cache.remember(snap, Subject("job", "lab", j.job_id), arts)
    assert len(cache) == 3 and cache.held_bytes <= 3 * len(BIG) + 4096
    assert cache.lookup(snap, Subject("job", "lab", "1009")) is not None  # the newest stay
    assert cache.lookup(snap, Subject("job", "lab", "1000")) is None


def _critical(i: int) -> Incident:
    s = Subject("job", "lab", str(i))
    return Incident(
        key=f"oom|{i}", root_cause="oom_killed", severity="critical", title="OOM",
        subject=s, findings=(),
    )  # fmt: skip


def test_critical_incidents_already_rung_for_are_forgotten_after_they_go():
    hub = Hub([FakeSource()], clock=frozen)
    hub.new_critical("lab", (), settled=True)  # the baseline
    many = tuple(_critical(i) for i in range(5000))
    assert len(hub.new_critical("lab", many)) == 5000
    assert hub.new_critical("lab", many) == ()  # rung once
    for _ in range(40):  # twenty polls after they all went
        hub.new_critical("lab", ())
    assert sum(len(v) for v in hub._seen_critical.values()) == 0
    # one that flickers out for a poll does not ring again
    one = (_critical(1),)
    hub.new_critical("lab", one)
    hub.new_critical("lab", ())
    assert hub.new_critical("lab", one) == ()


async def test_sacct_history_held_for_remedies_is_bounded_by_rows(monkeypatch):
    from cockpit.model import AcctRecord
    from cockpit.runtime import state

    monkeypatch.setattr(state, "HISTORY_ROWS_MAX", 1000)
    row = AcctRecord("1", "", "n", "cpu", "COMPLETED", None, 100, 90, 60, 600, "c1")

    class Prolific(FakeSource):
        async def history(self, user, name, days=30):
            return [row] * 400

    hub = Hub([Prolific()], clock=frozen)
    st = hub.states["lab"]
    await hub.poll_once(st)
    for i in range(10):
        assert len(await hub.history("lab", "ana", f"name{i}")) == 400
    assert sum(len(v[1]) for v in st.history_cache.values()) <= 1000
    assert ("ana", "name9") in st.history_cache and ("ana", "name0") not in st.history_cache
