"""``cockpit watch`` with ``[alerts.alertmanager]``: a failed job's incident reaches a real
Alertmanager and, through its route, the webhook receiver the test runs."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

import cockpit.connect
from cockpit.cli import main
from cockpit.model import Artifacts, ExitCode, LogText, SlurmJob, Snapshot
from tests.am_support import AM_BIN, Alertmanager, Webhook, free_port, wait_for
from tests.ui_support import BareSource

pytestmark = pytest.mark.skipif(
    not os.access(AM_BIN, os.X_OK),
    reason="prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager)",
)

LOG = (
    b"loading modules\n"
    b"bash: line 3: bwa-mem2 --db-url postgres://db/x password=hunter2: command not found\n"
)
MAX_POLLS = 90  # a bound, so a broken pipeline fails the test instead of hanging it


def failed_job() -> SlurmJob:
    now = datetime.now(UTC)
    return SlurmJob(
        "20",
        "align",
        "alice",
        "cpu",
        "FAILED",
        "NonZeroExitCode",
        exit_code=ExitCode(127, 0),
        submit_time=now - timedelta(minutes=5),
        end_time=now - timedelta(minutes=1),
    )


class Lab(BareSource):
    """A Slurm cluster whose squeue the test scripts: ``script(poll number)`` gives the jobs
    (raising KeyboardInterrupt ends ``cockpit watch`` as Ctrl-C would)."""

    name = "lab"
    interval = 1.0  # watch's floor: one poll a second

    def __init__(self, script: Callable[[int], tuple[SlurmJob, ...]]) -> None:
        self.script = script
        self.polls = 0
        self.job = failed_job()

    async def poll(self) -> Snapshot:
        self.polls += 1
        if self.polls > MAX_POLLS:
            raise KeyboardInterrupt
        return Snapshot(self.name, "slurm", datetime.now(UTC), jobs=self.script(self.polls))

    async def artifacts(self, subject, snapshot) -> Artifacts:
        return Artifacts(logs=(LogText("slurm-20.out", "stdout", LOG, subject_id="20"),))


@pytest.fixture
def webhook():
    w = Webhook()
    yield w
    w.close()


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A config with one cluster, state in tmp; returns a function that writes the
    Alertmanager URL into it and installs the scripted cluster as its source."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    def make(am_url: str, script) -> tuple[str, Lab]:
        cfg = tmp_path / "cockpit.toml"
        cfg.write_text(
            '[clusters.lab]\ntransport = "local"\n\n'
            f'[alerts.alertmanager]\nurl = "{am_url}"\ntimeout_s = 3\n'
        )
        lab = Lab(script)
        monkeypatch.setattr(cockpit.connect, "select_sources", lambda *a, **k: [lab])
        return str(cfg), lab

    return make


def test_failed_job_fires_then_resolves_through_alertmanager(tmp_path, webhook, site, capsys):
    am = Alertmanager(tmp_path / "am", webhook.url).start()
    try:

        def script(n: int) -> tuple[SlurmJob, ...]:
            if not webhook.find("firing", subject="job:20"):
                return (lab.job,)
            if not webhook.find("resolved", subject="job:20"):
                return ()  # slurmctld forgot the job (MinJobAge): the incident has ended
            raise KeyboardInterrupt

        cfg, lab = site(am.url, script)
        assert main(["watch", "--config", cfg]) == 0
    finally:
        am.stop()
    firing = webhook.find("firing", subject="job:20")
    assert firing, f"no notification after {lab.polls} polls"
    assert firing[0]["labels"] == {
        "alertname": "CockpitIncident",
        "cluster": "lab",
        "subject": "job:20",
        "root_cause": "command_not_found",
        "severity": "critical",
    }
    notes = firing[0]["annotations"]
    assert "exit 127" in notes["summary"] and "not found" in notes["summary"] and notes["remedy"]
    assert "slurm-20.out: bash: line 3: bwa-mem2 --db-url" in notes["evidence"]
    assert "password=" in notes["evidence"]  # the line arrives, its secret does not:
    assert webhook.find("resolved", subject="job:20")
    assert b"hunter2" not in b"".join(webhook.raw)
    err = capsys.readouterr().err
    assert "alertmanager" not in err  # no delivery error to report


def test_alertmanager_down_watch_keeps_polling_and_retries(tmp_path, webhook, site, capsys):
    port = free_port()
    am = Alertmanager(tmp_path / "am", webhook.url, port)

    def script(n: int) -> tuple[SlurmJob, ...]:
        if n == 3:  # two polls failed to deliver; the operator starts Alertmanager
            am.start(wait=False)
        if n > 3 and webhook.find("firing", subject="job:20"):
            raise KeyboardInterrupt
        return (lab.job,)

    cfg, lab = site(f"http://127.0.0.1:{port}", script)
    try:
        assert main(["watch", "--config", cfg]) == 0
    finally:
        am.stop()
    assert webhook.find("firing", subject="job:20"), f"nothing delivered in {lab.polls} polls"
    lines = [x for x in capsys.readouterr().err.splitlines() if "alertmanager" in x]
    assert lines[0].startswith("cockpit: alertmanager: unreachable: ")
    assert lines.count(lines[0]) == 1  # said once, not once per failed poll
    assert lines[-1] == f"cockpit: alertmanager: delivering again to http://127.0.0.1:{port}"


def test_once_posts_the_open_incidents(tmp_path, webhook, site):
    am = Alertmanager(tmp_path / "am", webhook.url).start()
    try:
        cfg, lab = site(am.url, lambda n: (lab.job,))
        state = str(tmp_path / "watch-state.json")
        assert main(["watch", "--once", "--config", cfg, "--state", state]) == 1
        wait_for(lambda: webhook.find("firing", subject="job:20"), what="the cron run's alert")
        active = [a for a in am.alerts() if a["labels"]["subject"] == "job:20"]
        assert [a["status"]["state"] for a in active] == ["active"]
    finally:
        am.stop()


def test_bad_alertmanager_table_is_a_one_line_error(tmp_path, capsys):
    cfg = tmp_path / "cockpit.toml"
    cfg.write_text(
        '[clusters.lab]\ntransport = "local"\n\n'
        '[alerts.alertmanager]\nurl = "http://x"\nrsend = 2\n'
    )
    assert main(["watch", "--once", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert "alerts.alertmanager.rsend" in err and "\n" not in err and "Traceback" not in err


def test_controller_down_fires_and_resolves_without_ending_the_jobs(
    tmp_path, webhook, site, capsys
):
    am = Alertmanager(tmp_path / "am", webhook.url).start()
    outage = {"root_cause": "source_unreachable", "subject": "cluster:lab"}
    try:

        def script(n: int) -> tuple[SlurmJob, ...]:
            if not webhook.find("firing", subject="job:20"):
                return (lab.job,)
            if not webhook.find("firing", **outage):
                raise ConnectionRefusedError("slurmctld: Connection refused")
            if not webhook.find("resolved", **outage):
                return (lab.job,)  # it answers again
            raise KeyboardInterrupt

        cfg, lab = site(am.url, script)
        assert main(["watch", "--config", cfg]) == 0
    finally:
        am.stop()
    down = webhook.find("firing", **outage)
    assert down and down[0]["labels"]["severity"] == "critical", f"{lab.polls} polls"
    assert "Connection refused" in down[0]["annotations"]["summary"]
    assert webhook.find("resolved", **outage)
    assert webhook.find("resolved", subject="job:20") == []  # the outage ended no job incident
