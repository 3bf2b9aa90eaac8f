"""Breaking Cockpit as on-call would: dying servers, hostile input."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.app import CockpitApp
from cockpit.config import load_config
from cockpit.demo.site import demo_sources
from cockpit.errors import ConfigError
from cockpit.screens.alerts import AlertScreen
from cockpit.screens.dashboard import DashboardScreen
from cockpit.screens.incidents import IncidentScreen
from cockpit.screens.subject import JobScreen
from cockpit.store.acks import AckStore
from cockpit.transport import LocalTransport, RemoteFileError, SshTransport
from tests.cli_support import run_cockpit

NOW = datetime(2026, 11, 29, 20, 45, 0, tzinfo=UTC)


@pytest.mark.lab
async def test_ssh_many_concurrent_commands_stay_within_sshd_max_sessions(lab_ssh):
    # OpenSSH refuses the 11th channel ("no more sessions"); taken for "connection lost", it
    # would drop the connection and kill every command in flight -> pane STALE.
    t = SshTransport(
        lab_ssh.ssh_host,
        lab_ssh.ssh_port,
        lab_ssh.ssh_user,
        lab_ssh.ssh_key,
        lab_ssh.ssh_known_hosts,
        ssh_config=False,
    )
    try:
        results = await asyncio.gather(
            *(t.run(["sleep", "0.3"]) for _ in range(24)), return_exceptions=True
        )
        assert [getattr(r, "exit_status", r) for r in results] == [0] * 24
        assert t.connects == 1
    finally:
        await t.close()


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("interval = nan", "interval"),  # passed the 5 s floor, then polled every second
        ("interval = inf", "interval"),  # never polled again
        ("command_timeout = -1", "command_timeout"),  # every command timed out at once
        ("connect_timeout = 0", "connect_timeout"),
        ("connect_timeout = nan", "connect_timeout"),
    ],
)
def test_config_rejects_non_finite_intervals_and_timeouts(tmp_path, line, key):
    p = tmp_path / "c.toml"
    p.write_text(f'[clusters.lab]\ntransport = "local"\n{line}\n')
    with pytest.raises(ConfigError, match=rf"c.toml:3: \[clusters.lab.{key}\]"):
        load_config(p)
    res = run_cockpit("check-config", "--config", str(p))
    assert res.returncode == 2 and "Traceback" not in res.stderr and key in res.stderr


def test_config_keeps_finite_intervals_and_timeouts(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text(
        '[clusters.lab]\ntransport = "local"\ninterval = '
        "7.5\ncommand_timeout = 3\nconnect_timeout = 0.5\n"
    )
    c = load_config(p).clusters["lab"]
    assert (c.interval, c.command_timeout, c.connect_timeout) == (7.5, 3.0, 0.5)


async def test_i_from_a_screen_opened_from_the_incident_view_goes_back_to_it(tmp_path):
    # i -> enter (the incident's job) -> i must go back, not push a second
    # IncidentScreen(id="incidents"): DuplicateIds would crash the cockpit. Same for A (alerts).
    app = CockpitApp(
        demo_sources(7, clock=lambda: NOW),
        clock=lambda: NOW,
        acks=AckStore(tmp_path / "s.json"),
        bell=False,
        export_dir=tmp_path,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause()
        await pilot.press("i")
        incidents = app.screen
        assert isinstance(incidents, IncidentScreen)
        await pilot.press("enter")  # the most severe incident: job 48101
        assert isinstance(app.screen, JobScreen)
        await pilot.press("i")
        assert app.screen is incidents  # back to the one incident view, cursor kept
        assert sum(isinstance(s, IncidentScreen) for s in app.screen_stack) == 1
        await pilot.press("A", "i", "A")
        assert isinstance(app.screen, AlertScreen)
        await pilot.press("escape")
        assert app.screen is incidents
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)


_CRASH = """
import sys
import cockpit.app as a
def boom(self):
    raise RuntimeError("boom in on_mount")
