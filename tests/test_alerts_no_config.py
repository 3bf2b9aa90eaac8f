"""``cockpit alerts`` without a config is the demo site's, as ``snapshot``, ``incidents``,
``diagnose`` and the TUI are: never a bare "no alerts" while the TUI on the demo shows some."""

from __future__ import annotations

import json

from cockpit.cli import main


def test_alerts_without_a_config_are_the_demos_with_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no config.toml there
    assert main(["alerts", "--json"]) == 0
    got = capsys.readouterr()
    alerts = [json.loads(line) for line in got.out.splitlines()]
    assert alerts, "the demo's alerts"
    assert "demo-hpc" in json.dumps(alerts)
    (note,) = got.err.splitlines()
    assert "no config" in note and "demo site" in note


def test_alerts_with_a_history_file_read_it_not_the_demo(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    empty = tmp_path / "alerts.jsonl"  # watch made it, nothing fired yet
    empty.touch()
    assert main(["alerts", "--history", str(empty)]) == 0
    got = capsys.readouterr()
    assert got.out == "no alerts\n" and got.err == ""


def test_snapshot_and_incidents_without_a_config_say_they_show_the_demo(
    tmp_path, monkeypatch, capsys
):
    """#20: a command that falls back to the demo says so on stderr, once; with --demo (asked
    for) it says nothing."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for argv in (["snapshot", "--json"], ["incidents", "--json"]):
        main(argv)
        got = capsys.readouterr()
        assert "demo-hpc" in got.out, argv
        (note,) = got.err.splitlines()
        assert "no config" in note and "demo site" in note, argv
        main([*argv, "--demo"])
        assert capsys.readouterr().err == "", argv
