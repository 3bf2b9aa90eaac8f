"""The embedded demo site: a simulated Slurm cluster and ModelArts project, no network.

``cockpit --demo`` (and the first run without a config) goes through exactly the code a
real site uses: :class:`DemoTransport` answers the command lines of
``cockpit.slurm.commands`` with the text Slurm 22.05 prints and serves the log
files (``slurm-<id>.out``, ``slurmctld.log``, ``slurmd-<node>.log``) by byte range;
:class:`DemoModelArtsApi` returns the wire JSON of the ModelArts v2 API. The real
``SlurmSource`` and ``ModelArtsSource`` read them.

The site is a pure function of (seed, elapsed whole seconds since ``start``): the same
frozen clock gives identical bytes, a later clock shows jobs that started, finished or
failed, a node drained at +8 min and a queued training job running from +5 min.
The failure scenarios are listed in ``cockpit.demo.scenarios.SCENARIOS``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cockpit.transport import CommandResult, FileStat, RemoteFileError

if TYPE_CHECKING:
    from cockpit.demo.modelarts import ModelArtsProject
    from cockpit.demo.slurm import SlurmCluster

DEMO_START = datetime(2026, 11, 29, 20, 30, 0, tzinfo=UTC)
DEMO_CLUSTER = "demo-hpc"
DEMO_PROJECT = "demo-modelarts"
SLURMCTLD_LOG = "/var/log/slurm/slurmctld.log"
SLURMD_LOG = "/var/log/slurm/slurmd-%n.log"
# a file: each squeue the demo's slurmctld answers appends a line there (pid, time, its long
# options), from whichever process polls: how one counts what N cockpits cost the site
POLL_LOG_ENV = "COCKPIT_DEMO_POLL_LOG"


class DemoSite:
    """The simulated world. ``now_s()`` = whole seconds since ``start`` on ``clock``.

    ``clock`` defaults to the wall clock with ``start`` = construction time mapped to
    :data:`DEMO_START` (so a live demo always opens on the same story); tests pass a
    frozen clock and get ``start`` = :data:`DEMO_START`.
    """

    def __init__(
        self,
        seed: int = 7,
        clock: Callable[[], datetime] | None = None,
        start: datetime | None = None,
    ) -> None:
        self.seed = seed
        if clock is None:
            offset = datetime.now(UTC) - DEMO_START
            self.clock: Callable[[], datetime] = lambda: datetime.now(UTC) - offset
        else:
            self.clock = clock
        self.start = start or DEMO_START
        self._lock = threading.Lock()
        self._files_lock = threading.Lock()
        self._slurm: SlurmCluster | None = None
        self._modelarts: ModelArtsProject | None = None

    @property
    def built(self) -> bool:
        return self._slurm is not None

    def build(self) -> None:
        """Generate the world (~0.5 s of CPU for ~5k background jobs). Idempotent, thread-safe.

        Deferred to the first use so ``cockpit --demo`` draws its first frame before the
        site exists; :class:`DemoTransport` builds it in a thread on the first poll.
        """
        with self._lock:
            if self._slurm is not None:
                return
            from cockpit.demo.background import HISTORY_S, background_jobs, job_log
            from cockpit.demo.modelarts import ModelArtsProject
            from cockpit.demo.scenarios import (
                build_nodes,
                build_partitions,
                ctld_startup,
                node_ctld_lines,
                scenario_jobs,
            )
            from cockpit.demo.slurm import SlurmCluster

            nodes = build_nodes()
            partitions = build_partitions()
            bg, planned = background_jobs(self.seed, partitions, nodes)
            self._modelarts = ModelArtsProject(self.start)
            self._slurm = SlurmCluster(  # set last: ``built`` reads it
                self.start,
                nodes,
                partitions,
                scenario_jobs() + bg,
                ctld_startup(-HISTORY_S - 3 * 86400) + node_ctld_lines(),
                [],
                job_log(self.seed),
                planned,
            )

    @property
    def slurm(self) -> SlurmCluster:
        if self._slurm is None:
            self.build()
        assert self._slurm is not None
        return self._slurm

    @property
    def modelarts(self) -> ModelArtsProject:
        if self._modelarts is None or self._slurm is None:
            self.build()
        assert self._modelarts is not None
        return self._modelarts

    def now_s(self) -> int:
        return int((self.clock() - self.start).total_seconds() // 1)

    def log_file(self, path: str, t: int):
        """The simulated log file at ``path`` at ``t`` (None: no such file). Thread-safe: the
        transport builds logs in worker threads, and the cluster caches them."""
        with self._files_lock:
            return self.slurm.file(path, t)


class DemoTransport:
    """:class:`cockpit.transport.Transport` over a :class:`DemoSite` (in memory).

    Unknown programs answer like a shell: exit 127 and ``bash: X: command not found``.
    """

    def __init__(self, site: DemoSite, name: str = DEMO_CLUSTER) -> None:
        self.site = site
        self.name = name

    async def _ready(self) -> None:
        if not self.site.built:  # first poll: generate the site off the event loop
            await asyncio.to_thread(self.site.build)

    async def run(self, argv: list[str] | tuple[str, ...], timeout: float = 30.0) -> CommandResult:
        await self._ready()
        argv = tuple(argv)
        t = self.site.now_s()
        prog, args = (argv[0] if argv else ""), list(argv[1:])
        cl = self.site.slurm
        if prog == "squeue":
            _log_poll(args)
            out, err, rc = cl.squeue(args, t)
        elif prog == "scontrol":
            out, err, rc = cl.scontrol(args, t)
        elif prog == "sacct":
            out, err, rc = cl.sacct(args, t)
        elif prog == "sstat":
            out, err, rc = cl.sstat(args, t)
        elif prog == "df":
            out, err, rc = _df(args, t)
        elif prog == "stat":
            out, err, rc = await asyncio.to_thread(self._stat_many, args, t)
        else:
            out, err, rc = b"", f"bash: {shlex.quote(prog)}: command not found\n".encode(), 127
        return CommandResult(argv, out, err, rc)

    def _stat_many(self, args: list[str], t: int) -> tuple[bytes, bytes, int]:
        """GNU ``stat -L -c '%s %Y %n' -- PATH...`` over the demo's files (the at-risk
        sampler's one stat per poll for the running jobs' output)."""
        paths = args[args.index("--") + 1 :] if "--" in args else [a for a in args[3:]]
        out, err = [], []
        for path in paths:
            f = self.site.log_file(path, t)
            if f is None:
                err.append(f"stat: cannot statx '{path}': No such file or directory\n")
            else:
                out.append(f"{f.size} {int(f.mtime)} {path}\n")
        return "".join(out).encode(), "".join(err).encode(), 1 if err else 0

    async def _file(self, path: str):
        """The log at ``path`` now; built in a thread (the slurmctld log of a demo left open
        for days is megabytes of formatted lines: 100+ ms that would block the event loop)."""
        await self._ready()
        return await asyncio.to_thread(self.site.log_file, path, self.site.now_s())

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        f = await self._file(path)
        if f is None:
            raise RemoteFileError(f"{path}: No such file or directory", where=path)
        return f.read(offset, length)

    async def stat(self, path: str) -> FileStat:
        f = await self._file(path)
        if f is None:
            raise RemoteFileError(f"{path}: No such file or directory", where=path)
        return FileStat(size=f.size, mtime=f.mtime)

    async def close(self) -> None:
        return None


def _log_poll(args: list[str]) -> None:
    path = os.environ.get(POLL_LOG_ENV)
    if path:  # one write of a line opened for append: processes do not interleave
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            said = " ".join(a for a in args if a.startswith("--"))[:80]
            os.write(fd, f"{os.getpid()} {time.time():.3f} squeue {said}\n".encode())
        finally:
            os.close(fd)


# mount point -> (1K-blocks, used fraction at the start, inodes, inode use)
_FILESYSTEMS = {
    "/": ("/dev/mapper/rl-root", 104_806_400, 0.41, 52_428_800, 0.08),
    "/home": ("nfs01:/export/home", 21_474_836_480, 0.63, 1_073_741_824, 0.22),
    # /scratch starts above the guides' 85 % alert threshold: the storage alert scenario
    "/scratch": ("lustre01@o2ib:/scratch", 549_755_813_888, 0.905, 4_294_967_296, 0.51),
    "/shared": ("nfs01:/export/shared", 4_294_967_296, 0.52, 268_435_456, 0.12),
    "/opt/apps": ("nfs02:/export/apps", 2_147_483_648, 0.47, 134_217_728, 0.31),
}
STORAGE_PATHS = ("/home", "/scratch", "/opt/apps")  # what the demo cluster's config would list


def _df(args: list[str], t: int) -> tuple[bytes, bytes, int]:
    inodes = "-Pi" in args or "-i" in args
    paths = [a for a in args if not a.startswith("-")] or sorted(_FILESYSTEMS)
    lines = [
        "Filesystem     Inodes   IUsed   IFree IUse% Mounted on"
        if inodes
        else "Filesystem     1024-blocks      Used Available Capacity Mounted on"
    ]
    errs, rc = [], 0
    for p in paths:
        mount = max(
            (m for m in _FILESYSTEMS if p == m or p.startswith(m.rstrip("/") + "/")),
            key=len,
            default=None,
        )
        if mount is None:
            errs.append(f"df: {p}: No such file or directory")
            rc = 1
            continue
        dev, blocks, frac, inode_total, ifrac = _FILESYSTEMS[mount]
        frac = min(0.999, frac + max(0, t) * 1e-7)  # /scratch fills slowly
        if inodes:
            used = int(inode_total * ifrac)
            lines.append(
                f"{dev} {inode_total} {used} {inode_total - used} {round(ifrac * 100)}% {mount}"
            )
        else:
            used = int(blocks * frac)
            pct = -(-used * 100 // blocks)
            lines.append(f"{dev} {blocks} {used} {blocks - used} {pct}% {mount}")
    return (
        "".join(line + "\n" for line in lines).encode(),
        "".join(e + "\n" for e in errs).encode(),
        rc,
    )


_STOPPABLE = ("Creating", "Pending", "Running", "Initializing")  # what the API lets one stop


class DemoModelArtsApi:
    """:class:`cockpit.modelarts.api.ModelArtsApi` over a :class:`DemoSite`.
    ``blocking = False``: its calls answer from memory in microseconds, so the source calls
    them on the event loop instead of one thread hop per call (~40 per poll)."""

    blocking = False

    def __init__(self, site: DemoSite) -> None:
        self.site = site
        self.stopped: dict[str, int] = {}  # training job id -> when an operator stopped it

    @property
    def ready(self) -> bool:
        """False until the site is built: the first call builds it (~0.4 s of CPU), so the
        source makes that one in a thread, not on the event loop."""
        return self.site.built

    def _stopped(self, wire: dict) -> dict:
        """``wire`` as ModelArts shows a job stopped through the API: Terminated."""
        job_id = str(wire.get("metadata", {}).get("id", ""))
        if job_id not in self.stopped:
            return wire
        status = {**wire.get("status", {}), "phase": "Terminated", "secondary_phase": "Terminated"}
        return {**wire, "status": status}

    def stop_training_job(self, job_id: str) -> dict:
        from cockpit.modelarts.api import ModelArtsApiError

        j = self._job(job_id)
        phase = self.site.modelarts.job_json(j, self.site.now_s()).get("status", {}).get("phase")
        if phase not in _STOPPABLE or job_id in self.stopped:
            raise ModelArtsApiError(
                "command",
                400,
                "ModelArts.2763",
                f"Training job {job_id} in phase {phase} cannot be stopped.",
                where=f"POST /training-jobs/{job_id}/actions",
            )
        self.stopped[job_id] = self.site.now_s()
        return {"kind": "job", "metadata": {"id": job_id}, "status": {"phase": "Terminating"}}

    def _job(self, job_id: str):
        from cockpit.modelarts.api import ModelArtsApiError

        j = self.site.modelarts.by_id.get(job_id)
        if j is None or j.created > self.site.now_s():
            raise ModelArtsApiError(
                "not_found",
                404,
                "ModelArts.2762",
                f"Training job {job_id} not found.",
                where=f"GET /training-jobs/{job_id}",
            )
        return j

    def list_training_jobs(self, offset: int, limit: int, phases: Sequence[str] = ()) -> dict:
        t = self.site.now_s()
        ma = self.site.modelarts
        items = ma.visible(t)
        if phases:  # the search's phase filter, on the phase the job shows (a stop included)
            items = [
                j for j in items if self._stopped(ma.job_json(j, t))["status"]["phase"] in phases
            ]
        limit = max(1, min(50, limit))
        page = items[
            offset * limit : (offset + 1) * limit
        ]  # offset is a page index (API reference)
        return {
            "total": len(items),
            "count": len(page),
            "limit": limit,
            "offset": offset,
            "sort_by": "create_time",
            "order": "desc",
            "group_by": "",
            "workspace_id": "0",
            "ai_project": "",
            "items": [self._stopped(ma.job_json(j, t)) for j in page],
        }

    def show_training_job(self, job_id: str) -> dict:
        return self._stopped(self.site.modelarts.job_json(self._job(job_id), self.site.now_s()))

    def list_events(self, job_id: str) -> dict:
        return self.site.modelarts.events_json(self._job(job_id), self.site.now_s())

    def list_stages(self, job_id: str) -> dict:
        return self.site.modelarts.stages_json(self._job(job_id), self.site.now_s())

    def logs_preview(self, job_id: str, task_id: str) -> dict:
        return self.site.modelarts.preview_json(self._job(job_id), self.site.now_s())

    def list_pools(self) -> dict:
        return self.site.modelarts.pools_json()

    def list_pool_nodes(self, pool_name: str) -> dict:
        from cockpit.modelarts.api import ModelArtsApiError

        nodes = self.site.modelarts.nodes_json(pool_name)
        if nodes is None:
            raise ModelArtsApiError(
                "not_found",
                404,
                "ModelArts.50015001",
                f"Pool {pool_name} not found.",
                where=f"GET /pools/{pool_name}/nodes",
            )
        return nodes

    def flavor_max_available(self, flavor_id: str, pool_id: str) -> dict:
        return self.site.modelarts.max_available(flavor_id, pool_id)


def demo_sources(seed: int = 7, clock: Callable[[], datetime] | None = None) -> list:
    """A real SlurmSource and a real ModelArtsSource over one shared :class:`DemoSite`."""
    from cockpit.modelarts.source import ModelArtsSource
    from cockpit.slurm.source import SlurmSource

    site = DemoSite(seed, clock)
    sources = [
        SlurmSource(
            DEMO_CLUSTER,
            DemoTransport(site),
            interval=15,
            clock=site.clock,
            slurmctld_log=SLURMCTLD_LOG,
            slurmd_log=SLURMD_LOG,
            storage_paths=STORAGE_PATHS,
        ),
        ModelArtsSource(DEMO_PROJECT, DemoModelArtsApi(site), interval=30, clock=site.clock),
    ]
    for source in sources:  # a simulation: acting on it is how one learns the guarded actions
        source.allow_actions = True
    return sources
