"""A log viewer that never holds the whole file: a byte-offset line index plus a window cache.

The file is read in chunks through a :class:`LogReader` (the app's readers: a file on a
host, in-memory bytes). While indexing, each chunk goes through the reader's own error
scanner (:meth:`LogReader.errors`) so the viewer can open at the first red error. Only the
lines on screen are decoded, cleaned (:func:`._safe.clean`) and turned into strips.

Keys: ``e``/``E`` next/previous error, ``g``/``G`` top/bottom, ``f`` follow (new bytes
only; a file that shrinks, or whose first bytes change (rotated), is reindexed and the
user is told), ``w`` wrap,
``n``/``N`` next/previous search match (the screen owns the ``/`` input).

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
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate
from typing import Protocol

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

from ._safe import clean

CHUNK = 1 << 20  # bytes per index read
WINDOW_BYTES = 4 << 20  # most bytes read at once for the visible window
LINE_CAP = 16 << 10  # bytes of a single line ever decoded for display
CACHE_LINES = 4000
HEAD_BYTES = 256  # compared while following to notice a replaced file


class ErrorHit(Protocol):
    """One error line a reader's scanner found: ``offset`` of its start within the bytes given."""

    @property
    def line(self) -> int: ...  # 1-based

    @property
    def offset(self) -> int: ...

    @property
    def label(self) -> str: ...

    @property
    def severity(self) -> str: ...

    @property
    def strong(self) -> bool: ...  # a real failure, not a line that merely looks alarming


class LogReader(Protocol):
    """What the viewer reads. ``errors`` knows what an error looks like in this log (the
    viewer does not); it may run on a worker thread for big chunks, so it must be pure.
    An optional ``landing_offset`` attribute is where to open when no line is asked for."""

    name: str

    async def read(self, offset: int, length: int) -> bytes: ...

    async def size(self) -> int: ...

    def errors(self, data: bytes, start_line: int) -> Iterable[ErrorHit]:
        """Error lines of ``data`` (whole lines, the first numbered ``start_line``)."""
        ...


@dataclass(frozen=True, slots=True)
class ErrorMark:
    line: int  # 1-based
    offset: int
    label: str
    severity: str
    strong: bool = True


def _scan(reader: LogReader, buf: bytes, base: int, start_line: int) -> list[ErrorMark]:
    """Error lines of ``buf`` (read at file byte ``base``, first line ``start_line``)."""
    return [
        ErrorMark(h.line, base + h.offset, h.label, h.severity, h.strong)
        for h in reader.errors(buf, start_line)
    ]


def _index_chunk(
    reader: LogReader, body: bytes, base: int, first_line: int
) -> tuple[list[int], list[ErrorMark]]:
    """Line starts after each newline of ``body`` (read at byte ``base``, ends with a newline)
    and its error lines. Pure: it may run on a worker thread."""
    parts = body.split(b"\n")
    # start of each following line: cumulative lengths (+1 for the newline)
    starts = list(accumulate((len(p) + 1 for p in parts[:-1]), initial=base))[1:]
    return starts, _scan(reader, body, base, first_line)


@dataclass(frozen=True, slots=True, eq=False)
class _Tag:
    """What a read belongs to: results are applied only while ``view._tag is`` this tag."""

    reader: LogReader | None
    generation: int


