"""The hub as plain data for the status line and the storage strip: per source what the status
line says, and the filesystems' usage per cluster."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cockpit.i18n import _
from cockpit.model import FsUsage
from cockpit.widgets.status_entry import StatusEntry

if TYPE_CHECKING:
    from cockpit.runtime.hub import Hub


def source_status(hub: Hub) -> tuple[StatusEntry, ...]:
    """Per source what the status line says (~10 µs: it is asked every second)."""
    now = hub.clock()
    out = []
    for st in hub.states.values():
        stale = st.stale(now)
        snap = st.snapshot
        err = st.error
        out.append(
            StatusEntry(
                st.name,
                taken_at=snap.taken_at if snap is not None else None,
                age_s=st.age_s(now) if stale else None,
                stale=stale,
                error=None if err is None else f"{err.kind}: {err.message}",
                failures=st.failures,
                warnings=len(snap.warnings) if snap is not None else 0,
                connecting=snap is None and err is None,
                group=_("clusters") if st.source.kind == "slurm" else "ModelArts",
                version=snap.slurm_version if snap is not None else "",
            )
        )
    return tuple(out)


def storage_groups(hub: Hub) -> list[tuple[str, tuple[FsUsage, ...]]]:
    """(cluster, its filesystems' usage) per source that collected any; the cluster's name
    only when there are several Slurm sources."""
    states = hub.states.values()
    multi = sum(1 for st in states if st.source.kind == "slurm") > 1
    out = []
    for st in states:
        snap = st.snapshot
        if snap is not None and snap.storage:
            out.append((st.name if multi else "", tuple(snap.storage)))
    return out


def storage_threshold(hub: Hub) -> float:
    """Usage (%) at which a filesystem shows red: the alert rule's, 85 without a watcher."""
    cfg = getattr(hub.watcher, "config", None)
    return float(getattr(cfg, "storage_pct", 85.0))
