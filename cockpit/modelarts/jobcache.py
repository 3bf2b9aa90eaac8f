"""What a ModelArts poll may keep from the last one: pure rules over list entries.

A training job's list entry (one ``training-job-searches`` item) is the cheap signal: when its
:func:`fingerprint` is unchanged, the job's details, stages, events and log preview read last
time still stand, and the poll asks for none of them again. The list API has no update time,
so the fingerprint is made of what moves when a job does (phase, secondary phase, start, task
exits, running records), leaving out what ticks by itself (``duration`` of a running job).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cockpit.model import TrainingJob

# What the phase-filtered listing asks for: every job that can still change. The rest
# (Completed, Failed, Terminated, Abnormal) are terminal: read once, then kept.
ACTIVE_PHASES: tuple[str, ...] = ("Creating", "Pending", "Running", "Terminating")
QUIET_PHASES = frozenset({"Running", "Completed"})  # listed, never read in detail
RECENT_FAILURE_S = 24 * 3600  # Failed/Abnormal/Terminated jobs younger than this get details


def job_id(item: Mapping[str, Any]) -> str:
    return str((item.get("metadata") or {}).get("id") or "")


def phase(item: Mapping[str, Any]) -> str:
    return str((item.get("status") or {}).get("phase") or "")


def is_active(item: Mapping[str, Any]) -> bool:
    return phase(item) in ACTIVE_PHASES


def create_ms(item: Mapping[str, Any]) -> int:
    v = (item.get("metadata") or {}).get("create_time")
    return v if isinstance(v, int) else 0


def _ended(item: Mapping[str, Any]) -> float | None:
    status = item.get("status") or {}
    meta = item.get("metadata") or {}
    try:
        start = status.get("start_time") or meta.get("create_time") or 0
        return float(start) + float(status.get("duration") or 0)
    except (TypeError, ValueError):
        return None


def ended_ms(item: Mapping[str, Any]) -> float:
    """When a job ended (ms): its start (or creation) plus its duration; 0 when unreadable."""
    return _ended(item) or 0.0


def wants_details(item: Mapping[str, Any], now: datetime) -> bool:
    """Whether a job is worth its details, stages, events and log preview: not Running or
    Completed; a Failed/Abnormal/Terminated one only for a day after it ended."""
    ph = phase(item)
    if ph in QUIET_PHASES:
        return False
    if ph in {"Failed", "Abnormal", "Terminated"}:
        ended = _ended(item)
        return ended is None or now.timestamp() - ended / 1000 < RECENT_FAILURE_S
    return True


def fingerprint(item: Mapping[str, Any]) -> str:
    """What changes in a job's list entry when the job does (see the module doc)."""
    status = item.get("status") or {}
    records = status.get("running_records") or []
    last = records[-1] if isinstance(records, list) and records else None
    return json.dumps(
        [
            status.get("phase"),
            status.get("secondary_phase"),
            status.get("start_time"),
            status.get("tasks"),
            status.get("task_statuses"),
            len(records) if isinstance(records, list) else 0,
            last,
        ],
        sort_keys=True,
        default=str,
    )


# A waiting job's list entry says nothing of its log or new events, so they are read again:
# a booting job's events and log preview about every BOOT_REFRESH_S, a queued job's
# events about every QUEUED_REFRESH_S. Spread over the polls: each poll reads the oldest of
# those read at least half a period ago, just as many as keep the period (so a poll where
# nothing changed stays a few requests). No read comes more than 1.5 periods after the last:
# 7.5 min for a booting job, under the 10 min after which the rules call a startup log
# silent, so a growing log is never taken for a silent one.
BOOT_REFRESH_S = 300.0
QUEUED_REFRESH_S = 600.0
ALL_PARTS: tuple[str, ...] = ("details", "stages", "events", "preview")


def refresh_plan(item: Mapping[str, Any]) -> tuple[float, tuple[str, ...]] | None:
    """(period s, what to read again) for a job whose list entry did not change; None: never."""
    ph = phase(item)
    secondary = (item.get("status") or {}).get("secondary_phase")
    if ph in {"Creating", "Pending"} and secondary != "Queuing":
        # the stages move with the secondary phase, which is in the fingerprint
        return BOOT_REFRESH_S, ("events", "preview")
    if ph in {"Creating", "Pending", "Terminating"}:
        return QUEUED_REFRESH_S, ("events",)
    return None


@dataclass(frozen=True, slots=True)
class Entry:
    """One job as the last poll left it: the list entry it was built from, its fingerprint,
    the parsed job, when its details were read (None: built from the list entry alone), and
    for a job still active the JSON read (details, stages, events, preview), so a refresh
    reads only what moves."""

    item: dict[str, Any]
    fp: str
    job: TrainingJob
    fetched_at: datetime | None = None
    raw: tuple[Any, Any, Any, Any] | None = None


def due_for_refresh(
    entries: Iterable[Entry], now: datetime, elapsed: float, *, every_poll: bool = False
) -> dict[str, tuple[str, ...]]:
    """Job id -> what to read again this poll, for active jobs whose entry did not change:
    the oldest of those read at least half their period ago, as many as keep the period
    when polls come ``elapsed`` seconds apart. ``every_poll``: every one, everything (an API
    answering from memory costs nothing per call)."""
    classes: dict[float, list[tuple[Entry, tuple[str, ...]]]] = {}
    for e in entries:
        plan = refresh_plan(e.item)
        if e.fetched_at is None or plan is None:
            continue
        if every_poll:
            classes.setdefault(0.0, []).append((e, ALL_PARTS))
        else:
            classes.setdefault(plan[0], []).append((e, plan[1]))
    out: dict[str, tuple[str, ...]] = {}
    for period, members in classes.items():
        if period <= 0:
            out.update((e.job.job_id, parts) for e, parts in members)
            continue
        budget = math.ceil(len(members) * max(elapsed, 1.0) / period)
        aged = sorted(
            ((e, parts, (now - e.fetched_at).total_seconds()) for e, parts in members),  # type: ignore[operator]
            key=lambda x: -x[2],
        )
        for e, parts, age in aged[:budget]:
            if age >= period / 2:
                out[e.job.job_id] = parts
    return out


def keep_ended(entries: dict[str, Entry], limit: int) -> dict[str, Entry]:
    """The ``limit`` most recently ended jobs of ``entries`` (memory stays bounded however
    long the project's history)."""
    if len(entries) <= limit:
        return entries
    ranked = sorted(
        entries.items(), key=lambda kv: (ended_ms(kv[1].item), create_ms(kv[1].item)), reverse=True
    )
    return dict(ranked[: max(0, limit)])
