"""``F``: the fleet, one row per cluster or ModelArts project; ``enter`` shows that source's
jobs, nodes and training jobs on the dashboard (its panes filtered to it)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from cockpit.fleet import FleetRow, health_label, source_row
from cockpit.i18n import N_, _
from cockpit.model import Subject
from cockpit.screens.panes import CockpitTable
from cockpit.text import clean
from cockpit.widgets.keybar import KeyBar
from cockpit.widgets.table import Column, Row

from .base import CockpitScreen, FilterBar

FLEET_COLUMNS = (
    Column(N_("SOURCE"), 16, 0),
    Column(N_("KIND"), 10, 6),
    Column(N_("RUN"), 7, 2, justify="right"),
    Column(N_("PEND"), 7, 2, justify="right"),
    Column(N_("FAIL 1h"), 9, 1, justify="right"),
    Column(N_("NODES ✗"), 9, 1, justify="right"),
    Column(N_("INCIDENTS"), 16, 0, justify="right"),
    # whether the source answers (ok, connecting, STALE, failing: why), not how its jobs fare:
    # "HEALTH ok" beside "25 (17 crit)" read as a healthy cluster
    Column(N_("CONNECTION"), 20, 0, flex=True, min_width=12),
)


def _n(value: int | None) -> str:
    return "–" if value is None else str(value)


def fleet_table_rows(rows: list[FleetRow]) -> list[Row]:
    out = []
    for r in rows:
        health_style = (
            "green" if r.health == "ok" else "red" if r.health.startswith("fail") else "yellow"
        )
        cells = (
            r.source,
            "Slurm" if r.kind == "slurm" else "ModelArts",
            _n(r.running),
            _n(r.pending),
            _n(r.failed_1h),
            _n(r.nodes_sick),
            _("{n} ({crit} crit)").format(n=r.incidents, crit=r.critical)
            if r.critical
            else str(r.incidents),
            health_label(r.health),
        )
        styles = (
            "bold",
            "",
            "",
            "",
            "red" if r.failed_1h else "",
            "yellow" if r.nodes_sick else "",
            "bold red" if r.critical else "",
            health_style,
        )
        out.append(Row(r.source, tuple(clean(c, 200) for c in cells), styles))
    return out


class FleetTable(CockpitTable):
    def __init__(self, **kw) -> None:
        super().__init__(FLEET_COLUMNS, empty_text=N_("no sources"), **kw)


class FleetScreen(CockpitScreen):
    """Every source's health and load; refreshed after each poll."""

    BINDINGS = [Binding("i", "details", N_("Details"))]

    def compose(self) -> ComposeResult:
        yield Static(id="fleet-title")
        yield FleetTable(id="fleet")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.refresh_data()
        self.query_one(FleetTable).focus()

    def rows(self) -> list[FleetRow]:
        hub = self.hub
        now = hub.clock()
        # the incident view's own list (gone ones and outages included): the counts agree
        opened = hub.open_list
        return [source_row(st, opened, now) for st in hub.states.values()]

    def refresh_data(self) -> None:
        if not self.query(FleetTable):
            return
        rows = self.rows()
        table = self.query_one(FleetTable)
        table.set_rows(fleet_table_rows(rows))
        sick = sum(1 for r in rows if r.health != "ok")
        title = Text(_(" Fleet "), style="bold reverse")
        title.append(
            "  " + _("{n} sources, {sick} not ok").format(n=len(rows), sick=sick),
            style="bold" if sick else "",
        )
        title.append(
            "   " + _("enter: show it on the dashboard  i: its details and warnings"),
            style="dim",
        )
        self.query_one("#fleet-title", Static).update(title)

    def on_virtual_table_selected(self, event: FleetTable.Selected) -> None:
        source = event.key
        self.app.pop_screen()
        dashboard = self.app.screen
        show = getattr(dashboard, "show_source", None)
        if show is not None:
            show(source)

    def action_details(self) -> None:
        """The source's own screen: health, counts, the last poll's warnings (what the
        status line's "N warnings" counts) and the incidents about the source itself."""
        source = self.query_one(FleetTable).cursor_key
        st = self.hub.states.get(source) if source else None
        if st is None:
            return
        self.app.open_subject(Subject.of_source(source, st.source.kind))
