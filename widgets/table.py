"""A virtualised table: Textual's Line API over a list of row tuples.

Only the rows on screen are turned into segments, so applying a 100k-row snapshot
costs one list assignment plus a sort, never 100k widgets or Rich renderables
(Textual's DataTable needs ~15 s for that). Cells hold raw, possibly hostile
strings; they pass through :func:`._safe.clean` when (and only when) drawn.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from cockpit.i18n import N_, _

from ._safe import clean

# re-exported: the table's data types are its API too
from .rows import OPTIONAL, Column, Row, RowList, _search_text, join_rows, prepare_rows

__all__ = ["Column", "Row", "RowList", "VirtualTable", "join_rows", "prepare_rows"]


# VirtualTable._window: (frame, per visible body line (cells, styles, cursor on it))
_Window = tuple[tuple, list[tuple[tuple[str, ...], tuple[str, ...], bool]]]


def _match(hay: list[str], base: Sequence[int], needle: str) -> list[int]:
    """Indices from ``base`` (a ``range`` or a sorted list) whose haystack contains ``needle``."""
    if isinstance(base, range):  # every row: walk the haystack itself, no index per row
        return [i for i, h in enumerate(hay[base.start : base.stop], base.start) if needle in h]
    return [i for i in base if needle in hay[i]]


def _pick(rows: list[Row], idx: list[int]) -> list[Row]:
    """``[rows[i] for i in idx]`` in C (at 100k rows the comprehension costs ~10 ms a keystroke)."""
    if len(idx) == len(rows):
        return rows  # idx is sorted and unique: every row matched, the list itself is the view
    if len(idx) < 2:
        return [rows[i] for i in idx]
    return list(itemgetter(*idx)(rows))


# Rows checked per step while filling the window synchronously (~0.2 ms), and per slice of
# the rest of the pass between frames (~2-3 ms of UI time at 100k, with the rows picked).
_FILL_STEP = 2048
_SLICE = 16384


# a number the cut would split: digits (with . : , inside) starting a token, the rest of it next
# (Chinese and Japanese run a number into their words, "退出码127", without a space; a date
# 2026-11-29 and a node range 001-010 are one number; a sign belongs to it, an array task's
# _7 to its job)
_NUMBER_END = re.compile(
    r"(?:^|(?<=[\s(\[=/<>#\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]))[-+]?\d[\d.:,\-]*$"
)
_NUMBER_GOES_ON = re.compile(r"[\d]|[.:,_\-]\d|[A-Za-z%]")


def cut_cell(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with an ellipsis, never inside a number: "(exit 1…" read
    as exit 1 where the cell held exit 127, "04:00:…" as a time; such a number goes whole and
    the cut moves before it (when that keeps half the cell). Names (gpt2-zh-…, cn01…) are cut
    as words are."""
    if cell_len(text) <= max(width, 0):
        return set_cell_size(text, width)
    if width <= 1:  # no room for any of it: an ellipsis, not the first digit of 127
        return "…"[: max(width, 0)]
    kept = set_cell_size(text, width - 1)
    if not text.startswith(kept):  # a pad where a wide character did not fit: not the text's
        kept = kept[:-1]
    rest = text[len(kept) :]
    m = _NUMBER_END.search(kept) if kept == kept.rstrip(" ") else None
    if m and _NUMBER_GOES_ON.match(rest) and cell_len(kept[: m.start()]) >= width // 2:
        return set_cell_size(kept[: m.start()].rstrip() + "…", width)
    if kept.endswith(" "):  # the ellipsis against the last word, not after a space
        return set_cell_size(kept.rstrip() + "…", width)
    return set_cell_size(kept + "…", width)


