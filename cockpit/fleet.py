"""The fleet at a glance: one row per cluster or ModelArts project (the ``F`` screen).

Pure: the hub's per-source state in, rows out. Running, pending, failed in the last hour,
nodes down or drained, open incidents, and the source's own health, so an operator watching
twelve clusters sees which one needs them before opening any.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cockpit.diagnosis.slurm_states import FAILED_STATES
from cockpit.i18n import N_, _
from cockpit.model import Incident, Snapshot

RECENT = timedelta(hours=1)
_TRAINING_FAILED = frozenset({"Failed", "Abnormal"})
_NODE_SICK = frozenset(
    {"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING", "NOT_RESPONDING"}
)


@dataclass(frozen=True, slots=True)
class FleetRow:
    """One source. Counts are None when the source has no such thing (nodes on ModelArts
    are its pools', counted the same way) or no data yet."""

    source: str
    kind: str  # "slurm" | "modelarts"
    health: str  # "ok" | "STALE" | "failing: <error>" | "connecting"
    running: int | None
    pending: int | None
    failed_1h: int | None
    nodes_sick: int | None
    incidents: int
    critical: int

    @property
    def ok(self) -> bool:
        return self.health == "ok"


def fleet_row(
    name: str,
    kind: str,
    snap: Snapshot | None,
    health: str,
    incidents: Iterable[Incident],
    now: datetime,
) -> FleetRow:
    mine = [i for i in incidents if i.subject.source == name]
    crit = sum(1 for i in mine if i.severity == "critical")
    if snap is None:
        return FleetRow(name, kind, health, None, None, None, None, len(mine), crit)
    since = now - RECENT
    if kind == "slurm":
        running = sum(1 for j in snap.jobs if j.state == "RUNNING")
        pending = sum(1 for j in snap.jobs if j.state == "PENDING")
        failed = sum(
            1
            for j in snap.jobs
            if j.state in FAILED_STATES and j.end_time is not None and j.end_time >= since
        )
        sick = sum(1 for n in snap.nodes if _node_sick(n.state, n.flags))
    else:
        running = sum(1 for t in snap.training_jobs if t.phase == "Running")
        pending = sum(1 for t in snap.training_jobs if t.phase in ("Creating", "Pending"))
        failed = sum(
            1
            for t in snap.training_jobs
            if t.phase in _TRAINING_FAILED and t.phase_since is not None and t.phase_since >= since
        )
        sick = sum(p.abnormal or 0 for p in snap.pools)
    return FleetRow(name, kind, health, running, pending, failed, sick, len(mine), crit)


def source_row(st: Any, incidents: Iterable[Incident], now: datetime) -> FleetRow:
    """The row of one hub source (``runtime.state.SourceState``): its health from its last
    poll, then :func:`fleet_row`. The fleet screen and a cluster's own view read this one."""
    if st.error is not None:
        health = f"failing: {st.error.kind}: {st.error.message}"
    elif st.snapshot is None:
        health = "connecting"
    elif st.stale(now):
        health = "STALE"
    else:
        health = "ok"
    return fleet_row(st.name, st.source.kind, st.snapshot, health, incidents, now)


def health_label(health: str) -> str:
    """A row's ``health`` as people read it, in the language spoken (the error after
    ``failing:`` is the platform's own words)."""
    if health.startswith("failing: "):
        return _("failing: {error}").format(error=health[len("failing: ") :])
    return _(
        {"ok": N_("ok"), "connecting": N_("connecting"), "STALE": N_("STALE")}.get(health, health)
    )


def _node_sick(state: str, flags: Iterable[str]) -> bool:
    return state.upper() in _NODE_SICK or any(f.upper() in _NODE_SICK for f in flags)
