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
    # the incident is about the user's jobs: all five are affected (and listed as members)
    assert {s.id for s in ana.affected} == {"0", "1", "2", "3", "4"}
    assert {f.subject.id for f in ana.findings} == {"0", "1", "2", "3", "4"}
    assert ana.key == "group|hpc|pending_qos_limit|ana"


def test_a_cluster_surge_leaves_the_qos_limited_jobs_their_own_incident():
    """The surge comes and goes with the poll history while a user's jobs stay at the limit:
    their incident keeps one key either way (absorbed into the surge, it went "gone" when the
    surge ended, its jobs still pending)."""
    surge = Finding(
        "priority_qos_surge",
        "warning",
        Subject("cluster", "hpc", "hpc"),
        "surge: 60 pending",
        first_seen=T,
    )
    jobs = [_qos(str(i), "ana") for i in range(3)]
    incidents = correlate([surge, *jobs])
    assert {i.key for i in incidents} == {surge.key, "group|hpc|pending_qos_limit|ana"}
    assert {i.key for i in correlate(jobs)} == {"group|hpc|pending_qos_limit|ana"}


def test_cancellations_make_no_incident():
    f = Finding(
        "cancelled_by_user",
        "info",
        Subject("job", "hpc", "7"),
        "cancelled by uid 1000",
        first_seen=T,
    )
    assert correlate([f]) == []


def _failed(job: str, cause: str, user: str = "", end: datetime = T) -> Finding:
    return Finding(
        cause,
        "warning",
        Subject("job", "hpc", job),
        cause.replace("_", " "),
        related=(Subject("user", "hpc", user),) if user else (),
        first_seen=end,
    )


def test_a_failed_jobs_key_survives_its_cause_being_refined():
    """Evidence turns "non-zero exit" into "command not found": the same failure, the same
    key, so an acknowledgement or a stored incident follows it."""
    (before,) = correlate([_failed("7", "application_error")])
    (after,) = correlate([_failed("7", "command_not_found")])
    assert before.key == after.key == f"job|hpc|7|{T.isoformat()}"
    assert after.root_cause == "command_not_found"
    # the same job id ending again later is another failure
    (again,) = correlate([_failed("7", "application_error", end=T.replace(hour=21))])
    assert again.key != before.key


def test_jobs_sharing_a_cause_and_a_user_are_one_incident_with_its_members():
    held = [_failed(str(i), "pending_held_user", "ana") for i in range(40)]
    other = [_failed(str(100 + i), "pending_held_user", "bo") for i in range(3)]
    alone = _failed("200", "oom_killed", "cy")
    incidents = correlate([*held, *other, alone])
    assert len(incidents) == 3
    ana = next(i for i in incidents if i.key == "group|hpc|pending_held_user|ana")
    assert ana.title.startswith("40 jobs (ana)")
    assert {f.subject.id for f in ana.findings} == {str(i) for i in range(40)}
    assert any(i.key == f"job|hpc|200|{T.isoformat()}" for i in incidents)


def test_a_cluster_wide_cause_without_a_user_is_one_incident():
    starved = [_failed(str(i), "backfill_starvation") for i in range(500)]
    (inc,) = correlate(starved)
    assert inc.key == "group|hpc|backfill_starvation|" and len(inc.findings) == 500


def test_a_training_job_with_two_findings_is_one_incident_led_by_the_worse():
    # the demo's resnet job: its log says the input path is missing (critical) and its volume
    # mapping is malformed (warning); two incidents under one key showed the job twice and the
    # views kept one or the other by chance
    job = Subject("training_job", "ma", "5b1c-0002")
    missing = Finding(
        "input_path_not_found", "critical", job, "Failed: input path not found", first_seen=T
    )
    malformed = Finding(
        "storage_path_invalid", "warning", job, "Failed: data path malformed", first_seen=T
    )
    other = Finding(
        "image_pull_failed",
        "critical",
        Subject("training_job", "ma", "0003"),
        "image pull failed",
        first_seen=T,
    )
    for memo in (None, {}):
        for order in ([malformed, missing, other], [missing, other, malformed]):
            incidents = correlate(order, memo=memo)
            keys = [i.key for i in incidents]
            assert len(keys) == len(set(keys)) == 2
            inc = next(i for i in incidents if i.subject == job)
            assert inc.severity == "critical"
            assert inc.title == "Failed: input path not found"
            assert {f.root_cause for f in inc.findings} == {
                "input_path_not_found",
                "storage_path_invalid",
            }
