"""Generic widgets (shipped as ``cockpit.widgets``): virtualised table, log viewer, status line,
usage bars. Data in; they know nothing of Slurm, ModelArts or the app's state.

Names are resolved on first use: the core's hostile-text module reuses ``_safe`` from this
package, and the CLI commands that rely on it must not pay for loading Textual.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

_EXPORTS = {
    "Column": "table",
    "Row": "table",
    "RowList": "table",
    "VirtualTable": "table",
    "prepare_rows": "table",
    "ErrorMark": "logview",
    "LogReader": "logview",
    "LogView": "logview",
    "StatusEntry": "status",
    "StatusLine": "status",
    "StorageStrip": "storage",
    "bar": "storage",
    "storage_line": "storage",
}

__all__ = [
    "Column",
    "ErrorMark",
    "LogReader",
    "LogView",
    "Row",
    "RowList",
    "StatusEntry",
    "StatusLine",
    "StorageStrip",
    "VirtualTable",
    "bar",
    "prepare_rows",
    "storage_line",
]

if TYPE_CHECKING:
    from .logview import ErrorMark, LogReader, LogView
    from .status import StatusEntry, StatusLine
    from .storage import StorageStrip, bar, storage_line
    from .table import Column, Row, RowList, VirtualTable, prepare_rows


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
