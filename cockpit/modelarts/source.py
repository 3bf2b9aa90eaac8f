"""ModelArtsSource: one ModelArts project (region + project id) as Snapshots.

Each ``poll()`` asks only for what can matter (pages of 50): the newest jobs down to the
newest one the last poll saw (jobs that arrived, or arrived and ended, in between), every job
in an active phase however old (the search's ``phase in`` filter), and each job that left the
active phases since the last poll (one detail read: how it ended). Details, stages, events
and the first task's startup-log preview are read for the jobs worth diagnosing (not Running
or Completed: Initializing ones, recently Failed ones) when their list entry changed
(:mod:`cockpit.modelarts.jobcache`), an ended job's once, a waiting job's again after
``detail_refresh_s`` (a few per poll). Ended jobs are kept, the ``max_ended`` most recent; a
project with more says so in a warning. Dedicated pools with their nodes and the flavors'
maximum available resource for waiting jobs are cached ``pool_cache_s``. The blocking SDK
runs on the source's own small thread pool (not asyncio's shared default one, where Slurm
parsing and log reads wait) with bounded concurrency and a deadline per call. API failures
become ``Snapshot(error=SourceError(...))``; a 429's ``Retry-After`` is honoured by not calling
the API again before it has passed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from cockpit.errors import ParseError, UserError
from cockpit.i18n import _
from cockpit.model import TRAINING_LOG_SCHEME as LOG_SCHEME
from cockpit.model import (
    Artifacts,
    LogLocation,
    Pool,
    RiskProbe,
    RiskSettings,
    Snapshot,
    SourceError,
    Subject,
    TrainingJob,
)
from cockpit.model import training_log_path as log_path
from cockpit.modelarts.api import (
    ModelArtsApi,
    ModelArtsApiError,
    SdkModelArtsApi,
    SdkSettings,
)
from cockpit.modelarts.jobcache import (
    ACTIVE_PHASES,
    ALL_PARTS,
    Entry,
    create_ms,
    due_for_refresh,
    fingerprint,
    is_active,
    job_id,
    keep_ended,
    wants_details,
)
from cockpit.modelarts.logwatch import READS_PER_POLL, PreviewCache, RunningLogs, preview_text
from cockpit.modelarts.parse import (
    parse_pool,
    parse_training_job,
    parse_training_job_list,
)
from cockpit.modelarts.pools import with_max_available
from cockpit.modelarts.views import format_nodes, job_artifacts
from cockpit.source import Source
from cockpit.transport import FileStat, RemoteFileError

if TYPE_CHECKING:
    from cockpit.actions import Action, ActionResult
    from cockpit.config import ModelArtsConfig

PAGE = 50  # list_training_jobs accepts limit 1..50
MAX_ENDED = 500  # ended jobs kept and shown, the most recently ended first
SDK_THREADS = 4  # the SDK's own pool: a slow ModelArts cannot starve the rest of the cockpit
CALL_TIMEOUT_S = 30.0  # any one SDK call, retries included (the SDK's own read timeout is 10 s)


def utc_now() -> datetime:
    return datetime.now(UTC)


def _error(exc: ModelArtsApiError) -> SourceError:
    head = f"HTTP {exc.status} " if exc.status else ""
    code = f"{exc.code}: " if exc.code and exc.code != str(exc.status) else ""
    return SourceError(
        kind=exc.kind,
        message=f"{head}{code}{exc.message}".strip(),
        where=exc.where,
        retry_after_s=exc.retry_after_s,
    )


class ModelArtsSource(Source):
    """:class:`cockpit.source.Source` for ModelArts training jobs and pools."""

    kind = "modelarts"

    def __init__(
        self,
        name: str,
        api: ModelArtsApi,
        *,
        interval: float = 30.0,
        clock: Callable[[], datetime] = utc_now,
        pool_cache_s: float = 60,
        max_ended: int = MAX_ENDED,
        concurrency: int = 8,
        log_reads: int = READS_PER_POLL,
    ) -> None:
        self.name = name
        self.api = api
        self.interval = interval
        self.clock = clock
        self.pool_cache_s = pool_cache_s
        self.max_ended = max_ended
        # an API answering from memory (the demo, a replay) costs nothing per call: every
        # waiting job is read again every poll, as its evolving site shows it
        self.refresh_every_poll = not getattr(api, "blocking", True)
        self._active: dict[str, Entry] = {}  # jobs in an active phase at the last poll
        self._ended: dict[str, Entry] = {}  # ended jobs kept (at most max_ended)
        self._newest_ms: int | None = None  # create_time of the newest job listed so far
        self._last_now: datetime | None = None
        self._last_total: int | None = None  # the project's job count at the last poll
        self._sem = asyncio.Semaphore(concurrency)
        self._pools: tuple[Pool, ...] | None = None
        self._pools_at = 0.0  # monotonic time of the cached pool list
        self._blocked_until = 0.0  # monotonic; set from Retry-After
        self._blocked_error: SourceError | None = None
        self._logs = PreviewCache()  # modelarts://job/task -> preview text
        self.call_timeout = CALL_TIMEOUT_S
        self._executor: ThreadPoolExecutor | None = None  # created on the first blocking call
        self._closed = False
        self._log_seen: dict[
            str, tuple[int, datetime]
        ] = {}  # job id -> (size, first seen at that size)
        self._last: Snapshot | None = None
        self.log_reads = log_reads  # Running jobs' log previews read per poll
        self._running_logs = RunningLogs()
        self._probe = RiskProbe()  # the [risk] thresholds the rules read (use_risk)
        # a 429's Retry-After blocks the next polls; a replay (cockpit --replay) steps at once
        self.honour_retry_after = True

    # ------------------------------------------------------------------ build

    @classmethod
    def from_config(
        cls, cfg: ModelArtsConfig, *, clock: Callable[[], datetime] | None = None
    ) -> ModelArtsSource:
        """Build from a ``[modelarts.NAME]`` config entry; keys read from the env vars it names.

        Raises UserError when the variables are unset (names them, never the values) or
        project_id is missing.
        """
        name = str(getattr(cfg, "name", "modelarts"))
        ak_env = getattr(cfg, "ak_env", "") or "HUAWEICLOUD_SDK_AK"
        sk_env = getattr(cfg, "sk_env", "") or "HUAWEICLOUD_SDK_SK"
        ak, sk = os.environ.get(ak_env, ""), os.environ.get(sk_env, "")
        missing = [n for n, v in ((ak_env, ak), (sk_env, sk)) if not v]
        if missing:
            raise UserError(
                _(
                    "modelarts.{name}: set the environment variable(s) {variables} "
                    "to the access key / secret key of the ModelArts project"
                ).format(name=name, variables=", ".join(missing))
            )
        project_id = getattr(cfg, "project_id", "") or os.environ.get(
            "HUAWEICLOUD_SDK_PROJECT_ID", ""
        )
        if not project_id:
            raise UserError(
                _("modelarts.{name}: project_id is required (without it the SDK calls IAM)").format(
                    name=name
                )
            )
        region, endpoint = getattr(cfg, "region", "") or "", getattr(cfg, "endpoint", "") or ""
        if not region and not endpoint:
            raise UserError(
                _("modelarts.{name}: set region (e.g. cn-north-4) or endpoint").format(name=name)
            )
        settings = SdkSettings(
            ak=ak,
            sk=sk,
            project_id=project_id,
            region=region,
            endpoint=endpoint,
            workspace=getattr(cfg, "workspace", "") or "",
            verify_ssl=bool(getattr(cfg, "verify_ssl", True)),
            security_token=os.environ.get("HUAWEICLOUD_SDK_SECURITY_TOKEN", ""),
        )
        return cls(
            name,
            SdkModelArtsApi(settings),
            interval=float(getattr(cfg, "interval", 30.0) or 30.0),
            clock=clock or utc_now,
            max_ended=int(getattr(cfg, "max_ended_jobs", MAX_ENDED) or MAX_ENDED),
            log_reads=int(getattr(cfg, "running_log_reads", READS_PER_POLL)),
        )

    def use_risk(self, settings: RiskSettings) -> None:
        """The config's ``[risk]``: ``log_silent_s`` for a Running job's log."""
        self._probe = RiskProbe(settings=settings)

    # ------------------------------------------------------------------ helpers

    async def _call(self, fn: Callable[..., dict], *args: Any) -> dict:
        if not getattr(self.api, "blocking", True):
            # answers from memory (the demo): a thread hop would cost more than the call, but
            # while that memory is built (its first use: ~0.4 s of CPU) the loop must not wait
            if not getattr(self.api, "ready", True):
                return await asyncio.to_thread(fn, *args)
            return fn(*args)
        async with self._sem:
            if self._executor is None:
                if self._closed:
                    raise ModelArtsApiError("unreachable", None, "", "the source is closed")
                self._executor = ThreadPoolExecutor(
                    max_workers=SDK_THREADS, thread_name_prefix=f"modelarts-{self.name}"
                )
            loop = asyncio.get_running_loop()
            # the thread finishes its call on its own; the deadline frees the poll at once
            fut = loop.run_in_executor(self._executor, lambda: fn(*args))
            try:
                return await asyncio.wait_for(fut, self.call_timeout)
            except TimeoutError:
                name = getattr(fn, "__name__", "call")
                raise ModelArtsApiError(
                    "timeout", None, "", f"{name}: no answer within {self.call_timeout:g} s"
                ) from None

    def _throttle(self, exc: ModelArtsApiError) -> None:
        if exc.kind == "throttled" and self.honour_retry_after:
            self._blocked_until = time.monotonic() + (exc.retry_after_s or self.interval)
            self._blocked_error = _error(exc)

    async def _optional(
        self, fn: Callable[..., dict], *args: Any, warnings: list[str], what: str
    ) -> dict | None:
        """A call whose failure degrades the snapshot (warning) instead of failing it."""
        try:
            return await self._call(fn, *args)
        except ModelArtsApiError as exc:
            self._throttle(exc)
            if exc.kind != "not_found":
                warnings.append(f"{what}: {exc.kind}: {exc.message}")
            return None

    # ------------------------------------------------------------------ poll

    async def poll(self) -> Snapshot:
        """One collection; never raises for API trouble (see module doc)."""
        now = self.clock()
        if time.monotonic() < self._blocked_until and self._blocked_error is not None:
            return Snapshot(
                source=self.name, kind="modelarts", taken_at=now, error=self._blocked_error
            )
        if self._last_now is not None and now < self._last_now:
            self._forget()  # a replay stepped back: what was kept comes from its future
        warnings: list[str] = []
        try:
            # the unfiltered page 0 first: a recording's polls begin there (cockpit.record)
            mark = self._newest_ms
            newest, total = await self._list_pages(stop_ms=mark, cap=self.max_ended)
            arrived = sum(1 for it in newest if mark is None or create_ms(it) > mark)
            deleted = (
                self._last_total is not None
                and total is not None
                and total < self._last_total + arrived
            )
            if deleted:
                # jobs were deleted (by hand, or by retention): list the window again to learn
                # which of the ended jobs kept are gone
                newest, total = await self._list_pages(cap=self.max_ended)
            active, active_total = await self._list_pages(ACTIVE_PHASES)
        except ModelArtsApiError as exc:
            self._throttle(exc)
            return Snapshot(source=self.name, kind="modelarts", taken_at=now, error=_error(exc))
        except ParseError as exc:
            return Snapshot(
                source=self.name,
                kind="modelarts",
                taken_at=now,
                error=SourceError("parse", str(exc), where="POST /training-job-searches"),
            )
        if active_total is not None and len(active) < active_total:
            warnings.append(
                f"listed {len(active)} of the {active_total} training jobs in an active phase"
            )

        pools = await self._list_pools(warnings)
        dedicated = {p.pool_id for p in pools}
        listed: dict[str, dict] = {job_id(it): it for it in active}
        ended: dict[str, dict] = {}
        for it in newest:
            jid = job_id(it)
            if jid and jid not in listed:
                # an active job the filtered listing missed (it changed phase in between)
                (listed if is_active(it) else ended)[jid] = it
        # jobs active at the last poll and listed nowhere now: one read each says how it ended
        gone = [j for j in self._active if j not in listed and j not in ended]
        details: dict[str, dict] = {}
        for jid, answer in zip(
            gone, await asyncio.gather(*(self._departed(j, warnings) for j in gone)), strict=True
        ):
            if answer is None:
                continue  # deleted: it leaves the list
            if answer is False:
                listed[jid] = self._active[jid].item  # unread: shown as it was
                continue
            details[jid] = answer
            (listed if is_active(answer) else ended)[jid] = answer
        # a re-listed window vouches for what it reached: all of the project when it was short
        whole = total is not None and len(newest) >= total
        floor = -1 if whole else min((create_ms(it) for it in newest), default=0)
        seen_now = {job_id(it) for it in newest}
        for jid, e in self._ended.items():
            if jid in listed or jid in ended:
                continue
            if deleted and jid not in seen_now and create_ms(e.item) >= floor:
                continue  # deleted from the project
            ended[jid] = e.item

        elapsed = (now - self._last_now).total_seconds() if self._last_now else self.interval
        refresh = due_for_refresh(
            self._active.values(), now, elapsed or self.interval, every_poll=self.refresh_every_poll
        )

        async def entry(jid: str, item: dict) -> Entry | None:
            prev = self._active.get(jid) or self._ended.get(jid)
            return await self._entry(
                item,
                prev,
                now,
                dedicated,
                warnings,
                refresh.get(jid),
                details.get(jid),
            )

        active_entries = await asyncio.gather(*(entry(j, it) for j, it in listed.items()))
        ended_entries = await asyncio.gather(*(entry(j, it) for j, it in ended.items()))
        self._active = {e.job.job_id: e for e in active_entries if e is not None}
        self._ended = keep_ended(
            {e.job.job_id: e for e in ended_entries if e is not None}, self.max_ended
        )
        await self._read_running_logs(now, warnings)
        self._last_now = now
        self._last_total = total
        if total is not None and total > len(self._active) + len(self._ended):
            warnings.append(
                f"{total - len(self._active) - len(self._ended)} ended training jobs older than "
                f"the {len(self._ended)} shown are not listed (max_ended_jobs = "
                f"{self.max_ended}); every job in an active phase is"
            )
        kept = sorted(
            (*self._active.values(), *self._ended.values()),
            key=lambda e: (-create_ms(e.item), e.job.job_id),
        )
        training_jobs = tuple(self._running_logs.apply(e.job) for e in kept)
        enriched = await with_max_available(
            self._optional, self.api, pools, training_jobs, warnings
        )
        if pools is self._pools:
            self._pools = enriched  # flavor capacity is cached with the pools it belongs to
        snap = Snapshot(
            source=self.name,
            kind="modelarts",
            taken_at=now,
            training_jobs=training_jobs,
            pools=enriched,
            warnings=tuple(warnings),
            risk=self._probe,
        )
        self._last = snap
        # what only shown jobs need: previews and "log unchanged since" go with their job
        shown = {j.job_id for j in training_jobs}
        self._logs.keep_jobs(shown)
        self._log_seen = {j: v for j, v in self._log_seen.items() if j in shown}
        return snap

    def _forget(self) -> None:
        self._active, self._ended, self._newest_ms, self._last_total = {}, {}, None, None
        self._log_seen, self._running_logs = {}, RunningLogs()

    async def _read_running_logs(self, now: datetime, warnings: list[str]) -> None:
        """Read a few Running jobs' log previews (:mod:`cockpit.modelarts.logwatch`)."""
        logs = self._running_logs
        due = logs.due(self._active.values(), now, self.log_reads, self._probe.settings)
        answers = await asyncio.gather(
            *(
                self._optional(self.api.logs_preview, j, t, warnings=warnings, what=f"job {j} log")
                for j, t in due
            )
        )
        for (jid, task), answer in zip(due, answers, strict=True):
            logs.record(jid, task, answer, now)
            if answer is not None:  # the log viewer opens what the finding quotes
                self._logs[log_path(jid, task)] = preview_text(answer)[0]

    async def _list_pages(
        self, phases: tuple[str, ...] = (), *, stop_ms: int | None = None, cap: int | None = None
    ) -> tuple[list[dict], int | None]:
        """Pages of the job list, newest first, until the last one, or (``stop_ms``) the first
        page reaching a job created at or before it, or ``cap`` ended jobs: (items, total). Only an
        unfiltered listing moves the newest-job mark."""
        seen: dict[str, dict] = {}
        total: int | None = None
        page = ended = 0
        while True:
            args = (page, PAGE, phases) if phases else (page, PAGE)
            items, page_total = parse_training_job_list(
                await self._call(self.api.list_training_jobs, *args)
            )
            total = page_total if page == 0 else total
            new = 0
            reached = False
            for it in items:
                jid = job_id(it)
                reached = reached or (stop_ms is not None and create_ms(it) <= stop_ms)
                if jid and jid not in seen:
                    seen[jid] = dict(it)
                    new += 1
                    ended += not is_active(it)
            # offset is a page index per the API reference; dedupe guards the other reading
            if (
                reached
                or len(items) < PAGE
                or new == 0
                or (total is not None and len(seen) >= total)
                or (cap is not None and ended >= cap)
            ):
                break
            page += 1
        if not phases and seen:
            newest = max(create_ms(it) for it in seen.values())
            self._newest_ms = max(newest, self._newest_ms or 0)
        return list(seen.values()), total

    async def _departed(self, jid: str, warnings: list[str]) -> dict | None | bool:
        """A job that left the active listing, read once: its JSON, None when it was deleted,
        False when the read failed (the job stays as last seen; the next poll asks again)."""
        try:
            return await self._call(self.api.show_training_job, jid)
        except ModelArtsApiError as exc:
            self._throttle(exc)
            if exc.kind == "not_found":
                return None
            warnings.append(f"job {jid} details: {exc.kind}: {exc.message}")
            return False

    def _public(self, job: TrainingJob, dedicated: set[str]) -> TrainingJob:
        """``job`` with pool_public as the current pool list says (a kept job's may be older)."""
        if self._pools is None or job.pool_public == (job.pool_id not in dedicated):
            return job
        return dataclasses.replace(job, pool_public=job.pool_id not in dedicated)

    async def _entry(
        self,
        item: dict,
        prev: Entry | None,
        now: datetime,
        dedicated: set[str],
        warnings: list[str],
        refresh: tuple[str, ...] | None = None,
        detail: dict | None = None,
    ) -> Entry | None:
        """The job of ``item`` for this poll: the last poll's when its list entry did not
        change (no request), else parsed or read again (see the module doc); ``refresh``:
        what to read again although it did not change."""
        fp = fingerprint(item)
        same = prev is not None and prev.fp == fp
        if not wants_details(item, now):
            if same and prev.fetched_at is None and (prev.item is item or prev.item == item):
                return Entry(item, fp, self._public(prev.job, dedicated))
            job = self._parse(item, None, None, None, dedicated, now, warnings)
            return None if job is None else Entry(item, fp, job)
        if same and prev.fetched_at is not None:
            kept = Entry(item, fp, self._public(prev.job, dedicated), prev.fetched_at, prev.raw)
            if not refresh:
                return kept
            if prev.raw is not None:
                job, complete, raw = await self._fetch(
                    item, dedicated, now, warnings, parts=refresh, keep=prev.raw
                )
                if job is None or not complete:  # kept as it was; tried again next poll
                    return kept
                return Entry(item, fp, job, now, raw)
        job, complete, raw = await self._fetch(item, dedicated, now, warnings, detail=detail)
        # a read that failed is tried again next poll; an ended job keeps no JSON (no refresh)
        if job is None:
            return None
        return Entry(item, fp, job, now if complete else None, raw if is_active(item) else None)

    def _parse(
        self,
        detail: dict,
        stages: dict | None,
        events: dict | None,
        preview: dict | None,
        dedicated: set[str],
        now: datetime,
        warnings: list[str],
        item: dict | None = None,
    ) -> TrainingJob | None:
        pool_id = str(((detail.get("spec") or {}).get("resource") or {}).get("pool_id") or "")
        public = (pool_id not in dedicated) if self._pools is not None else None
        try:
            return parse_training_job(detail, stages, events, preview, pool_public=public, now=now)
        except ParseError as exc:
            warnings.append(f"job {job_id(detail)}: {exc}")
            if item is None or item is detail:
                return None
            try:
                return parse_training_job(item, pool_public=public, now=now)
            except ParseError:
                return None

    async def _fetch(
        self,
        item: dict,
        dedicated: set[str],
        now: datetime,
        warnings: list[str],
        *,
        detail: dict | None = None,
        parts: tuple[str, ...] = ALL_PARTS,
        keep: tuple[Any, Any, Any, Any] | None = None,
    ) -> tuple[TrainingJob | None, bool, tuple[Any, Any, Any, Any]]:
        """Read ``parts`` of one job (details unless given, stages, events, log preview; the
        rest from ``keep``, the JSON read before): (the job, whether every read answered, the
        JSON it was built from)."""
        jid = job_id(item)
        failed: list[str] = []
        old = keep or (None, None, None, None)

        async def read(part: str, fn: Callable[..., dict], *args: Any) -> Any:
            if part not in parts:
                return old[ALL_PARTS.index(part)]
            what = f"job {jid} {'log preview' if part == 'preview' else part}"
            return await self._optional(fn, *args, warnings=failed, what=what)

        got_detail, stages, events = await asyncio.gather(
            read("details", self.api.show_training_job, jid)
            if detail is None
            else asyncio.sleep(0, detail),
            read("stages", self.api.list_stages, jid),
            read("events", self.api.list_events, jid),
        )
        detail = got_detail or item
        preview = None
        tasks = (detail.get("status") or {}).get("tasks") or []
        if tasks and isinstance(tasks, list):
            preview = await read("preview", self.api.logs_preview, jid, str(tasks[0]))
        warnings.extend(failed)
        job = self._parse(detail, stages, events, preview, dedicated, now, warnings, item)
        if job is not None and preview is not None and job.log_task:
            self._logs[log_path(job.job_id, job.log_task)] = job.log_preview
            size = len(job.log_preview)
            prev = self._log_seen.get(job.job_id)
            changed = now if prev is None or prev[0] != size else prev[1]
            self._log_seen[job.job_id] = (size, changed)
            job = dataclasses.replace(job, log_changed_at=changed)
        return job, not failed, (got_detail, stages, events, preview)

    async def _list_pools(self, warnings: list[str]) -> tuple[Pool, ...]:
        if self._pools is not None and time.monotonic() - self._pools_at < self.pool_cache_s:
            return self._pools
        resp = await self._optional(self.api.list_pools, warnings=warnings, what="pools")
        if resp is None:
            return self._pools or ()
        raw = [p for p in (resp.get("items") or []) if isinstance(p, dict)]
        known = {p.pool_id: p.nodes for p in self._pools or ()}

        async def one(p: dict) -> Pool | None:
            name = str((p.get("metadata") or {}).get("name") or "")
            nodes = await self._optional(
                self.api.list_pool_nodes, name, warnings=warnings, what=f"pool {name} nodes"
            )
            try:
                pool = parse_pool(p, nodes)
            except ParseError as exc:
                warnings.append(f"pool {name}: {exc}")
                return None
            if nodes is None and known.get(pool.pool_id):
                # its node listing failed (a 429, a timeout; the warning says so): the last
                # one stands, as the pools do, not a pool of no nodes whose Abnormal one
                # "entered Abnormal" again at the next poll (a false page)
                pool = dataclasses.replace(pool, nodes=known[pool.pool_id])
            return pool

        parsed = await asyncio.gather(*(one(p) for p in raw))
        self._pools = tuple(p for p in parsed if p is not None)
        self._pools_at = time.monotonic()
        return self._pools

    # ------------------------------------------------------------------ on demand

    def _find_job(self, job_id: str, snapshot: Snapshot) -> TrainingJob | None:
        return next(
            (j for j in snapshot.training_jobs if j.job_id == job_id or j.name == job_id), None
        )

    async def find_job(self, name_or_id: str) -> list[tuple[str, str]]:
        """(job id, name) of the listed training jobs matching ``name_or_id`` (the TUI shows names,
        the API wants UUIDs): the job with that id alone if one has it, else every job with that
        name (several = ambiguous, newest first), else []. Lists every job in an active phase and
        the ``max_ended`` newest. Raises ModelArtsApiError when listing fails."""
        mark = self._newest_ms  # a lookup must not move the poll's newest-job mark
        try:
            newest, _ = await self._list_pages(cap=self.max_ended)
            active, _ = await self._list_pages(ACTIVE_PHASES)
        finally:
            self._newest_ms = mark
        by_job = {job_id(it): it for it in (*newest, *active)}
        items = sorted(by_job.values(), key=lambda it: -create_ms(it))
        ids: list[tuple[str, str]] = []
        for it in items:
            meta = it.get("metadata") or {}
            ids.append((str(meta.get("id") or ""), str(meta.get("name") or "")))
        by_id = [p for p in ids if p[0] == name_or_id]
        return by_id or [p for p in ids if p[1] == name_or_id]

    async def fetch_job(self, job_id: str) -> TrainingJob:
        """Details, stages, events and log preview of one job (the diagnose CLI).

        Raises ModelArtsApiError (not_found for an unknown id) or ParseError.
        """
        now = self.clock()
        detail = await self._call(self.api.show_training_job, job_id)
        warnings: list[str] = []
        stages, events = await asyncio.gather(
            self._optional(self.api.list_stages, job_id, warnings=warnings, what="stages"),
            self._optional(self.api.list_events, job_id, warnings=warnings, what="events"),
        )
        tasks = (detail.get("status") or {}).get("tasks") or []
        preview = None
        if tasks and isinstance(tasks, list):
            preview = await self._optional(
                self.api.logs_preview, job_id, str(tasks[0]), warnings=warnings, what="log preview"
            )
        await self._list_pools(warnings)
        pool_id = str(((detail.get("spec") or {}).get("resource") or {}).get("pool_id") or "")
        public = (
            (pool_id not in {p.pool_id for p in self._pools}) if self._pools is not None else None
        )
        job = parse_training_job(detail, stages, events, preview, pool_public=public, now=now)
        if job.log_task:
            self._logs[log_path(job.job_id, job.log_task)] = job.log_preview
        return job

    async def snapshot_for_job(self, job_id: str) -> tuple[Snapshot, Artifacts]:
        """One job (with the pools) as a Snapshot plus its events/startup-log artifacts, for
        ``cockpit diagnose --training-job ID --modelarts NAME``. API failures come back as
        ``Snapshot(error=...)`` (kind not_found for an unknown id), never raised."""
        now = self.clock()
        warnings: list[str] = []
        try:
            job = await self.fetch_job(job_id)
        except ModelArtsApiError as exc:
            return Snapshot(
                source=self.name, kind="modelarts", taken_at=now, error=_error(exc)
            ), Artifacts()
        except ParseError as exc:
            err = SourceError("parse", str(exc), where=f"GET /training-jobs/{job_id}")
            return Snapshot(
                source=self.name, kind="modelarts", taken_at=now, error=err
            ), Artifacts()
        pools = await with_max_available(
            self._optional, self.api, await self._list_pools(warnings), (job,), warnings
        )
        snap = Snapshot(
            source=self.name,
            kind="modelarts",
            taken_at=now,
            training_jobs=(job,),
            pools=pools,
            warnings=tuple(warnings),
        )
        return snap, job_artifacts(job)

    async def artifacts(self, subject: Subject, snapshot: Snapshot) -> Artifacts:
        """Events (``kind="events"``, ``time level source message`` per line, oldest first)
        and the startup-log preview (``kind="startup"``) of a training job; the node
        table of a pool (``commands["list_pool_nodes <pool>"]``). Never raises."""
        if subject.kind == "pool":
            pool = next(
                (p for p in snapshot.pools if p.pool_id == subject.id or p.name == subject.id), None
            )
            if pool is None:
                return Artifacts()
            return Artifacts(commands={f"list_pool_nodes {pool.pool_id}": format_nodes(pool)})
        if subject.kind != "training_job":
            return Artifacts()
        job = self._find_job(subject.id, snapshot)
        # a Running job's list entry and its log's tail say little: read it whole
        if job is None or (not job.events and (not job.log_preview or job.log_checked_at)):
            try:
                job = await self.fetch_job(subject.id)
            except (ModelArtsApiError, ParseError):
                if job is None:
                    return Artifacts()
        return job_artifacts(job)

    def log_locations(self, subject: Subject, snapshot: Snapshot) -> list[tuple[str, LogLocation]]:
        if subject.kind != "training_job":
            return []
        job = self._find_job(subject.id, snapshot)
        task = job.log_task if job else "worker-0"
        jid = job.job_id if job else subject.id
        return [
            ("startup log", LogLocation(source=self.name, path=log_path(jid, task or "worker-0")))
        ]

    async def _preview_text(self, path: str) -> str:
        m = re.fullmatch(re.escape(LOG_SCHEME) + r"([^/]+)/([^/]+)", path)
        if not m:
            raise RemoteFileError(f"not a ModelArts log path: {path}", path)
        if path not in self._logs:
            try:
                resp = await self._call(self.api.logs_preview, m.group(1), m.group(2))
            except ModelArtsApiError as exc:
                raise RemoteFileError(f"{exc.kind}: {exc.message}", path) from None
            content = resp.get("content", resp.get("context")) if isinstance(resp, dict) else None
            self._logs[path] = content if isinstance(content, str) else ""
        return self._logs[path]

    async def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Bytes of the startup-log preview at ``modelarts://<job_id>/<task>``.

        Any other path raises RemoteFileError."""
        data = (await self._preview_text(path)).encode("utf-8", "replace")
        return data[max(0, offset) : max(0, offset) + max(0, length)]

    async def stat(self, path: str) -> FileStat:
        data = (await self._preview_text(path)).encode("utf-8", "replace")
        return FileStat(size=len(data), mtime=self.clock().timestamp())

    async def run_action(self, action: Action) -> ActionResult:
        """Stop a training job (the one action ModelArts offers here); the API's refusal (a
        job already ended, no permission) is the result, not an exception."""
        from cockpit.actions import ActionResult

        if action.kind.verb != "stop" or action.subject.kind != "training_job":
            return ActionResult(False, None, f"{action.kind.verb}: not a ModelArts action")
        try:
            data = await self._call(self.api.stop_training_job, action.subject.id)
        except ModelArtsApiError as exc:
            return ActionResult(False, exc.status, str(exc))
        phase = data.get("status", {}).get("phase", "") if isinstance(data, dict) else ""
        return ActionResult(True, 200, f"stop requested: {phase or 'accepted'}")

    async def close(self) -> None:
        close = getattr(self.api, "close", None)
        executor, self._executor, self._closed = self._executor, None, True
        try:
            if callable(close):
                await asyncio.wait_for(asyncio.to_thread(close), self.call_timeout)
        finally:
            if executor is not None:
                executor.shutdown(wait=False, cancel_futures=True)


def backoff_s(failures: int, interval: float, retry_after_s: float | None = None) -> float:
    """Delay before the next poll after ``failures`` consecutive failures (seconds): Retry-After
    when the server gave one, else the interval doubled per failure, capped at 10 min."""
    if retry_after_s is not None:
        return max(retry_after_s, 1.0)
    return min(interval * (2 ** max(0, failures - 1)), 600.0)
