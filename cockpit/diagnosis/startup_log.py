"""A training job's startup log read as text: its last line and when it was written, and the
lines about storage (mounts, volumes, OBS, access) an operator greps for first.

Pure functions over the log text (``TrainingJob.log_preview`` or a bundle's startup log);
the keywords are data (:data:`STORAGE_KEYWORDS`), matched as whole words, case-insensitive.
"""

from __future__ import annotations

import re
from datetime import datetime

from cockpit.text import strip_ansi

# Timestamps seen in container / ModelArts startup logs: ISO 8601 with T or space,
# optional fraction (',' from Python logging, '.' elsewhere) and zone.
TIMESTAMP = re.compile(
    r"(?P<d>\d{4}-\d{2}-\d{2})[T ](?P<t>\d{2}:\d{2}:\d{2})"
    r"(?:[.,](?P<f>\d{1,9}))?(?P<z>Z|[+-]\d{2}:?\d{2})?"
)

# What an operator greps a stuck or failed start for when storage is suspect: the mount and
# volume steps, OBS and its error codes, access and path errors (English and Chinese).
STORAGE_KEYWORDS: tuple[str, ...] = (
    "mount",
    "mounting",
    "mounted",
    "umount",
    "volume",
    "obs",
    "obsfs",
    "s3fs",
    "sfs",
    "evs",
    "nfs",
    "AccessDenied",
    "Access Denied",
    "NoSuchBucket",
    "NoSuchKey",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "Permission denied",
    "Read-only file system",
    "Transport endpoint is not connected",
    "HTTP 403",
    "挂载",
    "存储卷",
    "权限不足",
    "拒绝访问",
)

_KEYWORD_RE = re.compile(
    "|".join(
        # words get boundaries (so "obs" is not "jobs"); Chinese terms match anywhere
        (rf"(?<![A-Za-z0-9_]){re.escape(k)}(?![A-Za-z0-9_])" if k.isascii() else re.escape(k))
        for k in sorted(STORAGE_KEYWORDS, key=len, reverse=True)
    ),
    re.I,
)


def line_time(line: str) -> datetime | None:
    """The first timestamp in ``line`` (naive ones taken as UTC), else None."""
    m = TIMESTAMP.search(line)
    if not m:
        return None
    frac = (m["f"] or "0")[:6].ljust(6, "0")
    zone = m["z"] or "+00:00"
    zone = "+00:00" if zone == "Z" else (zone if ":" in zone else zone[:3] + ":" + zone[3:])
    try:
        return datetime.fromisoformat(f"{m['d']}T{m['t']}.{frac}{zone}")
    except ValueError:
        return None


def strip_time(line: str) -> str:
    """``line`` without its leading timestamp (the words of the step, for a title)."""
    m = TIMESTAMP.search(line)
    if m is None or line[: m.start()].strip():
        return line
    return line[m.end() :].lstrip()


def last_line(text: str) -> tuple[int, str, datetime | None] | None:
    """(1-based line number, text, its timestamp or None) of the last non-blank line."""
    lines = text.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        shown = strip_ansi(lines[i]).strip()
        if shown:
            return i + 1, shown, line_time(shown)
    return None


def keyword_lines(
    text: str, limit: int = 20, pattern: re.Pattern[str] = _KEYWORD_RE
) -> list[tuple[int, str]]:
    """(1-based line number, line) of the lines naming a storage keyword, in order, at most
    ``limit``: the startup log filtered the way an operator greps it."""
    out: list[tuple[int, str]] = []
    for i, raw in enumerate(text.splitlines(), 1):
        if pattern.search(raw):
            out.append((i, strip_ansi(raw).strip()))
            if len(out) >= limit:
                break
    return out
