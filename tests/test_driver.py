"""cockpit.driver: an input thread that sleeps until there is input, yet keys, a lone ESC,
quit and suspend/resume behave as with Textual's stock driver."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import tty
import uuid

import pytest
from textual import events
from textual.drivers.linux_driver import LinuxDriver

from cockpit.app import CockpitApp
from cockpit.driver import CockpitDriver
from tests.test_tmux import alive, capture, press, tmux, wait_for

needs_tmux = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
)


# --- which driver the app picks ---------------------------------------------------------


def test_the_app_uses_the_sleeping_driver_where_textual_would_use_linux_driver():
    assert CockpitApp([]).driver_class is CockpitDriver


def test_a_driver_named_in_textual_driver_is_respected(monkeypatch):
    from textual import constants

    monkeypatch.setattr(constants, "DRIVER", "textual.drivers.linux_driver:LinuxDriver")
    assert CockpitApp([]).driver_class is LinuxDriver


# --- the input thread in-process, on a pty ----------------------------------------------


class _Captured(CockpitDriver):
    """Events go to a queue instead of an app."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.got: queue.Queue = queue.Queue()
        self.threads: list[threading.Thread] = []

    def process_message(self, message) -> None:
        self.got.put(message)


@pytest.fixture
async def pty_driver():
    """A driver reading a pty's slave end; yields (driver, master fd). Restores the signal
    handlers the driver installs."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTSTP, signal.SIGCONT)}
    master, slave = os.openpty()
    tty.setraw(slave)  # as in application mode: bytes readable as typed, no line editing
    driver = _Captured(object())
    driver.fileno = slave
    try:
        yield driver, master
    finally:
        driver.exit_event.set()
        for thread in driver.threads:
            thread.join(5)
        driver.close()
        os.close(master)
        os.close(slave)
        for s, h in saved.items():
            signal.signal(s, h)


def _start(driver, target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    driver.threads.append(thread)
    thread.start()
    time.sleep(0.2)  # past start-up
    return thread


def _wakeups(thread: threading.Thread, seconds: float) -> int:
    """How many times ``thread`` gave up the CPU voluntarily (slept and woke) in ``seconds``."""

    def count() -> int:
        with open(f"/proc/self/task/{thread.native_id}/status") as f:
            return next(
                int(line.split()[1]) for line in f if line.startswith("voluntary_ctxt_switches")
            )

    before = count()
    time.sleep(seconds)
    return count() - before


def _next_key(driver, timeout: float = 2.0) -> events.Key:
    deadline = time.monotonic() + timeout
    while True:
        message = driver.got.get(timeout=max(0.01, deadline - time.monotonic()))
        if isinstance(message, events.Key):
            return message


def _stop(driver, thread) -> float:
    """Seconds from ``exit_event.set()`` (what ``disable_input`` does) to the thread's end."""
    t0 = time.monotonic()
    driver.exit_event.set()
    thread.join(5)
    assert not thread.is_alive()
    driver.exit_event.clear()
    return time.monotonic() - t0


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
async def test_idle_input_thread_sleeps_where_the_stock_one_polls(pty_driver):
    driver, _master = pty_driver
    stock = _start(driver, lambda: LinuxDriver.run_input_thread(driver))
    stock_wakeups = _wakeups(stock, 1.0)
    _stop(driver, stock)
    ours = _start(driver, driver.run_input_thread)
    our_wakeups = _wakeups(ours, 1.0)
    _stop(driver, ours)
    assert stock_wakeups >= 5  # the measure sees the stock select(0.1) loop
    assert our_wakeups <= 1


