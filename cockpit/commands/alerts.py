"""``cockpit alerts``: the alert history (what fired, when, and why).

Reads the JSON-lines history the TUI and ``cockpit watch`` append to. With
``--demo``, or when no config names a site (as the other commands, with a note on
stderr), it plays the built-in demo site forward a few polls and shows the alerts
that fired, without touching the real history.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import timedelta

from rich.cells import cell_len

from cockpit.errors import UserError
from cockpit.i18n import N_, _, ngettext
from cockpit.text import clean, pad_cells
from cockpit.watch.alerts import Alert
from cockpit.watch.history import AlertHistory, default_history_path

_SEV = {"critical": N_("CRIT"), "warning": N_("WARN"), "info": N_("info")}


def register(subparsers: argparse._SubParsersAction) -> None:
    from cockpit.cli import add_common

    p = subparsers.add_parser(
        "alerts", help=_("show the alert history"), description=__doc__.splitlines()[0]
    )
    add_common(p)
    p.add_argument("--json", action="store_true", help=_("one JSON object per alert (JSON lines)"))
    p.add_argument(
        "--last", type=int, default=50, metavar="N", help=_("newest N alerts (default 50, 0 = all)")
    )
    p.add_argument(
        "--history",
        metavar="FILE",
        help=_("history file (default {path})").format(path=default_history_path()),
    )
    p.set_defaults(func=run)


def _parts(a: Alert) -> tuple[str, str, str]:
    """(time, severity and rule; subject; title) of one alert, hostile text cleaned."""
    t = a.time.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    sev = _(_SEV.get(a.severity, a.severity))
    return (
        f"{t}  {pad_cells(sev, 4)}  {a.rule:18}  ",
        clean(a.subject.label(), 60),
        clean(a.title, 300),
    )


def format_alert(a: Alert) -> str:
    """One line: local time, severity, rule, subject, title."""
    lead, subject, title = _parts(a)
    # padded in cells: a Chinese subject is two cells a character
    return f"{lead}{pad_cells(subject, 30)}  {title}"


def print_alert(a: Alert, console=None) -> None:
    """One alert: one line in a pipe (``grep``, cron mail); in a terminal narrower than the
    line, its head (time, severity, rule, subject) then the title folded under it, never cut
    mid-word at the terminal's edge."""
    line = format_alert(a)
    if console is None or cell_len(line) <= console.width:
        print(line, flush=True)
        return
    from rich.text import Text

    from cockpit.commands.output import hang

    lead, subject, title = _parts(a)
    hang(console, Text(lead), Text(subject))  # a long subject folds under itself
    hang(console, Text("    "), Text(title))
    console.file.flush()


def terminal_console():
    """The console to fold alerts for, or None in a pipe (one line per alert)."""
    from cockpit.commands.output import stdout_console

    return stdout_console() if sys.stdout.isatty() else None


def run(args: argparse.Namespace) -> int:
    if args.last < 0:
        raise UserError(_("--last must be >= 0"))
    last = args.last or None
    if args.demo or _no_config(args):
        alerts = demo_alerts(args.demo_seed)
        alerts = alerts[-last:] if last else alerts
    else:
        history = AlertHistory(args.history)
        if args.history and not os.path.lexists(history.path):
            # a path typed by hand that is not there is a typo, not a quiet history (the
            # default one is absent until watch first fires: "no alerts" is true then)
            raise UserError(_("{path}: no such alert history").format(path=history.path))
        try:
            alerts = history.load(last)
        except OSError as exc:
            raise UserError(
                _("cannot read {path}: {value}").format(
                    path=history.path, value=exc.strerror or exc
                )
            ) from None
        if history.skipped:
            print(
                "cockpit: "
                + ngettext(
                    "skipped {n} malformed line in {path}",
                    "skipped {n} malformed lines in {path}",
                    history.skipped,
                ).format(n=history.skipped, path=history.path),
                file=sys.stderr,
            )
    if args.json:
        for a in alerts:
            print(json.dumps(a.to_json(), ensure_ascii=False))
        return 0
    if not alerts:
        print(_("no alerts"))
        return 0
    console = terminal_console()
    for a in alerts:
        print_alert(a, console)
    return 0


def _no_config(args: argparse.Namespace) -> bool:
    """No config names a site (and neither ``--config`` nor ``--history`` was given): then,
    like ``snapshot``, ``incidents``, ``diagnose`` and the TUI, the alerts are the built-in demo
    site's, said in one line on stderr (never a simulated answer in silence, never a bare "no
    alerts" while the TUI shows the demo's)."""
    if getattr(args, "config", None) or getattr(args, "history", None):
        return False
    from cockpit.commands.output import demo_note
    from cockpit.config import default_config_path, load_config

    if load_config(None).has_sources:
        return False
    print(demo_note(default_config_path()), file=sys.stderr)
    return True


def demo_alerts(seed: int, polls: int = 12, step_s: int = 60) -> list[Alert]:
    """Play the demo site ``polls`` polls forward (``step_s`` apart) through the watcher."""
    import asyncio

    try:
        from cockpit.demo.site import DEMO_START, demo_sources
    except ImportError:
        raise UserError(_("the demo site is not available in this build")) from None
    from cockpit.runtime.hub import Hub
    from cockpit.watch.watcher import watcher_for

    now = [DEMO_START]  # the demo's story starts here: a node drains at +8 min
    # the TUI's demo watcher: what is already wrong at the first poll is announced too (a
    # plain Watcher takes the first poll as its baseline, and the history listed 3 alerts
    # while the TUI's alert pane and `incidents --demo` showed 17 critical subjects)
    watcher = watcher_for(None, demo=True)

    async def play() -> None:
        # the core the TUI runs, its clock stepped: the alerts the TUI would have raised
        hub = Hub(demo_sources(seed, lambda: now[0]), clock=lambda: now[0])
        hub.watcher = watcher
        try:
            for _ in range(polls):
                await hub.poll_all_once()
                now[0] += timedelta(seconds=step_s)
        finally:
            await hub.close()

    asyncio.run(play())
    return watcher.alerts
