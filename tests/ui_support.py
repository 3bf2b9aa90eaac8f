"""A tiny hand-built site for UI tests that do not need the demo (hostile strings, failures)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.model import (
    Artifacts,
    LogLocation,
    LogText,
    SlurmJob,
    SlurmNode,
    Snapshot,
    SourceError,
    Subject,
)
from cockpit.source import Source
from cockpit.transport import FileStat, RemoteFileError

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def frozen() -> datetime:
    return NOW


LOG = b"".join(
    [
        b"starting\n",
        *[f"step {i} ok\n".encode() for i in range(1, 40)],
        b"slurmstepd: error: Detected 1 oom_kill event in "
        b"StepId=4.batch. Some of the step tasks have been OOM Killed.\n",
        *[f"cleanup {i}\n".encode() for i in range(1, 30)],
        b"Traceback (most recent call last):\n",
        b"RuntimeError: CUDA error: out of memory\n",
        b"done\n",
    ]
)


class BareSource(Source):
    """A Source with no data and no logs, for a test fake that needs only one or two of its
    methods (the contract is an ABC: every abstract method must exist to build one)."""

    kind = "slurm"
    name = "bare"
    interval = 3600.0

    async def poll(self) -> Snapshot:
        return Snapshot(self.name, self.kind, NOW)

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        return Artifacts()

    def log_locations(self, subject: Subject, snapshot: Snapshot):
        return []

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        raise RemoteFileError(f"no such file: {path}", path)

    async def stat(self, path: str) -> FileStat:
        raise RemoteFileError(f"no such file: {path}", path)


class FakeSource(Source):
    """A Source over fixed data; ``fail`` makes poll() report an error."""

    kind = "slurm"

    def __init__(
        self, name: str = "lab", jobs=(), nodes=(), files=None, interval: float = 3600.0
    ) -> None:
        self.name = name
        self.interval = interval
        self.jobs = tuple(jobs)
        self.nodes = tuple(nodes)
        self.files: dict[str, bytes] = dict(files or {})
        self.fail: SourceError | None = None
        self.polls = 0

    async def poll(self) -> Snapshot:
        self.polls += 1
        if self.fail is not None:
            return Snapshot(self.name, "slurm", NOW, error=self.fail)
        return Snapshot(self.name, "slurm", NOW, jobs=self.jobs, nodes=self.nodes)

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        return Artifacts(
            logs=(
                LogText(
                    "slurmctld.log",
                    "slurmctld",
                    b"[2024-05-01T11:00:00] _job_complete: JobId=4 OOM\n",
                ),
            )
        )

    def log_locations(self, subject: Subject, snapshot: Snapshot):
        if subject.kind == "job":
            return [("stdout", LogLocation(self.name, "/home/u/slurm-4.out"))]
        return []

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        if path not in self.files:
            raise RemoteFileError(f"no such file: {path}", path)
        return self.files[path][offset : offset + length]

    async def stat(self, path: str) -> FileStat:
        if path not in self.files:
            raise RemoteFileError(f"no such file: {path}", path)
        return FileStat(len(self.files[path]), 0.0)

    async def close(self) -> None:
        pass


def small_site(n_jobs: int = 30, hostile: str = "") -> FakeSource:
    jobs = [
        SlurmJob(
            str(i),
            hostile or f"train-{i}",
            f"user{i % 3}",
            "gpu" if i % 2 else "cpu",
            "RUNNING" if i % 3 else "PENDING",
            "None" if i % 3 else "Resources",
            cpus=4,
            node_count=1,
            nodes=(f"c{i % 5}",) if i % 3 else (),
            node_list=f"c{i % 5}" if i % 3 else "",
            elapsed_s=i * 60,
            submit_time=NOW - timedelta(minutes=i),
        )
        for i in range(1, n_jobs + 1)
    ]
    nodes = [
        SlurmNode(
            f"c{i}",
            "IDLE" if i else "MIXED",
            ("DRAIN",) if i == 0 else (),
            ("cpu",),
            48,
            8,
            None,
            190000,
            4096,
            reason="Kill task failed" if i == 0 else "",
            reason_user="root" if i == 0 else "",
            reason_time=NOW - timedelta(hours=1) if i == 0 else None,
        )
        for i in range(5)
    ]
    return FakeSource(jobs=jobs, nodes=nodes, files={"/home/u/slurm-4.out": LOG})


def replay_app(rec, state):
    """The app ``cockpit --replay rec`` runs (read-only, the replay's clock and banner), with
    its acks in ``state``: (app, clock)."""
    from cockpit.app import CockpitApp
    from cockpit.record import replay_sources
    from cockpit.store.acks import AckStore

    sources, clock = replay_sources(rec)
    app = CockpitApp(
        sources,
        clock=clock,
        replay=clock,
        banner=clock.label(),
        readonly=True,
        acks=AckStore(state),
    )
    return app, clock
