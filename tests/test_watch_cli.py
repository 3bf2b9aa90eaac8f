"""``cockpit watch``: headless alerting for cron / systemd on the demo site."""

from __future__ import annotations

import asyncio
import json

from cockpit.cli import main
from cockpit.commands import watch as watch_cmd
from cockpit.demo.site import DEMO_START, demo_sources
from cockpit.watch.alerts import AlertConfig, Mute
from cockpit.watch.watcher import Watcher


def test_once_demo_json_prints_the_expected_alerts(capsys):
    code = main(["watch", "--once", "--demo", "--json"])
    out = capsys.readouterr().out.splitlines()
    alerts = [json.loads(line) for line in out]
    assert code == 1  # something fired
    got = {(a["rule"], a["subject"]["id"]) for a in alerts}
    assert {
        ("storage", "/scratch"),
        ("node_unhealthy", "cn013"),
        ("node_unhealthy", "cn031"),
        ("job_failed", "48102"),
        ("job_failed", "48103"),
        ("pending_never_runs", "48101"),
    } <= got
    assert ("init_slow", "5b1c0a4e-7d21-4f3a-9c11-000000000014") in got
    scratch = next(a for a in alerts if a["rule"] == "storage")
    assert scratch["finding"]["root_cause"] == "disk_full" and "91%" in scratch["title"]
    assert not any(a["subject"]["id"] in {"/home", "/opt/apps"} for a in alerts)  # below 85 %


def test_once_reports_each_condition_once_across_runs(tmp_path):
    clock = lambda: DEMO_START  # noqa: E731

    async def go():
        sources = demo_sources(7, clock)
        w1 = Watcher(AlertConfig())
        first, state, critical = await watch_cmd.watch_once(sources, w1, None, {})
        w2 = Watcher(AlertConfig())  # a new cron run: new process, state from the file
        watch_cmd.save_state(tmp_path / "s.json", state)
        again, _, still = await watch_cmd.watch_once(
            sources, w2, None, watch_cmd.load_state(tmp_path / "s.json")
        )
        muted = Watcher(AlertConfig(mutes=(Mute.parse("rule:storage"),)))
        third, _, _ = await watch_cmd.watch_once(sources, muted, None, {})
        return first, again, third, critical and still

    first, again, third, critical = asyncio.run(go())
    assert len(first) > 10 and again == []
    assert critical  # nothing new the second time, and the critical incidents are still open
    assert "storage" in {a.rule for a in first} and "storage" not in {a.rule for a in third}


def test_state_file_corrupt_is_a_first_run(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("{not json")
    assert watch_cmd.load_state(p) == {}
    watch_cmd.save_state(p, {"hpc": ["storage|file|hpc|/scratch"]})
    assert watch_cmd.load_state(p) == {"hpc": ["storage|file|hpc|/scratch"]}


def test_ctrl_c_exits_zero(monkeypatch, capsys):
    async def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(watch_cmd, "watch_loop", interrupted)
    assert main(["watch", "--demo"]) == 0


def test_watch_without_sources_is_a_user_error(tmp_path, capsys):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[ui]\n")
    assert main(["watch", "--once", "--config", str(cfg)]) == 2
    assert "--demo" in capsys.readouterr().err


def test_text_lines(capsys):
    main(["watch", "--once", "--demo"])
    out = capsys.readouterr().out
    assert "storage" in out and "/scratch on demo-hpc at 91%" in out


def test_once_alerts_name_the_cause_from_evidence_not_the_symptom(capsys):
    """As in the TUI: a job that failed because its binary is missing says so (sacct + log),
    an OOM job says how much it used, not only that it exited non-zero."""
    assert main(["watch", "--once", "--demo", "--json"]) == 1
    alerts = {
        a["subject"]["id"]: a
        for a in map(json.loads, capsys.readouterr().out.splitlines())
        if a["subject"]["kind"] == "job"
    }
    assert "command not found" in alerts["48104"]["title"]
    assert "non-zero exit" not in alerts["48104"]["title"]
    assert "MaxRSS" in alerts["48102"]["title"]


def test_watch_with_no_config_file_says_so_and_offers_the_demo(tmp_path, capsys, monkeypatch):
    # it said "<path>: no [clusters.NAME] ... to watch" about a file that does not exist
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert main(["watch", "--once"]) == 2
    err = capsys.readouterr().err
    assert "no config file" in err and "--demo" in err
    assert "Traceback" not in err
