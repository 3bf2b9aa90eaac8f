"""Incidents to a real Prometheus Alertmanager (v2 API), read back at a local webhook receiver."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

from cockpit.errors import ConfigError
from cockpit.model import Evidence, Finding, Incident, Subject
from cockpit.watch.alertmanager import AlertmanagerChannel, post_alerts
from cockpit.watch.alerts import AlertConfig, AlertmanagerConfig
from tests.am_support import AM_BIN, Alertmanager, Webhook, free_port, wait_for

needs_am = pytest.mark.skipif(
    not os.access(AM_BIN, os.X_OK),
    reason="prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager)",
)


@pytest.fixture
def webhook():
    w = Webhook()
    yield w
    w.close()


@pytest.fixture
def am(tmp_path, webhook):
    a = Alertmanager(tmp_path / "am", webhook.url).start()
    yield a
    a.stop()


def incident(
    job: str = "20",
    cause: str = "command_not_found",
    sev: str = "critical",
    title: str = "exit 127: bwa-mem2: command not found on the compute node",
    evidence: tuple[str, ...] = ("bash: line 3: bwa-mem2: command not found",),
    source: str = "lab",
) -> Incident:
    subj = Subject("job", source, job)
    f = Finding(
        root_cause=cause,
        severity=sev,
        subject=subj,
        title=title,
        explanation="Exit status 127 is the shell's 'command not found'.",
        remedy="module load bwa-mem2 in the batch script",
        evidence=tuple(Evidence(f"slurm-{job}.out", t) for t in evidence),
    )
    return Incident(
        key=f"{cause}|job|{source}|{job}",
        root_cause=cause,
        severity=sev,
        subject=subj,
        title=title,
        findings=(f,),
        first_seen=datetime.now(UTC) - timedelta(minutes=2),
    )


@pytest.fixture
def stores(tmp_path):
    """Two cockpits' stores on one SQLite file, as two processes would open it."""
    from cockpit.store import open_store

    url = f"sqlite:///{tmp_path / 'cockpit.db'}"
    pair = [open_store(url), open_store(url)]
    yield pair
    for s in pair:
        s.close()


def counting(posts: list):
    def post(url, alerts, timeout):
        posts.append([dict(a) for a in alerts])
        return post_alerts(url, alerts, timeout)

    return post


# --------------------------------------------------------------------------- config


def test_config_reads_alertmanager_and_metrics_listen():
    cfg = AlertConfig.from_table(
        {
            "metrics_listen": "127.0.0.1:9464",
            "alertmanager": {
                "url": "http://am.example:9093/",
                "resend_every": 3,
                "timeout_s": 2,
                "labels": {"site": "bj1"},
            },
        }
    )
    assert cfg.metrics_listen == "127.0.0.1:9464"
    am = cfg.alertmanager
    assert am is not None and am.url == "http://am.example:9093"
    assert (am.resend_every, am.timeout_s, am.labels) == (3, 2.0, (("site", "bj1"),))
    assert AlertConfig.from_table({}).alertmanager is None


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ({"alertmanager": {"url": "http://x", "resend": 3}}, "alerts.alertmanager.resend"),
        ({"alertmanager": {"resend_every": 3}}, "alerts.alertmanager"),
        ({"alertmanager": {"url": "am:9093"}}, "alerts.alertmanager.url"),
        (
            {"alertmanager": {"url": "http://x", "resend_every": 0}},
            "alerts.alertmanager.resend_every",
        ),
        (
            {"alertmanager": {"url": "http://x", "labels": {"severity": "x"}}},
            "alerts.alertmanager.labels",
        ),
        ({"metrics_listen": "9464"}, "alerts.metrics_listen"),
    ],
)
def test_config_errors_name_the_key(table, key):
    with pytest.raises(ConfigError) as e:
        AlertConfig.from_table(table, "cockpit.toml")
    assert key in str(e.value)


# --------------------------------------------------------------------------- channel