@dataclass(slots=True, eq=False)
class _Pass:
    """One exact filter pass over ``todo`` (ranges or sorted index lists, ascending and disjoint,
    in order), run in steps: ``found`` the matching indices into the table's rows so far,
    ``rows`` those rows. Both only grow, so a prefix seen on screen stays valid."""

    needle: str
    todo: list[Sequence[int]]
    found: list[int] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    pos: int = 0  # next position in todo[0]

    @property
    def done(self) -> bool:
        return not self.todo

    def remaining(self) -> list[Sequence[int]]:
        """What is left to check (a narrower needle continues from here)."""
        if not self.todo:
            return []
        return [self.todo[0][self.pos :], *self.todo[1:]]

    def run(self, hay: list[str], every: list[Row], budget: int) -> None:
        """Check up to ``budget`` more indices (``sys.maxsize``: to the end)."""
        while budget > 0 and self.todo:
            seq = self.todo[0]
            end = min(len(seq), self.pos + budget)
            got = _match(hay, seq[self.pos : end], self.needle)
            if got:
                self.found.extend(got)
                self.rows.extend(_pick(every, got))
            budget -= end - self.pos
            if end == len(seq):
                self.todo.pop(0)
                self.pos = 0
            else:
                self.pos = end


def _drop(old: object) -> None:
    """The default ``release``: the table's references go, and the old rows are freed here."""


@lru_cache(maxsize=256)
def _style(spec: str) -> Style:
    return Style.parse(spec) if spec else Style()


