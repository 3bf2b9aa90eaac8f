"""Breaker: a group incident's page is claimed per repeat_s window (identity.delivery_key).
Two cockpits on one store must still send each page once: their polls are never at the
same instant, and a window's edge may fall between them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.diagnosis.correlate import correlate
from cockpit.model import Snapshot
from cockpit.store import open_store
from cockpit.watch.alerts import AlertConfig
from cockpit.watch.watcher import Watcher
from tests.watch_support import ListChannel, exit1_finding, exit1_job

# an hour's edge: the default repeat_s (3600) window turns at 13:00
EDGE = datetime(2026, 12, 4, 13, 0, tzinfo=UTC)


def test_two_cockpits_whose_polls_straddle_a_window_edge_page_a_group_once(tmp_path):
    url = f"sqlite:///{tmp_path}/c.db"
    end = EDGE - timedelta(seconds=40)
    running = tuple(exit1_job(j, "RUNNING", end) for j in ("1", "2", "3"))
    failed = tuple(exit1_job(j, "FAILED", end) for j in ("1", "2", "3"))
    findings = [exit1_finding(j, end) for j in ("1", "2", "3")]
    channels = []
    # cockpit A polls at 12:59:50, cockpit B (another operator's, same store) at 13:00:10
    for at in (EDGE - timedelta(seconds=10), EDGE + timedelta(seconds=10)):
        ch = ListChannel()
        w = Watcher(AlertConfig(), store=open_store(url), channels=[ch])
        w.observe(Snapshot("lab", "slurm", at - timedelta(seconds=30), jobs=running), [], at)
        w.observe(Snapshot("lab", "slurm", at, jobs=failed), findings, at,
                  incidents=correlate(findings))  # fmt: skip
        channels.append(ch)
    pages = [a for ch in channels for a in ch.sent if a.rule == "job_failed"]
    assert len(pages) == 1, [(a.time, a.title) for a in pages]


def test_27_array_tasks_failing_over_3_polls_page_once_per_channel_with_two_cockpits(tmp_path):
    url = f"sqlite:///{tmp_path}/c.db"
    t0 = EDGE - timedelta(minutes=2)  # the third poll is past the window's edge
    ids = [f"7_{i}" for i in range(27)]
    ends = {j: t0 + timedelta(minutes=n // 9) for n, j in enumerate(ids)}
    cockpits = []
    for _ in range(2):
        ch = ListChannel()
        cockpits.append((Watcher(AlertConfig(), store=open_store(url), channels=[ch]), ch))
    for w, _ch in cockpits:
        jobs = tuple(exit1_job(j, "RUNNING", ends[j]) for j in ids)
        w.observe(Snapshot("lab", "slurm", t0 - timedelta(minutes=1), jobs=jobs), [], t0)
    for poll in range(3):
        at = t0 + timedelta(minutes=poll, seconds=20)
        done = [j for j in ids if ends[j] <= at]
        jobs = tuple(exit1_job(j, "FAILED" if j in done else "RUNNING", ends[j]) for j in ids)
        findings = [exit1_finding(j, ends[j]) for j in done]
        for k, (w, _ch) in enumerate(cockpits):
            now = at + timedelta(seconds=15 * k)
            w.observe(Snapshot("lab", "slurm", now, jobs=jobs), findings, now,
                      incidents=correlate(findings))  # fmt: skip
    pages = [a for _w, ch in cockpits for a in ch.sent if a.rule == "job_failed"]
    assert len(pages) == 1, [(a.time, len(a.members)) for a in pages]
