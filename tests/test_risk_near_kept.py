"""A job near its time limit keeps last poll's finding while its facts hold (#33).

The site rule runs every poll (it reads the clock); at 10k jobs ~250 running jobs are past 90 %
of their limit. Their findings are not formatted anew while nothing they say changed, and a
change of what they say (the limit, the language) makes a new one.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from cockpit import i18n
from cockpit.diagnosis.engine import diagnose
from cockpit.diagnosis.verdict import verdicts
from cockpit.model import Artifacts, SlurmJob, Snapshot

NOW = datetime(2026, 11, 29, 20, 30, tzinfo=UTC)


def _job(jid: str, limit_min: int) -> SlurmJob:
    return SlurmJob(
        jid, "train", "ana", "gpu", "RUNNING", "None", cpus=4, node_count=1,
        nodes=("c1",), node_list="c1", start_time=NOW - timedelta(minutes=55),
        elapsed_s=55 * 60, time_limit_s=limit_min * 60,
    )  # fmt: skip


def _near(jobs: tuple[SlurmJob, ...], now: datetime):
    snap = Snapshot(source="lab", kind="slurm", taken_at=now, jobs=jobs)
    return verdicts(diagnose(snap, Artifacts(), now))[("job", "lab", "1")]


def test_the_same_facts_give_the_same_finding_object_a_minute_later():
    first = _near((_job("1", 60),), NOW)
    later = _near((_job("1", 60),), NOW + timedelta(minutes=1))
    assert first.root_cause == "time_limit_near" and "killed at 20:35" in first.title
    assert later is first


def test_a_longer_limit_is_a_new_finding_with_the_new_kill_time():
    first = _near((_job("1", 60),), NOW)
    raised = _near((dataclasses.replace(_job("1", 60), time_limit_s=59 * 60),), NOW)
    assert raised is not first
    assert "killed at 20:34" in raised.title and "killed at 20:35" in first.title


def test_another_language_is_a_new_finding_in_that_language():
    en = _near((_job("1", 60),), NOW)
    i18n.set_language("zh")
    try:
        zh = _near((_job("1", 60),), NOW)
    finally:
        i18n.set_language("en")
    assert zh is not en and zh.title != en.title
    assert _near((_job("1", 60),), NOW).title == en.title
