from datetime import UTC, datetime, timedelta

import pytest

from cockpit.errors import ConfigError
from cockpit.model import Evidence, Finding, Subject
from cockpit.watch.alerts import Alert, AlertConfig, AlertRules, Mute

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def alert(rule="node_unhealthy", kind="node", ident="cn003", source="hpc", t=T0, finding=None):
    return Alert(
        t, rule, "warning", Subject(kind, source, ident), f"{ident} drained", finding, source
    )


def test_defaults_follow_the_guides():
    c = AlertConfig.from_table({}, "c.toml")
    # Initializing: None = the engine's own threshold (alerts and verdicts agree)
    assert (c.initializing_s, c.storage_pct, c.repeat_s, c.failures_count, c.failures_window_s) == (
        None,
        85.0,
        3600,
        3,
        3600,
    )
    assert c.notify.webhook == "" and c.notify.bell is True


def test_from_table_reads_every_key():
    c = AlertConfig.from_table(
        {
            "initializing_min": 10,
            "storage_pct": 90,
            "repeat_s": 600,
            "failures_window_min": 30,
            "failures_count": 5,
            "mute": ["node:cn003", "rule:storage", "job:7@lab", "source:dev"],
        },
        "c.toml",
        notify_table={
            "webhook": "http://127.0.0.1:9/x",
            "webhook_template": "wecom",
            "notify_command": "logger -t x",
            "bell": False,
        },
    )
    assert (c.initializing_s, c.storage_pct, c.repeat_s, c.failures_window_s, c.failures_count) == (
        600,
        90.0,
        600,
        1800,
        5,
    )
    assert [str(m) for m in c.mutes] == ["node:cn003", "rule:storage", "job:7@lab", "source:dev"]
    assert c.notify.webhook_template == "wecom" and c.notify.bell is False


@pytest.mark.parametrize(
    ("table", "key", "words"),
    [
        ({"initializing_min": "8"}, "alerts.initializing_min", "expected"),
        ({"storage_pct": 120}, "alerts.storage_pct", "percentage"),
        ({"failures_count": True}, "alerts.failures_count", "expected int"),
        ({"mute": ["rule:nope"]}, "alerts.mute", "unknown rule"),
        ({"mute": ["cn003"]}, "alerts.mute", "expected"),
        ({"mute": ["host:cn003"]}, "alerts.mute", "unknown kind"),
        ({"inits": 3}, "alerts.inits", "unknown key"),
        ({"notify": {"webhook_template": "teams"}}, "notify.webhook_template", "unknown template"),
        ({"notify": {"webhook": "ftp://x"}}, "notify.webhook", "http"),
        (
            {"notify": {"notify_command": "echo 'unterminated"}},
            "notify.notify_command",
            "cannot split",
        ),
    ],
)
def test_config_errors_name_file_and_key(table, key, words):
    with pytest.raises(ConfigError) as ei:
        AlertConfig.from_table(table, "/etc/cockpit.toml")
    msg = str(ei.value)
    assert msg.startswith("/etc/cockpit.toml: ") and f"[{key}]" in msg and words in msg


def test_rate_limit_same_rule_and_subject():
    r = AlertRules(AlertConfig(repeat_s=3600))
    assert r.filter([alert()], T0) == [alert()]
    assert r.filter([alert(t=T0 + timedelta(minutes=30))], T0 + timedelta(minutes=30)) == []
    # another subject or another rule is not limited
    assert (
        len(r.filter([alert(ident="cn004"), alert(rule="storage")], T0 + timedelta(minutes=30)))
        == 2
    )
    assert len(r.filter([alert()], T0 + timedelta(minutes=61))) == 1


def test_rate_limit_survives_restart_via_seed():
    r = AlertRules(AlertConfig(repeat_s=3600))
    r.seed([alert(t=T0)])
    assert r.filter([alert()], T0 + timedelta(minutes=5)) == []


def test_mutes_per_subject_rule_and_source():
    r = AlertRules(AlertConfig(mutes=(Mute.parse("node:cn003"), Mute.parse("rule:storage"))))
    out = r.filter(
        [
            alert(),
            alert(ident="cn004"),
            alert(rule="storage", kind="file", ident="/home"),
            alert(ident="cn003", source="other"),
        ],
        T0,
    )
    assert [(a.rule, a.subject.id, a.subject.source) for a in out] == [
        ("node_unhealthy", "cn004", "hpc")
    ]
    r2 = AlertRules()
    r2.mute("node:cn004@hpc")
    r2.mute("source:lab")
    out = r2.filter(
        [alert(ident="cn004"), alert(ident="cn004", source="x"), alert(source="lab")], T0
    )
    assert [a.subject.source for a in out] == ["x"]
    assert r2.unmute("source:lab") and len(r2.filter([alert(source="lab", ident="z")], T0)) == 1


def test_json_round_trip_keeps_the_finding():
    f = Finding(
        "node_drain_kill_task_failed",
        "warning",
        Subject("node", "hpc", "cn003"),
        "Kill task failed",
        remedy="reboot cn003",
        evidence=(Evidence("scontrol show node", "Reason=Kill task failed", line=3),),
    )
    a = alert(finding=f)
    b = Alert.from_json(a.to_json())
    assert b == a
    with pytest.raises(ValueError):
        Alert.from_json({**a.to_json(), "time": "2024-05-01T12:00:00"})
