"""Making hostile text safe to show: job names, reasons, log lines, event messages.

Cluster users control these strings. Before display: decode bytes with replacement,
drop terminal control sequences (CSI, OSC incl. OSC 52/8, DCS/SOS/PM/APC strings, bare
ESC, C1 controls, BEL, backspace), expand tabs, and cap the length. Rich markup is never
interpreted: widgets build ``rich.text.Text`` objects from the cleaned string, never markup.

The implementation is :mod:`cockpit.widgets._safe` (the widgets sanitize what they draw
and import nothing from the cockpit); this module is the name the rest of the cockpit uses.
"""

from __future__ import annotations

from cockpit.widgets._safe import MAX_LINE, clean, decode, strip_ansi

__all__ = ["MAX_LINE", "clean", "decode", "strip_ansi"]
