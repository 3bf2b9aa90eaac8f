"""Rows as plain data: what a view builds off the UI thread and a table draws.

No Textual here: the runtime and the views build these, and only the widgets draw them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Column:
    """``priority`` 0 is always shown; higher numbers are dropped first when narrow.

    ``width`` is in terminal cells; the single ``flex`` column takes what is left, at
    least ``min_width`` (other columns are dropped by priority to give it that), and while it
    has less than ``want`` cells the optional columns (priority ``OPTIONAL`` and up) make way
    too: on a wide terminal the verdict keeps its deciding figures before a GPUS column shows.
    ``clock``: the column counts time. A row with a ``tick`` shows there
    ``clock(seconds since the tick's origin at the rows' as_of, the tick's coarse flag)``,
    drawn only for the lines on screen, and sorts by those seconds.
    """

    label: str
    width: int
    priority: int = 0
    flex: bool = False
    justify: str = "left"
    min_width: int = 16
    clock: Callable[[int, bool], str] | None = None
    want: int = 0


# columns of this priority and up give way to a flex column below its ``want``
OPTIONAL = 2


@dataclass(frozen=True, slots=True)
class Row:
    """One table row. ``key`` identifies it across refreshes (cursor stays on it).

    ``styles`` is a per-cell Rich style string ("" = default); ``sort`` optional
    per-column sort values (defaults to the cell text); ``alias`` extra lower-case text the
    filter matches without showing it (a compact code: ``pd`` finds a PENDING row).
    ``tick``: (origin as a POSIX time, coarse) for the cell of the table's ``clock`` column
    when it counts time (a running job's TIME): the row stays the same object while only
    the clock moves, and that cell's own text is "" (the filter does not search a time).
    """

    key: str
    cells: tuple[str, ...]
    styles: tuple[str, ...] = ()
    sort: tuple[object, ...] | None = None
    alias: str = ""
    tick: tuple[float, bool] | None = None

    # One column's values, for a sort: a row that makes its cells when read (the queue's
    # job rows, ``views.JobRow``) makes only the one asked for.
    def cell_at(self, col: int) -> str:
        cells = self.cells
        return cells[col] if col < len(cells) else ""

    def sort_at(self, col: int) -> object:
        sort = self.sort
        return sort[col] if sort is not None and col < len(sort) else None


class RowList(list):
    """Rows plus what the table would otherwise compute on the UI thread, built once off it
    (by :func:`prepare_rows`, where the rows are built): ``key_index`` row key -> position,
    ``haystack`` the lower-cased search text of each row (``"\\x1f".join(cells).lower()``),
    ``as_of`` the POSIX time ticking cells are drawn at (the poll's; unset: their text).
    Treat as immutable."""

    __slots__ = ("key_index", "haystack", "as_of")

    key_index: dict[str, int]
    haystack: list[str]
    as_of: float


def _search_text(row: Row) -> str:
    text = "\x1f".join(row.cells).lower()
    return f"{text}\x1f{row.alias}" if row.alias else text


def prepare_rows(rows: list[Row]) -> RowList:
    """Wrap ``rows`` as a :class:`RowList` (O(n); call it off the UI thread)."""
    out = RowList(rows)
    out.key_index = {r.key: i for i, r in enumerate(out)}
    out.haystack = [_search_text(r) for r in out]
    return out


def join_rows(lists: Sequence[list[Row]]) -> RowList:
    """Several sources' rows as one :class:`RowList`, in order: their search text and key
    index carried over (built where they were not), drawn at the latest ``as_of`` (each
    source's clock cells count to the newest poll's time)."""
    out = RowList()
    hays: list[str] = []
    index: dict[str, int] = {}
    stamps = []
    for rows in lists:
        base = len(out)
        out.extend(rows)
        got = getattr(rows, "haystack", None)
        hays.extend(got if got is not None else map(_search_text, rows))
        index.update((r.key, base + i) for i, r in enumerate(rows))
        if (t := getattr(rows, "as_of", None)) is not None:
            stamps.append(t)
    out.key_index, out.haystack = index, hays
    if stamps:
        out.as_of = max(stamps)
    return out
