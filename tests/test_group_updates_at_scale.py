"""Group updates held back by the group interval at the scale of a bad night: more groups
gaining a job within five minutes than the watcher held (1,000), against a real SQLite store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.diagnosis.correlate import correlate
from cockpit.model import Finding, Snapshot, Subject
from cockpit.store import open_store
from cockpit.watch.alerts import AlertConfig
from cockpit.watch.watcher import Watcher
from tests.pg import postgres, url  # noqa: F401 - the session fixture, both backends
from tests.watch_support import ListChannel, exit1_job

T = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _finding(jid: str, user: str) -> Finding:
    return Finding(
        "application_error", "critical", Subject("job", "lab", jid),
        "exit 1: a generic error from the program", first_seen=T,
        related=(Subject("user", "lab", user),),
    )  # fmt: skip


def test_every_group_a_job_joined_is_paged_when_1200_groups_grow_at_once(tmp_path):
    """1,200 users' groups of 3 failed jobs each, paged at 12:00; at 12:01 a fourth job of
    each fails. At 12:06 each group's update is paged (before: 1,000 of 1,200, the rest
    dropped from the watcher's hold without a word)."""
    channel = ListChannel()
    w = Watcher(AlertConfig(), store=open_store(f"sqlite:///{tmp_path}/c.db"), channels=[channel])
    groups = 1200
    owner = {str(10_000 + 4 * g + k): f"u{g}" for g in range(groups) for k in range(4)}
    jobs = {j: exit1_job(j, "RUNNING", T) for j in owner}

    def poll(at: datetime) -> None:
        failed = [_finding(j, owner[j]) for j, job in jobs.items() if job.state == "FAILED"]
        snap = Snapshot("lab", "slurm", at, jobs=tuple(jobs.values()))
        w.observe(snap, failed, at, incidents=correlate(failed))

    poll(T - timedelta(minutes=1))
    for j in owner:
        if int(j) % 4 != 3:
            jobs[j] = exit1_job(j, "FAILED", T)
    poll(T)
    for j in owner:
        if int(j) % 4 == 3:
            jobs[j] = exit1_job(j, "FAILED", T + timedelta(minutes=1))
    poll(T + timedelta(minutes=1))
    channel.sent.clear()
    poll(T + timedelta(minutes=6))
    updates = {a.incident for a in channel.sent if a.is_group and len(a.members) == 4}
    assert len(updates) == groups


def test_a_muted_job_joining_a_paged_group_pages_no_one(tmp_path):
    """The operator muted job 3 (a known-bad test job: `job:3@lab`). It failed the way the
    paged group of jobs 1 and 2 did: before, its joining paged the group's update five
    minutes later (the mute read the group's alert, not the job that made it news). Job 4,
    not muted, joining later is paged, naming every member."""
    from cockpit.watch.alerts import Mute

    channel = ListChannel()
    cfg = AlertConfig(mutes=(Mute.parse("job:3@lab"),))
    w = Watcher(cfg, store=open_store(f"sqlite:///{tmp_path}/c.db"), channels=[channel])
    ends = {"1": T, "2": T, "3": T + timedelta(minutes=1), "4": T + timedelta(minutes=20)}
    jobs = {j: exit1_job(j, "RUNNING", e) for j, e in ends.items()}
    pages = []
    for m in range(-1, 31):
        at = T + timedelta(minutes=m)
        for j, e in ends.items():
            if e <= at:
                jobs[j] = exit1_job(j, "FAILED", e)
        failed = [_finding(j, "ana") for j, job in jobs.items() if job.state == "FAILED"]
        snap = Snapshot("lab", "slurm", at, jobs=tuple(jobs.values()))
        w.observe(snap, failed, at, incidents=correlate(failed))
        pages += [(m, sorted(x.id for x in a.members)) for a in w.delivered if a.is_group]
    assert pages == [(0, ["1", "2"]), (20, ["1", "2", "3", "4"])]


