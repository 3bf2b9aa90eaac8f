"""A log viewer that never holds the whole file: a byte-offset line index plus a window cache.

The file is read in chunks through a :class:`LogReader` (the app's readers: a file on a
host, in-memory bytes). While indexing, each chunk goes through the reader's own error
scanner (:meth:`LogReader.errors`) so the viewer can open at the first red error. Only the
lines on screen are decoded, cleaned (:func:`._safe.clean`) and turned into strips.

Keys (less and lnav): ``e``/``E`` next/previous error, ``w``/``W`` warning, ``g``/``G``
top/bottom (``120g``: line 120), ``space``/``b`` and ``ctrl+d``/``ctrl+u`` pages and half
pages, ``←``/``→`` scroll long lines, ``f`` follow (new bytes only; a file that shrinks, or
whose first bytes change (rotated), is reindexed and the user is told; a log followed for days
keeps the index of its newest :attr:`LogView.max_index_lines` lines only, older lines are
dropped and the user is told), ``ctrl+w`` wrap, ``n``/``N`` next/previous search match. The
screen owns the inputs: ``/`` and ``?`` search (:meth:`LogView.search`), ``&`` keeps only
matching lines (:meth:`LogView.keep`).

Every read is an await (and big chunks are scanned on a worker thread), so a result can
arrive after the user switched to another log or the file was reindexed. Each result is
tagged with the :class:`_Tag` current when its read started (the reader and a generation
number bumped by every ``open`` and reindex) and applied on the UI thread only if that tag is
still current; threads return data and never touch the view.
"""

from __future__ import annotations

import asyncio
import bisect
from array import array
from collections import OrderedDict

from rich.cells import cell_len, chop_cells, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from cockpit.i18n import N_, _, ngettext

from ._safe import clean
from .logdata import (
    CACHE_LINES,
    CHUNK,
    COUNT_DIGITS,
    HEAD_BYTES,
    INDEX_LINES,
    LINE_CAP,
    WINDOW_BYTES,
    ErrorMark,
    LogReader,
    _index_chunk,
    _runs,
    _scan,
    _Tag,
)
from .logfind import Direction, FindInLog


