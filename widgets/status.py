"""A one-line status of data sources: when each last delivered, and whether it is late or failing.

Data in: :meth:`StatusLine.set_entries` with one :class:`StatusEntry` per source. The line
repaints only when what it shows changes.

Always exactly one row: a long error is shortened first (every source keeps its name and
state on screen); when even that does not fit (a fleet of a dozen clusters at 80 columns) the
line becomes a summary per group ("12 clusters: 11 ● 1 STALE  │  2 ModelArts: 2 ●") followed
by the sources that are not well, so none is hidden behind an ellipsis. (A widget that grew
to fit a wrapped error kept the extra rows, blank, after the error was gone.)
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget

from cockpit.i18n import _, ngettext

from ._safe import clean
from .fmt import age
from .status_entry import StatusEntry, _coarse

__all__ = ["StatusEntry", "StatusLine"]


class StatusLine(Widget):
    """Per source the time of its last good data; when late or failing, its age, STALE and
    the error."""

    DEFAULT_CSS = (
        "StatusLine { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }"
    )
    # (characters of each error, full detail) tried in turn until the line fits; without full
    # detail a stale source drops its clock time (its age stays) and the retry count
    FITS = ((120, True), (60, True), (40, True), (40, False), (30, False), (20, False), (12, False))

    def __init__(self, entries: Sequence[StatusEntry] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._entries: tuple[StatusEntry, ...] = tuple(_coarse(e) for e in entries)

    def set_entries(self, entries: Sequence[StatusEntry]) -> None:
        """Show ``entries``; repaints only when the line would read differently. A repaint
        costs Textual ~2-3 ms, and a caller may push the same state every second."""
        shown = tuple(_coarse(e) for e in entries)
        if shown != self._entries:
            self._entries = shown
            self.refresh()

    def render(self) -> Text:
        width = self.content_size.width
        for cap, full in self.FITS:
            out = self._line(cap, full)
            if not width or out.cell_len <= width:
                return out
        out = self._summary(width)
        out.truncate(width, overflow="ellipsis")
        return out

    def _summary(self, width: int) -> Text:
        """Counts per group, then each source that is not well with its state (and as much
        of its error as fits)."""
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        groups: dict[str, list[StatusEntry]] = {}
        for e in self._entries:
            groups.setdefault(e.group or _("sources"), []).append(e)
        for i, (group, entries) in enumerate(groups.items()):
            if i:
                out.append("  │  ", style="dim")
            out.append(f"{len(entries)} {group}:", style="bold")
            well = sum(1 for e in entries if not (e.error or e.stale or e.connecting))
            if well:
                out.append(f" {well} ")
                out.append("●", style="green")
            for label, style, n in (
                (_("STALE"), "bold yellow", sum(1 for e in entries if e.stale and not e.error)),
                (_("failing"), "bold red", sum(1 for e in entries if e.error)),
                (_("connecting"), "dim", sum(1 for e in entries if e.connecting)),
            ):
                if n:
                    out.append(f" {n} {label}", style=style)
        sick = [e for e in self._entries if e.error or e.stale]
        for e in sick:
            out.append("  │  ", style="dim")
            out.append("● ", style="red" if e.error else "yellow")
            out.append(clean(e.name, 30), style="bold")
            if e.stale and e.age_s is not None:
                out.append(f" {age(e.age_s)}")
            if e.error is not None:
                room = max(12, (width - out.cell_len) // max(1, len(sick)) - 2)
                out.append(f" {clean(e.error, room)}", style="red")
        return out

    def _line(self, error_cap: int, full: bool) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        for i, e in enumerate(self._entries):
            if i:
                out.append("  │  ", style="dim")
            out.append("● ", style="red" if e.error else "yellow" if e.stale else "green")
            out.append(clean(e.name, 40), style="bold")
            if e.version and full:
                out.append(f" {clean(e.version, 16)}", style="dim")
            if e.connecting:
                out.append(" " + _("connecting…"), style="dim")
                continue
            # the local time zone, like the terminal's clock next to it
            taken = e.taken_at
            if taken is None:
                out.append(" " + _("no data yet"))
            elif full or not e.stale:
                out.append(" " + _("as of {time}").format(time=f"{taken.astimezone():%H:%M:%S}"))
            if e.stale:
                if e.age_s is not None:
                    out.append(" (" + _("{age} ago").format(age=age(e.age_s)) + ")")
                out.append(
                    " " + _("STALE"), style="bold reverse red" if e.error else "bold reverse yellow"
                )
            if e.error is not None:
                out.append(f" {clean(e.error, error_cap)}", style="red")
                if e.failures > 1 and full:
                    out.append(" " + _("(×{n}, retrying)").format(n=e.failures), style="dim")
            elif e.warnings:
                out.append(
                    " " + ngettext("{n} warning", "{n} warnings", e.warnings).format(n=e.warnings),
                    style="yellow",
                )
        return out
