"""Smoke test in a real terminal: ``cockpit --demo`` in a detached tmux session."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
)


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def capture(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session)


def wait_for(session: str, *texts: str, timeout: float = 20.0) -> str:
    """The screen once every text is on it at the same time (frames are drawn in parts)."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(session)
        if all(t in screen for t in texts):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{texts!r} never appeared together; screen was:\n{screen}")


def press(session: str, key: str) -> None:
    """Send one key; a pause after it so ESC is not read as the start of alt+<next key>."""
    tmux("send-keys", "-t", session, key)
    time.sleep(0.4)


def alive(session: str) -> bool:
    return (
        subprocess.run(["tmux", "has-session", "-t", session], capture_output=True).returncode == 0
    )


@contextmanager
def cockpit_in_tmux(
    tmp_path, args: str, env: str = "TERM=xterm-256color", size=("120", "40"), linger: int = 1
) -> Iterator[str]:
    """``cockpit ARGS`` in a detached tmux session with its state and config dirs in
    ``tmp_path``; prints EXITED=<status> when it ends, then lingers ``linger`` s so the screen
    can be read. Yields the session name; the session is killed on the way out."""
    session = f"cockpit-test-{uuid.uuid4().hex[:8]}"
    env = f"{env} XDG_STATE_HOME={tmp_path} XDG_CONFIG_HOME={tmp_path}"
    cmd = (
        f"cd {tmp_path} && {env} {sys.executable} -m cockpit {args}; echo EXITED=$?; sleep {linger}"
    )
    tmux("new-session", "-d", "-s", session, "-x", size[0], "-y", size[1], cmd)
    try:
        yield session
    finally:
        if alive(session):
            tmux("kill-session", "-t", session)


def test_demo_in_tmux(tmp_path):
    with cockpit_in_tmux(tmp_path, "--demo") as session:
        # header, the three panes, the incidents strip after the first poll, the DOWN* node
        wait_for(session, "DEMO SITE", "JOBID", "Nodes", "ModelArts", "critical", "DOWN*")
        press(session, "i")
        wait_for(session, "SEV", "SUBJECT", "CRIT", "open,")  # the incident view
        press(session, "Escape")
        press(session, "?")
        wait_for(session, "Cockpit keys")
        press(session, "Escape")
        press(session, "q")
        screen = wait_for(session, "EXITED=")
        assert "EXITED=0" in screen
        assert "Traceback" not in screen
        deadline = time.monotonic() + 10
        while alive(session) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(session), "the session should end after q"


def test_no_color_is_honoured(tmp_path):
    """NO_COLOR: still usable (states readable as text)."""
    with cockpit_in_tmux(
        tmp_path, "--demo --no-bell", env="NO_COLOR=1", size=("80", "24"), linger=5
    ) as session:
        wait_for(session, "JOBID", "STATE", "critical", "Nodes")
        press(session, "q")
        assert "EXITED=0" in wait_for(session, "EXITED=")


def test_the_demo_without_a_config_writes_nothing_a_real_site_reads(tmp_path):
    # `cockpit` with no config opens the demo; its alerts went to the real alerts.jsonl (and
    # `cockpit alerts --config real.toml` then listed /scratch @demo-hpc) and its baselines
    # to init-baselines.json
    with cockpit_in_tmux(tmp_path, "") as session:
        wait_for(session, "DEMO SITE", "no config", "critical")
        time.sleep(3)  # a few polls: the demo's alerts fire on the first
        press(session, "Q")
        wait_for(session, "EXITED=0")
    written = sorted(p.name for p in (tmp_path / "cockpit").glob("*"))
    assert "alerts.jsonl" not in written and "init-baselines.json" not in written, written
    assert any(name.startswith("cockpit-demo.db") for name in written), written


def test_a_new_demo_run_starts_from_an_empty_demo_store(tmp_path, monkeypatch):
    """The demo's clock restarts with every run; the last run's acks and incidents stayed in
    the demo store (an ack "0 s ago", "(gone)" moving between incidents). A new TUI run starts
    from an empty one; `incidents --demo` beside it reads the running demo's store."""
    import json
    import os
    from datetime import UTC, datetime

    from cockpit.store import open_store

    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}

    def incidents() -> str:
        return subprocess.run(
            [sys.executable, "-m", "cockpit", "incidents", "--demo"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        ).stdout.splitlines()[0]  # fmt: skip

    key = json.loads(
        subprocess.run(
            [sys.executable, "-m", "cockpit", "incidents", "--demo", "--json"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        ).stdout
    )["incidents"][0]["key"]  # fmt: skip
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    store = open_store(demo=True)
    store.ack(key, "alice", "an earlier demo run", datetime.now(UTC))
    store.close()
    assert "1 acknowledged" in incidents()  # the one-shot head reads the demo store as it is
    with cockpit_in_tmux(tmp_path, "--demo --no-bell") as session:
        screen = wait_for(session, "DEMO SITE", "critical", "Queue")
        assert "acked" not in screen  # the strip counts acks only when there are some
        press(session, "q")
        wait_for(session, "EXITED=0")
    assert "0 acknowledged" in incidents()


def test_the_demo_in_chinese_is_the_demo(tmp_path):
    """`LANG=zh_CN.UTF-8 cockpit --demo`: the demo was told by its banner's English words, so
    in Chinese it ran without the demo's clock (every source STALE, "初始化中 7551 分钟") and
    wrote the real site's store (cockpit.db)."""
    with cockpit_in_tmux(
        tmp_path, "--demo --no-bell", env="TERM=xterm-256color LANG=zh_CN.UTF-8"
    ) as session:
        screen = wait_for(session, "演示", "队列")
        time.sleep(2)
        screen = capture(session)
        assert "过期" not in screen  # not stale: the demo's clock
        press(session, "q")
        wait_for(session, "EXITED=0")
    written = sorted(p.name for p in (tmp_path / "cockpit").glob("*.db"))
    assert written == ["cockpit-demo.db"], written


def test_the_no_config_banner_is_whole_at_80_columns(tmp_path):
    """The instruction a new user needs ("put [clusters.NAME] in … and run `cockpit
    check-config`") was cut at "Add a real cluster: put" in an 80-column pane."""
    with cockpit_in_tmux(tmp_path, "--no-bell", size=("80", "24")) as session:
        wait_for(session, "DEMO SITE", "Queue")
        screen = wait_for(session, "[clusters.NAME]", "cockpit check-config", timeout=5)
        assert "Queue" in screen
        press(session, "q")
        wait_for(session, "EXITED=0")
