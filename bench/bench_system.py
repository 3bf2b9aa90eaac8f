"""Benchmarks 4-6: idle CPU, start-up, controller load.

* idle: CPU seconds (``/proc/<pid>/stat`` utime+stime) of ``cockpit --demo`` in tmux
  over a window with no key pressed, after its first poll;
* start-up: launch in tmux -> the dashboard header in ``capture-pane`` (polled every
  10 ms; tmux's server is started beforehand; with a bytecode cache, as installed, and
  once without), plus ``python -X importtime`` offenders
  and whether any ``huaweicloudsdk*`` module is imported by the TUI's start-up path;
* controller: a headless app against a config with one local cluster whose PATH has the
  fake executables (interval 5 s, ``--evidence failures|drill-down``), the dashboard alone,
  then a failed job's screen and its log open; counts the fakes' invocations.

    python bench/bench_system.py idle|startup|controller [--seconds N] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HEADER = "Cockpit"
TICKS = os.sysconf("SC_CLK_TCK")
# A user's install has bytecode (pip compiles it; a checkout writes __pycache__ on first run),
# and so has the Textual reference in site-packages. Under PYTHONDONTWRITEBYTECODE=1 cockpit
# alone would recompile ~80 modules on every start (~0.3 s): give it a bytecode cache.
PYC = Path(tempfile.gettempdir()) / "cockpit-bench-pycache"
PY_ENV = f"env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX={PYC}"


def _py_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(PYC)
    return env


def _tmux(*args: str, check: bool = True) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=check).stdout


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)


def _python_pid(pane_pid: int) -> int:
    """The pane runs ``sh -c CMD`` or CMD itself; return the python process."""
    for _ in range(100):
        if "python" in Path(f"/proc/{pane_pid}/cmdline").read_bytes().decode(errors="replace"):
            return pane_pid
        kids = Path(f"/proc/{pane_pid}/task/{pane_pid}/children").read_text().split()
        if kids:
            pane_pid = int(kids[0])
            continue
        time.sleep(0.05)
    return pane_pid


class TmuxApp:
    """``cockpit --demo`` in a detached tmux session of 160x48."""

    def __init__(self, name: str) -> None:
        self.session = f"cockpit-bench-{name}-{os.getpid()}"

    def start(self, cmd: str = "") -> float:
        """Launch (default ``cockpit --demo``); seconds until a frame shows the header."""
        cmd = cmd or f"cd {ROOT} && exec {PY_ENV} {sys.executable} -m cockpit --demo --no-bell"
        t0 = time.perf_counter()
        _tmux("new-session", "-d", "-s", self.session, "-x", "160", "-y", "48", cmd)
        while time.perf_counter() - t0 < 30:
            if HEADER in _tmux("capture-pane", "-p", "-t", self.session, check=False):
                return time.perf_counter() - t0
            time.sleep(0.01)
        raise RuntimeError(
            "no header within 30 s:\n"
            + _tmux("capture-pane", "-p", "-t", self.session, check=False)
        )

    def pid(self) -> int:
        return _python_pid(
            int(_tmux("list-panes", "-t", self.session, "-F", "#{pane_pid}").split()[0])
        )

    def stop(self) -> None:
        _tmux("kill-session", "-t", self.session, check=False)


def _ensure_server() -> TmuxApp:
    keeper = TmuxApp("server")
    _tmux("new-session", "-d", "-s", keeper.session, "sleep 3600")
    return keeper


def idle(seconds: float) -> dict:
    keeper = _ensure_server()
    app = TmuxApp("idle")
    try:
        app.start()
        pid = app.pid()
        time.sleep(5)  # first polls, diagnosis, first full render
        c0, t0 = _cpu_s(pid), time.perf_counter()
        time.sleep(seconds)
        c1, t1 = _cpu_s(pid), time.perf_counter()
        return {
            "idle_window_s": t1 - t0,
            "idle_cpu_s": c1 - c0,
            "idle_core_pct": 100 * (c1 - c0) / (t1 - t0),
        }
    finally:
        app.stop()
        keeper.stop()


HELLO = """from textual.app import App
from textual.widgets import Static
class Hello(App):
    def compose(self):
        yield Static("Cockpit")
