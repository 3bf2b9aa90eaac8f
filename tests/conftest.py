"""Shared fixtures: the local Slurm lab (lab/slurm-up.sh + lab/sshd-up.sh) and helpers.

Lab tests skip with a reason unless we are root and ``sinfo`` answers. Waiting is
always by polling a condition with a deadline, never a fixed sleep.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_textual_snapshot

# the session's PostgreSQL (started on first use) and the store URLs on both backends
pytest_plugins = ["tests.pg"]

# Rich's SVG export draws one <rect>/<text> per segment, and Textual splits a line into segments
# differently depending on what its caches already hold (a cell's background as one run or as
# three): the same picture, different SVG, and a snapshot test that fails or passes by test
# order. Snapshots are compared (and stored) with adjacent runs of one fill or one text class
# joined: what a person sees, not how it was cut.
_RECT = re.compile(
    r'<rect fill="(?P<fill>[^"]+)" x="(?P<x>[\d.]+)" y="(?P<y>[\d.]+)" width="(?P<w>[\d.]+)" '
    r'height="(?P<h>[\d.]+)" shape-rendering="crispEdges"/>'
)
_TEXT = re.compile(
    r'<text class="(?P<cls>[^"]+)" x="(?P<x>[\d.]+)" y="(?P<y>[\d.]+)" '
    r'textLength="(?P<w>[\d.]+)" clip-path="(?P<clip>[^"]+)">(?P<body>[^<]*)</text>'
)


_CELL = 12.2  # px per terminal cell in Textual's SVG export
_NBSP = "&#160;"


def _join_runs(svg: str, pattern: re.Pattern[str], same: tuple[str, ...], draw, blank=False) -> str:
    """Adjacent runs that match on ``same`` joined; with ``blank``, runs that only a gap of blank
    cells separates as well (Rich draws no <text> for a blank segment), blank ends trimmed."""
    out: list[str] = []
    pos = 0
    run: dict | None = None

    def flush(r: dict) -> str:
        if blank:
            body, x, w = r["body"], float(r["x"]), float(r["w"])
            while body.startswith(_NBSP):
                body, x, w = body[len(_NBSP) :], x + _CELL, w - _CELL
            while body.endswith(_NBSP):
                body, w = body[: -len(_NBSP)], w - _CELL
            if not body:
                return ""  # all blank: as if Rich had drawn no text there
            r = dict(r, body=body, x=f"{x:.1f}", w=f"{w:.1f}")
        return draw(r)

    for m in pattern.finditer(svg):
        gap = svg[pos : m.start()]
        d = m.groupdict()
        apart = float(d["x"]) - float(run["x"]) - float(run["w"]) if run else -1.0
        cells = round(apart / _CELL)
        if (
            run is not None
            and not gap.strip()
            and all(run[k] == d[k] for k in same)
            and (abs(apart) < 0.05 or (blank and cells > 0 and abs(apart - cells * _CELL) < 0.05))
        ):
            fill = _NBSP * cells if blank and cells > 0 else ""
            run["w"] = f"{float(d['x']) + float(d['w']) - float(run['x']):.1f}"
            run["body"] = run.get("body", "") + fill + d.get("body", "")
        else:
            if run is not None:
                out.append(flush(run))
            out.append(gap)
            run = dict(d, w=f"{float(d['w']):.1f}", x=f"{float(d['x']):.1f}")
        pos = m.end()
    if run is not None:
        out.append(flush(run))
    out.append(svg[pos:])
    return "".join(out)


def _canonical_svg(svg: str, _normalize=pytest_textual_snapshot.normalize_svg) -> str:
    svg = _normalize(svg)
    svg = _join_runs(
        svg,
        _RECT,
        ("fill", "y", "h"),
        lambda r: (
            f'<rect fill="{r["fill"]}" x="{r["x"]}" y="{r["y"]}" width="{r["w"]}" '
            f'height="{r["h"]}" shape-rendering="crispEdges"/>'
        ),
    )
    return _join_runs(
        svg,
        _TEXT,
        ("cls", "y", "clip"),
        lambda t: (
            f'<text class="{t["cls"]}" x="{t["x"]}" y="{t["y"]}" textLength="{t["w"]}" '
            f'clip-path="{t["clip"]}">{t["body"]}</text>'
        ),
        blank=True,
    )


pytest_textual_snapshot.normalize_svg = _canonical_svg

LAB_DIR = Path(os.environ.get("SLURM_LAB_DIR", "/tmp/slurmlab"))
REPO = Path(__file__).resolve().parent.parent


class _ErrorRecords(logging.Handler):
    """Keeps the ERROR and CRITICAL records logged while one test runs."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def _own_state_dir(tmp_path_factory, monkeypatch):
    """Each test's own XDG state dir: the incident store (cockpit.db), alert history and acks a
    command writes there by default must not land in the tester's (or leak between tests)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(autouse=True)
def _english(monkeypatch):
    """Tests read English unless they choose Chinese (``i18n.set_language`` or ``--lang zh``):
    a tester's zh_CN locale must not change what they expect, and a language one test chose
    (``main(["--lang", "zh", ...])``) must not leak into the next."""
    from cockpit import i18n

    if i18n.from_environment() not in (None, "en"):
        monkeypatch.setenv("LANGUAGE", "en")
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.fixture(autouse=True)
def _no_error_logs(request: pytest.FixtureRequest):
    """Fail a test that logs at ERROR or above unless it is marked ``expect_error_log``.

    A swallowed exception logged at ERROR is how a bug hides behind a green test (a fake
    engine missing ``diagnose(kinds=...)`` logged a TypeError on every run and passed).
    """
    handler = _ErrorRecords()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
    if handler.records and request.node.get_closest_marker("expect_error_log") is None:
        first = handler.records[0]
        detail = first.getMessage()
        if first.exc_info and first.exc_info[1] is not None:
            detail += f" ({type(first.exc_info[1]).__name__}: {first.exc_info[1]})"
        pytest.fail(
            f"{len(handler.records)} record(s) logged at ERROR or above; first from "
            f"{first.name}: {detail[:500]} (mark the test expect_error_log if it means to)",
            pytrace=False,
        )


def read_env_file(path: Path) -> dict[str, str]:
    """``export K=V`` lines of the lab's env.sh files."""
    out: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            m = re.match(r"\s*export\s+([A-Z_][A-Z0-9_]*)=(.*)$", line)
            if m:
                out[m.group(1)] = m.group(2).strip().strip('"').strip("'")
    return out