def _cpu_s(thread: threading.Thread) -> float:
    with open(f"/proc/self/task/{thread.native_id}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
async def test_stdin_at_end_of_file_does_not_spin(pty_driver):
    """``cockpit < /dev/null``: the input stays readable (EOF) forever; the thread must not
    loop on it at 100 % CPU, and quitting still stops it at once."""
    driver, _master = pty_driver
    r, w = os.pipe()
    os.close(w)
    driver.fileno = r
    try:
        thread = _start(driver, driver.run_input_thread)
        before = _cpu_s(thread)
        time.sleep(1.0)
        assert _cpu_s(thread) - before < 0.2
        assert _stop(driver, thread) < 0.5
    finally:
        os.close(r)


async def test_keys_a_lone_escape_and_a_prompt_stop(pty_driver):
    driver, master = pty_driver
    thread = _start(driver, driver.run_input_thread)
    os.write(master, "aé".encode())
    assert _next_key(driver).key == "a"
    assert _next_key(driver).character == "é"  # two UTF-8 bytes, decoded as one key
    # A lone ESC can only be told from the start of a sequence by the escape delay running
    # out: the thread must wake for that deadline although no more bytes come.
    os.write(master, b"\x1b")
    assert _next_key(driver).key == "escape"
    assert _wakeups(thread, 0.5) <= 1  # and back to sleep after it
    assert _stop(driver, thread) < 0.5  # woken by the pipe (without it: never)


async def test_input_works_again_after_close_as_on_suspend_and_resume(pty_driver):
    driver, master = pty_driver
    _stop(driver, _start(driver, driver.run_input_thread))
    driver.close()  # suspend_application_mode: stop, then close; resume starts a new thread
    driver.exit_event.set()  # stop_application_mode after close: must not write a closed fd
    driver.exit_event.clear()
    thread = _start(driver, driver.run_input_thread)
    os.write(master, b"q")
    assert _next_key(driver).key == "q"
    assert _stop(driver, thread) < 0.5


# --- the real cockpit in tmux -------------------------------------------------------------


def _pane_python_pid(session: str) -> int:
    """The pid of the python process in the session's pane (pane's shell, or itself)."""
    pane = int(tmux("list-panes", "-t", session, "-F", "#{pane_pid}").split()[0])
    children = subprocess.run(
        ["pgrep", "-P", str(pane), "-f", "cockpit"], capture_output=True, text=True
    ).stdout.split()
    return int(children[0]) if children else pane


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@needs_tmux
def test_cockpit_in_tmux_keys_escape_quit_and_suspend(tmp_path):
    """In an interactive shell: ``?`` opens help and a lone Escape closes it; after ctrl+z and
    ``fg`` the screen is whole again and keys still work; ``q`` ends the process within a second."""
    session = f"cockpit-drv-{uuid.uuid4().hex[:8]}"
    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "bash --norc --noprofile")
    try:
        env = f"XDG_STATE_HOME={tmp_path} XDG_CONFIG_HOME={tmp_path} TERM=xterm-256color"
        tmux(
            "send-keys",
            "-t",
            session,
            f"cd {tmp_path} && {env} {sys.executable} -m cockpit --demo --no-bell",
            "Enter",
        )
        wait_for(session, "DEMO SITE", "JOBID", "critical")
        pid = _pane_python_pid(session)
        press(session, "?")
        wait_for(session, "Cockpit keys")
        press(session, "Escape")
        assert "Cockpit keys" not in capture(session), "a lone Escape should close the help"

        press(session, "C-z")  # the app's ctrl+z binding (the terminal's own is off in raw mode)
        wait_for(session, "Stopped")
        tmux("send-keys", "-t", session, "clear; fg", "Enter")
        # the whole screen is drawn again (Textual alone repaints only what changes next)
        wait_for(session, "DEMO SITE", "JOBID", "NODE", "ModelArts training jobs")
        press(session, "?")
        wait_for(session, "Cockpit keys")
        press(session, "Escape")

        tmux("send-keys", "-t", session, "q")
        assert _gone_within(pid, 1.0), "q should end the process at once (input thread joined)"
        tmux("send-keys", "-t", session, "echo EXITED=$?", "Enter")  # fg's status: the app's
        assert "EXITED=0" in wait_for(session, "EXITED=")
    finally:
        if alive(session):
            tmux("kill-session", "-t", session)
