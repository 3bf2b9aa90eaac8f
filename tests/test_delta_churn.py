"""A real site's flow through the diagnosis's patch path (#33): each poll a few running jobs
leave and as many jobs arrive, so every starved job's count of later jobs started moves. The
findings stay those of a diagnosis from scratch, and the sorted list is patched (the starved
jobs' findings keep their places, the arrivals are merged in), not sorted again."""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta

import pytest

from cockpit.diagnosis import delta as delta_mod
from cockpit.model import SlurmJob, Snapshot
from cockpit.runtime import pipeline

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _job(rnd: random.Random, i: int, running: bool, submit: datetime) -> SlurmJob:
    return SlurmJob(
        job_id=str(1000 + i),
        name=f"j{i}",
        user="u",
        partition=rnd.choice(("a", "b")),
        state="RUNNING" if running else "PENDING",
        reason="None" if running else rnd.choice(("Resources", "Priority", "QOSMax")),
        cpus=rnd.choice((1, 4, 64, 128)),
        node_count=rnd.choice((1, 1, 2)),
        submit_time=submit,
        time_limit_s=7 * 86400,
    )


def _site(rnd: random.Random, n: int) -> list[SlurmJob]:
    return [
        _job(rnd, i, rnd.random() < 0.6, T0 + timedelta(seconds=rnd.randrange(0, 20_000)))
        for i in range(n)
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_churn_polls_equal_from_scratch_and_patch_the_sorted_list(seed, monkeypatch):
    sorts = []
    real = delta_mod._sort_into
    monkeypatch.setattr(delta_mod, "_sort_into", lambda *a: sorts.append(1) or real(*a))
    rnd = random.Random(seed)
    jobs = _site(rnd, 400)
    next_id = len(jobs)
    now = T0 + timedelta(days=6)
    carry = pipeline.Carry()
    for poll in range(8):
        if poll:
            running = [k for k, j in enumerate(jobs) if j.state == "RUNNING"]
            for k in sorted(rnd.sample(running, 3), reverse=True):
                del jobs[k]  # a running job ended and left the queue
            for _ in range(3):  # as many arrive, submitted now
                jobs.append(_job(rnd, next_id, rnd.random() < 0.5, now))
                next_id += 1
            now += timedelta(seconds=5)
        snap = Snapshot("peer", "slurm", now, jobs=tuple(jobs))
        got = pipeline.analyse(snap, now, {}, None, (None,), carry=carry)
        want = pipeline.analyse(
            dataclasses.replace(snap), now, {}, None, (None,), carry=pipeline.Carry()
        )
        assert list(got.findings) == list(want.findings), poll
        assert got.verdicts == want.verdicts, poll
        assert got.incidents == want.incidents, poll
        starved = [f for f in got.findings if f.root_cause == "backfill_starvation"]
        assert len(starved) > 20  # the flow this is about: many counts move every poll
    assert carry.diagnosis.patched >= 6
    sorted_again = len(sorts)
    assert sorted_again <= 8 - 6  # not a full sort per poll (the from-scratch runs use their own)


def test_a_one_finding_incident_is_kept_while_its_finding_is_the_same_object():
    from cockpit.diagnosis.correlate import correlate
    from cockpit.model import Finding, Subject

    def finding(jid: str, cause: str) -> Finding:
        return Finding(cause, "warning", Subject("job", "peer", jid), f"{cause} of {jid}")

    memo: dict = {}
    a, b = finding("1", "pending_held"), finding("2", "time_limit_near")
    first = {i.key: i for i in correlate([a, b], memo=memo)}
    c = finding("3", "pending_dependency_never")  # an arrival: correlated from scratch
    second = {i.key: i for i in correlate([a, b, c], memo=memo)}
    assert second.keys() == first.keys() | {next(iter(correlate([c]))).key}
    assert all(second[k] is first[k] for k in first)


def test_a_job_that_failed_behind_one_that_left_raises_its_alert():
    """As many jobs arrived as left: every row after the one that left is at another place,
    and the one that failed among them is still news."""
    from cockpit.watch.transitions import detect

    now = T0 + timedelta(days=1)

    def job(jid: str, state: str) -> SlurmJob:
        return SlurmJob(jid, f"j{jid}", "u", "a", state, "None", submit_time=T0)

    prev = Snapshot("peer", "slurm", now, jobs=tuple(job(str(i), "RUNNING") for i in range(6)))
    rows = [*prev.jobs[1:], job("9", "PENDING")]  # job 0 left, job 9 arrived
    rows[3] = job("4", "FAILED")
    cur = Snapshot("peer", "slurm", now + timedelta(seconds=5), jobs=tuple(rows))
    alerts = detect(prev, cur, [], now + timedelta(seconds=5))
    assert [(a.rule, a.subject.id) for a in alerts] == [("job_failed", "4")]
