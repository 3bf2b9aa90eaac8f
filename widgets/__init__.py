"""Cockpit widgets (shipped as ``cockpit.widgets``): virtualised tables, log viewer, status lines."""

from .logview import BytesLogReader, LogReader, LogView, SourceLogReader
from .panes import (
    FindingList,
    IncidentStrip,
    IncidentTable,
    NodeTable,
    QueueTable,
    SourceStatus,
    TrainingJobTable,
)
from .table import Column, Row, VirtualTable

__all__ = [
    "BytesLogReader",
    "Column",
    "FindingList",
    "IncidentStrip",
    "IncidentTable",
    "LogReader",
    "LogView",
    "NodeTable",
    "QueueTable",
    "Row",
    "SourceLogReader",
    "SourceStatus",
    "TrainingJobTable",
    "VirtualTable",
]