class LogView(FindInLog, ScrollView, can_focus=True):
    """Line-API log viewer. ``open()`` starts indexing; the cursor lands on the first error."""

    BINDINGS = [
        Binding("up,k", "move(-1)", N_("Up"), show=False),
        Binding("down,j", "move(1)", N_("Down"), show=False),
        Binding("pageup,b", "page(-1)", show=False),
        Binding("pagedown,space", "page(1)", show=False),
        Binding("ctrl+u", "page(-0.5)", show=False),
        Binding("ctrl+d", "page(0.5)", show=False),
        Binding("left", "pan(-1)", show=False),
        Binding("right", "pan(1)", show=False),
        Binding("g,home", "top", N_("Top")),
        Binding("G,end", "bottom", N_("Bottom")),
        Binding("e", "mark('critical', 1)", N_("Next error")),
        Binding("E", "mark('critical', -1)", N_("Prev error")),
        Binding("w", "mark('warning', 1)", N_("Next warning"), show=False),
        Binding("W", "mark('warning', -1)", N_("Prev warning"), show=False),
        Binding("f", "follow", N_("Follow")),
        Binding("ctrl+w", "wrap", N_("Wrap")),
        Binding("n", "search_next(1)", N_("Next match"), show=False),
        Binding("N", "search_next(-1)", N_("Prev match"), show=False),
        *[Binding(d, f"digit('{d}')", show=False) for d in "0123456789"],
    ]
    COMPONENT_CLASSES = {
        "logview--cursor",
        "logview--error",
        "logview--warning",
        "logview--gutter",
        "logview--match",
    }
    DEFAULT_CSS = """
    LogView {
        background: $surface; overflow-y: auto; overflow-x: hidden; scrollbar-size-vertical: 1;
    }
    LogView > .logview--gutter { color: $text-muted; }
    LogView > .logview--error { color: red; text-style: bold; }
    LogView > .logview--warning { color: yellow; }
    LogView > .logview--cursor { background: $accent 40%; }
    LogView > .logview--match { background: yellow; color: black; }
    """

    class Changed(Message):
        """Position, indexing progress, follow or wrap changed (for the status line)."""

        def __init__(self, view: LogView) -> None:
            super().__init__()
            self.view = view

    cursor: reactive[int] = reactive(1, repaint=False)  # 1-based line

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.max_index_lines = INDEX_LINES
        self.reader: LogReader | None = None
        self.wrap = False
        self.following = False
        self.message = ""  # last notable event ("truncated: reindexed", read error)
        self.search_text = ""
        self.search_direction: Direction = 1
        self.keep_text = ""  # '&': only lines containing it are shown
        self.pan_x = 0  # cells scrolled to the right (no wrap)
        self._count = ""  # digits typed before g / G / j / k (less)
        self._reset()
        self._follow_timer: Timer | None = None
        self._want_line: int | None = None
        self._want_offset: int | None = None
        self._window_tag: _Tag | None = None  # a window read in flight for this tag

    def _reset(self) -> None:
        """Forget the file's index and lines; results of reads started before are dropped."""
        # byte offset of the start of each line from line _dropped + 1 on; last = next line.
        # Virtual row r shows line _dropped + r + 1.
        self._starts = array("Q", [0])
        self._dropped = 0  # lines cut off the front of the index while following
        self._indexed = 0  # bytes indexed: always just after a newline
        self._fsize = 0
        self._head = (
            b""  # the file's first bytes: a changed head while following = replaced (rotated)
        )
        self._done = False
        self.errors: list[ErrorMark] = []
        self._cache: OrderedDict[int, str] = OrderedDict()
        self._generation = getattr(self, "_generation", 0) + 1
        self._tag = _Tag(self.reader, self._generation)
        self._landed = False
        # '&' filter: the matching lines (ascending) of the bytes scanned so far
        self._kept = array("Q")
        self._kept_scanned = 0

    def _current(self, tag: _Tag) -> bool:
        return tag is self._tag

    @property
    def _loading_window(self) -> bool:
        """A window read for the file shown is in flight."""
        return self._window_tag is not None and self._current(self._window_tag)

    # ------------------------------------------------------------------ opening / indexing

    @property
    def line_count(self) -> int:
        """Complete lines plus a last line without a newline, if any."""
        return self._dropped + len(self._starts) - 1 + (1 if self._fsize > self._starts[-1] else 0)

    @property
    def first_line(self) -> int:
        """The oldest line still indexed (1 unless a long follow dropped older lines)."""
        return self._dropped + 1

    @property
    def _rows(self) -> int:
        return self.line_count - self._dropped

    def _start(self, line: int) -> int:
        """Byte offset where indexed ``line`` starts."""
        return self._starts[line - 1 - self._dropped]

    def _line_at(self, offset: int) -> int:
        """The indexed line holding byte ``offset``."""
        return max(self.first_line, bisect.bisect_right(self._starts, offset) + self._dropped)

    @property
    def row_count(self) -> int:
        """Rows shown: every indexed line, or the matching ones while ``&`` keeps lines."""
        return len(self._kept) if self.keep_text else self._rows

    def _resize_virtual(self) -> None:
        """Rows to scroll through. Wrapped, the last line must be able to reach the top (a
        line may take the whole screen), or the cursor on a late line could not be shown."""
        extra = max(0, self.scrollable_content_region.height - 1) if self.wrap else 0
        self.virtual_size = Size(self.size.width, self.row_count + extra)

    def _line_for_row(self, row: int) -> int:
        """The line (1-based) shown at ``row`` (0-based)."""
        return self._kept[row] if self.keep_text else self.first_line + row

    def _row_for_line(self, line: int) -> int:
        """The row of ``line``, or of the first shown line after it."""
        return bisect.bisect_left(self._kept, line) if self.keep_text else line - self.first_line

    @property
    def indexed_fraction(self) -> float:
        return 1.0 if self._done or not self._fsize else min(1.0, self._indexed / self._fsize)

    def _line_end(self, line: int) -> int:
        i = line - self._dropped
        return self._starts[i] if i < len(self._starts) else self._fsize

    def open(self, reader: LogReader, line: int | None = None, offset: int | None = None) -> None:
        """Show ``reader``; go to ``line``/``offset`` if given, else to the first error."""
        self.reader = reader
        self.set_follow(False)
        self.keep_text = ""
        self.pan_x = 0
        self._reset()
        self.message = ""
        if line is None and offset is None:
            offset = getattr(reader, "landing_offset", None)
        self._want_line, self._want_offset = line, offset
        self.cursor = 1
        self.scroll_to(y=0, animate=False, immediate=True)
        self.virtual_size = Size(self.size.width, 0)
        self.refresh()
        self._index()

    @work(exclusive=True, group="logindex")
    async def _index(self) -> None:
        tag = self._tag
        reader = tag.reader
        if reader is None:
            return
        # after every await: a result for another file (or an older index) is dropped
        try:
            size = await reader.size()
            if not self._current(tag):
                return
            self._fsize = size
            # errors found in an unfinished last line are found again once it is complete
            self.errors = [e for e in self.errors if e.offset < self._indexed]
            self._cache.pop(self._dropped + len(self._starts), None)
            pos = self._indexed  # always a line start
            while pos < self._fsize:
                data = await reader.read(pos, min(CHUNK, self._fsize - pos))
                if not self._current(tag):
                    return
                if not data:
                    break
                if pos == 0:
                    self._head = data[:HEAD_BYTES]
                cut = data.rfind(b"\n") + 1
                if cut:
                    args = (reader, data[:cut], pos, self._dropped + len(self._starts))
                    if cut > 256 << 10:
                        starts, errors = await asyncio.to_thread(_index_chunk, *args)
                        if not self._current(tag):
                            return
                    else:
                        starts, errors = _index_chunk(*args)
                    self._starts.extend(starts)
                    self._indexed = pos + cut
                    self.errors.extend(errors)
                    self._trim_index()
                elif pos + len(data) < self._fsize:
                    pos += len(data)  # a line longer than a chunk: keep looking for its end
                    continue
                pos = self._indexed if cut else pos + len(data)
                self._after_chunk()
            if self._fsize > self._indexed:  # last line without a newline: scan it too
                at = self._indexed
                tail = await reader.read(at, min(LINE_CAP, self._fsize - at))
                if not self._current(tag):
                    return
                self.errors.extend(_scan(reader, tail, at, self._dropped + len(self._starts)))
            self._done = True
        except Exception as exc:  # a missing/unreadable log is a message, not a crash
            if not self._current(tag):
                return
            self.message = _("cannot read {log}: {error}").format(
                log=reader.name, error=clean(str(exc), 200)
            )
            self._done = True
        self._after_chunk(final=True)

    def _trim_index(self) -> None:
        """While following, keep the newest ``max_index_lines`` lines: a log followed for a
        week would otherwise hold 8 bytes per line it ever had (and their error marks)."""
        cap = max(1, self.max_index_lines)
        extra = len(self._starts) - 1 - cap
        if not self.following or extra <= 0:
            return
        # a tenth of headroom: the array's front is copied once per cap // 10 lines, not per chunk
        k = min(extra + cap // 10, len(self._starts) - 1)
        del self._starts[:k]
        self._dropped += k
        first = self.first_line
        del self.errors[: bisect.bisect_left(self.errors, first, key=lambda e: e.line)]
        for line in [ln for ln in self._cache if ln < first]:
            del self._cache[line]
        del self._kept[: bisect.bisect_left(self._kept, first)]
        if self.cursor < first:
            self.cursor = first
        # the same lines stay on screen: every row moved up by k
        self.scroll_to(y=max(0, self.scroll_y - k), animate=False, immediate=True)
        self.message = _(
            "following: lines before {first} dropped (the newest {cap} are kept)"
        ).format(first=first, cap=cap)

    def _after_chunk(self, final: bool = False) -> None:
        if self.keep_text:
            self._scan_kept()
        self._resize_virtual()
        if not self._landed:
            target = self._target_line(final)
            if target is not None:
                self._landed = True
                self.go_to_line(target)
        self.refresh()
        self.post_message(self.Changed(self))

    def _target_line(self, final: bool) -> int | None:
        if self._want_line is not None:
            if self._want_line <= self.line_count or final:
                return min(self._want_line, max(1, self.line_count))
            return None
        if self._want_offset is not None:
            if self._want_offset < self._indexed or final:
                return self._line_at(self._want_offset)
            return None
        strong = next((e for e in self.errors if e.strong), None)
        if strong is not None:
            return strong.line
        if final:
            return self.errors[0].line if self.errors else 1
        return None

    # ------------------------------------------------------------------ follow

    def set_follow(self, on: bool) -> None:
        self.following = on
        if self._follow_timer is not None:
            self._follow_timer.stop()
            self._follow_timer = None
        if on and self.is_mounted:
            self._follow_timer = self.set_interval(1.0, self._poll_growth)
            self.action_bottom()
        self.post_message(self.Changed(self))

    async def _poll_growth(self) -> None:
        tag = self._tag
        reader = tag.reader
        if reader is None or not self._done:
            return
        try:
            size = await reader.size()
        except Exception as exc:
            if self._current(tag):
                self.message = _("follow: {error}").format(error=clean(str(exc), 200))
                self.post_message(self.Changed(self))
            return
        if not self._current(tag):
            return  # another log is shown now: its own size is not this one's
        replaced = False
        if size > self._fsize and self._head:
            # rotated to a new file that is already bigger than the old one (delete + recreate,
            # logrotate create): a size check alone would append the new file's bytes to the old
            try:
                replaced = await reader.read(0, len(self._head)) != self._head
            except Exception:  # a read error shows on the next tick's size(); keep following
                replaced = False
            if not self._current(tag):
                return
        if size < self._fsize or replaced:
            # truncated or rotated: the old offsets mean nothing any more
            at = self.cursor
            self._reset()
            self.message = (
                _("{log} was replaced (rotated): reindexed").format(log=reader.name)
                if replaced
                else _("{log} shrank to {size} bytes (truncated or rotated): reindexed").format(
                    log=reader.name, size=size
                )
            )
            self.notify(self.message, severity="warning", markup=False)
            self._want_line, self._want_offset, self._landed = at, None, False
            self._index()
        elif size > self._fsize:
            at_end = self.cursor >= self.line_count
            self._fsize = size
            self._done = False
            self._want_line = None
            self._landed = not at_end
            if at_end:
                self._want_line = 10**12  # land on the new last line
            self._index()

    # ------------------------------------------------------------------ navigation

    def go_to_line(self, line: int) -> None:
        n = self.line_count
        line = max(self.first_line, min(line, max(n, 1)))
        if self.keep_text and self._kept:  # the first kept line at or after it
            line = self._kept[min(self._row_for_line(line), len(self._kept) - 1)]
        self.cursor = line
        self._scroll_to_cursor()
        # the virtual size may have just grown: scroll again once layout has caught up
        self.call_after_refresh(self._scroll_to_cursor)
        self.refresh()
        self.post_message(self.Changed(self))

    def _scroll_to_cursor(self) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_y)
        row = self._row_for_line(self.cursor)
        if self.wrap:
            # a row is a line that may take several screen rows: the cursor line is on screen
            # when the wrapped lines from the top down to it fit (unread lines count as one;
            # checked again when the window's lines arrive)
            if row < top:
                self.scroll_to(y=row, animate=False, immediate=True)
            elif row >= top + height or self._wrapped_height(top, row) > height:
                top = row - self._rows_fitting(row, height) + 1
                self.scroll_to(y=max(0, top), animate=False, immediate=True)
        elif row < top or row >= top + height:
            self.scroll_to(y=max(0, row - height // 3), animate=False, immediate=True)

    def _wrap_width(self) -> int:
        return max(10, self.scrollable_content_region.width - self._gutter_width())

    def _wrapped_rows_of(self, row: int, avail: int) -> int:
        text = self._cache.get(self._line_for_row(row))
        return max(1, -(-cell_len(text) // avail)) if text else 1

    def _wrapped_height(self, top: int, row: int) -> int:
        """Screen rows that rows ``top``..``row`` take when wrapped (unread lines count 1)."""
        avail = self._wrap_width()
        return sum(self._wrapped_rows_of(r, avail) for r in range(top, row + 1))

    def _rows_fitting(self, row: int, height: int) -> int:
        """How many rows ending at ``row`` fit in ``height`` screen rows when wrapped."""
        avail = self._wrap_width()
        used = n = 0
        while row - n >= 0:
            used += self._wrapped_rows_of(row - n, avail)
            if used > height and n:
                break
            n += 1
        return max(1, n)

    def _take_count(self) -> int | None:
        count, self._count = self._count, ""
        return int(count) if count else None

    def _go_row(self, row: int) -> None:
        rows = self.row_count
        if rows:
            self.go_to_line(self._line_for_row(max(0, min(row, rows - 1))))

    def action_digit(self, digit: str) -> None:
        if len(self._count) < COUNT_DIGITS and (self._count or digit != "0"):
            self._count += digit
        self.post_message(self.Changed(self))

    def action_move(self, delta: int) -> None:
        self._go_row(self._row_for_line(self.cursor) + delta * (self._take_count() or 1))

    def action_page(self, pages: float) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        step = max(1, int(abs(pages) * height)) * (1 if pages > 0 else -1)
        self._go_row(self._row_for_line(self.cursor) + step * (self._take_count() or 1))

    def action_top(self) -> None:
        line = self._take_count()
        if line:
            self.go_to_line(line)
        else:
            self._go_row(0)

    def action_bottom(self) -> None:
        line = self._take_count()
        if line:
            self.go_to_line(line)
        else:
            self._go_row(self.row_count - 1)

    def action_pan(self, direction: Direction) -> None:
        self._count = ""
        if self.wrap:
            self.notify(_("wrapped: nothing to scroll sideways (ctrl+w unwraps)"), timeout=2)
            return
        avail = self._wrap_width()
        step = max(8, avail // 2)
        top = int(self.scroll_y)
        shown = (self._cache.get(self._line_for_row(r)) for r in range(top, top + self.size.height))
        longest = max((cell_len(t) for t in shown if t), default=0)
        # no further than the end of the longest line on screen (+1 for the "…" column)
        new = max(0, min(self.pan_x + direction * step, longest - avail + 1))
        if new == self.pan_x:
            self.app.bell()
            return
        self.pan_x = new
        self.refresh()
        self.post_message(self.Changed(self))

    def action_mark(self, severity: str, direction: Direction) -> None:
        """Next/previous error (``critical``) or warning line, among the lines shown."""
        self._count = ""
        crit = severity == "critical"
        lines = sorted({e.line for e in self.errors if e.severity == severity})
        if self.keep_text:
            kept = set(self._kept)
            lines = [ln for ln in lines if ln in kept]
        if not lines:
            if self._done:
                found = (
                    _("no errors found in this log") if crit else _("no warnings found in this log")
                )
            else:
                found = (
                    _("no errors found in this log yet")
                    if crit
                    else _("no warnings found in this log yet")
                )
            self.notify(found, timeout=3)
            return
        if direction > 0:
            i = bisect.bisect_right(lines, self.cursor)
            if i >= len(lines):
                self.app.bell()
                self.notify(
                    _("no more errors below") if crit else _("no more warnings below"), timeout=2
                )
                return
        else:
            i = bisect.bisect_left(lines, self.cursor) - 1
            if i < 0:
                self.app.bell()
                self.notify(
                    _("no more errors above") if crit else _("no more warnings above"), timeout=2
                )
                return
        self.go_to_line(lines[i])

    def action_error(self, direction: Direction) -> None:
        self.action_mark("critical", direction)

    def action_follow(self) -> None:
        self.set_follow(not self.following)
        self.notify(_("following new lines") if self.following else _("follow off"), timeout=2)

    def action_wrap(self) -> None:
        self.wrap = not self.wrap
        self.pan_x = 0
        self._resize_virtual()
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Changed(self))

    def error_at(self, line: int) -> ErrorMark | None:
        i = bisect.bisect_left(self.errors, line, key=lambda e: e.line)
        if i < len(self.errors) and self.errors[i].line == line:
            return self.errors[i]
        return None

    # ------------------------------------------------------------------ window cache

    def _line_text(self, line: int) -> str | None:
        text = self._cache.get(line)
        if text is not None:
            self._cache.move_to_end(line)
        return text

    def _need_window(self) -> None:
        if not self._loading_window:
            # exclusive: starting it cancels a window read still in flight for another file
            self._window_tag = self._tag
            self._load_window(self._tag)

    @work(exclusive=True, group="logwindow")
    async def _load_window(self, tag: _Tag) -> None:
        reader = tag.reader
        try:
            if reader is None or not self._current(tag):
                return
            height = max(1, self.scrollable_content_region.height)
            top = int(self.scroll_y)
            # while indexing, the last line's end is not known yet (it would read to the end of
            # the file): only lines already indexed
            known = self.line_count if self._done else self._dropped + len(self._starts) - 1
            rows = range(max(0, top - height), min(self.row_count, top + height * 3))
            wanted = [ln for ln in map(self._line_for_row, rows) if ln <= known]
            missing = [ln for ln in wanted if ln not in self._cache]
            if not missing:
                return
            # the line bounds are taken now: the index may grow while the read is awaited
            spans = [(ln, self._start(ln), self._line_end(ln)) for ln in missing]
            for run in _runs(spans):
                start, end = run[0][1], run[-1][2]
                if end - start <= WINDOW_BYTES:
                    data = await reader.read(start, end - start)
                    heads = [data[s - start : min(e, s + LINE_CAP) - start] for _, s, e in run]
                else:  # huge lines: read each line's head only
                    heads = [await reader.read(s, LINE_CAP) for _, s, _ in run]
                if not self._current(tag):
                    return
                for (ln, _s, _e), raw in zip(run, heads, strict=True):
                    self._store(ln, raw)
        except Exception as exc:
            if self._current(tag):
                self.message = _("read error: {error}").format(error=clean(str(exc), 200))
        finally:
            if self._window_tag is tag:
                self._window_tag = None
        if self._current(tag):
            if self.wrap:  # the lines' real lengths are known now
                self._scroll_to_cursor()
            self.refresh()

    def _store(self, line: int, raw: bytes) -> None:
        nl = raw.find(b"\n")
        if nl >= 0:
            raw = raw[:nl]
        self._cache[line] = clean(raw, max_len=LINE_CAP)
        while len(self._cache) > CACHE_LINES:
            self._cache.popitem(last=False)

    # ------------------------------------------------------------------ rendering

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.wrap:
            rows = self._wrapped_rows(width)
            if y < len(rows):
                return self._render(rows[y][0], rows[y][1], rows[y][2], width, base)
            return Strip.blank(width, base)
        row = int(self.scroll_y) + y
        if row >= self.row_count:
            if row == 0 and (self._done or self.keep_text):
                empty = (
                    _("(no line contains “{text}”; & then enter shows all)").format(
                        text=self.keep_text
                    )
                    if self.keep_text
                    else self.message or _("(empty log)")
                )
                return Strip([Segment(set_cell_size(" " + clean(empty, 200), width), base)], width)
            return Strip.blank(width, base)
        line = self._line_for_row(row)
        text = self._line_text(line)
        if text is None:
            self._need_window()
            text = ""
        return self._render(line, text, True, width, base)

    def _wrapped_rows(self, width: int) -> list[tuple[int, str, bool]]:
        """Display rows from the top line (= scroll_y + 1), each line chopped to the width."""
        height = max(1, self.scrollable_content_region.height)
        gutter = self._gutter_width()
        avail = max(10, width - gutter)
        rows: list[tuple[int, str, bool]] = []
        row = int(self.scroll_y)
        while len(rows) < height and row < self.row_count:
            line = self._line_for_row(row)
            text = self._line_text(line)
            if text is None:
                self._need_window()
                text = ""
            for k, piece in enumerate(chop_cells(text, avail) or [""]):
                rows.append((line, piece, k == 0))
            row += 1
        return rows

    def _gutter_width(self) -> int:
        return len(str(max(self.line_count, 1))) + 2

    def _render(self, line: int, text: str, first: bool, width: int, base: Style) -> Strip:
        gutter = self._gutter_width()
        mark_at = self.error_at(line)
        style = base
        if mark_at is not None:
            kind = "error" if mark_at.severity == "critical" else "warning"
            style = style + self.get_component_rich_style(f"logview--{kind}")
        if line == self.cursor:
            style = style + self.get_component_rich_style("logview--cursor")
        mark = "▶" if mark_at is not None and first else " "
        num = f"{line:>{gutter - 2}}{mark} " if first else " " * gutter
        head = Strip([Segment(num, base + self.get_component_rich_style("logview--gutter"))])
        avail = max(0, width - gutter)
        if self.search_text and self.search_text.lower() in text.lower():
            body = Strip(self._highlight(text, style))
        else:
            body = Strip([Segment(text, style)])
        if not self.wrap:
            more = body.cell_length > self.pan_x + avail
            body = body.crop(self.pan_x, self.pan_x + avail - (1 if more else 0))
            if more:
                body = Strip([*body, Segment("…", style)])
        strip = Strip.join([head, body])
        return strip.extend_cell_length(width, style).crop(0, width)

    def _highlight(self, body: str, style: Style) -> list[Segment]:
        match = style + self.get_component_rich_style("logview--match")
        low, needle = body.lower(), self.search_text.lower()
        out, i = [], 0
        while True:
            j = low.find(needle, i)
            if j < 0:
                out.append(Segment(body[i:], style))
                return out
            out.append(Segment(body[i:j], style))
            out.append(Segment(body[j : j + len(needle)], match))
            i = j + len(needle)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._need_window()

    def on_resize(self) -> None:
        self._resize_virtual()

    def on_unmount(self) -> None:
        self.set_follow(False)

    def status_text(self, width: int | None = None) -> str:
        """``slurm-4.out  line 12/340  3 errors  indexing 40%  FOLLOW  WRAP``. Wider than
        ``width`` cells (an 80-column pane), the file's name goes first: the tab above names
        the log, and what the red line is ("here: missing_library") must stay whole; narrower
        still (40 columns), the error counts go too."""
        parts = []
        name = clean(self.reader.name, 80) if self.reader is not None else ""
        parts.append(_("line {n}/{total}").format(n=self.cursor, total=self.line_count))
        if self._count:
            parts.append(_("go to {n} (g)").format(n=self._count))
        if self.keep_text:
            kept = len(self._kept)
            parts.append(f"&{clean(self.keep_text, 40)}: " + _("{n} lines").format(n=kept))
        err = self.error_at(self.cursor)
        crit = sum(1 for e in self.errors if e.severity == "critical")
        warn = len(self.errors) - crit
        counts = (
            ngettext("{n} error", "{n} errors", crit).format(n=crit)
            + ", "
            + ngettext("{n} warning", "{n} warnings", warn).format(n=warn)
        )
        # a weak line ('Killed') is a symptom of the cause found elsewhere (scan-log says so):
        # bare, "here: oom_killed" on a Kill-task-failed node's job read as the cause
        what = ""
        if err:
            what = err.label if err.strong else err.label + " " + _("(symptom)")
        here = _(" · here: {what}").format(what=what) if err else ""
        at = len(parts)
        parts.append(counts + here)
        if not self._done:
            parts.append(_("indexing {pct}").format(pct=f"{self.indexed_fraction:.0%}"))
        if self.following:
            parts.append("FOLLOW")
        if self.wrap:
            parts.append("WRAP")
        if self.search_text:
            mark = "/" if self.search_direction > 0 else "?"
            parts.append(f"{mark}{clean(self.search_text, 40)}")
        if self.pan_x:
            parts.append(f"→{self.pan_x}")
        if self.message:
            parts.append(self.message)
        text = "  ".join(parts)
        if name and (width is None or cell_len(name) + 2 + cell_len(text) <= width):
            return f"{name}  {text}"
        if here and width is not None and cell_len(text) > width:
            # narrower still (a 40-column pane): the counts give way too, so what the red
            # line is stays whole ('here:' alone said nothing)
            parts[at] = here.lstrip(" ·")
            text = "  ".join(parts)
        return text
