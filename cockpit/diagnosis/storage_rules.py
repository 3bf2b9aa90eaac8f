"""Shared storage findings: a filesystem at or above the threshold (bytes or inodes).

Pure; not registered with ``@rule`` because usages are not part of a Snapshot yet.
The engine (or the watch loop) calls :func:`storage_findings` with what
:func:`cockpit.watch.storage.collect_storage` returned.
"""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.model import Evidence, Finding, Subject
from cockpit.watch.storage import FsUsage


def storage_findings(source: str, usages: Sequence[FsUsage], threshold_pct: float = 85) -> list[Finding]:
    """One ``disk_full`` finding per filesystem whose use% or inode use% is >= ``threshold_pct``.

    Subject: ``Subject("file", source, mount)``. Critical at >= 98 % (writes are about
    to fail with "No space left on device"), else warning. Evidence quotes df.
    """
    out: list[Finding] = []
    seen: set[str] = set()
    for u in usages:
        if u.mount in seen:
            continue  # several configured paths on one filesystem
        seen.add(u.mount)
        inode = u.inodes_pct is not None and u.inodes_pct >= threshold_pct
        if u.use_pct < threshold_pct and not inode:
            continue
        worst = max(u.use_pct, u.inodes_pct or 0.0)
        what = []
        if u.use_pct >= threshold_pct:
            what.append(f"{u.use_pct:.0f}% used ({u.avail_mib / 1024:.1f} GiB free)")
        if inode:
            what.append(f"{u.inodes_pct:.0f}% of inodes used")
        ev = [Evidence("df -P", f"{u.filesystem or '?'} {u.size_mib} MiB, {u.used_mib} MiB used, {u.avail_mib} MiB avail, {u.use_pct:.0f}% {u.mount}")]
        if u.inodes_pct is not None:
            ev.append(Evidence("df -Pi", f"{u.filesystem or '?'} IUse% {u.inodes_pct:.0f} {u.mount}"))
        out.append(Finding(
            root_cause="disk_full",
            severity="critical" if worst >= 98 else "warning",
            subject=Subject("file", source, u.mount),
            title=f"{u.mount} is {' and '.join(what)}",
            explanation=(
                f"Jobs writing to {u.mount} fail with 'No space left on device' once it is full"
                + (" (inodes run out as well as bytes: many small files)" if inode else "")
                + f"; the alert threshold is {threshold_pct:g}%."
            ),
            remedy=(
                f"Find the biggest users: `du -xsh {u.mount}/* | sort -h | tail`"
                + (f", file counts: `du -x --inodes -s {u.mount}/* | sort -n | tail`" if inode else "")
                + "; clean up, move data elsewhere, or ask for a bigger quota."
            ),
            evidence=tuple(ev),
            confidence=0.95,
        ))
    return out
