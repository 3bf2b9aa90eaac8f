"""Usage bars of filesystems: one line per group (a cluster), a bytes bar and an inodes bar each.

Data in: anything with ``mount``, ``use_pct`` and ``inodes_pct`` (``df -P`` / ``df -Pi``).
One line per group keeps an 80x24 screen's rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rich.text import Text
from textual.widgets import Static

from ._safe import clean

_EIGHTHS = " ▏▎▍▌▋▊▉"


class Usage(Protocol):
    @property
    def mount(self) -> str: ...

    @property
    def use_pct(self) -> float: ...

    @property
    def inodes_pct(self) -> float | None: ...


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


def storage_line(usages: Sequence[Usage], threshold_pct: float = 85.0, source: str = "") -> Text:
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
        full = max(u.use_pct, u.inodes_pct or 0) >= threshold_pct
        t.append(clean(u.mount, 40) + " ", style="bold" if full else "")
        t.append(bar(u.use_pct, 4), style=_style(u.use_pct, threshold_pct))
        t.append(f"{u.use_pct:3.0f}% ", style=_style(u.use_pct, threshold_pct))
        if u.inodes_pct is not None:
            t.append(bar(u.inodes_pct, 2), style=_style(u.inodes_pct, threshold_pct))
            t.append(f"i{u.inodes_pct:.0f}%", style=_style(u.inodes_pct, threshold_pct))
    return t


class StorageStrip(Static):
    """One :func:`storage_line` per group that has any usage; hidden when none has."""

    DEFAULT_CSS = "StorageStrip { height: auto; max-height: 3; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._text: Text | None = None  # what was last drawn, and its number of lines
        self._lines = -1

    def show(
        self, groups: Sequence[tuple[str, Sequence[Usage]]], threshold_pct: float = 85.0
    ) -> None:
        """``groups``: (label, usages) per line, label "" for none; empty ones are left out."""
        lines = [storage_line(usages, threshold_pct, label) for label, usages in groups if usages]
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
