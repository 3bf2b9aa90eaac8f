"""A group incident's key has no time of its own (the cluster's "exit 1" group of this
morning is the one a job joins this afternoon). A new-user trial on the real lab found two
consequences: the group's first page was its last (the store's claim held the key for ever),
and an ack given to the group's old jobs covered jobs that failed after it (a new critical
incident read as acknowledged). Both against a real SQLite store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.diagnosis.correlate import correlate
from cockpit.model import Snapshot
from cockpit.runtime.lifecycle import LAPSE_WHO, remember
from cockpit.store import open_store
from cockpit.watch.alerts import AlertConfig
from cockpit.watch.watcher import Watcher
from tests.watch_support import ListChannel, exit1_finding, exit1_job

T = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def test_a_job_joining_a_group_hours_later_is_paged_again(tmp_path):
    channel = ListChannel()
    w = Watcher(AlertConfig(), store=open_store(f"sqlite:///{tmp_path}/c.db"), channels=[channel])
    later = T + timedelta(hours=3)
    ends = {"1": T, "2": T, "3": later}
    jobs = {j: exit1_job(j, "RUNNING", e) for j, e in ends.items()}
    w.observe(Snapshot("lab", "slurm", T - timedelta(minutes=1), jobs=tuple(jobs.values())), [], T)
    for at, failing in ((T, ("1", "2")), (later, ("3",))):
        for j in failing:
            jobs[j] = exit1_job(j, "FAILED", ends[j])
        findings = [exit1_finding(j, ends[j]) for j, job in jobs.items() if job.state == "FAILED"]
        w.observe(Snapshot("lab", "slurm", at, jobs=tuple(jobs.values())), findings, at,
                  incidents=correlate(findings))  # fmt: skip
    pages = [a for a in channel.sent if a.rule == "job_failed"]
    assert len(pages) == 2, [a.title for a in pages]  # before: 1, the group's first page only
    assert {m.id for m in pages[1].members} == {"1", "2", "3"}


def test_an_ack_does_not_cover_a_job_that_failed_after_it(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/c.db")
    old = [exit1_finding("15", T), exit1_finding("16", T + timedelta(minutes=1))]
    (group,) = correlate(old)
    remember(store, "lab", [group], T + timedelta(minutes=2))
    store.ack(group.key, "ana", "known bad input", T + timedelta(minutes=3))
    # the same jobs polled again: the ack holds
    got = remember(store, "lab", [group], T + timedelta(minutes=4))
    assert group.key in got.acks
    # two jobs fail the same way after the ack: the same group key, not acknowledged any more
    new = [exit1_finding(j, T + timedelta(minutes=m)) for j, m in (("17", 10), ("18", 11))]
    (regroup,) = correlate(new)
    assert regroup.key == group.key
    got = remember(store, "lab", [regroup], T + timedelta(minutes=12))
    assert regroup.key not in got.acks
    assert regroup.key not in open_store(f"sqlite:///{tmp_path}/c.db").acks()  # every head
    # acknowledged again, it holds for these jobs
    store.ack(regroup.key, "ana", "same input", T + timedelta(minutes=13))
    got = remember(store, "lab", [regroup], T + timedelta(minutes=14))
    assert got.acks[regroup.key].who == "ana"
    assert LAPSE_WHO.startswith("cockpit")