@dataclass(frozen=True)
class LabEnv:
    dir: Path
    ctld_log: str
    slurmd_log_pattern: str
    jobs_dir: str
    cgroup: bool
    ssh_host: str
    ssh_port: int
    ssh_user: str
    ssh_key: str
    ssh_known_hosts: str
    env: dict[str, str]

    def run(
        self, *argv: str, check: bool = True, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
            env={**os.environ, **self.env},
        )

    def sbatch(self, *args: str) -> str:
        """Submit into the lab (work dir = jobs dir); returns the job id."""
        res = self.run("sbatch", "--parsable", "-D", self.jobs_dir, *args)
        return res.stdout.strip().split(";")[0]

    def scancel(self, *job_ids: str) -> None:
        self.run("scancel", *job_ids, check=False)

    def job_state(self, job_id: str) -> tuple[str, str]:
        """(state, reason) from squeue, '' when squeue no longer lists it."""
        res = self.run("squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T|%r", check=False)
        line = res.stdout.strip().splitlines()[:1]
        return tuple(line[0].split("|", 1)) if line else ("", "")  # type: ignore[return-value]

    def wait_state(self, job_id: str, states: set[str], timeout: float = 60) -> str:
        return wait_for(
            lambda: (s := self.job_state(job_id)[0]) in states and s,
            timeout,
            f"job {job_id} to reach {sorted(states)}",
        )

    def ctld_pid(self) -> int:
        return int((self.dir / "run" / "slurmctld.pid").read_text().split()[0])

    def slurm_up(self) -> None:
        subprocess.run(
            ["bash", str(REPO / "lab" / "slurm-up.sh")],
            check=True,
            capture_output=True,
            timeout=180,
        )