a.CockpitApp.on_mount = boom
from cockpit.cli import main
sys.exit(main(["--demo"]))
"""


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tui_exit_status_is_nonzero_after_a_crash(tmp_path):
    # Textual prints the traceback and app.run() returns None; `cockpit` exited 0 anyway,
    # so a wrapper script (or systemd) could not tell a crash from `q`.
    script = tmp_path / "crash.py"
    script.write_text(_CRASH)
    session = f"cockpit-brk-{uuid.uuid4().hex[:8]}"
    root = Path(__file__).resolve().parents[1]  # this checkout's cockpit, not whatever is installed
    env = (
        f"PYTHONPATH={root} XDG_STATE_HOME={tmp_path} "
        f"XDG_CONFIG_HOME={tmp_path} TERM=xterm-256color"
    )
    cmd = f"cd {tmp_path} && {env} {sys.executable} {script}; echo EXITED=$?; sleep 30"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", cmd], check=True
    )
    try:
        screen = ""
        for _ in range(100):
            screen = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", session, "-S", "-100"],
                capture_output=True,
                text=True,
            ).stdout
            if "EXITED=" in screen:
                break
            time.sleep(0.2)
        assert "boom in on_mount" in screen
        assert "EXITED=1" in screen
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


async def test_popping_a_job_screen_while_its_artifacts_load_does_not_crash(tmp_path):
    # i pops the alert view and the job screen under it in one go: the job screen resumes
    # (new poll -> its artifacts worker starts) and is removed at once; the worker then
    # queried '#fields' on a half-removed screen: NoMatches, the app died.
    app = CockpitApp(
        demo_sources(7, clock=lambda: NOW),
        clock=lambda: NOW,
        acks=AckStore(tmp_path / "s.json"),
        bell=False,
        export_dir=tmp_path,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause()
        await pilot.press("i", "enter", "A")
        assert [type(s) for s in app.screen_stack] == [
            DashboardScreen,
            IncidentScreen,
            JobScreen,
            AlertScreen,
        ]
        for _ in range(3):
            gen = app.hub.generation
            await pilot.press("r")
            for _ in range(200):
                if app.hub.generation != gen:
                    break
                await pilot.pause(0.02)
            await pilot.press("i")
            assert isinstance(app.screen, IncidentScreen)
            await pilot.pause(0.3)
            await pilot.press("enter", "A")
    assert app.return_code in (None, 0)


async def test_esc_on_the_dashboard_keeps_it(tmp_path):
    # esc popped the dashboard itself: a blank screen with no footer, only q still worked
    app = CockpitApp(
        demo_sources(7, clock=lambda: NOW),
        clock=lambda: NOW,
        acks=AckStore(tmp_path / "s.json"),
        bell=False,
        export_dir=tmp_path,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await app.hub.first_round.wait()
        await pilot.press("escape", "escape", "tab", "escape")
        assert isinstance(app.screen, DashboardScreen)
        await pilot.press("i", "escape", "escape")
        assert isinstance(app.screen, DashboardScreen)


async def test_local_read_of_a_fifo_or_directory_is_an_error_not_a_stuck_thread(tmp_path):
    # open() of a FIFO without a writer blocked its executor thread for ever: the log never
    # showed, and q hung (asyncio waits for the default executor's threads at exit).
    fifo = tmp_path / "slurmd-c1.log"
    os.mkfifo(fifo)
    t = LocalTransport()
    for path, words in [(fifo, "not a regular file"), (tmp_path, "Is a directory")]:
        with pytest.raises(RemoteFileError, match=words):
            await asyncio.wait_for(t.read_range(str(path), 0, 100), 5)
    ok = tmp_path / "ok.log"
    ok.write_bytes(b"0123456789")
    assert await t.read_range(str(ok), 3, 4) == b"3456"
    assert await t.read_range(str(ok), 100, 4) == b""


@pytest.mark.lab
async def test_ssh_read_of_a_remote_fifo_is_an_error_and_later_reads_still_work(lab_ssh, tmp_path):
    # sftp-server blocked in open() of the FIFO, and every later read on the connection
    # (other logs of other jobs) waited behind it for ever.
    fifo = tmp_path / "slurmd-c1.log"
    os.mkfifo(fifo)
    ok = tmp_path / "slurmd-c2.log"
    ok.write_bytes(b"[2024-05-01T11:00:00] error: boom\n")
    t = SshTransport(
        lab_ssh.ssh_host,
        lab_ssh.ssh_port,
        lab_ssh.ssh_user,
        lab_ssh.ssh_key,
        lab_ssh.ssh_known_hosts,
        ssh_config=False,
    )
    try:
        for path, words in [(fifo, "not a regular file"), (tmp_path, "Is a directory")]:
            with pytest.raises(RemoteFileError, match=words):
                await asyncio.wait_for(t.read_range(str(path), 0, 100), 10)
        assert await asyncio.wait_for(t.read_range(str(ok), 22, 5), 10) == b"error"
    finally:
        await t.close()


def test_check_config_tries_once_and_says_nothing_of_retries(tmp_path):
    # a refused SSH port: the one-shot check said "connection refused (next retry in 1 s)"
    # after "config …: OK", as if it would try again and as if all were fine
    p = tmp_path / "c.toml"
    p.write_text(
        '[clusters.far]\ntransport = "ssh"\nhost = "127.0.0.1"\nport = 1\n'
        'known_hosts = "none"\ninsecure_ignore_host_key = true\n'
    )
    res = run_cockpit("check-config", "--config", str(p))
    assert res.returncode == 3  # the config is valid; no source answered
    assert "FAILS [unreachable]" in res.stdout and "connection refused" in res.stdout
    assert "next retry" not in res.stdout and ": OK" not in res.stdout


def test_check_config_of_a_file_naming_no_source_says_what_happens(tmp_path):
    p = tmp_path / "empty.toml"
    p.write_text("")
    res = run_cockpit("check-config", "--config", str(p))
    assert res.returncode == 0
    assert "names no [clusters.NAME]" in res.stdout and "demo" in res.stdout
