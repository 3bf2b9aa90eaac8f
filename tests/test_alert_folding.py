"""One incident, one alert: 27 failed tasks of one array page once, naming the 27 jobs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.diagnosis.correlate import correlate
from cockpit.model import ExitCode, Finding, SlurmJob, Snapshot, Subject
from cockpit.watch.alerts import Alert, AlertConfig
from cockpit.watch.transitions import fold_by_incident
from cockpit.watch.watcher import Watcher

T = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _job(jid: str, state: str) -> SlurmJob:
    return SlurmJob(
        jid, "align", "ana", "cpu", state, "NonZeroExitCode" if state == "FAILED" else "None",
        cpus=1, node_count=1, nodes=("c1",), node_list="c1", submit_time=T - timedelta(hours=1),
        end_time=T if state == "FAILED" else None,
        exit_code=ExitCode(127, 0) if state == "FAILED" else None,
    )  # fmt: skip


def _finding(jid: str, prog: str) -> Finding:
    return Finding(
        "command_not_found",
        "critical",
        Subject("job", "hpc", jid),
        f"{prog}: command not found (exit 127)",
        first_seen=T,
    )


def test_an_arrays_failed_tasks_are_one_alert_naming_each_task():
    tasks = [f"16_{i}" for i in range(1, 28)]
    findings = [_finding(t, "bwa-mem3") for t in tasks] + [_finding("99", "samtoolz")]
    incidents = correlate(findings)
    alerts = [
        Alert(T, "job_failed", "critical", Subject("job", "hpc", j), f"job {j} failed")
        for j in [*tasks, "99"]
    ]
    folded = fold_by_incident(alerts, incidents)
    assert len(folded) == 2
    array = next(a for a in folded if a.incident)
    assert array.title.startswith("27 jobs: bwa-mem3") and {m.id for m in array.members} == set(
        tasks
    )
    assert next(a for a in folded if not a.incident).subject.id == "99"  # a lone job stays
    # in the JSON of every channel, and back
    back = Alert.from_json(array.to_json())
    assert (back.incident, back.members, back.title) == (array.incident, array.members, array.title)


def test_a_watcher_pages_an_incident_once_as_its_members_fail_poll_after_poll():
    w = Watcher(AlertConfig())
    running = Snapshot("hpc", "slurm", T, jobs=tuple(_job(f"7_{i}", "RUNNING") for i in range(6)))
    w.observe(running, [], T)
    fired = []
    for done in (3, 6):  # three tasks fail, then three more
        jobs = tuple(_job(f"7_{i}", "FAILED" if i < done else "RUNNING") for i in range(6))
        snap = Snapshot("hpc", "slurm", T + timedelta(minutes=done), jobs=jobs)
        findings = [_finding(f"7_{i}", "prog_x") for i in range(done)]
        fired += w.observe(snap, findings, snap.taken_at, incidents=correlate(findings))
    job_alerts = [a for a in fired if a.rule == "job_failed"]
    assert len(job_alerts) == 1 and job_alerts[0].incident
