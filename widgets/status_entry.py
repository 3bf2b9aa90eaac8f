"""A source's line in the status bar, as plain data (no Textual: the runtime builds it)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime


@dataclass(frozen=True, slots=True)
class StatusEntry:
    """One source. ``taken_at`` when its shown data was taken (None: none yet); ``age_s`` how
    old that data is, given while ``stale``; ``error`` the last failure (None: the last poll
    worked); ``failures`` in a row; ``connecting`` no data and no error yet."""

    name: str
    taken_at: datetime | None = None
    age_s: float | None = None
    stale: bool = False
    error: str | None = None
    failures: int = 0
    warnings: int = 0
    connecting: bool = False
    group: str = ""  # what the summary counts it as: "clusters", "ModelArts"
    version: str = ""  # what the source runs ("22.05.8"), shown while the line has room


def _coarse(entry: StatusEntry) -> StatusEntry:
    """The age as drawn: in 5 s steps under a minute, then in minutes (fewer repaints)."""
    a = entry.age_s
    if a is None:
        return entry
    return replace(entry, age_s=a - a % 5 if a < 60 else a - a % 60)