@needs_am
def test_incident_fires_with_labels_and_redacted_annotations(am, webhook):
    ch = AlertmanagerChannel(AlertmanagerConfig(am.url, labels=(("site", "bj1"),)))
    inc = incident(evidence=("export DB_URL=postgres://db/x password=hunter2", "bash: bwa-mem2"))
    results = ch.update("lab", [inc], datetime.now(UTC))
    assert [r.ok for r in results] == [True] and ch.last_error == ""
    got = wait_for(lambda: webhook.find("firing", subject="job:20"), what="the firing alert")[0]
    assert got["labels"] == {
        "alertname": "CockpitIncident",
        "cluster": "lab",
        "subject": "job:20",
        "root_cause": "command_not_found",
        "severity": "critical",
        "site": "bj1",
    }
    notes = got["annotations"]
    assert "bwa-mem2: command not found" in notes["summary"]
    assert notes["remedy"] == "module load bwa-mem2 in the batch script"
    assert notes["evidence"].splitlines()[1] == "slurm-20.out: bash: bwa-mem2"
    assert "hunter2" not in b"".join(webhook.raw).decode()
    assert "password=" in notes["evidence"]  # the line is there, its secret is not


@needs_am
def test_vanished_incident_resolves(am, webhook):
    ch = AlertmanagerChannel(AlertmanagerConfig(am.url))
    t0 = datetime.now(UTC)
    ch.update("lab", [incident()], t0)
    wait_for(lambda: webhook.find("firing", subject="job:20"), what="firing")
    ch.update("lab", [], t0 + timedelta(seconds=1))
    got = wait_for(lambda: webhook.find("resolved", subject="job:20"), what="resolved")[0]
    assert got["endsAt"].startswith((t0 + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S"))
    assert ch.firing == {}


@needs_am
def test_store_resolution_time_is_the_end(am, webhook):
    ch = AlertmanagerChannel(AlertmanagerConfig(am.url))
    t0 = datetime.now(UTC)
    ch.update("lab", [incident()], t0)
    wait_for(lambda: webhook.find("firing", subject="job:20"), what="firing")
    ended = t0 - timedelta(seconds=30)  # the store saw the node resume before this poll
    ch.update("lab", [incident()], t0, resolved_at={incident().key: ended})
    got = wait_for(lambda: webhook.find("resolved", subject="job:20"), what="resolved")[0]
    assert got["endsAt"].startswith(ended.strftime("%Y-%m-%dT%H:%M:%S"))
    posts: list = []
    ch._post = counting(posts)
    ch.update("lab", [incident()], t0, resolved_at={incident().key: ended})
    assert posts == []  # still listed as resolved by the store: resolved once


@needs_am
def test_failed_poll_resolves_nothing(am, webhook):
    ch = AlertmanagerChannel(AlertmanagerConfig(am.url))
    ch.update("lab", [incident()], datetime.now(UTC))
    ch.update("lab", [], datetime.now(UTC), ok=False)  # the controller did not answer
    assert list(ch.firing) == [incident().key]
    assert [a["status"]["state"] for a in am.alerts()] == ["active"]


@needs_am
def test_refined_cause_ends_the_old_label_set(am, webhook):
    ch = AlertmanagerChannel(AlertmanagerConfig(am.url))
    vague = incident(cause="command_not_found", title="exit 127")
    ch.update("lab", [vague], datetime.now(UTC))
    wait_for(lambda: webhook.find("firing", root_cause="command_not_found"), what="first")
    refined = Incident(
        key=vague.key,
        root_cause="module_load_failed",
        severity="critical",
        subject=vague.subject,
        title="module bwa-mem2 not found",
        findings=incident(cause="module_load_failed").findings,
        first_seen=vague.first_seen,
    )
    ch.update("lab", [refined], datetime.now(UTC))
    wait_for(lambda: webhook.find("firing", root_cause="module_load_failed"), what="refined")
    wait_for(lambda: webhook.find("resolved", root_cause="command_not_found"), what="old resolved")


@needs_am
def test_resend_every_n_polls_keeps_alerts_alive(am, webhook):
    posts: list = []
    ch = AlertmanagerChannel(AlertmanagerConfig(am.url, resend_every=3), post=counting(posts))
    for _ in range(7):
        ch.update("lab", [incident()], datetime.now(UTC))
    # polls 1, 4 and 7 post the firing set; the others have nothing new to say
    assert len(posts) == 3 and all(p[0]["labels"]["subject"] == "job:20" for p in posts)
    wait_for(lambda: webhook.find("firing", subject="job:20"), what="firing")
    assert len(webhook.find("firing", subject="job:20")) == 1  # re-posts notify nobody


@needs_am
def test_two_cockpits_announce_once(am, webhook, stores):
    posts_a, posts_b = [], []
    cfg = AlertmanagerConfig(am.url, resend_every=100)
    a = AlertmanagerChannel(cfg, store=stores[0], post=counting(posts_a))
    b = AlertmanagerChannel(cfg, store=stores[1], post=counting(posts_b))
    t = datetime.now(UTC)
    a.update("lab", [], t)  # both started before the failure (their first poll re-asserts)
    b.update("lab", [], t)
    a.update("lab", [incident()], t)
    b.update("lab", [incident()], t)
    assert len(posts_a) == 1 and posts_b == []
    a.update("lab", [], t)
    b.update("lab", [], t)
    assert len(posts_a) == 2 and posts_b == []  # the resolve is claimed too
    wait_for(lambda: webhook.find("resolved", subject="job:20"), what="resolved")


def test_alertmanager_down_is_last_error_and_retried(tmp_path, webhook):
    port = free_port()
    ch = AlertmanagerChannel(AlertmanagerConfig(f"http://127.0.0.1:{port}", timeout_s=2))
    results = ch.update("lab", [incident()], datetime.now(UTC))
    assert not results[0].ok and ch.last_error.startswith("alertmanager: unreachable")
    assert "\n" not in ch.last_error
    if not os.access(AM_BIN, os.X_OK):
        pytest.skip("prometheus-alertmanager is not installed: the retry half needs it")
    am = Alertmanager(tmp_path / "am", webhook.url, port).start()
    try:
        ch.update("lab", [incident()], datetime.now(UTC))  # next poll: no resend due, still sent
        assert ch.last_error == ""
        wait_for(lambda: webhook.find("firing", subject="job:20"), what="the retried alert")
    finally:
        am.stop()


@needs_am
def test_http_error_is_one_line(am):
    bad = [{"labels": {}, "startsAt": "2026-01-01T00:00:00Z"}]  # no labels: Alertmanager says 400
    r = post_alerts(am.url, bad, 5)
    assert not r.ok and r.status == 400 and r.error.startswith("HTTP 400") and "\n" not in r.error


@needs_am
def test_silence_stops_the_notification(am, webhook):
    am.silence(subject="job:20", cluster="lab")
    ch = AlertmanagerChannel(AlertmanagerConfig(am.url))
    ch.update("lab", [incident("20"), incident("21")], datetime.now(UTC))
    wait_for(lambda: webhook.find("firing", subject="job:21"), what="the unsilenced alert")
    state = {a["labels"]["subject"]: a["status"] for a in am.alerts()}
    assert state["job:20"]["state"] == "suppressed" and state["job:20"]["silencedBy"]
    assert webhook.find("firing", subject="job:20") == []


@needs_am
def test_each_cron_run_reasserts_the_open_incidents(am, webhook, stores):
    for store in stores:  # two `cockpit watch --once` runs sharing a store: a fresh channel each
        posts: list = []
        ch = AlertmanagerChannel(AlertmanagerConfig(am.url), store=store, post=counting(posts))
        ch.update("lab", [incident()], datetime.now(UTC))
        assert len(posts) == 1  # else Alertmanager would resolve it after resolve_timeout


def test_watcher_for_hangs_the_channel_on_a_real_site_not_the_demo(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from cockpit.watch.watcher import watcher_for

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    config = SimpleNamespace(alerts={"alertmanager": {"url": "http://127.0.0.1:9"}}, path="c")
    assert "alertmanager" in [c.name for c in watcher_for(config).channels]  # the TUI's too
    assert "alertmanager" not in [c.name for c in watcher_for(config, demo=True).channels]


@pytest.mark.parametrize(("status", "posts"), [(400, 1), (503, 2), (None, 2)])
def test_refused_alerts_are_not_retried_unreachable_ones_are(status, posts):
    from cockpit.watch.notify import NotifyResult

    calls: list = []

    def post(url, alerts, timeout):
        calls.append(len(alerts))
        return NotifyResult("alertmanager", False, f"HTTP {status}" if status else "down", status)

    ch = AlertmanagerChannel(AlertmanagerConfig("http://127.0.0.1:9", resend_every=100), post=post)
    for _ in range(2):
        ch.update("lab", [incident()], datetime.now(UTC))
    assert len(calls) == posts and ch.last_error.startswith("alertmanager: ")


@needs_am
def test_a_storm_is_posted_in_batches(am):
    posts: list = []
    ch = AlertmanagerChannel(AlertmanagerConfig(am.url), post=counting(posts))
    ch.update("lab", [incident(str(n)) for n in range(1200)], datetime.now(UTC))
    assert [len(p) for p in posts] == [500, 500, 200]
    assert len(am.alerts()) == 1200
