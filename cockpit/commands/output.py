"""The console every subcommand prints through.

On a terminal Rich fits tables to its width; piped (``| less``, ``> ticket.txt``, cron mail)
there is no width to fit, and Rich's default of 80 columns folds every cell into a word per
line. Piped output gets wide lines instead: one row per line, greppable.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def demo_note(path: object) -> str:
    """The one stderr line of a command that answers from the built-in demo site because no
    config names a real one (the TUI's banner says the same)."""
    from cockpit.i18n import _

    return _("cockpit: no config ({path}): showing the built-in demo site").format(path=path)


def say_if_demo(args: argparse.Namespace) -> None:
    """``demo_note`` on stderr when the sources a command is about to read are the demo's
    because no config names a site: never a simulated answer in silence."""
    if getattr(args, "demo", False) or getattr(args, "config", None):
        return  # --demo asked for it; a --config without sites is an error of its own
    from cockpit.commands.tui import banner_for
    from cockpit.config import default_config_path

    try:
        banner, _ = banner_for(args)
    except Exception:  # noqa: BLE001 - a bad config is reported where sources are selected
        return
    if banner:
        print(demo_note(default_config_path()), file=sys.stderr)


PIPED_WIDTH = 240  # wide enough for a reason or a title on one line; COLUMNS overrides


def stdout_console() -> Console:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # Rich's own ends the process with status 1; every command exits 141 instead
            # (cli.main: the reader of `| head` left, as for any Unix tool)
            raise BrokenPipeError

    if sys.stdout.isatty():
        return _Console(file=sys.stdout, highlight=False)
    width = os.environ.get("COLUMNS", "")
    return _Console(
        file=sys.stdout,
        highlight=False,
        width=int(width) if width.isdigit() and int(width) > 0 else PIPED_WIDTH,
        # a long line (a remedy, an explanation) stays one line: a hard wrap would start a
        # false record at column 0 for grep/awk; tables keep the width
        soft_wrap=True,
    )


def hang(con, label, body) -> None:
    """``label`` then ``body``: one line in a pipe (soft wrap); in a terminal the body wraps
    under itself, so a folded remedy or evidence line never restarts at column 0 where it
    reads as a new record."""
    from rich.table import Table

    width = label.cell_len
    if con.soft_wrap or not con.is_terminal or width >= con.width - 20:
        con.print(label + body)
        return
    grid = Table.grid()
    grid.add_column(width=width, no_wrap=True)
    grid.add_column()
    grid.add_row(label, body)
    con.print(grid)
