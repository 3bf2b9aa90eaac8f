"""Making hostile text safe to show: job names, reasons, log lines, event messages.

Cluster users control these strings. Before display: decode bytes with replacement,
drop terminal control sequences (CSI, OSC incl. OSC 52/8, DCS/SOS/PM/APC strings, bare
ESC, C1 controls, BEL, backspace), expand tabs, and cap the length. Rich markup is never
interpreted: widgets build ``rich.text.Text`` objects from the cleaned string, never markup.

The implementation is :mod:`cockpit.widgets._safe` (the widgets sanitize what they draw
and import nothing from the cockpit); this module is the name the rest of the cockpit uses.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cockpit.widgets._safe import MAX_LINE, clean, decode, strip_ansi

__all__ = ["MAX_LINE", "clean", "decode", "json_line", "lines", "strip_ansi"]

# characters str.splitlines() (and some JSON-lines readers) break at that json.dumps leaves
# raw with ensure_ascii=False: a job named with one would split its record in two
_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_BREAK_TABLE = str.maketrans(_BREAKS)


def natural_key(text: str) -> tuple:
    """Job ids in the order people count them: 2 before 10, 12_3 before 12_10 (as text,
    "1, 10, 11, 15, 2, 4" read as a garbled list)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))


def json_line(obj: Any) -> str:
    """``obj`` as one JSON line (no newline at the end), readable text kept (Chinese stays
    Chinese) but every line break escaped, whatever a job's name holds."""
    return json.dumps(obj, ensure_ascii=False).translate(_BREAK_TABLE)


def lines(text: str) -> list[str]:
    """The lines of a JSON-lines file: split at LF only (``str.splitlines`` also splits at
    U+2028, U+0085, VT, FF ... which an older file may hold raw inside a string)."""
    return [ln.removesuffix("\r") for ln in text.split("\n")]


def pad_cells(text: str, cells: int) -> str:
    """``text`` and spaces to ``cells`` terminal cells (a CJK character takes two): columns
    of plain output stay aligned in Chinese."""
    from rich.cells import cell_len

    return text + " " * max(0, cells - cell_len(text))
