"""What the log viewer reads and how it indexes, apart from the widget: the reader contract
(:class:`LogReader`, :class:`ErrorHit`), error marks, the sizes it works in, and the pure
helpers that may run on a worker thread (indexing a chunk, grouping reads)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate
from typing import Protocol

CHUNK = 1 << 20  # bytes per index read
WINDOW_BYTES = 4 << 20  # most bytes read at once for the visible window
LINE_CAP = 16 << 10  # bytes of a single line ever decoded for display
CACHE_LINES = 4000
RUN_GAP = 64 << 10  # lines at most this far apart are fetched by one read
COUNT_DIGITS = 9  # a typed line number (less's ``120g``)
HEAD_BYTES = 256  # compared while following to notice a replaced file
INDEX_LINES = 1_000_000  # line starts kept while following (8 bytes each: 8 MiB)


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


def _runs(lines: list[tuple[int, int, int]]) -> list[list[tuple[int, int, int]]]:
    """(line, start, end) in ascending order, grouped so each group is one read: neighbours
    closer than ``RUN_GAP`` bytes, no group longer than ``WINDOW_BYTES`` (unless one line is)."""
    runs: list[list[tuple[int, int, int]]] = []
    for item in lines:
        last = runs[-1] if runs else None
        if last and item[1] - last[-1][2] <= RUN_GAP and item[2] - last[0][1] <= WINDOW_BYTES:
            last.append(item)
        else:
            runs.append([item])
    return runs
