"""``check-config`` says "valid" only for an ``[alerts]`` table ``watch`` (and the TUI) then
start with: both read it through the one parser, so they refuse the same values with the same
line, and nothing that passes overflows when the first alert is sent."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.cli_support import run_cockpit

BASE = '[clusters.lab]\ntransport = "local"\n'
BAD = {
    "unknown-key": '[alerts]\nrate_limit = "x"\n',
    "resend-every-0": '[alerts.alertmanager]\nurl = "http://127.0.0.1:9093"\nresend_every = 0\n',
    "bad-listen": '[alerts]\nmetrics_listen = "nohost:99999"\n',
    "file-webhook": '[alerts.notify]\nwebhook = "file:///etc/passwd"\n',
    "inf-timeout": "[alerts.notify]\ntimeout_s = inf\n",
    "nan-am-timeout": '[alerts.alertmanager]\nurl = "http://127.0.0.1:9093"\ntimeout_s = nan\n',
    "inf-window": "[alerts]\nfailures_window_min = inf\n",
    "inf-initializing": "[alerts]\ninitializing_min = inf\n",
}


def _run(tmp_path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    return run_cockpit(*argv, timeout=120, env=env)


@pytest.mark.parametrize("table", list(BAD.values()), ids=list(BAD))
def test_check_config_and_watch_refuse_the_same_alerts_values(tmp_path, table):
    cfg = tmp_path / "cockpit.toml"
    cfg.write_text(BASE + table)
    check = _run(tmp_path, "--config", str(cfg), "check-config", "--no-poll")
    watch = _run(tmp_path, "--config", str(cfg), "watch", "--once")
    for res in (check, watch):
        assert res.returncode == 2, (res.returncode, res.stdout[-300:], res.stderr[-300:])
        assert "Traceback" not in res.stderr and "valid" not in res.stdout
    line = check.stderr.strip().splitlines()[-1]
    assert str(cfg) in line and line == watch.stderr.strip().splitlines()[-1]


def test_a_good_alerts_table_is_valid(tmp_path):
    cfg = tmp_path / "cockpit.toml"
    cfg.write_text(
        BASE + '[alerts]\nmetrics_listen = "127.0.0.1:9464"\n[alerts.notify]\n'
        'webhook = "https://hooks.example.com/x"\ntimeout_s = 30\n'
    )
    res = _run(tmp_path, "--config", str(cfg), "check-config", "--no-poll")
    assert res.returncode == 0 and "the file is valid" in res.stdout, res.stderr


def test_every_unknown_alerts_key_is_named_at_once(tmp_path):
    """Two typos in [alerts] named only the first (a late breaker's find), as other tables did."""
    cfg = tmp_path / "cockpit.toml"
    cfg.write_text(BASE + "[alerts]\nnope = 1\nrepeat_ss = 2\n")
    res = _run(tmp_path, "--config", str(cfg), "check-config", "--no-poll")
    assert res.returncode == 2
    assert "2 problems:" in res.stderr
    assert "[alerts.nope] unknown key" in res.stderr
    assert "[alerts.repeat_ss] unknown key" in res.stderr


def test_every_tables_problems_at_once_in_the_files_order_each_with_its_line(tmp_path):
    """A config wrong in [clusters], [ui] (a bad theme and a bad lang) and [alerts]: one run
    names all five, top to bottom with their lines. Before, [ui]'s lang came after its theme
    was fixed and [alerts] after everything else, without a line."""
    cfg = tmp_path / "cockpit.toml"
    cfg.write_text(
        '[clusters.a]\ntransport = "local"\nintervall = 5\n\n'  # line 3
        '[clusters.b]\ntransport = "local"\nport = "x"\n\n'  # line 7
        "[alerts]\nrepeat_ss = 2\n\n"  # line 10
        '[ui]\nlang = "xx"\ntheme = 5\n'  # lines 13, 14
    )
    res = _run(tmp_path, "--config", str(cfg), "check-config", "--no-poll")
    assert res.returncode == 2 and "5 problems:" in res.stderr, res.stderr
    lines = [ln.strip() for ln in res.stderr.splitlines()[1:]]
    assert [ln.split(": ", 1)[0].rsplit(":", 1)[1] for ln in lines] == ["3", "7", "10", "13", "14"]
    assert "[alerts.repeat_ss] unknown key" in lines[2]
    assert "[ui.lang]" in lines[3] and "[ui.theme]" in lines[4]