Hello().run()
"""


def startup(runs: int = 3) -> dict:
    """First frame of ``cockpit --demo`` and, as the floor, of a one-widget Textual app."""
    keeper = _ensure_server()
    times, hello = [], []
    script = Path(tempfile.mkdtemp(prefix="cockpit-bench-")) / "hello.py"
    script.write_text(HELLO)
    # fill the bytecode cache, then one start without any (a fresh checkout's first run)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "cockpit"), str(script)],
        env=_py_env(),
        check=True,
    )
    cold = TmuxApp("cold")
    try:
        nocache = cold.start(
            f"cd {ROOT} && exec env PYTHONDONTWRITEBYTECODE=1 "
            f"{sys.executable} -m cockpit --demo --no-bell"
        )
    finally:
        cold.stop()
    try:
        for i in range(runs):
            for cmd, into in (("", times), (f"exec {PY_ENV} {sys.executable} {script}", hello)):
                app = TmuxApp(f"start{i}")
                try:
                    into.append(app.start(cmd))
                finally:
                    app.stop()
    finally:
        keeper.stop()
        shutil.rmtree(script.parent, ignore_errors=True)
    # import time of the TUI module, in a fresh interpreter, best of 3
    imp = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "import cockpit.app"], cwd=ROOT, check=True, env=_py_env()
        )
        imp.append(time.perf_counter() - t)
    bare = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t)
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import cockpit.app"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=_py_env(),
    )
    top: list[tuple[int, str]] = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(3)) == 3:  # what cockpit.app imports directly
            top.append((int(m.group(2)), m.group(4)))
    top.sort(reverse=True)
    probe = (
        "import sys, cockpit.cli, cockpit.app, cockpit.commands.tui, cockpit.connect as f; "
        "f.demo(); print(sorted({m.split('.')[0] for m in "
        "sys.modules if m.startswith('huaweicloud')}))"
    )
    sdk = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    return {
        "first_frame_s": statistics.median(times),
        "first_frame_runs": times,
        "first_frame_no_bytecode_s": nocache,
        "hello_first_frame_s": statistics.median(hello),
        "import_app_s": min(imp),
        "python_bare_s": min(bare),
        "importtime_top": [f"{name} {us / 1000:.0f} ms" for us, name in top[:6]],
        "sdk_imported_at_startup": sdk,
    }


def controller(seconds: float, jobs: int = 1000, evidence: str = "failures") -> dict:
    from bench.fake_slurm import count_calls, generate

    site = generate(f"/tmp/cockpit-fake-{jobs}", jobs, 10_000)
    os.environ["PATH"] = site.env()["PATH"]
    cfg_dir = Path(tempfile.mkdtemp(prefix="cockpit-bench-cfg-"))
    cfg = cfg_dir / "config.toml"
    cfg.write_text(
        '[clusters.fake]\ntransport = "local"\ninterval '
        f'= 5\nslurmctld_log = "{site.slurmctld_log}"\n'
        f'evidence = "{evidence}"\n'
    )

    async def run() -> dict:
        from cockpit.app import CockpitApp
        from cockpit.connect import select_sources
        from cockpit.model import Subject
        from cockpit.store.acks import AckStore

        sources = select_sources(argparse.Namespace(config=str(cfg), demo=False))
        app = CockpitApp(sources, bell=False, acks=AckStore(None))
        async with app.run_test(size=(160, 48)) as pilot:
            t0 = time.perf_counter()
            await asyncio.wait_for(app.hub.first_round.wait(), 60)
            # first the dashboard alone (background evidence only), then a job and its log open
            while time.perf_counter() - t0 < seconds / 2:
                await pilot.pause(1)
            dash_polls, dash_counts = app.hub.states["fake"].polls, count_calls(site)
            app.open_subject(Subject("job", "fake", site.failed_ids[0]))
            await pilot.pause(2)
            await pilot.press("l")  # the job's log
            await pilot.pause(2)
            screens = [type(s).__name__ for s in app.screen_stack]
            while time.perf_counter() - t0 < seconds:
                await pilot.pause(1)
            elapsed = time.perf_counter() - t0
            polls = app.hub.states["fake"].polls
        counts = count_calls(site)
        per_min = {k: round(v * 60 / elapsed, 1) for k, v in sorted(counts.items())}
        drill = {k: v - dash_counts.get(k, 0) for k, v in counts.items()}
        return {
            "controller_window_s": elapsed,
            "polls": polls,
            "interval_s": 5,
            "evidence": evidence,
            "calls": counts,
            "calls_per_min": per_min,
            "screens": screens,
            "dashboard_polls": dash_polls,
            "dashboard_calls": dash_counts,
            "drilldown_polls": polls - dash_polls,
            "drilldown_calls": drill,
        }

    try:
        site.calls.write_text("")
        return asyncio.run(run())
    finally:
        shutil.rmtree(cfg_dir, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["idle", "startup", "controller"])
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--evidence",
        choices=["failures", "drill-down"],
        default="failures",
        help="controller: the cluster's evidence setting",
    )
    args = ap.parse_args()
    if args.what == "idle":
        r = idle(args.seconds or 60)
    elif args.what == "startup":
        r = startup()
    else:
        r = controller(args.seconds or 30, evidence=args.evidence)
    print(json.dumps(r) if args.json else json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
