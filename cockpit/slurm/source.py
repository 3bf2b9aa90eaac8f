"""One Slurm cluster as a :class:`~cockpit.source.Source`: its commands over a Transport.

``poll()`` runs the commands of :mod:`cockpit.slurm.commands` and turns their output
(:mod:`cockpit.slurm.parse`) into a Snapshot; ``artifacts()`` and ``evidence()`` fetch the
evidence of jobs and nodes (:mod:`cockpit.slurm.evidence`); ``history()`` the sacct rows of
a job's past runs; ``read_range()`` and ``stat()`` serve the logs a LogView opens.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from cockpit.errors import ParseError
from cockpit.model import (
    AcctRecord,
    Artifacts,
    LogLocation,
    RiskSettings,
    SlurmJob,
    SlurmNode,
    Snapshot,
    SourceError,
    Subject,
)
from cockpit.safety import (
    JOB_ID_RE,
    NODE_RE,
    validate_job_id,
    validate_job_name,
    validate_path,
    validate_user,
)
from cockpit.slurm.backfill import BACKFILL_STATES, OFF_RETRY, Backfill, parse_backfill, sacct_time
from cockpit.slurm.commands import (
    CONFIG_ARGV,
    DEFAULT_CTLD_LOG,
    DEFAULT_SLURMD_LOG,
    NODES_ARGV,
    PARTITIONS_ARGV,
    SEP,
    SQUEUE_STATES_ARGV,
    VERSION_ARGV,
    parse_log_files,
    sacct_argv,
    sacct_backfill_argv,
    sacct_history_argv,
    scontrol_job_argv,
    squeue_argv,
)
from cockpit.slurm.errors import CommandFailed, command_label, err_text
from cockpit.slurm.evidence import batch_evidence, subject_fetcher
from cockpit.slurm.parse import (
    parse_sacct,
    parse_scontrol_nodes,
    parse_scontrol_partitions,
    resolve_output_path,
)
from cockpit.slurm.paths import JobOwner, check_job_path, job_owner, remember
from cockpit.slurm.risk import RiskSampler
from cockpit.slurm.squeue import SqueueCarry, parse_squeue
from cockpit.slurm.versions import has_only_job_state, parse_version_output
from cockpit.source import Source
from cockpit.transport import FileStat, TransportError

if TYPE_CHECKING:
    from cockpit.actions import Action, ActionResult

OWNERS_MAX = 4096  # job owners and job-chosen paths remembered (oldest out)
BACKFILL_GRACE = 5.0  # s the poll waits for the backfill sacct after the queue answered
# with --only-job-state (23.11+): the full squeue at least this often, and the poll after one
# that saw a job not yet looked at by the scheduler (reason None: its reason comes next)
FULL_SQUEUE_EVERY = 120.0
DRILL_DOWN_NOTE = (
    "jobs that ended between polls are not seen in drill-down mode "
    '(evidence = "drill-down": no background sacct)'
)


class SlurmSource(Source):
    """One Slurm cluster reached through a Transport (local or SSH).

    ``poll()`` runs squeue, ``scontrol show node -o`` and ``scontrol show partition -o``
    concurrently and returns a Snapshot; a silent controller, a missing command or a
    transport failure becomes ``Snapshot(error=SourceError(...))``. Concurrent callers
    of ``poll()`` share one in-flight collection, so a cluster is polled once per
    interval whatever reads it. ``command_counts`` counts invocations per command.
    """

    kind = "slurm"

    def __init__(
        self,
        name: str,
        transport: Any,
        *,
        interval: float = 15.0,
        clock: Callable[[], datetime] | None = None,
        tz: tzinfo = UTC,
        slurmctld_log: str = "",
        slurmd_log: str = "",
        storage_paths: tuple[str, ...] | list[str] = (),
        command_timeout: float = 20.0,
        background_evidence: bool = True,
        backfill_hours: float = 12.0,
        backfill_cap: int = 500,
        full_squeue_every: float = FULL_SQUEUE_EVERY,
    ) -> None:
        self.name = name
        # False: evidence (sacct, scontrol show job, logs) only for what the operator opens
        # (config ``evidence = "drill-down"``); the pollers fetch none for newly failed jobs
        self.background_evidence = background_evidence
        self.transport = transport
        self.interval = interval
        self._clock = clock or (lambda: datetime.now(UTC))
        self.tz = tz
        # "": where the cluster's own slurm.conf says (SlurmctldLogFile, SlurmdLogFile: asked
        # once, with the first evidence), else Slurm's packaged default
        self._logs_asked = bool(slurmctld_log and slurmd_log)
        self.slurmctld_log = slurmctld_log or DEFAULT_CTLD_LOG
        self.slurmd_log = slurmd_log or DEFAULT_SLURMD_LOG
        self._auto_logs = (not slurmctld_log, not slurmd_log)
        self._logs_asking: asyncio.Future[None] | None = None
        self.storage_paths = tuple(storage_paths)
        self.command_timeout = command_timeout
        self.command_counts: Counter[str] = Counter()
        self._inflight: Any = None
        self._cache: dict[tuple[str, str], Any] = {}
        # job id -> scontrol show job (paths), until next poll
        self._detail: dict[str, SlurmJob] = {}
        self._squeue_carry = SqueueCarry()  # what parse_squeue keeps from the last poll
        self._node_memo: dict[str, SlurmNode] = {}  # scontrol's node lines -> last poll's node
        # who each job runs as (a job's owner never changes), and which paths a job chose:
        # those are read only where its user could (cockpit.slurm.paths)
        self._owners: dict[str, JobOwner] = {}
        self._job_path_jobs: dict[str, str] = {}  # path -> the job that chose it
        self._stat_cache: dict[str, FileStat] = {}  # lstat of path components, one poll
        # failed jobs sacct names that squeue no longer lists (cockpit.slurm.backfill); in
        # drill-down mode none: that mode runs no background sacct
        self._backfill = Backfill(hours=backfill_hours, cap=backfill_cap)
        self._bf_task: asyncio.Future[Any] | None = None
        # how long the first poll waits for it after the queue answered: a cockpit on screen
        # sets 0 (the queue first; the backfill's jobs come with the next poll), a one-shot
        # command keeps the grace (its one poll is all it shows)
        self.first_backfill_grace = BACKFILL_GRACE
        self._polled = False
        # job id -> (stdout, stderr) found from sacct after slurmctld forgot the job
        self._acct_paths: dict[str, tuple[str, str]] = {}
        self._sacct_fields: frozenset[str] | None = None  # sacct --helpformat, asked once
        # the Slurm release of the commands (scontrol --version), asked once per connection:
        # it decides the squeue format (%s), --only-job-state and how sacct's exit codes read
        self.version = ""
        self._version_conn: object = None  # the connection it was asked on (None: ask)
        # cheap change detection (23.11+): the id/state set the last full squeue went with
        self.full_squeue_every = full_squeue_every
        self._states_ok = True  # False once this squeue refused --only-job-state
        self._states_seen: frozenset[str] | None = None
        self._full_at: datetime | None = None  # when the last full squeue was taken
        self._full_jobs: list[SlurmJob] | None = None
        self._full_warnings: list[str] = []
        self._recheck = False  # the last full read had a job the scheduler had not seen
        # where evidence captured at first sight is kept (cockpit.store's Store: anything with
        # evidence(source, subject) -> Artifacts | None); None: no store
        self.evidence_store: Any = None
        # running jobs sampled for risk each poll within a budget (sstat, stdout growth);
        # use_risk() sets the config's thresholds, a budget of 0 turns it off
        self.risk = RiskSampler()

    # ------------------------------------------------------------------ commands

    async def _run(self, argv: tuple[str, ...]) -> str:
        """Run one command; raise TransportError or CommandFailed."""
        self.command_counts[command_label(argv)] += 1
        res = await self.transport.run(argv, timeout=self.command_timeout)
        out = res.stdout.decode("utf-8", errors="replace")
        if res.exit_status != 0:
            err = res.stderr.decode("utf-8", errors="replace").strip()
            raise CommandFailed(argv, res.exit_status, err or out.strip())
        return out

    # ------------------------------------------------------------------ poll

    async def poll(self) -> Snapshot:
        if self._inflight is None or self._inflight.done():
            self._inflight = asyncio.ensure_future(self._poll())
        return await asyncio.shield(self._inflight)

    async def _poll(self) -> Snapshot:
        taken = self._clock()
        self._cache.clear()
        self._detail.clear()
        self._stat_cache.clear()
        try:
            await self._ensure_version()
        except Exception:  # noqa: BLE001 - asked again next poll; the queue says what is wrong
            self._version_conn = None
        # a poller's first poll shows the queue first (first_backfill_grace 0): its sacct
        # starts once squeue has answered, not beside it (a cold start's CPU, a busy dbd)
        later = not self._polled and self.first_backfill_grace <= 0
        backfill = None if later else self._backfill_start(taken)
        results = await asyncio.gather(
            self._queue(taken),
            self._run(NODES_ARGV),
            self._run(PARTITIONS_ARGV),
            self._storage(),
            return_exceptions=True,
        )
        storage_res = results.pop()
        if any(isinstance(r, BaseException) for r in results):
            self._version_conn = None  # reconnected or upgraded meanwhile: ask again
            self._full_jobs = None
        for res in results:
            if isinstance(res, TransportError):
                return Snapshot(
                    self.name, "slurm", taken, error=SourceError(res.kind, res.message, res.where)
                )
            if isinstance(res, CommandFailed):
                return Snapshot(self.name, "slurm", taken, error=res.source_error())
            if isinstance(res, BaseException):
                return Snapshot(
                    self.name,
                    "slurm",
                    taken,
                    error=SourceError("command", f"{type(res).__name__}: {res}", ""),
                )
        squeue_out, nodes_out, parts_out = results
        results.clear()
        if later:  # its answer comes with the next poll
            backfill = self._backfill_start(taken)
        if not self.version:  # scontrol --version unanswered: the nodes' slurmd release
            m = re.search(r"\bVersion=(\S+)", nodes_out)
            self.version = m.group(1) if m else ""
        version = self.version
        warnings: list[str] = []
        try:
            # ~1.5 s at 100k jobs: off the event loop (the UI thread), GC paused while it builds
            jobs, w1, nodes, w2, parts, w3 = await asyncio.to_thread(
                self._parse, squeue_out, nodes_out, parts_out, taken
            )
        except ParseError as exc:
            self._full_jobs = None
            return Snapshot(
                self.name, "slurm", taken, error=SourceError("parse", str(exc), exc.where)
            )
        del squeue_out, nodes_out, parts_out
        from cockpit import gcpolicy

        if len(jobs) >= gcpolicy.TRIM_JOBS:  # before the diagnosis piles on top (peak RSS)
            await asyncio.to_thread(gcpolicy.trim_heap)
        warnings += w1 + w2 + w3
        queued = len(jobs)
        jobs = await self._backfill_finish(backfill, taken, jobs, warnings)
        # failed jobs only sacct still names (slurmctld forgot them): their evidence says so
        acct_only = tuple(sorted(j.job_id for j in jobs[queued:]))
        risk = None
        # queue first: a cockpit's first poll does not wait for sstat and the stdout checks
        # (0.6-1 s at a 10k site, longer than parsing the queue); the next poll samples
        if self.risk.settings.sample_budget > 0 and not later:
            risk, risk_warnings = await self.risk.sample(self, jobs, taken)
            warnings += risk_warnings
        storage: tuple = ()
        if isinstance(storage_res, BaseException):  # df trouble must not hide the queue
            warnings.append(f"df {' '.join(self.storage_paths)}: {err_text(storage_res)}")
        else:
            storage, df_errors = storage_res
            warnings += [f"df: {e}" if not e.startswith("df:") else e for e in df_errors]
        return Snapshot(
            source=self.name,
            kind="slurm",
            taken_at=taken,
            jobs=tuple(jobs),
            nodes=tuple(nodes),
            partitions=tuple(parts),
            warnings=tuple(warnings),
            slurm_version=version,
            storage=storage,
            risk=risk,
            acct_only=acct_only,
        )

    # ------------------------------------------------------------------ backfill

    def resume_from(self, at: datetime | None) -> None:
        """Ask the first backfill from ``at`` (the store's cursor), not ``backfill_hours`` back."""
        if at is not None and self._backfill.cursor is None:
            self._backfill.resumed = at

    def cursor(self) -> datetime | None:
        """Up to when the backfill has asked sacct (for the store: the next start's
        ``resume_from``); None before the first good query or in drill-down mode."""
        return self._backfill.cursor

    def use_store(self, store: Any) -> None:
        self.evidence_store = store

    def show_queue_first(self) -> None:
        self.first_backfill_grace = 0.0

    def complete_first_poll(self, wait_s: float) -> None:
        self.first_backfill_grace = max(self.first_backfill_grace, wait_s)

    def use_risk(self, settings: RiskSettings) -> None:
        """The config's ``[risk]`` thresholds and budget (samples so far are kept)."""
        self.risk.settings = settings

    def _overlap(self) -> timedelta:
        # one poll interval, at least a minute: slurmdbd records an end a little late
        return timedelta(seconds=max(self.interval, 60.0))

    def _backfill_start(self, now: datetime) -> asyncio.Future[Any] | None:
        """Start this poll's backfill sacct (or keep waiting for the last one, if slurmdbd is
        slow); None in drill-down mode or while accounting is known to be disabled."""
        bf = self._backfill
        if not self.background_evidence:
            return None
        if bf.off_until is not None and now < bf.off_until:
            return None
        if self._bf_task is None:

            async def query() -> tuple[datetime, str]:
                if self.resuming is not None:  # the store's cursor, read as the queue is polled
                    await self.resuming
                    self.resuming = None
                argv = sacct_backfill_argv(
                    sacct_time(bf.since(now, self._overlap()), self.tz), BACKFILL_STATES
                )
                return now, await self._run(argv)

            self._bf_task = asyncio.ensure_future(query())
            # read by the next poll; retrieved here too so an abandoned one logs nothing
            self._bf_task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return self._bf_task

    async def _backfill_finish(
        self,
        task: asyncio.Future[Any] | None,
        now: datetime,
        jobs: list[SlurmJob],
        warnings: list[str],
    ) -> list[SlurmJob]:
        """``jobs`` plus the failed jobs the backfill found that squeue does not list;
        trouble becomes one warning line, never the poll's error."""
        bf = self._backfill
        if not self.background_evidence:
            warnings.append(DRILL_DOWN_NOTE)
            return jobs
        first, self._polled = not self._polled, True
        if task is not None:
            grace = self.first_backfill_grace if first else BACKFILL_GRACE
            try:
                await asyncio.wait_for(asyncio.shield(task), grace)
            except TimeoutError:
                if not first or grace >= BACKFILL_GRACE:
                    warnings.append("sacct backfill: slurmdbd is slow; its answer comes next poll")
            except Exception:  # noqa: BLE001 - read below from the task
                pass
            if task.done():
                self._bf_task = None
                await self._backfill_take(task, warnings)
        elif bf.off_reason:
            warnings.append(bf.off_reason)
        if not bf.jobs:
            return jobs
        # a walk of the whole queue: off the event loop (the UI thread) for a big site
        big = len(jobs) > 10_000
        extra = await asyncio.to_thread(bf.visible, jobs, now) if big else bf.visible(jobs, now)
        return [*jobs, *extra] if extra else jobs

    async def _backfill_take(self, task: asyncio.Future[Any], warnings: list[str]) -> None:
        bf = self._backfill
        exc = task.exception() if not task.cancelled() else None
        if task.cancelled() or exc is not None:
            text = err_text(exc) if exc is not None else "cancelled"
            if exc is not None:
                # re-raised through wait_for into _backfill_finish, its traceback holds that
                # frame (this poll's job list) in a cycle with the task: gcpolicy froze one job
                # list per failed sacct until a hand-back (issue #32, ~40k jobs a soak week)
                exc.__traceback__ = None
            if isinstance(exc, CommandFailed) and "accounting storage is disabled" in exc.message:
                # a site without slurmdbd: say it in one line, ask again much later
                bf.off_until = self._clock() + OFF_RETRY
                bf.off_reason = (
                    "sacct: Slurm accounting storage is disabled: "
                    "jobs that ended between polls are not seen"
                )
                warnings.append(bf.off_reason)
            else:
                warnings.append(f"sacct backfill failed (asked again next poll): {text}")
            return
        asked_at, out = task.result()
        try:
            found, w = await asyncio.to_thread(parse_backfill, out, self.tz, self.version)
        except Exception as exc2:  # noqa: BLE001 - a parser bug must not cost the poll
            warnings.append(f"sacct backfill: {type(exc2).__name__}: {exc2}")
            return
        warnings += w
        for job, owner in found:
            self.note_owner(job.job_id, owner)
        warnings += bf.record(found, asked_at)

    def _parse(
        self, squeue_out: str | None, nodes_out: str, parts_out: str, taken: datetime
    ) -> tuple:
        from cockpit import gcpolicy

        with gcpolicy.bulk():
            if squeue_out is None:  # --only-job-state: nothing changed since the last full read
                # the same rows: a running job's time runs on from its elapsed_at
                jobs, w1 = list(self._full_jobs or []), list(self._full_warnings)
            else:
                jobs, w1 = parse_squeue(squeue_out, self.tz, self._squeue_carry, taken.timestamp())
                if has_only_job_state(self.version) and self._states_ok:
                    self._full_jobs, self._full_warnings = jobs, w1
                    self._recheck = any(j.state == "PENDING" and j.reason == "None" for j in jobs)
            nodes, w2 = parse_scontrol_nodes(nodes_out, self.tz, self._node_memo)
            parts, w3 = parse_scontrol_partitions(parts_out)
        return jobs, w1, nodes, w2, parts, w3

    # ------------------------------------------------------------------ version, queue

    def _connection(self) -> object:
        """What identifies the transport's connection: an SSH transport counts its connects;
        a local one has a single, lasting one."""
        return getattr(self.transport, "connects", 0)

    async def _ensure_version(self) -> None:
        """``scontrol --version`` once per connection (again after a reconnect or a failed
        poll: the site may have upgraded meanwhile). An older or odd answer leaves the release
        unknown ("") and the nodes' ``Version=`` stands in for the status line."""
        if self._version_conn is not None and self._version_conn == self._connection():
            return
        try:
            out = await self._run(VERSION_ARGV)
        except CommandFailed:
            out = ""
        version = parse_version_output(out)
        if version != self.version:
            self._states_ok, self._full_jobs = True, None
        self.version = version
        self._version_conn = self._connection()

    async def _queue(self, taken: datetime) -> str | None:
        """The full squeue's output, or None when ``squeue --only-job-state`` (23.11+) shows
        the same jobs in the same states as when the last full one was read and that is less
        than ``full_squeue_every`` seconds old: the controller then answers from its job
        state cache instead of packing every job record. Raises like ``_run``."""
        argv = squeue_argv(self.version)
        if not (self._states_ok and has_only_job_state(self.version)):
            return await self._run(argv)
        try:
            states = frozenset(
                ln for ln in (await self._run(SQUEUE_STATES_ARGV)).split("\n") if ln.strip()
            )
        except CommandFailed as exc:
            if "unrecognized" in exc.message or "invalid option" in exc.message:
                self._states_ok = False  # a squeue without it (a wrapper, a site patch)
            # else its error says less than the full squeue's: with the controller down it is
            # "slurm_load_job_state: Unable to query jobs state: Unspecified error", where
            # squeue says "Unable to contact slurm controller" (the status line's unreachable)
            self._full_jobs = None
            return await self._run(argv)
        fresh = (
            self._full_jobs is not None
            and self._full_at is not None
            and not self._recheck
            and states == self._states_seen
            and 0 <= (taken - self._full_at).total_seconds() < self.full_squeue_every
        )
        if fresh:
            return None
        out = await self._run(argv)
        self._states_seen, self._full_at = states, taken
        return out

    async def _storage(self) -> tuple[tuple, tuple[str, ...]]:
        """``df -P`` / ``df -Pi`` of ``storage_paths``: (usages, df's complaints).
        Raises like ``_run``."""
        if not self.storage_paths:
            return (), ()
        from cockpit.slurm.storage import collect_storage

        self.command_counts["df"] += 2
        report = await collect_storage(
            self.transport, self.storage_paths, timeout=self.command_timeout
        )
        return report.usages, report.errors

    # ------------------------------------------------------------------ on demand

    async def acct(self, job_ids: list[str] | tuple[str, ...]) -> list[AcctRecord]:
        """sacct rows (job and steps) for validated job ids.
        Raises ValueError, TransportError, CommandFailed."""
        ids = [validate_job_id(j) for j in job_ids]
        if not ids:
            return []
        return parse_sacct(await self._run(sacct_argv(ids)), self.tz, self.version)[0]

    async def history(self, user: str, name: str, days: int = 30) -> list[AcctRecord]:
        """Past runs of ``user``'s job ``name`` over ``days`` (right-sizing).

        One ``sacct -u -name``, shared until the next poll: the drill-down's evidence and the
        job screen's right-sizing ask for the same rows. Raises ValueError on bad input,
        TransportError/CommandFailed.
        """
        validate_user(user)
        validate_job_name(name)
        # sacct splits --name at commas and strips quotes: "a,b" would size the remedy from
        # runs of "a" and "b". Such a name is matched exactly here, over all the user's runs.
        literal = not any(c in name for c in SACCT_LIST_CHARS)

        async def fetch() -> list[AcctRecord]:
            argv = sacct_history_argv(user, name if literal else None, days)
            rows = parse_sacct(await self._run(argv), self.tz, self.version)[0]
            return rows if literal else named_runs(rows, name)

        return list(await self._shared(("history", f"{user}{SEP}{name}{SEP}{days}"), fetch))

    async def _shared(self, key: tuple[str, str], fetch: Callable[[], Any]) -> Any:
        """``await fetch()`` once per ``key`` until the next poll (``_poll`` clears ``_cache``).

        Concurrent callers (the background evidence round and an open screen) await the same
        fetch; a caller cancelled mid-way (a screen closed) does not cancel it for the others.
        A fetch that raised is forgotten, so the next caller tries again.
        """
        fut = self._cache.get(key)
        if fut is None:
            fut = self._cache[key] = asyncio.ensure_future(fetch())

            def forget(f: Any, key: tuple[str, str] = key) -> None:
                if (f.cancelled() or f.exception() is not None) and self._cache.get(key) is f:
                    del self._cache[key]

            fut.add_done_callback(forget)
        return await asyncio.shield(fut)

    def _find_job(self, snapshot: Snapshot, job_id: str) -> SlurmJob | None:
        return next((j for j in snapshot.jobs if j.job_id == job_id), None)

    def _job_paths(self, job: SlurmJob | None, job_id: str) -> tuple[str, str]:
        detail = self._detail.get(job_id)
        if detail is None and job_id in self._acct_paths:
            return self._acct_paths[job_id]  # found from sacct: slurmctld forgot the job
        src = detail or job
        if src is None:
            return "", ""
        out = src.stdout_path or (resolve_output_path("", src) if src.work_dir else "")
        err = src.stderr_path or out
        return out, err

    def note_owner(self, job_id: str, owner: JobOwner | None) -> None:
        if owner is not None:
            remember(self._owners, job_id, owner, OWNERS_MAX)

    def note_job_paths(self, job_id: str, *paths: str) -> None:
        """``paths`` were chosen by job ``job_id``: :meth:`read_range` and :meth:`stat` check
        them against its owner (the log viewer opens them by path alone)."""
        for p in paths:
            if p and p != self.slurmctld_log:
                remember(self._job_path_jobs, p, job_id, OWNERS_MAX)

    async def job_owner(self, job_id: str) -> JobOwner | None:
        """Who ``job_id`` runs as: remembered from its ``scontrol show job``, else asked now."""
        owner = self._owners.get(job_id)
        if owner is None and JOB_ID_RE.match(job_id):
            try:
                owner = job_owner(await self._run(scontrol_job_argv(job_id)))
            except Exception:  # noqa: BLE001 - unknown owner: its paths are not read
                return None
            self.note_owner(job_id, owner)
        return owner

    async def _checked(self, path: str) -> str:
        path = validate_path(path)
        job_id = self._job_path_jobs.get(path)
        # slurmctld.log is the operator's own read, wherever slurm.conf puts it: a job that
        # named it as its StdOut before its path was learnt (resolve_log_paths) took it away
        # from every job's evidence ("not readable by <that user>")
        if job_id is not None and path != self.slurmctld_log:
            await check_job_path(self, path, await self.job_owner(job_id))
        return path

    async def resolve_log_paths(self) -> None:
        """The daemons' log files from ``scontrol show config`` where the config names none
        (a site's SlurmdLogFile such as ``/var/log/slurm/slurmd-%n.log``: the packaged default
        path was read instead, and every job's evidence said "No such file"). Asked once;
        an unanswered ask keeps the defaults and is asked again with the next evidence."""
        if self._logs_asked:
            return
        # one ask for every fetch of the round: a fetch beside the first waits for its answer
        # rather than reading the default paths meanwhile
        if self._logs_asking is None or self._logs_asking.done():
            self._logs_asking = asyncio.ensure_future(self._ask_log_paths())
        await asyncio.shield(self._logs_asking)

    async def _ask_log_paths(self) -> None:
        try:
            out = await self._run(CONFIG_ARGV)
        except Exception:  # noqa: BLE001 - evidence goes on with the defaults
            return
        self._logs_asked = True
        found = parse_log_files(out)
        ctld_auto, slurmd_auto = self._auto_logs
        if ctld_auto and found.get("SlurmctldLogFile"):
            self.slurmctld_log = found["SlurmctldLogFile"]
        if slurmd_auto and found.get("SlurmdLogFile"):
            self.slurmd_log = found["SlurmdLogFile"]

    def _slurmd_path(self, node: str) -> str:
        return self.slurmd_log.replace("%n", node).replace("%h", node)

    # ------------------------------------------------------------------ evidence

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        """Evidence for a job or node (drill-down, ``cockpit diagnose JOBID``).

        Job: sacct rows, ``scontrol show job -o`` (StdOut/StdErr), the last MiB of
        stdout/stderr, slurmctld.log lines mentioning the job (last 8 MiB searched), the
        slurmd.log lines of its node(s) and, for OUT_OF_MEMORY/TIMEOUT, the sacct history
        of the same user + job name. Node: slurmd.log tail and slurmctld.log lines naming it.
        Fetched once per subject until the next poll (concurrent callers share the fetch; a
        subject already fetched by :meth:`evidence` this poll is served from it, without
        history). Failures are reported in ``commands`` under ``error: <what>``, never raised,
        except ValueError for a subject id that is not valid Slurm syntax.
        """
        fetch = subject_fetcher(self, subject, snapshot)
        if fetch is None:
            return Artifacts()
        return await self._shared((subject.kind, subject.id), fetch)

    async def evidence(
        self,
        subjects: Iterable[Subject],
        snapshot: Snapshot,
        *,
        concurrency: int = 4,
        timeout: float = 30.0,
    ) -> dict[Subject, Artifacts | BaseException]:
        """Background evidence for many subjects: ONE sacct for all their jobs.

        For ``cockpit.runtime.evidence``. Jobs get the rows of one ``sacct -j ID1,ID2,...``
        split per job (:func:`~cockpit.slurm.parse.split_sacct`), then each its ``scontrol show
        job -o ID`` (it takes no list) and log range reads, at most ``concurrency`` at once,
        ``timeout`` seconds each; no sacct history (drill-down only). Nodes as in
        :meth:`artifacts`. Subjects already fetched this poll are reused.
        Returns per subject its Artifacts, or the exception that stopped it (an invalid id:
        ValueError; a timeout); never raises itself.
        """
        return await batch_evidence(
            self, subjects, snapshot, concurrency=concurrency, timeout=timeout
        )

    # ------------------------------------------------------------------ logs

    def log_locations(self, subject: Subject, snapshot: Snapshot) -> list[tuple[str, LogLocation]]:
        """Named logs of a job (stdout, stderr, slurmctld.log, slurmd.log per node) or node."""
        locs: list[tuple[str, LogLocation]] = []
        if subject.kind == "job" and JOB_ID_RE.match(subject.id):
            job = self._detail.get(subject.id) or self._find_job(snapshot, subject.id)
            out, err = self._job_paths(job, subject.id)
            self.note_job_paths(subject.id, out, err)
            if out:
                locs.append(("stdout", LogLocation(self.name, out)))
            if err and err != out:
                locs.append(("stderr", LogLocation(self.name, err)))
            locs.append(("slurmctld.log", LogLocation(self.name, self.slurmctld_log)))
            for n in (job.nodes if job else ())[:8]:
                if NODE_RE.match(n):
                    locs.append((f"slurmd.log ({n})", LogLocation(self.name, self._slurmd_path(n))))
        elif subject.kind == "node" and NODE_RE.match(subject.id):
            locs.append(("slurmd.log", LogLocation(self.name, self._slurmd_path(subject.id))))
            locs.append(("slurmctld.log", LogLocation(self.name, self.slurmctld_log)))
        return locs

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Bytes of a log; a path a job chose only if the job's user could read it
        (PathRefused, a RemoteFileError, says so)."""
        return await self.transport.read_range(await self._checked(path), offset, length)

    async def stat(self, path: str) -> Any:
        return await self.transport.stat(await self._checked(path))

    async def run_action(self, action: Action) -> ActionResult:
        """Run a confirmed action's argv (``scontrol update``, ``scancel``...) once, no retry:
        a second drain or cancel must be the operator's choice. Transport trouble is the
        result, not an exception: the dialog shows it and the audit records it."""
        from cockpit.actions import ActionResult

        self.command_counts[command_label(action.argv)] += 1
        try:
            res = await self.transport.run(action.argv, timeout=self.command_timeout)
        except TransportError as exc:
            return ActionResult(False, None, f"{exc.kind}: {exc.message}")
        # one line each: joined bare, "…for job 1" ran into "slurm_suspend error: …"
        out = "\n".join(
            part
            for part in (
                res.stdout.decode("utf-8", errors="replace").strip(),
                res.stderr.decode("utf-8", errors="replace").strip(),
            )
            if part
        )
        return ActionResult(res.exit_status == 0, res.exit_status, out[-2000:])

    async def close(self) -> None:
        if self._bf_task is not None:
            self._bf_task.cancel()
        await self.transport.close()


SACCT_LIST_CHARS = ",\"'"  # what sacct's --name list parsing splits at or strips


def named_runs(rows: list[AcctRecord], name: str) -> list[AcctRecord]:
    """The rows of the runs named exactly ``name``: their job rows and all their steps (step
    rows carry MaxRSS under the step's own name, ``batch``, ``0``)."""
    ids = {r.job_id for r in rows if not r.step and r.job_name == name}
    return [r for r in rows if r.job_id in ids]
