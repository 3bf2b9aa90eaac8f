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
from cockpit.watch.alerts import Alert, AlertConfig
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


def _poll(w, jobs, ends, at):
    findings = [exit1_finding(j, ends[j]) for j, job in jobs.items() if job.state == "FAILED"]
    return w.observe(Snapshot("lab", "slurm", at, jobs=tuple(jobs.values())), findings, at,
                     incidents=correlate(findings))  # fmt: skip


def test_a_job_joining_a_paged_group_minutes_later_is_paged_as_an_update(tmp_path):
    """The lab's trial: jobs 39 and 50 timed out minutes after the group's page and `cockpit
    incidents` listed them critical, while watch said nothing for the hour of repeat_s. A job
    joining is news: paged once the group interval (5 min) has passed since the last page,
    and by one cockpit only when two share the store."""
    store = open_store(f"sqlite:///{tmp_path}/c.db")
    a, b = ListChannel(), ListChannel()
    w1 = Watcher(AlertConfig(), store=store, channels=[a])
    w2 = Watcher(AlertConfig(), store=store, channels=[b])  # a TUI beside the watch
    ends = {"1": T, "2": T, "3": T + timedelta(minutes=2), "4": T + timedelta(minutes=9)}
    jobs = {j: exit1_job(j, "RUNNING", e) for j, e in ends.items()}
    for w in (w1, w2):
        w.observe(Snapshot("lab", "slurm", T - timedelta(minutes=1), jobs=tuple(jobs.values())),
                  [], T)  # fmt: skip
    for minute in range(0, 16):
        at = T + timedelta(minutes=minute)
        for j, end in ends.items():
            if end <= at:
                jobs[j] = exit1_job(j, "FAILED", end)
        for w in (w1, w2):
            _poll(w, jobs, ends, at)
    pages = [x for x in a.sent + b.sent if x.rule == "job_failed"]
    # jobs 1-2 at once; job 3 at 12:02, held until 12:05; job 4 at 12:09, held until 12:10
    assert [sorted(m.id for m in x.members) for x in pages] == [
        ["1", "2"],
        ["1", "2", "3"],
        ["1", "2", "3", "4"],
    ], [(x.time, x.title) for x in pages]
    assert [x.time - T for x in pages] == [
        timedelta(0),
        timedelta(minutes=5),
        timedelta(minutes=10),
    ]


def test_a_cron_watch_once_pages_a_job_joining_a_group_and_not_the_group_again():
    from cockpit.commands.watch import condition_keys, new_conditions
    from cockpit.watch.transitions import fold_by_incident

    def conditions(failed):
        findings = [exit1_finding(j, T) for j in failed]
        raw = [Alert(T, "job_failed", "critical", f.subject, f.title, f, "lab") for f in findings]
        return fold_by_incident(raw, correlate(findings))

    first = conditions(["1", "2"])
    remembered = sorted({k for a in first for k in condition_keys(a)})
    assert new_conditions(conditions(["1", "2"]), remembered) == []  # the same group: quiet
    (update,) = new_conditions(conditions(["1", "2", "3"]), remembered)  # job 3 joined
    assert {m.id for m in update.members} == {"1", "2", "3"}


def test_an_evidence_error_retried_every_other_poll_is_printed_once_an_hour():
    # watch's stderr repeated "evidence for job 79+1 @lab: stdout: …: No such file" 4 times in
    # 11 minutes: the retry's backoff failed it every other round, and each round printed
    # what was not failing in the round before
    from cockpit.commands.watch import due_lines

    said: dict[str, float] = {}
    err = "lab: evidence for job 80 @lab: stdout: /work/slurm-80.out: No such file"
    printed = []
    for poll in range(60):  # a poll a minute, failing every other one
        failing = {err} if poll % 2 == 0 else set()
        printed += [(poll, x) for x in due_lines(failing, said, poll * 60.0)]
    assert [p for p, _ in printed] == [0], printed  # once in the hour, not 30 times
    assert due_lines({err}, said, 3600.0) == [err]  # and again an hour later
