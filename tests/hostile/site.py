"""A demo site whose users are hostile: the real SlurmSource/ModelArtsSource over the demo
transport, with job names, comments, node reasons, log lines and ModelArts event messages
replaced by attacker-controlled text at the wire level (squeue bytes, scontrol bytes,
log file bytes, event JSON), so the whole path parser -> engine -> hub -> widgets is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from cockpit.demo.site import (
    DEMO_CLUSTER,
    DEMO_PROJECT,
    SLURMCTLD_LOG,
    SLURMD_LOG,
    DemoModelArtsApi,
    DemoSite,
    DemoTransport,
)
from cockpit.slurm.commands import SEP
from cockpit.transport import CommandResult, FileStat

NOW = datetime(2026, 11, 29, 20, 45, 0, tzinfo=UTC)
OOM_JOB = "48102"
DRAINED_NODE = "cn013"
LOG_PATH_SUFFIX = "slurm-48102.out"


def frozen() -> datetime:
    return NOW


class HostileTransport(DemoTransport):
    """Rewrites what the demo cluster prints. ``argvs`` records every argv sent."""

    def __init__(
        self, site: DemoSite, name_for: dict[str, str], reason: str, log_lines: list[str]
    ) -> None:
        super().__init__(site)
        self.name_for = name_for  # job id -> hostile name (also used as comment)
        self.reason = reason
        self.log_prefix = "".join(line + "\n" for line in log_lines).encode(
            "utf-8", "surrogateescape"
        )
        self.argvs: list[tuple[str, ...]] = []
        self.paths: list[str] = []

    async def run(self, argv, timeout: float = 30.0) -> CommandResult:
        self.argvs.append(tuple(argv))
        res = await super().run(argv, timeout)
        out = res.stdout
        if argv[0] == "squeue":
            rows = []
            for row in out.decode().split("\n"):
                cols = row.split(SEP)
                if len(cols) > 20 and cols[0] in self.name_for:
                    cols[2] = cols[20] = self.name_for[cols[0]]
                rows.append(SEP.join(cols))
            out = "\n".join(rows).encode()
        elif argv[:3] == ("scontrol", "show", "node") and self.reason:
            out = out.replace(b"Reason=Kill task failed", b"Reason=" + self.reason.encode())
        return CommandResult(res.argv, out, res.stderr, res.exit_status)

    def _hostile(self, path: str) -> bool:
        return path.endswith(LOG_PATH_SUFFIX) and bool(self.log_prefix)

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        self.paths.append(path)
        if not self._hostile(path):
            return await super().read_range(path, offset, length)
        st = await super().stat(path)
        data = self.log_prefix + await super().read_range(path, 0, st.size)
        return data[offset : offset + length]

    async def stat(self, path: str) -> FileStat:
        self.paths.append(path)
        st = await super().stat(path)
        if self._hostile(path):
            return FileStat(st.size + len(self.log_prefix), st.mtime)
        return st


class HostileModelArtsApi(DemoModelArtsApi):
    """Every event message gets ``message`` appended; job names of every item become ``name``."""

    def __init__(self, site: DemoSite, message: str, name: str = "") -> None:
        super().__init__(site)
        self.message, self.name = message, name
        self.calls: list[str] = []

    def list_training_jobs(self, offset: int, limit: int, phases: Sequence[str] = ()) -> dict:
        self.calls.append("list_training_jobs")
        d = super().list_training_jobs(offset, limit, phases)
        if self.name:
            for it in d["items"]:
                it["metadata"]["name"] = self.name
        return d

    def list_events(self, job_id: str) -> dict:
        self.calls.append("list_events")
        d = super().list_events(job_id)
        for e in d["events"]:
            e["message"] = e["message"] + " " + self.message
        return d


def hostile_sources(
    text: str, *, log_lines: list[str] | None = None, jobs: tuple[str, ...] = (OOM_JOB,)
):
    """(slurm source, modelarts source, transport, api) with ``text`` planted everywhere."""
    from cockpit.modelarts.source import ModelArtsSource
    from cockpit.slurm.source import SlurmSource

    site = DemoSite(7, frozen)
    transport = HostileTransport(
        site, {j: text for j in jobs}, text, log_lines if log_lines is not None else [text]
    )
    api = HostileModelArtsApi(site, text, name=text)
    slurm = SlurmSource(
        DEMO_CLUSTER,
        transport,
        interval=3600,
        clock=frozen,
        slurmctld_log=SLURMCTLD_LOG,
        slurmd_log=SLURMD_LOG,
    )
    ma = ModelArtsSource(DEMO_PROJECT, api, interval=3600, clock=frozen)
    return slurm, ma, transport, api


def screen_lines(app) -> list[str]:
    """What the terminal would show: the composited screen, one string per row."""
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


def screen_segments(app):
    for strip in app.screen._compositor.render_strips():
        yield from strip
