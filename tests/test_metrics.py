"""``/metrics``: what ``cockpit watch`` saw, scraped over HTTP as Prometheus would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections import Counter
from datetime import UTC, datetime

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cockpit.errors import UserError
from cockpit.model import Finding, Incident, Subject
from cockpit.watch.alerts import Alert, AlertConfig
from cockpit.watch.metrics import Metrics
from cockpit.watch.outputs import attach
from cockpit.watch.watcher import Watcher
from tests.am_support import free_port, wait_for

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T = datetime(2026, 12, 1, 21, 0, tzinfo=UTC)


def inc(key: str, sev: str = "critical", cause: str = "oom_killed", source: str = "hpc"):
    subj = Subject("job", source, key)
    f = Finding(cause, sev, subj, "t")
    return Incident(f"{cause}|{key}", cause, sev, subj, "t", (f,))


def samples(text: str) -> dict[tuple[str, tuple], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(url, timeout=5) as r:
        return samples(r.read().decode())


def open_incidents(got: dict) -> Counter:
    return Counter(
        {
            (d["cluster"], d["severity"], d["root_cause"]): int(v)
            for (name, labels), v in got.items()
            if name == "cockpit_open_incidents"
            for d in [dict(labels)]
        }
    )


def test_incident_gauge_follows_the_last_poll():
    m = Metrics()
    m.set_incidents("hpc", [inc("1"), inc("2"), inc("3", "warning", "time_limit")])
    m.set_incidents("ma", [inc("9", source="ma")])
    assert open_incidents(samples(m.text())) == {
        ("hpc", "critical", "oom_killed"): 2,
        ("hpc", "warning", "time_limit"): 1,
        ("ma", "critical", "oom_killed"): 1,
    }
    m.set_incidents("hpc", [inc("3", "warning", "time_limit")])  # 1 and 2 closed
    assert open_incidents(samples(m.text()))[("hpc", "critical", "oom_killed")] == 0
    m.set_incidents("hpc", [inc("4")], ok=False)  # an outage adds, forgets nothing
    assert open_incidents(samples(m.text())) == {
        ("hpc", "warning", "time_limit"): 1,
        ("hpc", "critical", "oom_killed"): 1,
        ("ma", "critical", "oom_killed"): 1,
    }


def test_poll_up_last_success_and_deliveries():
    m = Metrics()
    m.polled("hpc", "slurm", True, 0.3, T)
    m.polled("hpc", "slurm", False, 12.0, T.replace(minute=5))  # down: last success stays
    m.delivered("alertmanager", True, 3)
    m.delivered("webhook", False)
    got = samples(m.text())
    assert got[("cockpit_source_up", (("cluster", "hpc"), ("kind", "slurm")))] == 0
    assert got[("cockpit_last_successful_poll_timestamp_seconds", (("cluster", "hpc"),))] == (
        T.timestamp()
    )
    assert got[("cockpit_poll_duration_seconds_count", (("cluster", "hpc"),))] == 2
    assert got[("cockpit_poll_duration_seconds_sum", (("cluster", "hpc"),))] == pytest.approx(12.3)
    sent = (("channel", "alertmanager"), ("outcome", "sent"))
    assert got[("cockpit_alerts_sent_total", sent)] == 3
    assert got[("cockpit_alerts_sent_total", (("channel", "webhook"), ("outcome", "failed")))] == 1
    assert samples(Metrics().text()).get(("cockpit_alerts_sent_total", sent)) is None  # private


def test_served_over_http_and_fed_by_the_watcher():
    w = Watcher(AlertConfig())
    out = attach(w, AlertConfig(metrics_listen="127.0.0.1:0"))
    try:
        w.incidents("hpc", [inc("1"), inc("2", "warning", "time_limit")], T)
        got = scrape(out.server.url)
        assert open_incidents(got) == {
            ("hpc", "critical", "oom_killed"): 1,
            ("hpc", "warning", "time_limit"): 1,
        }
    finally:
        out.close()


def test_notifier_deliveries_are_counted(tmp_path):
    from cockpit.watch.alerts import NotifyConfig
    from cockpit.watch.notify import Notifier

    n = Notifier(NotifyConfig(notify_command="false"), tmp_path / "notify.log")
    w = Watcher(AlertConfig(), notifier=n)
    out = attach(w, AlertConfig(metrics_listen="127.0.0.1:0"))
    try:
        alert = Alert(T, "job_failed", "critical", Subject("job", "hpc", "7"), "job 7 failed")
        w.record([alert], T)  # the command channel runs `false` on its thread
        w.join(10)
        got = scrape(out.server.url)
        assert (
            got[("cockpit_alerts_sent_total", (("channel", "command"), ("outcome", "failed")))] == 1
        )
    finally:
        out.close()


def test_port_in_use_is_a_user_error():
    m = Metrics()
    server = m.serve("127.0.0.1", 0)
    try:
        with pytest.raises(UserError, match="cannot serve /metrics"):
            attach(Watcher(AlertConfig()), AlertConfig(), metrics_port=server.port)
    finally:
        server.close()


def _counts(doc: dict) -> Counter:
    return Counter(
        (i["subject"]["source"], i["severity"], i["root_cause"]) for i in doc["incidents"]
    )


@pytest.mark.slow
def test_watch_metrics_match_cockpit_incidents(tmp_path):
    """A real ``cockpit watch --demo --metrics-port`` scraped over HTTP: its open-incident
    gauges are the counts ``cockpit incidents --demo --json`` lists for the same site."""
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "watch", "--demo", "--metrics-port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}/metrics"

        def polled_both():
            try:
                got = scrape(url)
            except OSError:
                return None
            up = {dict(k[1])["cluster"]: v for k, v in got.items() if k[0] == "cockpit_source_up"}
            counted = {cluster for cluster, _, _ in open_incidents(got)}
            return got if len(up) == 2 and all(up.values()) and counted == set(up) else None

        got = wait_for(polled_both, 60, "both demo sources polled and their incidents counted")
        inc = subprocess.run(
            [sys.executable, "-m", "cockpit", "incidents", "--demo", "--json"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        want = _counts(json.loads(inc.stdout))
        assert sum(want.values()) > 5
        assert +open_incidents(got) == want
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