class VirtualTable(ScrollView, can_focus=True):
    """Cursor, sort (``s``/``S``) and a substring filter over every column."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", N_("Up"), show=False),
        Binding("down,j", "cursor(1)", N_("Down"), show=False),
        Binding("pageup", "page(-1)", N_("PgUp"), show=False),
        Binding("pagedown", "page(1)", N_("PgDn"), show=False),
        Binding("home,g", "home", N_("Top"), show=False),
        Binding("end,G", "end", N_("Bottom"), show=False),
        Binding("enter", "select", N_("Open")),
        Binding("s", "sort_next", N_("Sort"), show=False),
        Binding("S", "sort_reverse", N_("Reverse sort"), show=False),
    ]
    COMPONENT_CLASSES = {"virtual-table--header", "virtual-table--cursor", "virtual-table--empty"}
    DEFAULT_CSS = """
    VirtualTable {
        background: $surface; overflow-x: hidden; overflow-y: auto; scrollbar-size-vertical: 1;
    }
    VirtualTable > .virtual-table--header { text-style: bold; background: $panel; }
    VirtualTable > .virtual-table--cursor { background: $accent 30%; }
    VirtualTable:focus > .virtual-table--cursor { background: $accent; color: $text; }
    VirtualTable > .virtual-table--empty { color: $text-muted; }
    """

    class Selected(Message):
        """``enter`` on a row."""

        def __init__(self, table: VirtualTable, key: str) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> VirtualTable:
            return self.table

    class CursorMoved(Message):
        def __init__(self, table: VirtualTable, key: str | None) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> VirtualTable:
            return self.table

    class Filtered(Message):
        """The exact filter pass that finished between frames: ``row_count`` is final now
        (``filter_pending`` was True since the keystroke)."""

        def __init__(self, table: VirtualTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> VirtualTable:
            return self.table

    cursor: reactive[int] = reactive(0, repaint=False)

    def __init__(
        self,
        columns: Sequence[Column],
        *,
        empty_text: str = "nothing to show",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        release: Callable[[object], None] | None = None,
    ) -> None:
        """``release`` takes the previous rows when new ones are set and must drop them (the
        table keeps no reference). Freeing a 100k-row list takes ~60 ms: an app with big
        tables hands them to a background thread so the UI thread does not stall."""
        super().__init__(name=name, id=id, classes=classes)
        self.columns = tuple(columns)
        # the column that counts time (Column.clock) and when its ticking cells are drawn
        self._clock_col = next((i for i, c in enumerate(self.columns) if c.clock), None)
        self._as_of: float | None = None
        self.empty_text = empty_text
        self._release = release or _drop
        self._all: list[Row] = []
        self._rows: list[Row] = []  # filtered and sorted view
        self._haystack: list[str] | None = None  # lower-case search text (RowList brings it)
        self._matches: tuple[str, list[int]] | None = (
            None  # (filter, indices into _all) last computed
        )
        self._view_idx: list[int] | None = None  # _rows as indices into _all (filtered, unsorted)
        # the filter pass still running between frames (then _rows/_view_idx are its growing
        # prefix: the rows on screen are final, the count and the scrollbar not yet)
        self._pass: _Pass | None = None
        self._filter = ""
        self._sort_col: int | None = None
        self._sort_reverse = False
        self._cursor_key: str | None = None
        # the cursor follows its row across refreshes only once the operator put it somewhere;
        # until then it stays on the first (worst) row while a poll re-sorts the rows
        self._placed = False
        self._layout: list[tuple[int, int]] = []  # (column index, width) shown
        self._layout_for = -1
        self.hidden: frozenset[str] = frozenset()  # column labels the operator turned off

    def set_hidden(self, labels: Iterable[str]) -> None:
        """Columns (by label) not to draw; the filter still searches them. The first column
        names the row (job id, node, training job name) and always stays: without it rows
        could not be told apart (a stale preference hiding it is ignored)."""
        hidden = (frozenset(labels) & {c.label for c in self.columns}) - {self.columns[0].label}
        if hidden != self.hidden:
            self.hidden = hidden
            self._layout_for = -1
            self.refresh()

    # ------------------------------------------------------------------ data

    @property
    def row_count(self) -> int:
        """Rows shown (matching the filter); exact: finishes a running filter pass first."""
        self._settle()
        return len(self._rows)

    @property
    def counted_rows(self) -> int:
        """Rows known to match so far, O(1): ``row_count`` once ``filter_pending`` is False."""
        return len(self._rows)

    @property
    def filter_pending(self) -> bool:
        """The filter pass is still running between frames (a :class:`Filtered` follows)."""
        return self._pass is not None

    @property
    def total_count(self) -> int:
        return len(self._all)

    @property
    def rows(self) -> Sequence[Row]:
        """The rows as shown (filtered, sorted); finishes a running filter pass first."""
        self._settle()
        return self._rows

    @property
    def filter_text(self) -> str:
        return self._filter

    @property
    def cursor_key(self) -> str | None:
        return self._rows[self.cursor].key if self._rows else None

    def set_rows(self, rows: list[Row]) -> None:
        """Replace all rows; the cursor stays on the same key when it still exists (once the
        operator moved it; before that it stays on the first row). Only the lines whose
        content changed are repainted (a poll mostly redraws the same rows)."""
        before = self._window()
        keep = (self.cursor_key or self._cursor_key) if self._placed else None
        # the old lists go to ``release`` (the cockpit frees them off the UI thread)
        self._release(
            (self._all, self._rows, self._haystack, self._matches, self._view_idx, self._pass)
        )
        self._view_idx = self._pass = None
        self._all = self._rows = rows
        self._as_of = getattr(rows, "as_of", None)
        self._haystack = rows.haystack if isinstance(rows, RowList) else None
        self._matches = None
        self._rebuild(keep, before)

    def set_filter(self, text: str) -> None:
        """Show rows whose cells contain ``text`` (case-insensitive, any column)."""
        self._filter = text.strip().lower()
        self._rebuild(self.cursor_key or self._cursor_key)

    def sort_by(self, column: int | None, reverse: bool = False) -> None:
        self._sort_col, self._sort_reverse = column, reverse
        self._rebuild(self.cursor_key)

    def move_to_key(self, key: str) -> bool:
        """Put the cursor on ``key`` (clearing the filter if it hides it)."""
        self._placed = True
        self._settle()
        i = self._find(self._rows, key)
        if i is not None:
            self._set_cursor(i)
            return True
        if self._filter and self._find(self._all, key) is not None:
            self.set_filter("")
            return self.move_to_key(key)
        self._cursor_key = key
        return False

    def _pass_for(self, needle: str) -> _Pass:
        """The exact pass for ``needle``, maybe already done. A longer query that contains the
        previous one only re-checks the previous matches (typing narrows: each key costs less),
        and continues the previous pass where it stopped if that one had not finished."""
        if self._haystack is None:
            self._haystack = [_search_text(r) for r in self._all]
        p, prev = self._pass, self._matches
        if p is not None and p.needle == needle:
            return p  # a re-sort during the pass
        if prev is not None and prev[0] == needle:  # a re-sort, or the same text again
            return _Pass(needle, [], prev[1], _pick(self._all, prev[1]))
        if p is not None and p.needle in needle:
            todo = [p.found, *p.remaining()]
        elif prev is not None and prev[0] in needle:
            todo = [prev[1]]
        else:
            todo = [range(len(self._all))]
        return _Pass(needle, [s for s in todo if len(s)])

    def _fill(self, p: _Pass, keep: str | None) -> None:
        """Run ``p`` until the frame after this keystroke can be drawn as the whole pass would
        draw it: up to the cursor's row (kept when it still matches, else at the same position)
        and one screenful past it and past the current scroll position."""
        hay, every = self._haystack, self._all
        assert hay is not None and isinstance(every, RowList)
        at = every.key_index.get(keep) if keep is not None else None
        if at is not None and p.needle in hay[at]:
            while not p.done and (not p.found or p.found[-1] < at):
                p.run(hay, every, _FILL_STEP)
            cur = bisect_left(p.found, at)
        else:
            cur = self.cursor if keep is not None else 0
        want = max(cur, int(self.scroll_y)) + max(1, self.scrollable_content_region.height - 1) + 1
        while not p.done and len(p.found) < want:
            p.run(hay, every, _FILL_STEP)

    def _step(self, p: _Pass) -> None:
        """One slice of the pass after a frame; the next one after the next frame."""
        if self._pass is not p:
            return  # a newer keystroke (or new rows) replaced it
        assert self._haystack is not None
        p.run(self._haystack, self._all, _SLICE)
        if p.done:
            self._complete()
        else:
            self.call_after_refresh(self._step, p)

    def _settle(self) -> None:
        """Finish the running pass now (a caller needs every match: the count, G, a key)."""
        p = self._pass
        if p is not None:
            assert self._haystack is not None
            p.run(self._haystack, self._all, sys.maxsize)
            self._complete()

    def _complete(self) -> None:
        # the shown rows were the pass's growing prefix: cursor and screen stay as they are
        p = self._pass
        assert p is not None and p.done
        self._pass = None
        self._matches = (p.needle, p.found)
        if len(p.found) == len(self._all):
            self._rows, self._view_idx = self._all, None
        self._set_virtual_height(len(self._rows) + 1)
        self.post_message(self.Filtered(self))

    def _rebuild(self, keep: str | None, before: _Window | None = None) -> None:
        """Filter and sort ``_all`` into ``_rows``, cursor back on ``keep``, repaint (the lines
        that differ from ``before``, a :meth:`_window` taken before the change; None: all)."""
        # O(shown rows) at most; with no filter/sort and a RowList, O(1) plus one frame:
        # rows are never mutated here, so the caller's list is used as it is.
        rows = self._all
        self._view_idx = None
        old = self._pass
        if self._filter:
            p = self._pass_for(self._filter)
            self._pass = None
            if (
                not p.done
                and self._sort_col is None
                and isinstance(rows, RowList)
                and self.is_mounted
            ):
                self._fill(p, keep)  # the rest between frames (_step)
            else:
                p.run(self._haystack, rows, sys.maxsize)  # type: ignore[arg-type]
            if p.done:
                self._matches = (p.needle, p.found)
            else:
                self._pass = p
                if p is not old:
                    self.call_after_refresh(self._step, p)
            if len(p.found) != len(rows):
                rows, self._view_idx = p.rows, p.found
        else:
            self._pass = None
        if self._sort_col is not None:
            col = self._sort_col
            as_of = self._as_of if col == self._clock_col else None
            rows = sorted(
                rows, key=lambda r: _sort_value(r, col, as_of), reverse=self._sort_reverse
            )
            self._view_idx = None
        self._rows = rows
        self._set_virtual_height(len(rows) + 1)
        index = 0
        if keep is not None:
            found = self._find(rows, keep)
            index = found if found is not None else min(self.cursor, max(0, len(rows) - 1))
        self._cursor_key = keep
        self._set_cursor(index, force=True, repaint=False)
        self._repaint(before)

    def _set_virtual_height(self, height: int) -> None:
        """``virtual_size`` for ``height`` lines (header + rows). Assigning it makes Textual
        lay out the whole screen (~11-18 ms), after every poll that adds or ends a job. The
        table's own height comes from CSS, so while the vertical scrollbar stays shown (or
        stays away) only the scrollbar's thumb changes: update that alone."""
        size = Size(self.size.width, height)
        old = self.virtual_size
        if size == old:
            return
        styles = self.styles
        box = self.container_size.height
        if (
            not self.is_mounted
            or not box
            or size.width != old.width
            or styles.overflow_x != "hidden"
            or styles.overflow_y != "auto"
            or styles.height is None
            or styles.height.is_auto
            or (size.height > box) != (old.height > box)
            or self.show_vertical_scrollbar != (old.height > box)
        ):
            self.virtual_size = size  # the scrollbar comes or goes: a layout it is
            return
        self.set_reactive(VirtualTable.virtual_size, size)
        if self.show_vertical_scrollbar:
            bar = self.vertical_scrollbar
            bar.window_virtual_size = size.height
            bar.refresh()
        if self.scroll_y > self.max_scroll_y:  # rows went away under the bottom of the view
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)

    def _window(self) -> _Window | None:
        """What the visible lines show: the frame (width, scroll position, row count, sort,
        filter) and per body line the row's cells, styles and whether the cursor is on it.
        None while a filter pass is running (its rows are still growing)."""
        if self._pass is not None or not self.is_mounted:
            return None
        region = self.scrollable_content_region
        top = int(self.scroll_y)
        frame = (
            region.width,
            top,
            len(self._rows),
            self._sort_col,
            self._sort_reverse,
            self._filter,
        )
        cur = self.cursor
        shown = self._rows[top : top + max(0, region.height - 1)]
        cells = self._cells
        return frame, [(cells(r), r.styles, top + i == cur) for i, r in enumerate(shown)]

    def _cells(self, row: Row) -> tuple[str, ...]:
        """The row's cells as drawn: a ticking cell's time at the rows' ``as_of``."""
        tick, col, as_of = row.tick, self._clock_col, self._as_of
        if tick is None or col is None or as_of is None or col >= len(row.cells):
            return row.cells
        text = self.columns[col].clock(max(0, int(as_of - tick[0])), tick[1])  # type: ignore[misc]
        return (*row.cells[:col], text, *row.cells[col + 1 :])

    def _repaint(self, before: _Window | None) -> None:
        """Refresh the lines that changed since ``before`` (all of them when the frame moved:
        scrolled, resized, re-sorted, rows added or gone). A poll changes a few cells (a
        pending job's TIME); repainting 15 unchanged lines costs Textual ~2 ms a table."""
        after = self._window() if before is not None else None
        if after is None or before is None or after[0] != before[0]:
            self.refresh()
            return
        width = after[0][0]
        changed = [
            Region(0, y + 1, width, 1)
            for y, (a, b) in enumerate(zip(before[1], after[1], strict=True))
            if a != b
        ]
        if changed:
            self.refresh(*changed)

    def _find(self, rows: Sequence[Row], key: str) -> int | None:
        """Position of ``key`` in ``rows``: the old cursor position first (a poll rarely moves
        it), then the RowList's index, then a scan."""
        cur = self.cursor
        if cur < len(rows) and rows[cur].key == key:
            return cur
        if isinstance(self._all, RowList) and (rows is self._all or rows is self._rows):
            at = self._all.key_index.get(key)
            if at is None or rows is self._all:
                return at
            if self._view_idx is not None:  # filtered, unsorted: its place among the matches
                pos = bisect_left(self._view_idx, at)
                return pos if pos < len(self._view_idx) and self._view_idx[pos] == at else None
        for i, r in enumerate(rows):
            if r.key == key:
                return i
        return None

    # ------------------------------------------------------------------ cursor

    def _set_cursor(self, index: int, force: bool = False, repaint: bool = True) -> None:
        index = max(0, min(index, len(self._rows) - 1)) if self._rows else 0
        changed = index != self.cursor
        self.cursor = index
        if self._rows:
            self._cursor_key = self._rows[index].key
        self._scroll_to_cursor()
        if changed or force:
            if repaint:
                self.refresh()
            self.post_message(self.CursorMoved(self, self.cursor_key))

    def _scroll_to_cursor(self) -> None:
        body = max(1, self.scrollable_content_region.height - 1)
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    def _move(self, index: int) -> None:
        self._placed = True
        if index >= len(self._rows) - 1:
            self._settle()  # past the rows the running filter pass has found so far
        self._set_cursor(index)

    def action_cursor(self, delta: int) -> None:
        self._move(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move(self.cursor + direction * max(1, self.scrollable_content_region.height - 2))

    def action_home(self) -> None:
        self._placed = True
        self._set_cursor(0)

    def action_end(self) -> None:
        self._placed = True
        self._settle()
        self._set_cursor(len(self._rows) - 1)

    def action_select(self) -> None:
        if self._rows:
            self.post_message(self.Selected(self, self._rows[self.cursor].key))

    def action_sort_next(self) -> None:
        shown = [i for i, _ in self._columns_for(self.scrollable_content_region.width)]
        if self._sort_col is None or self._sort_col not in shown:
            nxt = shown[0]
        else:
            pos = shown.index(self._sort_col) + 1
            nxt = shown[pos] if pos < len(shown) else None
        self.sort_by(nxt, False)
        label = _(self.columns[nxt].label) if nxt is not None else _("default order")
        self.notify(_("sorted by {column}").format(column=label), timeout=2)

    def action_sort_reverse(self) -> None:
        if self._sort_col is not None:
            self.sort_by(self._sort_col, not self._sort_reverse)

    def on_click(self, event) -> None:  # mouse is optional; keys do everything
        index = int(self.scroll_y) + event.y - 1
        if 0 <= index < len(self._rows):
            self._placed = True
            self._set_cursor(index)

    # ------------------------------------------------------------------ rendering

    @property
    def drawn_labels(self) -> frozenset[str]:
        """The labels of the columns drawn at the table's width now (the rest are hidden by
        the operator or have no room)."""
        layout = self._columns_for(self.scrollable_content_region.width)
        return frozenset(self.columns[i].label for i, _w in layout)

    def _columns_for(self, width: int) -> list[tuple[int, int]]:
        if width == self._layout_for:
            return self._layout
        shown = [i for i, c in enumerate(self.columns) if c.label not in self.hidden]
        # a column is at least as wide as its header in the language spoken, in cells ("确认"
        # is four cells where ACK is three)
        widths = [max(c.width, cell_len(_(c.label))) for c in self.columns]

        def need(cols: list[int]) -> int:
            return sum(
                (self.columns[i].min_width if self.columns[i].flex else widths[i]) + 1 for i in cols
            )

        while need(shown) > width and len(shown) > 1:
            drop = max(shown, key=lambda i: (self.columns[i].priority, i))
            if self.columns[drop].priority == 0:
                break
            shown.remove(drop)
        flex = next((i for i in shown if self.columns[i].flex), None)
        if flex is not None:
            want = self.columns[flex].want

            def room(cols: list[int]) -> int:
                return width - sum(widths[i] + 1 for i in cols if i != flex) - 1

            while room(shown) < want:
                extras = [i for i in shown if self.columns[i].priority >= OPTIONAL]
                if not extras:
                    break
                shown.remove(max(extras, key=lambda i: (self.columns[i].priority, i)))
        fixed = sum(widths[i] + 1 for i in shown if not self.columns[i].flex)
        layout = []
        for i in shown:
            col = self.columns[i]
            w = max(col.min_width, width - fixed - 1) if col.flex else widths[i]
            layout.append((i, w))
        self._layout, self._layout_for = layout, width
        return layout

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        layout = self._columns_for(width)
        if y == 0:
            style = self.get_component_rich_style("virtual-table--header")
            cells = [
                (_(self.columns[i].label) + self._sort_mark(i), w, "", self.columns[i].justify)
                for i, w in layout
            ]
            return self._strip(cells, style, width)
        index = int(self.scroll_y) + y - 1
        base = self.rich_style
        if index >= len(self._rows):
            if index == 0 and not self._rows:
                msg = (
                    _("no row matches “{text}”").format(text=self._filter)
                    if self._filter
                    else _(self.empty_text)
                )
                style = self.get_component_rich_style("virtual-table--empty")
                return Strip([Segment(set_cell_size(" " + clean(msg), width), style)], width)
            return Strip.blank(width, base)
        row = self._rows[index]
        styles = row.styles
        shown = self._cells(row)
        cells = [
            (
                shown[i] if i < len(shown) else "",
                w,
                styles[i] if i < len(styles) else "",
                self.columns[i].justify,
            )
            for i, w in layout
        ]
        line_style = base
        if index == self.cursor:
            line_style = base + self.get_component_rich_style("virtual-table--cursor")
        return self._strip(cells, line_style, width, cursor=index == self.cursor)

    def _sort_mark(self, i: int) -> str:
        if i != self._sort_col:
            return ""
        return " ▼" if self._sort_reverse else " ▲"

    def _strip(
        self, cells: list[tuple[str, int, str, str]], style: Style, width: int, cursor: bool = False
    ) -> Strip:
        segments: list[Segment] = []
        used = 0
        for text, w, spec, justify in cells:
            text = clean(text, max_len=max(w, 1) * 2 + 8)
            if cell_len(text) > w:
                text = cut_cell(text, w)
            elif justify == "right":
                text = " " * (w - cell_len(text)) + text
            else:
                text = set_cell_size(text, w)
            cell_style = style + _style(spec) if spec and not cursor else style
            segments.append(Segment(text, cell_style))
            segments.append(Segment(" ", style))
            used += w + 1
        if used < width:
            segments.append(Segment(" " * (width - used), style))
        return Strip(segments).crop(0, width)

    def on_resize(self) -> None:
        self._settle()  # a taller window may need rows the running pass has not found yet
        self._layout_for = -1
        self.virtual_size = Size(self.size.width, len(self._rows) + 1)
        self._scroll_to_cursor()


def _sort_value(row: Row, col: int, as_of: float | None = None) -> tuple:
    """``as_of``: sorting the clock column, the time its ticking cells count to."""
    if as_of is not None:
        tick = row.tick  # read once: a job row makes it when read
        if tick is not None:
            return (0, as_of - tick[0])
    v = row.sort_at(col)
    if v is not None:
        return (0, v) if isinstance(v, (int, float)) else (1, str(v))
    return (1, row.cell_at(col).lower())
