"""The storage strip of the nodes pane: usage and inode bars of each cluster's shared filesystems.

Reads ``Snapshot.storage`` (``df -P`` / ``df -Pi`` of the configured ``storage_paths``)
from the hub; one line per Slurm source that collected any, so 80x24 keeps its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from cockpit.model import FsUsage
from cockpit.text import clean

if TYPE_CHECKING:
    from cockpit.runtime.hub import Hub

_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(pct: float, width: int) -> str:
    """A ``width``-cell bar filled to ``pct`` % in eighths of a cell (always ``width`` long)."""
    pct = min(100.0, max(0.0, pct))
    eighths = round(pct / 100 * width * 8)
    full, part = divmod(eighths, 8)
    out = "█" * full + (_EIGHTHS[part] if part and full < width else "")
    return out.ljust(width, "·")


def _style(pct: float | None, threshold: float) -> str:
    if pct is None:
        return "dim"
    if pct >= threshold:
        return "bold red"
    return "yellow" if pct >= threshold - 10 else "green"


def storage_line(usages: Sequence[FsUsage], threshold_pct: float = 85.0, source: str = "") -> Text:
    """``df /home ██▌· 63% ▍·i22%  /scratch …``: a bytes bar and an inode bar per filesystem.

    Filesystems at or over ``threshold_pct`` (bytes or inodes) are red, within 10 points yellow.
    Several configured paths on one mount are shown once.
    """
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(f" {clean(source, 30)} " if source else " ", style="bold")
    t.append("df ", style="bold")
    seen: set[str] = set()
    for u in usages:
        if u.mount in seen:
            continue
        if seen:
            t.append("  ")
        seen.add(u.mount)
        t.append(clean(u.mount, 40) + " ", style="bold" if max(u.use_pct, u.inodes_pct or 0) >= threshold_pct else "")
        t.append(bar(u.use_pct, 4), style=_style(u.use_pct, threshold_pct))
        t.append(f"{u.use_pct:3.0f}% ", style=_style(u.use_pct, threshold_pct))
        if u.inodes_pct is not None:
            t.append(bar(u.inodes_pct, 2), style=_style(u.inodes_pct, threshold_pct))
            t.append(f"i{u.inodes_pct:.0f}%", style=_style(u.inodes_pct, threshold_pct))
    return t


class StorageStrip(Static):
    """One :func:`storage_line` per Slurm source with storage; hidden when none has any.

    The dashboard calls :meth:`refresh_from_hub` after each poll.
    """

    DEFAULT_CSS = "StorageStrip { height: auto; max-height: 3; }"

    def __init__(self, hub: Hub, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hub = hub
        self._text: Text | None = None  # what was last drawn, and its number of lines
        self._lines = -1

    def _threshold(self) -> float:
        cfg = getattr(self.hub.watcher, "config", None)
        return float(getattr(cfg, "storage_pct", 85.0))

    def refresh_from_hub(self) -> None:
        lines = []
        multi = sum(1 for st in self.hub.states.values() if st.source.kind == "slurm") > 1
        for st in self.hub.states.values():
            snap = st.snapshot
            if snap is not None and snap.storage:
                lines.append(storage_line(snap.storage, self._threshold(), st.name if multi else ""))
        text = Text("\n", no_wrap=True, overflow="ellipsis").join(lines)
        text.no_wrap, text.overflow = True, "ellipsis"
        if text == self._text:
            return
        # a layout pass (the whole screen, ~18 ms) only when the strip's height changes:
        # shown/hidden or another number of lines (no_wrap: the width never matters)
        relayout = len(lines) != self._lines
        self._text, self._lines = text, len(lines)
        self.display = bool(lines)
        self.update(text, layout=relayout)
