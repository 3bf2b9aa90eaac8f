"""Running jobs sampled for risk each poll, within a budget: memory (sstat) and stdout growth.

A 100k-job site has tens of thousands of RUNNING jobs, and ``sstat`` asks each job's slurmd:
never every job every poll. Each poll :class:`RiskSampler` picks at most
``RiskSettings.sample_budget`` jobs for ONE ``sstat -a -j ID,...`` and as many stdout files for
ONE ``stat`` (plus one ``squeue -O StdOut`` for the jobs whose output path it does not know
yet, and one ``squeue -O tres-alloc`` for the memory newly sampled jobs hold: squeue's
MIN_MEMORY does not say a figure is ``--mem-per-cpu``'s). Memory goes first to the jobs
already near their request (so a climb is seen at once), then those never sampled (largest
request first, then longest running), then the stalest samples: every running job is sampled
in turn, and the near ones (at most half the budget, the nearest first) every poll. Stdout
goes first to the jobs already quiet for half their threshold, then the never stat'ed, then
the stalest; a job younger than its silence threshold is not looked at (its file cannot be
that old).

Samples are kept per job while it runs, so a job not sampled this poll keeps its finding; a
job that left RUNNING loses its samples (its warnings resolve). The last line of a silent
file is read once per (file, size) through the source's checked reader (a path the job's
user could not read is not read). Nothing here raises: trouble is a warning on the poll.
"""

from __future__ import annotations

import asyncio
import heapq
import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cockpit.model import JobMemory, JobOutput, RiskProbe, RiskSettings, SlurmJob, StepUsage
from cockpit.safety import JOB_ID_RE, scrub
from cockpit.slurm.commands import (
    squeue_alloc_argv,
    squeue_outputs_argv,
    sstat_argv,
    stat_argv,
)
from cockpit.slurm.errors import command_label, err_text
from cockpit.slurm.parse import parse_mem_mib, resolve_output_path
from cockpit.slurm.paths import JobOwner
from cockpit.slurm.sstat import parse_sstat

if TYPE_CHECKING:
    from cockpit.slurm.source import SlurmSource

NEAR_FIRST = 0.8  # of memory_near: a job sampled at this share of its request goes first
TAIL_BYTES = 4096  # read of a silent file's end, for its last line
PATHS_MAX = 100_000  # output paths remembered (running jobs only; bounded all the same)


def request_per_node_mib(j: SlurmJob, held_mib: int | None = None) -> int | None:
    """The job's memory request per node: ``held_mib`` (its allocated TRES, per node) when
    known, else squeue's MIN_MEMORY (``--mem-per-cpu`` times the CPUs on a node when the
    source says it is per CPU); None when it asked for none (0: all of a node's memory)."""
    if held_mib:
        return held_mib
    mib = j.min_memory_mib
    if not mib:
        return None
    if j.mem_per_cpu:
        return mib * j.cpus_per_node
    return mib


