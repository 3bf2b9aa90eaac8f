"""Group updates held back by the group interval at the scale of a bad night: more groups
gaining a job within five minutes than the watcher held (1,000), against a real SQLite store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.diagnosis.correlate import correlate
from cockpit.model import Finding, Snapshot, Subject
from cockpit.store import open_store
from cockpit.watch.alerts import AlertConfig
from cockpit.watch.watcher import Watcher
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
