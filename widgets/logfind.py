"""Finding things in a log: ``/``/``?`` search with ``n``/``N``, and ``&`` (keep only the
matching lines), as a mixin of :class:`~.logview.LogView`. Both read the file in chunks on
awaits, tagged like every other read: a result for another file or filter is dropped."""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any

from textual import work

from cockpit.i18n import _

from ._safe import clean
from .logdata import CHUNK

Direction = int  # 1 forward, -1 backward


class FindInLog:
    """Search and keep-matching for a :class:`~.logview.LogView` (its index, tag and cursor)."""

    if TYPE_CHECKING:  # what LogView provides
        search_text: str
        search_direction: Direction
        keep_text: str
        cursor: int
        _kept: array
        _kept_scanned: int
        _indexed: int
        _fsize: int
        _starts: array
        _done: bool
        _tag: Any

        def __getattr__(self, name: str) -> Any: ...

    # ------------------------------------------------------------------ search

    def search(self, text: str, direction: Direction = 1) -> None:
        """``/`` (forward) or ``?`` (backward) search; ``n`` repeats it, ``N`` reverses."""
        self.search_text = text
        self.search_direction = direction
        self.refresh()
        if text:
            self._search(direction, from_current=True)

    def action_search_next(self, direction: Direction) -> None:
        if not self.search_text:
            self.notify(_("no search: press / or ? first"), timeout=2)
            return
        self._search(direction * self.search_direction)

    @work(exclusive=True, group="logsearch")
    async def _search(self, direction: int, from_current: bool = False) -> None:
        tag, needle = self._tag, self.search_text.lower().encode("utf-8", "replace")
        reader = tag.reader
        if reader is None or not needle:
            return
        n = self.line_count
        start_line = self.cursor if from_current else self.cursor + direction
        step = CHUNK
        if direction > 0:
            pos = self._start(start_line) if self.first_line <= start_line <= n else self._fsize
            while pos < self._fsize:
                data = (await reader.read(pos, min(step + len(needle), self._fsize - pos))).lower()
                if not self._current(tag):
                    return
                hit = data.find(needle)
                if hit >= 0:
                    self.go_to_line(self._line_at(pos + hit))
                    return
                if not data:
                    break
                pos += step
        else:
            floor = self._starts[0]  # the oldest indexed line's start
            # from the last line too: its end is the file's end (searching up from G found
            # nothing when the range test excluded the last line)
            end = self._line_end(start_line) if self.first_line <= start_line <= n else floor
            while end > floor:
                pos = max(floor, end - step)
                data = (await reader.read(pos, end - pos + len(needle))).lower()[
                    : end - pos + len(needle) - 1
                ]
                if not self._current(tag):
                    return
                hit = data.rfind(needle)
                if hit >= 0:
                    self.go_to_line(self._line_at(pos + hit))
                    return
                end = pos
        self.app.bell()
        not_found = (
            _("“{text}” not found below") if direction > 0 else _("“{text}” not found above")
        )
        self.notify(
            not_found.format(text=clean(self.search_text, 60)),
            timeout=3,
            markup=False,
        )

    # ------------------------------------------------------------------ '&' keep matching lines

    def keep(self, text: str) -> None:
        """Show only the lines containing ``text`` (case-insensitive); ``""`` shows all."""
        at = self.cursor
        self.keep_text = text
        self._kept = array("Q")
        self._kept_scanned = self._starts[0]  # the oldest line still indexed
        self.scroll_to(y=0, animate=False, immediate=True)
        if text:
            self._scan_kept()
        else:
            self._resize_virtual()
            self.go_to_line(at)
        self.refresh()
        self.post_message(self.Changed(self))

    @work(exclusive=True, group="logkeep")
    async def _scan_kept(self) -> None:
        """Find the matching lines of the bytes indexed and not scanned yet (grows with the
        index and while following). Results apply only to the file and filter they were for."""
        tag, text = self._tag, self.keep_text
        reader = tag.reader
        needle = text.lower().encode("utf-8", "replace")
        if reader is None or not needle:
            return
        first = not self._kept
        while self._kept_scanned < (end := self._fsize if self._done else self._indexed):
            # indexed bytes, and once the index is done the last line too (it may have no
            # newline: "world Killed" at the end of a log)
            pos = self._kept_scanned
            data = await reader.read(pos, min(CHUNK, end - pos))
            if not (self._current(tag) and self.keep_text == text):
                return
            if not data:
                break
            cut = data.rfind(b"\n") + 1
            if not cut:  # inside a line longer than a chunk: keep an overlap for a split match
                cut = len(data) if pos + len(data) >= end else max(1, len(data) - len(needle) + 1)
            low, hit = data[: cut + len(needle) - 1].lower(), 0
            while (hit := low.find(needle, hit)) >= 0 and hit < cut:
                line = self._line_at(pos + hit)
                if not self._kept or self._kept[-1] < line:  # one row per line, across chunks
                    self._kept.append(line)
                hit = low.find(b"\n", hit)  # one entry per line: on to the next line
                if hit < 0:
                    break
            self._kept_scanned = pos + cut
            self._resize_virtual()
            self.refresh()
        if first and self._kept:
            self.go_to_line(self.cursor)
        elif not self._kept and self._done:
            self.notify(
                _("no line contains “{text}”").format(text=clean(text, 60)), timeout=3, markup=False
            )
        self.post_message(self.Changed(self))
