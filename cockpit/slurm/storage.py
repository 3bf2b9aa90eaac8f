"""Shared filesystem usage from ``df -P`` and ``df -Pi`` (POSIX output: one line per path).

The guides: alert when a shared filesystem (``/home``, ``/scratch``, ``/opt/apps``)
passes 85 % of bytes *or* inodes; a full inode table fails writes with the same
"No space left on device" as a full disk.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cockpit.errors import ParseError
from cockpit.model import FsUsage  # lives in the model (Snapshot.storage); re-exported here
from cockpit.slurm.commands import df_argv
from cockpit.text import decode
from cockpit.transport import Transport

__all__ = ["FsUsage", "StorageReport", "collect_storage", "parse_df"]


@dataclass(frozen=True, slots=True)
class _Row:
    filesystem: str
    total: int
    used: int
    avail: int
    pct: float | None
    mount: str


# Filesystem names and mount points may contain spaces; the four numeric columns anchor the split.
_ROW = re.compile(
    r"^(?P<fs>.+?)\s+(?P<total>\d+)\s+(?P<used>\d+)\s+(?P<avail>\d+)\s+(?P<pct>\d+%|-)\s+(?P<mount>/.*)$"
)
_BLOCKS = re.compile(r"^(\d+)([KMG]?)-blocks$", re.IGNORECASE)


def _rows(text: str, where: str, header_word: str) -> tuple[list[_Row], int]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return [], 1024
    head = lines[0].split()
    if len(head) < 6 or head[0] != "Filesystem":
        raise ParseError(f"expected a df header, got {lines[0][:80]!r}", where, 1)
    unit = 1024
    if header_word == "blocks":
        m = _BLOCKS.match(head[1])
        if not m:
            raise ParseError(f"unknown block size column {head[1]!r}", where, 1)
        unit = int(m.group(1)) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[m.group(2).upper()]
    elif head[1] != "Inodes":
        raise ParseError(f"expected df -Pi output (Inodes column), got {head[1]!r}", where, 1)
    rows = []
    for i, ln in enumerate(lines[1:], start=2):
        m = _ROW.match(ln.rstrip())
        if not m:
            raise ParseError(f"unparsable df line {ln[:80]!r}", where, i)
        pct = None if m["pct"] == "-" else float(m["pct"][:-1])
        rows.append(
            _Row(m["fs"], int(m["total"]), int(m["used"]), int(m["avail"]), pct, m["mount"])
        )
    return rows, unit


def parse_df(text: str, paths: Sequence[str] = (), inode_text: str | None = None) -> list[FsUsage]:
    """Parse ``df -P PATH...`` output (and optionally ``df -Pi PATH...`` for the same paths).

    Rows are matched to ``paths`` by position (df prints one row per argument, in
    order) and inode rows to byte rows by position when the counts agree, else by
    mount point. Raises :class:`ParseError` on output that is not df's.
    """
    rows, unit = _rows(text, "df -P", "blocks")
    irows = _rows(inode_text, "df -Pi", "inodes")[0] if inode_text is not None else []
    by_mount = {r.mount: r for r in irows}
    out = []
    mib = 1024 * 1024
    for i, r in enumerate(rows):
        ir = irows[i] if len(irows) == len(rows) else by_mount.get(r.mount)
        pct = r.pct
        if pct is None:
            denom = r.used + r.avail
            pct = math.ceil(100 * r.used / denom) if denom else 0.0
        out.append(
            FsUsage(
                mount=r.mount,
                size_mib=r.total * unit // mib,
                used_mib=r.used * unit // mib,
                avail_mib=r.avail * unit // mib,
                use_pct=float(pct),
                inodes_pct=ir.pct if ir is not None else None,
                path=paths[i] if i < len(paths) and len(paths) == len(rows) else r.mount,
                filesystem=r.filesystem,
                inodes_used=ir.used if ir is not None and ir.total else None,
                inodes_total=ir.total if ir is not None and ir.total else None,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class StorageReport:
    """What :func:`collect_storage` saw: usages plus df's complaints (missing paths)."""

    usages: tuple[FsUsage, ...]
    errors: tuple[str, ...] = ()


async def collect_storage(
    transport: Transport, paths: Sequence[str], timeout: float = 20.0
) -> StorageReport:
    """Run ``df -P`` and ``df -Pi`` for ``paths`` over ``transport``.

    A path df cannot see (exit 1, ``df: /x: No such file or directory``) is reported
    in ``errors`` and the others are still returned. Transport failures
    (:class:`~cockpit.transport.TransportError`) propagate: the source turns
    them into a SourceError. Raises ParseError on output that is not df's.
    """
    if not paths:
        return StorageReport(())
    res = await transport.run(list(df_argv(paths)), timeout=timeout)
    ires = await transport.run(list(df_argv(paths, inodes=True)), timeout=timeout)
    errors = tuple(
        dict.fromkeys(
            ln.strip() for r in (res, ires) for ln in decode(r.stderr).splitlines() if ln.strip()
        )
    )
    seen = [p for p in paths if not any(f"{p}:" in e or f"'{p}'" in e for e in errors)]
    usages = parse_df(decode(res.stdout), seen, decode(ires.stdout))
    return StorageReport(tuple(usages), errors)
