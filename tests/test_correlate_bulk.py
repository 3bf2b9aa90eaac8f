"""Correlation of causes that hit many jobs at once: one incident, not one per job."""

from __future__ import annotations

from datetime import UTC, datetime

from cockpit.diagnosis.correlate import correlate, group_key
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
    assert ana.key == group_key("hpc", "pending_qos_limit", "ana", "QOSMaxJobsPerUserLimit")


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
    assert {i.key for i in incidents} == {
        surge.key,
        group_key("hpc", "pending_qos_limit", "ana", "QOSMaxJobsPerUserLimit"),
    }
    assert {i.key for i in correlate(jobs)} == {
        group_key("hpc", "pending_qos_limit", "ana", "QOSMaxJobsPerUserLimit")
    }


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
    ana = next(
        i
        for i in incidents
        if i.key == group_key("hpc", "pending_held_user", "ana", "pending held user")
    )
    assert ana.title.startswith("40 jobs (ana)")
    assert {f.subject.id for f in ana.findings} == {str(i) for i in range(40)}
    assert any(i.key == f"job|hpc|200|{T.isoformat()}" for i in incidents)


def test_a_cluster_wide_cause_without_a_user_is_one_incident():
    starved = [_failed(str(i), "backfill_starvation") for i in range(500)]
    (inc,) = correlate(starved)
    assert inc.key == group_key("hpc", "backfill_starvation", "", "backfill starvation")
    assert len(inc.findings) == 500


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


def _ended(job: str, cause: str, title: str, end: datetime = T, node: str = "") -> Finding:
    return Finding(
        cause,
        "critical",
        Subject("job", "hpc", job),
        title,
        related=(Subject("node", "hpc", node),) if node else (),
        first_seen=end,
    )


def test_different_missing_programs_are_different_incidents_and_an_array_is_one():
    """One cause, three signatures: three incidents, each titled by its own program; a
    20-task array of a fourth program is one incident of its own, counted once per task."""
    fast = "exit 127 within seconds"
    three = [
        _ended(str(i), "command_not_found", f"{prog}: command not found ({fast})")
        for i, prog in enumerate(("no_such_tool_qq", "bwa-mem3", "samtoolz"))
    ]
    # the exit code as sacct had it when each task was diagnosed: known, or not yet
    array = [
        _ended(
            f"16_{t}",
            "command_not_found",
            f"missing_prog_zz: command not found ({'exit 127' if t % 3 else 'non-zero exit'})",
        )
        for t in range(20)
    ]
    array.append(array[0])  # the same task seen twice is one member
    incidents = correlate([*three, *array])
    titles = sorted(i.title for i in incidents)
    assert len(incidents) == 4
    assert "20 jobs: missing_prog_zz: command not found" in titles
    for prog in ("no_such_tool_qq", "bwa-mem3", "samtoolz"):
        assert sum(prog in t for t in titles) == 1
    assert not any("no_such_tool_qq" in t and "jobs" in t for t in titles)


def test_a_segfault_and_a_signal_53_are_not_one_incident():
    segv = _ended("1", "application_error", "crashed (SIGSEGV (signal 11))")
    rt = _ended("2", "application_error", "crashed (signal 53)")
    assert len(correlate([segv, rt])) == 2


def test_a_groups_title_is_the_shared_signature_not_a_members_own_facts():
    """Two jobs that hit one time limit after different run times, two tasks of one request
    that peaked at different memory: one incident each, titled without the per-job facts."""
    timeouts = [
        _ended("1", "time_limit", "TIMEOUT after 04:00:02 (Timelimit 04:00:00)"),
        _ended(
            "2", "time_limit", "TIMEOUT after 04:00:31 (Timelimit 04:00:00)", T.replace(minute=9)
        ),
    ]
    ooms = [
        _ended("3", "oom_killed", "OUT_OF_MEMORY: MaxRSS 63.9G of ReqMem 64G on cn007"),
        _ended("4", "oom_killed", "OUT_OF_MEMORY: MaxRSS 64.1G of ReqMem 64G on cn009"),
    ]
    by_cause = {i.root_cause: i for i in correlate([*timeouts, *ooms])}
    assert by_cause["time_limit"].title == "2 jobs: TIMEOUT (Timelimit 04:00:00)"
    assert by_cause["oom_killed"].title == "2 jobs: OUT_OF_MEMORY: ReqMem 64G"
    # first seen: the earliest member's failure
    assert by_cause["time_limit"].first_seen == T
    other_limit = _ended("5", "time_limit", "TIMEOUT after 01:00:00 (Timelimit 01:00:00)")
    assert len(correlate([*timeouts, other_limit])) == 2


def test_a_drain_takes_in_only_the_jobs_that_ended_after_it_began():
    drain = Finding(
        "node_drain_kill_task_failed",
        "critical",
        Subject("node", "hpc", "c3"),
        "DRAIN: Kill task failed",
        first_seen=T.replace(hour=21),
    )
    before = _ended("10", "application_error", "non-zero exit", T, node="c3")
    during = _ended("11", "application_error", "non-zero exit", T.replace(hour=21), node="c3")
    incidents = correlate([drain, before, during])
    node = next(i for i in incidents if i.subject.kind == "node")
    assert [s.id for s in node.affected] == ["11"]
    assert any(i.subject.id == "10" for i in incidents)  # its own failure, not the drain's


def test_a_fault_drain_has_a_grace_an_operators_drain_has_none():
    """slurmctld drains for Kill task failed a little after the job it hit ended: that job
    is the drain's. A job that ended a minute before an operator drained the node is not."""
    from datetime import timedelta

    drain_at = T.replace(hour=21)
    just_before = _ended(
        "12", "application_error", "non-zero exit", drain_at - timedelta(minutes=1), node="c3"
    )  # noqa: E501
    for cause, took in (
        ("node_drain_kill_task_failed", ["12"]),
        ("node_drain_admin", []),
        ("node_drain_loop", []),
    ):
        head = Finding(cause, "warning", Subject("node", "hpc", "c3"), "DRAIN", first_seen=drain_at)
        node = next(i for i in correlate([head, just_before]) if i.subject.kind == "node")
        assert [s.id for s in node.affected] == took, cause


def test_two_users_missing_two_modules_are_two_incidents():
    """The log line names the module: the title does too, so ana's cuda/12.1 and bo's
    openmpi/4.1 are not one cluster-wide "loading a module failed"."""
    from cockpit.diagnosis.rules.slurm_advice import env_phrase

    lines = {
        "1": "Lmod has detected the following error: The following module(s) are unknown: "
        '"cuda/12.1"',
        "2": "ERROR: Unable to locate a modulefile for 'openmpi/4.1'",
    }
    found = [
        _ended(jid, "module_load_failed", env_phrase("module_load_failed", text))
        for jid, text in lines.items()
    ]
    assert len(correlate(found)) == 2