class LogView(ScrollView, can_focus=True):
    """Line-API log viewer. ``open()`` starts indexing; the cursor lands on the first error."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown,space", "page(1)", show=False),
        Binding("g,home", "top", "Top"),
        Binding("G,end", "bottom", "Bottom"),
        Binding("e", "error(1)", "Next error"),
        Binding("E", "error(-1)", "Prev error"),
        Binding("f", "follow", "Follow"),
        Binding("w", "wrap", "Wrap"),
        Binding("n", "search_next(1)", "Next match", show=False),
        Binding("N", "search_next(-1)", "Prev match", show=False),
    ]
    COMPONENT_CLASSES = {"logview--cursor", "logview--error", "logview--gutter", "logview--match"}
    DEFAULT_CSS = """
    LogView {
        background: $surface; overflow-y: auto; overflow-x: hidden; scrollbar-size-vertical: 1;
    }
    LogView > .logview--gutter { color: $text-muted; }
    LogView > .logview--error { color: red; text-style: bold; }
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
        self.reader: LogReader | None = None
        self.wrap = False
        self.following = False
        self.message = ""  # last notable event ("truncated: reindexed", read error)
        self.search_text = ""
        self._reset()
        self._follow_timer: Timer | None = None
        self._want_line: int | None = None
        self._want_offset: int | None = None
        self._window_tag: _Tag | None = None  # a window read in flight for this tag

    def _reset(self) -> None:
        """Forget the file's index and lines; results of reads started before are dropped."""
        self._starts = array("Q", [0])  # byte offset of each line start; last = next line
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
        return len(self._starts) - 1 + (1 if self._fsize > self._starts[-1] else 0)

    @property
    def indexed_fraction(self) -> float:
        return 1.0 if self._done or not self._fsize else min(1.0, self._indexed / self._fsize)

    def _line_end(self, line: int) -> int:
        return self._starts[line] if line < len(self._starts) else self._fsize

    def open(self, reader: LogReader, line: int | None = None, offset: int | None = None) -> None:
        """Show ``reader``; go to ``line``/``offset`` if given, else to the first error."""
        self.reader = reader
        self.set_follow(False)
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
            self._cache.pop(len(self._starts), None)
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
                    args = (reader, data[:cut], pos, len(self._starts))
                    if cut > 256 << 10:
                        starts, errors = await asyncio.to_thread(_index_chunk, *args)
                        if not self._current(tag):
                            return
                    else:
                        starts, errors = _index_chunk(*args)
                    self._starts.extend(starts)
                    self._indexed = pos + cut
                    self.errors.extend(errors)
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
                self.errors.extend(_scan(reader, tail, at, len(self._starts)))
            self._done = True
        except Exception as exc:  # a missing/unreadable log is a message, not a crash
            if not self._current(tag):
                return
            self.message = f"cannot read {reader.name}: {clean(str(exc), 200)}"
            self._done = True
        self._after_chunk(final=True)

    def _after_chunk(self, final: bool = False) -> None:
        self.virtual_size = Size(self.size.width, self.line_count)
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
                return bisect.bisect_right(self._starts, self._want_offset)
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
                self.message = f"follow: {clean(str(exc), 200)}"
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
                f"{reader.name} was replaced (rotated): reindexed"
                if replaced
                else f"{reader.name} shrank to {size} bytes (truncated or rotated): reindexed"
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
        line = max(1, min(line, max(n, 1)))
        self.cursor = line
        self._scroll_to_cursor()
        # the virtual size may have just grown: scroll again once layout has caught up
        self.call_after_refresh(self._scroll_to_cursor)
        self.refresh()
        self.post_message(self.Changed(self))

    def _scroll_to_cursor(self) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_y)
        if self.cursor - 1 < top or self.cursor - 1 >= top + height:
            self.scroll_to(y=max(0, self.cursor - 1 - height // 3), animate=False, immediate=True)

    def action_move(self, delta: int) -> None:
        self.go_to_line(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.go_to_line(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def action_top(self) -> None:
        self.go_to_line(1)

    def action_bottom(self) -> None:
        self.go_to_line(self.line_count)

    def action_error(self, direction: int) -> None:
        lines = sorted({e.line for e in self.errors})
        if not lines:
            self.notify("no errors found in this log" + ("" if self._done else " yet"), timeout=3)
            return
        if direction > 0:
            i = bisect.bisect_right(lines, self.cursor)
            if i >= len(lines):
                self.app.bell()
                self.notify("no more errors below", timeout=2)
                return
        else:
            i = bisect.bisect_left(lines, self.cursor) - 1
            if i < 0:
                self.app.bell()
                self.notify("no more errors above", timeout=2)
                return
        self.go_to_line(lines[i])

    def action_follow(self) -> None:
        self.set_follow(not self.following)
        self.notify("following new lines" if self.following else "follow off", timeout=2)

    def action_wrap(self) -> None:
        self.wrap = not self.wrap
        self.refresh()
        self.post_message(self.Changed(self))

    def error_at(self, line: int) -> ErrorMark | None:
        i = bisect.bisect_left(self.errors, line, key=lambda e: e.line)
        if i < len(self.errors) and self.errors[i].line == line:
            return self.errors[i]
        return None

    # ------------------------------------------------------------------ search

    def search(self, text: str) -> None:
        self.search_text = text
        self.refresh()
        if text:
            self._search(1, from_current=True)

    def action_search_next(self, direction: int) -> None:
        if not self.search_text:
            self.notify("no search: press / first", timeout=2)
            return
        self._search(direction)

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
            pos = self._starts[start_line - 1] if 1 <= start_line <= n else self._fsize
            while pos < self._fsize:
                data = (await reader.read(pos, min(step + len(needle), self._fsize - pos))).lower()
                if not self._current(tag):
                    return
                hit = data.find(needle)
                if hit >= 0:
                    self.go_to_line(bisect.bisect_right(self._starts, pos + hit))
                    return
                if not data:
                    break
                pos += step
        else:
            end = self._starts[start_line] if 0 <= start_line < n else 0
            while end > 0:
                pos = max(0, end - step)
                data = (await reader.read(pos, end - pos + len(needle))).lower()[
                    : end - pos + len(needle) - 1
                ]
                if not self._current(tag):
                    return
                hit = data.rfind(needle)
                if hit >= 0:
                    self.go_to_line(bisect.bisect_right(self._starts, pos + hit))
                    return
                end = pos
        self.app.bell()
        where = "below" if direction > 0 else "above"
        self.notify(
            f"“{clean(self.search_text, 60)}” not found {where}",
            timeout=3,
            markup=False,
        )

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
            first = int(self.scroll_y) + 1
            # while indexing, the last line's end is not known yet (it would read to the end of
            # the file): only lines already indexed
            known = self.line_count if self._done else len(self._starts) - 1
            last = min(known, first + height * 2)
            first = max(1, first - height)
            missing = [ln for ln in range(first, last + 1) if ln not in self._cache]
            if not missing:
                return
            a, b = missing[0], missing[-1]
            # the line bounds are taken now: the index may grow while the read is awaited
            bounds = [(self._starts[ln - 1], self._line_end(ln)) for ln in range(a, b + 1)]
            start, end = bounds[0][0], bounds[-1][1]
            if end - start <= WINDOW_BYTES:
                data = await reader.read(start, end - start)
                heads = [data[s - start : min(e, s + LINE_CAP) - start] for s, e in bounds]
            else:  # huge lines: read each line's head only
                heads = [await reader.read(s, LINE_CAP) for s, _ in bounds]
            if not self._current(tag):
                return
            for ln, raw in enumerate(heads, a):
                self._store(ln, raw)
        except Exception as exc:
            if self._current(tag):
                self.message = f"read error: {clean(str(exc), 200)}"
        finally:
            if self._window_tag is tag:
                self._window_tag = None
        if self._current(tag):
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
        line = int(self.scroll_y) + y + 1
        if line > self.line_count:
            if line == 1 and self._done:
                return Strip(
                    [Segment(set_cell_size(" " + (self.message or "(empty log)"), width), base)],
                    width,
                )
            return Strip.blank(width, base)
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
        line = int(self.scroll_y) + 1
        while len(rows) < height and line <= self.line_count:
            text = self._line_text(line)
            if text is None:
                self._need_window()
                text = ""
            for k, piece in enumerate(chop_cells(text, avail) or [""]):
                rows.append((line, piece, k == 0))
            line += 1
        return rows

    def _gutter_width(self) -> int:
        return len(str(max(self.line_count, 1))) + 2

    def _render(self, line: int, text: str, first: bool, width: int, base: Style) -> Strip:
        gutter = self._gutter_width()
        is_err = self.error_at(line) is not None
        style = base
        if is_err:
            style = style + self.get_component_rich_style("logview--error")
        if line == self.cursor:
            style = style + self.get_component_rich_style("logview--cursor")
        mark = "▶" if is_err and first else " "
        num = f"{line:>{gutter - 2}}{mark} " if first else " " * gutter
        segs = [Segment(num, base + self.get_component_rich_style("logview--gutter"))]
        avail = max(0, width - gutter)
        body = text if self.wrap else text
        if not self.wrap and cell_len(body) > avail:
            body = set_cell_size(body, max(0, avail - 1)) + "…"
        if self.search_text and self.search_text.lower() in body.lower():
            segs.extend(self._highlight(body, style))
        else:
            segs.append(Segment(body, style))
        strip = Strip(segs)
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
        self.virtual_size = Size(self.size.width, self.line_count)

    def on_unmount(self) -> None:
        self.set_follow(False)

    def status_text(self) -> str:
        """``slurm-4.out  line 12/340  3 errors  indexing 40%  FOLLOW  WRAP``."""
        parts = []
        if self.reader is not None:
            parts.append(clean(self.reader.name, 80))
        parts.append(f"line {self.cursor}/{self.line_count}")
        err = self.error_at(self.cursor)
        parts.append(f"{len(self.errors)} error lines" + (f" · here: {err.label}" if err else ""))
        if not self._done:
            parts.append(f"indexing {self.indexed_fraction:.0%}")
        if self.following:
            parts.append("FOLLOW")
        if self.wrap:
            parts.append("WRAP")
        if self.search_text:
            parts.append(f"/{clean(self.search_text, 40)}")
        if self.message:
            parts.append(self.message)
        return "  ".join(parts)