def tres_mem_per_node_mib(tres: str) -> int | None:
    """squeue's ``tres-alloc`` (``cpu=2,mem=400M,node=1,billing=2``) -> memory per node, or
    None when it names none. The job's ``mem`` is summed over its nodes."""
    fields = dict(item.partition("=")[::2] for item in tres.strip().split(",") if "=" in item)
    mib = parse_mem_mib(fields.get("mem"))
    if not mib:
        return None
    nodes = fields.get("node", "1")
    n = int(nodes) if nodes.isdigit() and nodes.isascii() and int(nodes) > 0 else 1
    return max(1, mib // n)


def job_memory(
    job: SlurmJob,
    steps: list[StepUsage],
    at: datetime,
    previous: JobMemory | None,
    near: float = RiskSettings.__dataclass_fields__["memory_near"].default,
    held_mib: int | None = None,
) -> JobMemory | None:
    """The job's busiest step against its request, or None (no request, no figures yet).
    ``previous``: its last sample; ``near``: the share of the request that names it at risk;
    ``held_mib``: the memory per node its allocated TRES names, when known."""
    request = request_per_node_mib(job, held_mib)
    if request is None:
        return None
    best: tuple[int, StepUsage, int] | None = None
    for s in steps:
        if s.max_rss_kib is None:
            continue
        per_node = 1
        if s.ntasks and s.nodes:
            per_node = max(1, math.ceil(s.ntasks / s.nodes))
        used = s.max_rss_kib
        if per_node > 1 and s.ave_rss_kib is not None:
            used = max(used, s.ave_rss_kib * per_node)
        if best is None or used > best[0]:
            best = (used, s, per_node)
    if best is None:
        return None
    used, s, per_node = best
    first_near = previous.near_kib if previous is not None else None
    if first_near is None and used >= near * request * 1024:
        first_near = used
    return JobMemory(
        job_id=job.job_id,
        step=s.step,
        used_kib=used,
        max_rss_kib=s.max_rss_kib or 0,
        request_mib=request,
        sampled_at=at,
        node=s.max_rss_node,
        tasks_per_node=per_node,
        near_kib=first_near,
        mem_per_cpu_mib=_per_cpu_figure(job, request),
    )


def _per_cpu_figure(job: SlurmJob, request: int) -> int | None:
    """The ``--mem-per-cpu`` figure behind ``request``: the source said so, or squeue's
    MIN_MEMORY is a whole share of what the job holds per node (CPUs on a node times it)."""
    mib = job.min_memory_mib
    if not mib:
        return None
    if job.mem_per_cpu:
        return mib
    cpus = job.cpus_per_node
    return mib if cpus > 1 and request != mib and abs(request - mib * cpus) <= cpus else None


def _first_two(t: tuple) -> tuple:
    return t[0], t[1]


def _ratio(m: JobMemory) -> float:
    return m.used_kib / (m.request_mib * 1024)


class RiskSampler:
    """One source's risk samples, carried from poll to poll (see the module doc)."""

    def __init__(self, settings: RiskSettings | None = None) -> None:
        self.settings = settings or RiskSettings()
        self.memory: dict[str, JobMemory] = {}
        self.mem_asked: dict[str, float] = {}  # job -> when sstat last asked for it
        self.outputs: dict[str, JobOutput] = {}
        self.out_asked: dict[str, float] = {}
        # job -> its resolved stdout path ("" when it has none we can stat)
        self.paths: dict[str, str] = {}
        # job -> memory per node its allocated TRES names (None: asked, squeue named none)
        self.held: dict[str, int | None] = {}
        # an array task's own job id (sstat's name for it) -> the queue's (28_0)
        self.own_ids: dict[str, str] = {}
        self.alloc_refused = False  # this squeue does not know tres-alloc: not asked again
        self.calls = 0  # commands run (benchmarks, tests)

    # ------------------------------------------------------------------ choosing

    def memory_candidates(
        self, running: list[SlurmJob], now: float | None = None
    ) -> list[SlurmJob]:
        budget = self.settings.sample_budget
        if budget <= 0:
            return []
        near = self.settings.memory_near * NEAR_FIRST
        hot: list = []  # sampled near their request: again every poll, the nearest first
        keyed = []
        for j in running:
            req = request_per_node_mib(j, self.held.get(j.job_id))
            if req is None or not JOB_ID_RE.match(j.job_id):
                continue
            total = -req * (j.node_count or 1)
            last = self.memory.get(j.job_id)
            asked = self.mem_asked.get(j.job_id)
            if last is not None and _ratio(last) >= near:
                hot.append(((-_ratio(last), total), j.job_id, j))
            elif asked is None:
                keyed.append(((1, total, -(j.elapsed_by(now) or 0)), j.job_id, j))
            else:
                keyed.append(((2, asked, total), j.job_id, j))
        # at most half the budget for the near ones: the others still come round in turn
        hot = heapq.nsmallest(max(1, budget // 2), hot, key=_first_two)
        rest = heapq.nsmallest(budget - len(hot), keyed, key=_first_two)
        return [j for _, _, j in hot + rest]

    def output_candidates(self, running: list[SlurmJob], now: float) -> list[SlurmJob]:
        budget = self.settings.sample_budget
        if budget <= 0:
            return []
        keyed = []
        for j in running:
            after = self.settings.silent_after(j.partition)
            # a carried row's elapsed time runs on from when it was read (elapsed_by)
            ran = j.elapsed_by(now) or 0
            if ran < after or not JOB_ID_RE.match(j.job_id):
                continue
            if self.paths.get(j.job_id) == "":
                continue  # no file we can look at
            seen = self.outputs.get(j.job_id)
            asked = self.out_asked.get(j.job_id)
            if seen is not None and now - seen.modified_at.timestamp() >= after / 2:
                key = (0, seen.modified_at.timestamp(), 0)
            elif asked is None:
                key = (1, -ran, 0)
            else:
                key = (2, asked, 0)
            keyed.append((key, j.job_id, j))
        return [j for _, _, j in heapq.nsmallest(budget, keyed, key=lambda t: (t[0], t[1]))]

    # ------------------------------------------------------------------ one poll

    async def sample(
        self, src: SlurmSource, jobs: tuple[SlurmJob, ...] | list[SlurmJob], at: datetime
    ) -> tuple[RiskProbe, list[str]]:
        """This poll's probe over ``jobs`` (the queue just read) and what went wrong."""
        running = [j for j in jobs if j.state == "RUNNING"]
        live = {j.job_id for j in running}
        for d in (
            self.memory,
            self.mem_asked,
            self.outputs,
            self.out_asked,
            self.paths,
            self.held,
        ):
            for k in [k for k in d if k not in live]:
                del d[k]
        for k in [k for k, task in self.own_ids.items() if task not in live]:
            del self.own_ids[k]
        now = at.timestamp()
        mem_jobs = self.memory_candidates(running, now)
        out_jobs = self.output_candidates(running, now)
        # side by side: sstat and the stdout checks are independent commands (each keeps
        # its own tables), so a poll waits for the slower one, not for both in turn; the
        # warnings in a fixed order all the same
        mem_warnings: list[str] = []
        out_warnings: list[str] = []
        await asyncio.gather(
            *(() if not mem_jobs else (self._sample_memory(src, mem_jobs, at, mem_warnings),)),
            *(() if not out_jobs else (self._sample_outputs(src, out_jobs, at, out_warnings),)),
        )
        warnings = mem_warnings + out_warnings
        probe = RiskProbe(
            settings=self.settings,
            memory=tuple(self.memory[k] for k in sorted(self.memory)),
            outputs=tuple(self.outputs[k] for k in sorted(self.outputs)),
        )
        return probe, warnings

    async def _run(self, src: SlurmSource, argv: tuple[str, ...]) -> tuple[str, str, int]:
        """stdout, stderr and exit status: sstat, squeue and stat print what they could for the
        rest when one job or file is gone, and exit non-zero for it."""
        self.calls += 1
        src.command_counts[command_label(argv)] += 1
        res = await src.transport.run(argv, timeout=src.command_timeout)
        return (
            res.stdout.decode("utf-8", errors="replace"),
            res.stderr.decode("utf-8", errors="replace"),
            res.exit_status,
        )

    async def _ask(
        self, src: SlurmSource, argv: tuple[str, ...], what: str, warnings: list[str]
    ) -> tuple[str, str, int] | None:
        """:meth:`_run`, or None with a warning naming ``what`` when the command could not
        run (a risk sample must not fail the poll)."""
        try:
            return await self._run(src, argv)
        except Exception as exc:  # noqa: BLE001
            warnings.append(f"{what}: {err_text(exc)}")
            return None

    async def _sample_memory(
        self, src: SlurmSource, jobs: list[SlurmJob], at: datetime, warnings: list[str]
    ) -> None:
        ids = [j.job_id for j in jobs]
        unheld = [] if self.alloc_refused else [i for i in ids if i not in self.held]
        got, *_ = await asyncio.gather(
            self._ask(src, sstat_argv(ids), "sstat", warnings),
            *(() if not unheld else (self._held_memory(src, unheld, warnings),)),
        )
        if got is None:
            return
        out, err, status = got
        steps, _ = parse_sstat(out)
        if status != 0 and not steps and "couldn't get steps" not in err:
            warnings.append(f"sstat: {scrub(err.strip() or f'exit {status}', 300)}")
            return
        by_job: dict[str, list[StepUsage]] = {}
        for s in steps:
            by_job.setdefault(self.own_ids.get(s.job_id, s.job_id), []).append(s)
        stamp = at.timestamp()
        near = self.settings.memory_near
        for j in jobs:
            self.mem_asked[j.job_id] = stamp
            sample = job_memory(
                j,
                by_job.get(j.job_id, []),
                at,
                self.memory.get(j.job_id),
                near,
                self.held.get(j.job_id),
            )
            if sample is not None:
                self.memory[j.job_id] = sample

    async def _held_memory(self, src: SlurmSource, ids: list[str], warnings: list[str]) -> None:
        """The memory per node each job holds, from one ``squeue -O tres-alloc`` (asked once
        per job while it runs: an allocation does not change). A job squeue does not list or
        whose TRES names no memory keeps squeue's MIN_MEMORY as its request."""
        got = await self._ask(src, squeue_alloc_argv(ids), "squeue tres-alloc", warnings)
        if got is None:
            return
        out, err, status = got
        if status != 0 and not out.strip():
            warnings.append(f"squeue tres-alloc: {scrub(err.strip() or f'exit {status}', 300)}")
            # asked: an answer will not change while they run; a squeue that names the field
            # it does not know will not learn it (a warning once, not every poll)
            self.alloc_refused = "tres-alloc" in err
            for jid in ids:
                self.held.setdefault(jid, None)
            return
        wanted = set(ids)
        for line in out.splitlines():
            jid, _, rest = line.partition("|")
            own, _, tres = rest.partition("|")
            jid, own = jid.strip(), own.strip()
            if jid in wanted:
                self.held[jid] = tres_mem_per_node_mib(tres)
                if own != jid and own.isdigit():
                    self.own_ids[own] = jid
        for jid in ids:
            self.held.setdefault(jid, None)

    async def _sample_outputs(
        self, src: SlurmSource, jobs: list[SlurmJob], at: datetime, warnings: list[str]
    ) -> None:
        unknown = [j for j in jobs if j.job_id not in self.paths]
        if unknown:
            await self._resolve_paths(src, unknown, warnings)
        paths = {j.job_id: self.paths[j.job_id] for j in jobs if self.paths.get(j.job_id)}
        if not paths:
            return
        got = await self._ask(src, stat_argv(sorted(set(paths.values()))), "stat", warnings)
        if got is None:
            return
        out, err, _ = got
        seen: dict[str, tuple[int, float]] = {}
        for line in out.splitlines():
            size, _, rest = line.partition(" ")
            mtime, _, path = rest.partition(" ")
            if size.isdigit() and mtime.lstrip("-").isdigit():
                seen[path] = (int(size), float(mtime))
        stamp = at.timestamp()
        for jid, path in paths.items():
            self.out_asked[jid] = stamp
            got = seen.get(path)
            if got is None:
                self.outputs.pop(jid, None)  # gone or node-local: nothing to say
                continue
            size, mtime = got
            old = self.outputs.get(jid)
            if old is not None and old.path == path and old.size == size:
                continue  # unchanged: keep its last line, if read
            modified = datetime.fromtimestamp(mtime, UTC)
            self.outputs[jid] = JobOutput(jid, path, size, modified)
        await self._last_lines(
            src, {j.job_id: j.partition for j in jobs if j.job_id in paths}, stamp
        )

    async def _resolve_paths(
        self, src: SlurmSource, jobs: list[SlurmJob], warnings: list[str]
    ) -> None:
        """StdOut and owner of ``jobs`` from one ``squeue -O``; a job it does not list (ended
        meanwhile) or whose output goes nowhere gets "" (not asked again while it runs)."""
        by_id = {j.job_id: j for j in jobs}
        got = await self._ask(src, squeue_outputs_argv(list(by_id)), "squeue StdOut", warnings)
        if got is None:
            return
        out, err, status = got
        if status != 0 and not out.strip():
            warnings.append(f"squeue StdOut: {scrub(err.strip() or f'exit {status}', 300)}")
            return
        for line in out.splitlines():
            parts = line.split("|", 3)
            if len(parts) != 4 or parts[0].strip() not in by_id:
                continue
            jid, uid, gid, pattern = (p.strip() for p in parts)
            job = by_id[jid]
            path = resolve_output_path(pattern, job) if pattern else ""
            if pattern in ("", "/dev/null") or not path.startswith("/") or "%" in path:
                path = ""
            self.paths[jid] = path
            if path and uid.isdigit():
                src.note_owner(
                    jid, JobOwner(job.user, int(uid), int(gid) if gid.isdigit() else None)
                )
                src.note_job_paths(jid, path)
        for jid in by_id:
            self.paths.setdefault(jid, "")
        while len(self.paths) > PATHS_MAX:
            del self.paths[next(iter(self.paths))]

    async def _last_lines(self, src: SlurmSource, parts: dict[str, str], now: float) -> None:
        """The last line of each file silent past its threshold and not read at this size
        (``parts``: job id -> its partition, whose threshold applies)."""
        for jid, part in parts.items():
            o = self.outputs.get(jid)
            if o is None or o.line_no is not None or o.size == 0:
                continue
            if now - o.modified_at.timestamp() < self.settings.silent_after(part):
                continue
            start = max(0, o.size - TAIL_BYTES)
            try:
                data = await src.read_range(o.path, start, o.size - start)
            except Exception:  # noqa: BLE001 - refused or gone: the finding names no line
                self.outputs[jid] = _with_line(o, "", 0)
                continue
            lines = data.decode("utf-8", errors="replace").splitlines()
            at = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), None)
            if at is None:
                self.outputs[jid] = _with_line(o, "", 0)
                continue
            # a line number only when the read began at the file's start (0: not counted)
            self.outputs[jid] = _with_line(
                o, scrub(lines[at].strip(), 300), at + 1 if start == 0 else 0
            )


def _with_line(o: JobOutput, line: str, line_no: int) -> JobOutput:
    return JobOutput(o.job_id, o.path, o.size, o.modified_at, line, line_no)
