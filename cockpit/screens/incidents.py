"""``i``: open incidents ranked by severity then age, grouped by cause; ack and export."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from cockpit.text import clean
from cockpit.views import incident_rows, incident_summary
from cockpit.widgets.table import VirtualTable

from .base import CockpitScreen, FilterBar
from .panes import IncidentTable


class IncidentScreen(CockpitScreen):
    BINDINGS = [
        Binding("a", "ack", "Ack"),
        Binding("x", "export", "Export .md"),
    ]

    def __init__(self) -> None:
        super().__init__(id="incidents")
        self._applied: tuple[int, frozenset[str]] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="incidents-title", classes="pane-title")
        yield IncidentTable(id="incident-table")
        yield Static(id="incident-detail")
        yield FilterBar()
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_data()
        self.query_one(IncidentTable).focus()

    def refresh_data(self) -> None:
        acked = self.cockpit.acks.acked
        state = (self.hub.generation, acked)
        table = self.query_one(IncidentTable)
        if state != self._applied:
            self._applied = state
            table.set_rows(incident_rows(self.hub.incidents, acked))
        n_open = sum(1 for i in self.hub.incidents if i.key not in acked)
        t = Text(" Incidents ", style="bold reverse")
        t.append(f"  {n_open} open, {len(self.hub.incidents) - n_open} acknowledged", style="bold")
        t.append("   enter: drill down  a: ack  x: export Markdown  esc: back", style="dim")
        self.query_one("#incidents-title", Static).update(t)
        self._show_detail(table.cursor_key)

    def _show_detail(self, key: str | None) -> None:
        detail = self.query_one("#incident-detail", Static)
        inc = self.hub.incident_for(key) if key else None
        if inc is None:
            detail.update(Text(" No open incidents." if not self.hub.incidents else ""))
            return
        detail.update(incident_summary(inc, self.cockpit.acks.is_acked(inc.key), self.hub.clock()))

    def on_virtual_table_cursor_moved(self, event: VirtualTable.CursorMoved) -> None:
        self._show_detail(event.key)

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        inc = self.hub.incident_for(event.key)
        if inc is not None:
            self.cockpit.open_subject(inc.subject)

    def action_ack(self) -> None:
        key = self.query_one(IncidentTable).cursor_key
        if key is None:
            return
        now_acked = self.cockpit.acks.toggle(key)
        self.notify("acknowledged" if now_acked else "acknowledgement removed", timeout=2)
        self.refresh_data()

    def action_export(self) -> None:
        from cockpit.report import incidents_markdown

        now = self.hub.clock()
        text = incidents_markdown(list(self.hub.incidents), now, acked=self.cockpit.acks.acked)
        path = (
            self.cockpit.export_dir or Path.cwd()
        ) / f"cockpit-incidents-{now.strftime('%Y%m%d-%H%M%S')}.md"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notify(
                f"cannot write {path}: {clean(str(exc), 200)}", severity="error", markup=False
            )
            return
        # the path on its own line, short: a toast wrapping inside a file name is unreadable
        self.notify(
            f"incidents exported to\n{short_path(path)}", title="Markdown", timeout=8, markup=False
        )


def short_path(path: Path) -> str:
    """``./name`` in the current directory, ``~/…`` under the home directory, else as is."""
    try:
        if path.parent.resolve() == Path.cwd().resolve():
            return f"./{path.name}"
    except OSError:
        pass
    home = str(Path.home())
    s = str(path)
    return (
        "~" + s[len(home) :]
        if home not in ("", "/") and (s == home or s.startswith(home + "/"))
        else s
    )