def wait_for(cond: Callable[[], Any], timeout: float, what: str, every: float = 0.3) -> Any:
    """Poll ``cond`` until truthy (returns its value) or fail the test after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(every)


async def await_for(cond: Callable[[], Any], timeout: float, what: str, every: float = 0.3) -> Any:
    """Async ``wait_for``: ``cond`` may be a coroutine function."""
    import asyncio
    import inspect

    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(every)


@pytest.fixture(scope="session")
def lab_env() -> LabEnv:
    if os.geteuid() != 0:
        pytest.skip("Slurm lab needs root (run lab/slurm-up.sh as root)")
    if not shutil.which("sinfo"):
        pytest.skip(
            "Slurm lab not installed: run `bash lab/slurm-up.sh --fresh && bash lab/sshd-up.sh`"
        )
    env = read_env_file(LAB_DIR / "env.sh")
    ssh = read_env_file(LAB_DIR / "ssh" / "env.sh")
    if not env:
        pytest.skip(f"Slurm lab not up: {LAB_DIR}/env.sh missing (run lab/slurm-up.sh)")
    try:
        res = subprocess.run(
            ["sinfo", "-h"], capture_output=True, text=True, timeout=15, env={**os.environ, **env}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"Slurm lab does not answer: {exc}")
    if res.returncode != 0:
        pytest.skip(f"Slurm lab does not answer: {res.stderr.strip()[:200]}")
    return LabEnv(
        dir=LAB_DIR,
        ctld_log=env.get("SLURM_LAB_CTLD_LOG", str(LAB_DIR / "log" / "slurmctld.log")),
        slurmd_log_pattern=env.get(
            "SLURM_LAB_SLURMD_LOG_PATTERN", str(LAB_DIR / "log" / "slurmd-%n.log")
        ),
        jobs_dir=env.get("SLURM_LAB_JOBS_DIR", str(LAB_DIR / "jobs")),
        cgroup=env.get("SLURM_LAB_CGROUP", "1") != "0",
        ssh_host=ssh.get("SLURM_LAB_SSH_HOST", "127.0.0.1"),
        ssh_port=int(ssh.get("SLURM_LAB_SSH_PORT", "2222")),
        ssh_user=ssh.get("SLURM_LAB_SSH_USER", "root"),
        ssh_key=ssh.get("SLURM_LAB_SSH_KEY", ""),
        ssh_known_hosts=ssh.get("SLURM_LAB_SSH_KNOWN_HOSTS", ""),
        env=env,
    )


@pytest.fixture(scope="session")
def lab_ssh(lab_env: LabEnv) -> LabEnv:
    if not lab_env.ssh_key or not Path(lab_env.ssh_key).exists():
        pytest.skip("lab sshd not up: run `bash lab/sshd-up.sh`")
    return lab_env


def make_lab_source(lab: LabEnv, transport: str, **kw: Any) -> Any:
    from cockpit.slurm.source import SlurmSource
    from cockpit.transport import LocalTransport, SshTransport

    if transport == "local":
        t: Any = LocalTransport()
    else:
        t = SshTransport(
            lab.ssh_host,
            lab.ssh_port,
            lab.ssh_user,
            lab.ssh_key,
            lab.ssh_known_hosts,
            connect_timeout=5,
            ssh_config=False,
        )
    return SlurmSource(
        f"lab-{transport}",
        t,
        slurmctld_log=lab.ctld_log,
        slurmd_log=lab.slurmd_log_pattern,
        interval=5,
        **kw,
    )


@pytest.fixture
async def local_lab_source(lab_env: LabEnv):
    src = make_lab_source(lab_env, "local")
    yield src
    await src.close()


@pytest.fixture
async def ssh_lab_source(lab_ssh: LabEnv):
    src = make_lab_source(lab_ssh, "ssh")
    yield src
    await src.close()


@pytest.fixture(params=["local", "ssh"])
async def lab_source(request, lab_env: LabEnv):
    """The SlurmSource over each transport in turn."""
    if request.param == "ssh":
        request.getfixturevalue("lab_ssh")
    src = make_lab_source(lab_env, request.param)
    yield src
    await src.close()
