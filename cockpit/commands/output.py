"""The console every subcommand prints through.

On a terminal Rich fits tables to its width; piped (``| less``, ``> ticket.txt``, cron mail)
there is no width to fit, and Rich's default of 80 columns folds every cell into a word per
line. Piped output gets wide lines instead: one row per line, greppable.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PIPED_WIDTH = 240  # wide enough for a reason or a title on one line; COLUMNS overrides


def stdout_console() -> Console:
    from rich.console import Console

    if sys.stdout.isatty():
        return Console(file=sys.stdout, highlight=False)
    width = os.environ.get("COLUMNS", "")
    return Console(
        file=sys.stdout,
        highlight=False,
        width=int(width) if width.isdigit() and int(width) > 0 else PIPED_WIDTH,
        soft_wrap=False,
    )
