"""Shared storage findings: a filesystem at or above the threshold (bytes or inodes).

A ``site`` rule turns ``Snapshot.storage`` (df of the cluster's ``storage_paths``, collected
by the Slurm source's poll) into ``disk_full`` findings, and a ``job`` rule links a job
whose log says "No space left on device" / "Disk quota exceeded" to the full filesystem it
wrote to.
"""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.diagnosis.context import RuleContext, log_evidence
from cockpit.i18n import _
from cockpit.model import Evidence, Finding, FsUsage, SlurmJob, Snapshot, Subject

THRESHOLD_PCT = 85.0  # the guides' alert level; the alert rules may use another from config
_WRITE_FAILURES = {"disk_full", "disk_quota_exceeded"}  # logscan labels of ENOSPC / EDQUOT lines


def storage_findings(
    source: str, usages: Sequence[FsUsage], threshold_pct: float = 85
) -> list[Finding]:
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
            what.append(
                _("{pct} used ({free} GiB free)").format(
                    pct=f"{u.use_pct:.0f}%", free=f"{u.avail_mib / 1024:.1f}"
                )
            )
        if inode:
            what.append(_("{pct} of inodes used").format(pct=f"{u.inodes_pct:.0f}%"))
        ev = [
            Evidence(
                "df -P",
                _("{fs} {size} MiB, {used} MiB used, {avail} MiB avail, {pct} {mount}").format(
                    fs=u.filesystem or "?",
                    size=u.size_mib,
                    used=u.used_mib,
                    avail=u.avail_mib,
                    pct=f"{u.use_pct:.0f}%",
                    mount=u.mount,
                ),
            )
        ]
        if u.inodes_pct is not None:
            ev.append(
                Evidence("df -Pi", f"{u.filesystem or '?'} IUse% {u.inodes_pct:.0f} {u.mount}")
            )
        out.append(
            Finding(
                root_cause="disk_full",
                severity="critical" if worst >= 98 else "warning",
                subject=Subject("file", source, u.mount),
                title=_("{mount} is {value}").format(mount=u.mount, value=_(" and ").join(what)),
                explanation=(
                    _(
                        "Jobs writing to {mount} fail with 'No space left on device' once it is "
                        "full (inodes run out as well as bytes: many small files); the alert "
                        "threshold is {pct}."
                    )
                    if inode
                    else _(
                        "Jobs writing to {mount} fail with 'No space left on device' once it is "
                        "full; the alert threshold is {pct}."
                    )
                ).format(mount=u.mount, pct=f"{threshold_pct:g}%"),
                remedy=(
                    _(
                        "Find the biggest users: `du -xsh {mount}/* | sort -h | tail`, file "
                        "counts: `du -x --inodes -s {mount}/* | sort -n | tail`; clean up, move "
                        "data elsewhere, or ask for a bigger quota."
                    )
                    if inode
                    else _(
                        "Find the biggest users: `du -xsh {mount}/* | sort -h | tail`; clean up, "
                        "move data elsewhere, or ask for a bigger quota."
                    )
                ).format(mount=u.mount),
                evidence=tuple(ev),
                confidence=0.95,
            )
        )
    return out


def _over(u: FsUsage, threshold_pct: float) -> bool:
    return u.use_pct >= threshold_pct or (
        u.inodes_pct is not None and u.inodes_pct >= threshold_pct
    )


def site_storage(snapshot: Snapshot, ctx: RuleContext) -> list[Finding]:
    """``disk_full`` for each configured shared filesystem at or above :data:`THRESHOLD_PCT`."""
    return storage_findings(snapshot.source, snapshot.storage, THRESHOLD_PCT)


def _full_for(job: SlurmJob, line: str, full: list[FsUsage]) -> FsUsage:
    """The full filesystem the failing write most likely went to: one named in the log line,
    else the job's output / work directory, else the fullest."""

    def under(path: str, u: FsUsage) -> bool:
        return bool(path) and any(
            path == m or path.startswith(m.rstrip("/") + "/") for m in (u.mount, u.path) if m
        )

    for u in full:
        if any(m and m != "/" and m in line for m in (u.mount, u.path)):
            return u
    for path in (job.stdout_path, job.work_dir):
        hits = [u for u in full if under(path, u)]
        if hits:
            return max(hits, key=lambda u: len(u.mount))
    return max(full, key=lambda u: max(u.use_pct, u.inodes_pct or 0.0))


def job_write_failed_on_full_fs(job: SlurmJob, ctx: RuleContext) -> list[Finding]:
    """A job whose log says ENOSPC / EDQUOT while a shared filesystem is over the threshold.

    Same key as the Slurm rules' log-cause finding (``disk_full`` / ``disk_quota_exceeded``
    on the job), with higher confidence, so the merged finding names the filesystem.
    """
    if not ctx.snapshot.storage:
        return []
    full = ctx.cache.get("storage_full")
    if full is None:
        full = ctx.cache["storage_full"] = [
            u for u in ctx.snapshot.storage if _over(u, THRESHOLD_PCT)
        ]
    if not full:
        return []
    for lt in ctx.logs_for(job.job_id):
        for h in ctx.strong_hits(lt):
            if h.label not in _WRITE_FAILURES:
                continue
            u = _full_for(job, h.text, full)
            quota = h.label == "disk_quota_exceeded"
            ino = f", inodes {u.inodes_pct:.0f}%" if u.inodes_pct is not None else ""
            pct = f"{u.use_pct:.0f}%"
            return [
                Finding(
                    root_cause=h.label,
                    severity="critical",
                    subject=Subject("job", ctx.snapshot.source, job.job_id),
                    title=_("failed writing: {value}; {mount} is {pct} full{ino}").format(
                        value=_("disk quota exceeded") if quota else _("no space left"),
                        mount=u.mount,
                        pct=pct,
                        ino=ino,
                    ),
                    explanation=f"{h.text.strip()[:200]} ({lt.name}). "
                    + _(
                        "df shows {mount} at {pct} ({free} GiB free{ino}): the write failed "
                        "because the shared filesystem is full, not because of the job."
                    ).format(mount=u.mount, pct=pct, free=f"{u.avail_mib / 1024:.1f}", ino=ino)
                    + (
                        " " + _("A quota error on a nearly full filesystem: check both.")
                        if quota
                        else ""
                    ),
                    remedy=(
                        _(
                            "Free space on {mount} (du -xsh {mount}/* | sort -h | tail) or write "
                            "elsewhere, then resubmit; check the quota too: quota -s / lfs quota "
                            "-h."
                        )
                        if quota
                        else _(
                            "Free space on {mount} (du -xsh {mount}/* | sort -h | tail) or write "
                            "elsewhere, then resubmit."
                        )
                    ).format(mount=u.mount),
                    evidence=(
                        log_evidence(lt, h),
                        Evidence(
                            "df -P",
                            _("{fs} {used} MiB used, {avail} MiB avail, {pct} {mount}").format(
                                fs=u.filesystem or "?",
                                used=u.used_mib,
                                avail=u.avail_mib,
                                pct=f"{u.use_pct:.0f}%",
                                mount=u.mount,
                            ),
                            tier=1,
                        ),
                    ),
                    confidence=0.95,
                    related=(Subject("file", ctx.snapshot.source, u.mount),),
                )
            ]
    return []
