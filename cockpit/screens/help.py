"""``?``: every key, on one modal screen."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Everywhere",
        (
            ("q", "back one view; on the dashboard: quit (exit 0)"),
            ("Q", "quit from anywhere"),
            ("i", "incident view (replaces the view you were in: esc is home)"),
            ("A", "alert log (m / M: mute subject / rule)"),
            ("P", "ModelArts resource pools, pools with nodes not Available first; enter: nodes"),
            (
                "F",
                "fleet: every cluster and project, its load, failures and health; "
                "enter narrows the dashboard to it",
            ),
            ("r", "poll every source now"),
            ("ctrl+p", "command palette: jump to a job id, node, training job, source"),
            ("?, f1", "this help (in a log, ? searches backwards: f1 is help there)"),
            ("esc", "clear a kept filter, else back to the previous screen (cursor kept)"),
            ("ctrl+z", "suspend to the shell (fg resumes)"),
        ),
    ),
    (
        "Tables",
        (
            ("j / k, ↑ / ↓", "move (also in findings, incidents, alerts and this help)"),
            ("pgup / pgdn, g / G", "page, top, bottom"),
            ("enter", "drill down (job, node, training job, incident subject)"),
            ("/", "filter by any column text (enter keeps it, esc clears)"),
            ("s / S", "sort by the next column / reverse"),
            ("tab, 1 2 3", "next pane, focus queue / nodes / ModelArts"),
            ("z", "zoom the focused pane (z or esc to restore)"),
            ("c", "choose the focused pane's columns (kept for the next session)"),
        ),
    ),
    (
        "Job, node, training job",
        (
            ("enter", "on an evidence line: open the log at that line; on a log: open it"),
            ("l", "open the logs"),
            (
                "a",
                "act: drain / resume / down a node; cancel, hold, release, requeue a job or "
                "change its time limit; stop a training job. Shows the exact command, runs it on "
                "enter, writes the audit journal. Needs allow_actions = true; off with --readonly",
            ),
        ),
    ),
    (
        "Log viewer",
        (
            ("e / E", "next / previous error"),
            ("w / W", "next / previous warning"),
            ("g / G, 120g", "top / bottom, line 120 (type the number, then g)"),
            ("space / b, ctrl+d / ctrl+u", "page down / up, half a page"),
            ("← / →", "scroll long lines sideways"),
            ("f", "follow new lines (tail -f; truncation is detected)"),
            ("/ , ? , n / N", "search forward, backward, next / previous match"),
            ("&", "show only lines containing a text (& then enter: all lines again)"),
            ("ctrl+w", "wrap long lines"),
            ("tab / shift+tab", "next / previous log"),
        ),
    ),
    (
        "Replay (cockpit --replay DIR)",
        (
            ("] / [", "next / previous recorded poll"),
            ("} / {", "ten polls forward / back"),
        ),
    ),
    (
        "Incidents",
        (
            ("enter", 'drill into the subject; on "412 jobs (ana): ...": its members'),
            ("m", "the incident's members (the jobs behind its count); enter opens one"),
            (
                "a",
                "acknowledge with an optional note, or take it back (kept in the store; "
                "with PostgreSQL every cockpit of the team sees who and when)",
            ),
            ("x", "export the incident list as Markdown to the current directory"),
        ),
    ),
)


def help_table() -> Table:
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold cyan", no_wrap=True)
    t.add_column()
    for section, keys in KEYS:
        t.add_row(Text(section, style="bold underline"), "")
        for k, what in keys:
            t.add_row(k, what)
        t.add_row("", "")
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "app.pop_screen", "Close"),
        Binding("j", "scroll(1)", "Down", show=False),
        Binding("k", "scroll(-1)", "Up", show=False),
        Binding("g", "scroll_edge(0)", "Top", show=False),
        Binding("G", "scroll_edge(1)", "Bottom", show=False),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $panel; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("Cockpit keys  (esc closes)", style="bold"))
            yield Static(help_table())

    def action_scroll(self, lines: int) -> None:
        scroller = self.query_one(VerticalScroll)
        scroller.scroll_to(y=scroller.scroll_y + lines, animate=False)

    def action_scroll_edge(self, bottom: int) -> None:
        scroller = self.query_one(VerticalScroll)
        (scroller.scroll_end if bottom else scroller.scroll_home)(animate=False)
