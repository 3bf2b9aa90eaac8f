"""``?``: every key, on one modal screen."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from cockpit.i18n import N_, _

KEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        N_("Everywhere"),
        (
            ("q", N_("back one view; on the dashboard: quit (exit 0)")),
            ("Q", N_("quit from anywhere")),
            ("i", N_("incident view (replaces the view you were in: esc is home)")),
            ("A", N_("alert log (m / M: mute subject / rule)")),
            (
                "P",
                N_("ModelArts resource pools, pools with nodes not Available first; enter: nodes"),
            ),
            (
                "F",
                N_(
                    "fleet: every cluster and project, its load, failures and health; "
                    "enter narrows the dashboard to it"
                ),
            ),
            ("r", N_("poll every source now")),
            ("ctrl+p", N_("command palette: jump to a job id, node, training job, source")),
            ("?, f1", N_("this help (in a log, ? searches backwards: f1 is help there)")),
            ("esc", N_("clear a kept filter, else back to the previous screen (cursor kept)")),
            ("ctrl+z", N_("suspend to the shell (fg resumes)")),
        ),
    ),
    (
        N_("Tables"),
        (
            ("j / k, ↑ / ↓", N_("move (also in findings, incidents, alerts and this help)")),
            ("pgup / pgdn, g / G", N_("page, top, bottom")),
            ("enter", N_("drill down (job, node, training job, incident subject)")),
            ("/", N_("filter by any column text (enter keeps it, esc clears)")),
            ("s / S", N_("sort by the next column / reverse")),
            ("tab, 1 2 3", N_("next pane, focus queue / nodes / ModelArts")),
            ("z", N_("zoom the focused pane (z or esc to restore)")),
            ("c", N_("choose the focused pane's columns (kept for the next session)")),
        ),
    ),
    (
        N_("Job, node, training job"),
        (
            ("enter", N_("on an evidence line: open the log at that line; on a log: open it")),
            ("l", N_("open the logs")),
            (
                "a",
                N_(
                    "act: drain / resume / down a node; cancel, hold, release, requeue a job "
                    "or change its time limit; stop a training job. Shows the exact command, "
                    "runs it on enter, writes the audit journal. Needs allow_actions = true; "
                    "off with --readonly"
                ),
            ),
        ),
    ),
    (
        N_("Log viewer"),
        (
            ("e / E", N_("next / previous error")),
            ("w / W", N_("next / previous warning")),
            ("g / G, 120g", N_("top / bottom, line 120 (type the number, then g)")),
            ("space / b, ctrl+d / ctrl+u", N_("page down / up, half a page")),
            ("← / →", N_("scroll long lines sideways")),
            ("f", N_("follow new lines (tail -f; truncation is detected)")),
            ("/ , ? , n / N", N_("search forward, backward, next / previous match")),
            ("&", N_("show only lines containing a text (& then enter: all lines again)")),
            ("ctrl+w", N_("wrap long lines")),
            ("tab / shift+tab", N_("next / previous log")),
        ),
    ),
    (
        N_("Replay (cockpit --replay DIR)"),
        (
            ("] / [", N_("next / previous recorded poll")),
            ("} / {", N_("ten polls forward / back")),
        ),
    ),
    (
        N_("Incidents"),
        (
            ("enter", N_('drill into the subject; on "412 jobs (ana): ...": its members')),
            ("m", N_("the incident's members (the jobs behind its count); enter opens one")),
            (
                "a",
                N_(
                    "acknowledge with an optional note, or take it back (kept in the store; "
                    "with PostgreSQL every cockpit of the team sees who and when)"
                ),
            ),
            ("x", N_("export the incident list as Markdown to the current directory")),
        ),
    ),
)


def help_table() -> Table:
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold cyan", no_wrap=True)
    t.add_column()
    for section, keys in KEYS:
        t.add_row(Text(_(section), style="bold underline"), "")
        for k, what in keys:
            t.add_row(k, _(what))
        t.add_row("", "")
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "app.pop_screen", N_("Close")),
        Binding("j", "scroll(1)", N_("Down"), show=False),
        Binding("k", "scroll(-1)", N_("Up"), show=False),
        Binding("g", "scroll_edge(0)", N_("Top"), show=False),
        Binding("G", "scroll_edge(1)", N_("Bottom"), show=False),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $panel; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text(_("Cockpit keys  (esc closes)"), style="bold"))
            yield Static(help_table())

    def action_scroll(self, lines: int) -> None:
        scroller = self.query_one(VerticalScroll)
        scroller.scroll_to(y=scroller.scroll_y + lines, animate=False)

    def action_scroll_edge(self, bottom: int) -> None:
        scroller = self.query_one(VerticalScroll)
        (scroller.scroll_end if bottom else scroller.scroll_home)(animate=False)