def test_a_cron_watch_once_is_quiet_when_only_a_muted_job_joined_a_group():
    """`watch --once` from cron, job 3 muted: its joining the group of jobs 1 and 2 is not
    news; job 4 joining is."""
    from cockpit.commands.watch import condition_keys, new_conditions
    from cockpit.watch.alerts import Alert, AlertRules, Mute
    from cockpit.watch.transitions import fold_by_incident

    rules = AlertRules(AlertConfig(mutes=(Mute.parse("job:3@lab"),)))

    def conditions(failed):
        findings = [_finding(j, "ana") for j in failed]
        raw = [Alert(T, "job_failed", "critical", f.subject, f.title, f, "lab") for f in findings]
        return fold_by_incident(raw, correlate(findings))

    remembered = sorted({k for a in conditions(["1", "2"]) for k in condition_keys(a)})
    assert new_conditions(conditions(["1", "2", "3"]), remembered, rules.is_muted) == []
    (update,) = new_conditions(conditions(["1", "2", "3", "4"]), remembered, rules.is_muted)
    assert {m.id for m in update.members} == {"1", "2", "3", "4"}


def test_a_held_update_is_not_paged_for_a_job_that_left_the_group(tmp_path):
    """Jobs 1 and 2 paged at 12:00; job 3 failed alike at 12:01 (its update held for the
    group interval), was requeued at 12:02 and runs again. Before: at 12:05 '3 jobs: exit 1'
    was paged naming job 3, running for three minutes by then."""
    channel = ListChannel()
    w = Watcher(AlertConfig(), store=open_store(f"sqlite:///{tmp_path}/c.db"), channels=[channel])

    def failed(j: str, m: int) -> bool:
        return m >= 0 if j in ("1", "2") else m == 1

    pages = []
    for m in range(-1, 12):
        at = T + timedelta(minutes=m)
        jobs = [exit1_job(j, "FAILED" if failed(j, m) else "RUNNING", at) for j in "123"]
        findings = [_finding(j.job_id, "ana") for j in jobs if j.state == "FAILED"]
        w.observe(Snapshot("lab", "slurm", at, jobs=tuple(jobs)), findings, at,
                  incidents=correlate(findings))  # fmt: skip
        pages += [(m, sorted(x.id for x in a.members)) for a in w.delivered if a.is_group]
    assert pages == [(0, ["1", "2"])]


def test_two_cockpits_on_one_store_page_a_groups_updates_5_min_apart(url):  # noqa: F811
    """A `cockpit watch` and a TUI on one store, polling 30 s apart. Jobs 1 and 2 fail at
    12:00, job 3 at 12:01, jobs 4 and 5 at 12:05:12 and 12:05:24. Before: the watch paged
    jobs 1-3 at 12:05:00 and the TUI jobs 1-5 at 12:05:30, two pages 30 s apart (each kept
    the group interval of its own pages only). The update with jobs 4 and 5 still comes."""
    a, b = ListChannel(), ListChannel()
    watch = Watcher(AlertConfig(), store=open_store(url), channels=[a])
    tui = Watcher(AlertConfig(), store=open_store(url), channels=[b])
    ends = {"1": 0, "2": 0, "3": 60, "4": 312, "5": 324}  # seconds after 12:00
    pages = []
    for s in range(-60, 20 * 60, 30):  # the watch on the minute, the TUI on the half
        at = T + timedelta(seconds=s)
        w = watch if s % 60 == 0 else tui
        jobs = [exit1_job(j, "FAILED" if e <= s else "RUNNING", at) for j, e in ends.items()]
        failed = [_finding(j.job_id, "ana") for j in jobs if j.state == "FAILED"]
        w.observe(Snapshot("lab", "slurm", at, jobs=tuple(jobs)), failed, at,
                  incidents=correlate(failed))  # fmt: skip
        pages += [(s, len(x.members)) for x in w.delivered if x.is_group]
    gaps = [t2 - t1 for (t1, _), (t2, _) in zip(pages, pages[1:], strict=False)]
    assert all(g >= 300 for g in gaps), pages
    assert pages[-1][1] == 5, pages
