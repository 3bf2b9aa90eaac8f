"""Correlation of causes that hit many jobs at once: one incident, not one per job."""

from __future__ import annotations

from datetime import UTC, datetime

from cockpit.diagnosis.correlate import correlate
from cockpit.model import Finding, Subject

T = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


def _qos(job: str, user: str) -> Finding:
    return Finding(
        "pending_qos_limit",
        "warning",
        Subject("job", "hpc", job),
        "QOSMaxJobsPerUserLimit",
        related=(Subject("user", "hpc", user),),
        first_seen=T,
    )


def test_one_users_qos_limited_jobs_are_one_incident_per_user():
    findings = [_qos(str(i), "ana") for i in range(5)] + [_qos("99", "bo")]
    incidents = correlate(findings)
    assert len(incidents) == 2
    ana = next(i for i in incidents if len(i.findings) == 5)
    assert "5 jobs (ana)" in ana.title
    assert {s.id for s in ana.affected} == {
        "1",
        "2",
        "3",
        "4",
    }  # the head is the incident's first finding
    assert ana.key == "bulk|hpc|pending_qos_limit|ana"


def test_a_cluster_surge_absorbs_the_qos_limited_jobs():
    surge = Finding(
        "priority_qos_surge",
        "warning",
        Subject("cluster", "hpc", "hpc"),
        "surge: 60 pending",
        first_seen=T,
    )
    incidents = correlate([surge, *(_qos(str(i), "ana") for i in range(3))])
    assert len(incidents) == 1
    assert incidents[0].root_cause == "priority_qos_surge"
    assert len(incidents[0].affected) == 3


def test_cancellations_make_no_incident():
    f = Finding(
        "cancelled_by_user",
        "info",
        Subject("job", "hpc", "7"),
        "cancelled by uid 1000",
        first_seen=T,
    )
    assert correlate([f]) == []
