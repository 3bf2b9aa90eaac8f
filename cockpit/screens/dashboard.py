"""The one-glance screen: queue, nodes, ModelArts jobs, incidents strip, source status."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from cockpit.i18n import N_, _
from cockpit.model import Subject
from cockpit.status_views import storage_groups, storage_threshold
from cockpit.text import clean
from cockpit.views import split_key
from cockpit.widgets.keybar import KeyBar
from cockpit.widgets.storage import StorageStrip
from cockpit.widgets.table import VirtualTable

from .base import CockpitScreen, FilterBar
from .panes import IncidentStrip, NodeTable, QueueTable, SourceStatus, TrainingJobTable

# "· 3 out of service" after a pane's count (ngettext: the word follows the count)
_PROBLEM_WORD = {
    "queue": N_("{n} critical"),
    "nodes": N_("{n} out of service"),
    "training": N_("{n} critical"),
}

# a pane's height at least (styles/cockpit.tcss: .pane min-height), and how many of its bad
# rows it makes room for beyond that
_PANE_MIN_LINES = 4
_BAD_ROWS_SHOWN = 3

# the kind of source each pane shows
_PANE_SOURCE_KIND = {"queue": "slurm", "nodes": "slurm", "training": "modelarts"}
_UNANSWERED = N_("no answer from its source yet: unknown, not all clear (see the status line)")

PANES = (
    ("queue", "jobs", N_("Queue"), "job"),
    ("nodes", "nodes", N_("Nodes"), "node"),
    ("training", "training", N_("ModelArts training jobs"), "training_job"),
)


class Pane(Vertical):
    """A pane (title + table): ``z`` maximizes it whole. Textual lets only focusable widgets
    be maximized by default; the table alone would lose its title (source, counts, filter)."""

    ALLOW_MAXIMIZE = True


class DashboardScreen(CockpitScreen):
    BINDINGS = [
        Binding("1", "focus_pane('queue')", N_("Queue"), show=False),
        Binding("2", "focus_pane('nodes')", N_("Nodes"), show=False),
        Binding("3", "focus_pane('training')", N_("ModelArts"), show=False),
        Binding("z", "zoom", N_("Zoom"), show=False),
        Binding("c", "columns", N_("Columns"), show=False),
        # on the selected job, node or training job: its logs, its guarded actions
        Binding("l", "on_row('logs')", N_("Logs"), show=False),
        Binding("a", "on_row('act')", N_("Act"), show=False),
    ]

    def __init__(self, banner: str = "") -> None:
        super().__init__(id="dashboard")
        self.banner = banner
        self._applied = -1
        self._titles: dict[str, Text] = {}  # pane id -> title last drawn
        self._min_lines: dict[str, int] = {}  # pane id -> the min height last set
        self._empty_texts: dict[str, str] = {}  # pane id -> its table's own "no jobs"
        self._problem_gen, self._problem_counts = -1, {}
        self._rows: dict[str, list] = {}  # pane id -> the hub's row list its table shows
        self._only: str | None = None  # the fleet's enter: the one source shown

    def compose(self) -> ComposeResult:
        hub = self.hub
        yield Static(self._title(), id="title")
        yield SourceStatus(hub, id="status")
        yield IncidentStrip(hub, lambda: self.cockpit.acks.acked, id="incident-strip")
        multi_slurm = sum(1 for s in hub.states.values() if s.source.kind == "slurm") > 1
        multi_ma = sum(1 for s in hub.states.values() if s.source.kind == "modelarts") > 1
        with Vertical(id="panes"):
            if hub.has_kind("slurm"):
                with Pane(classes="pane", id="queue-pane"):
                    yield Static(id="queue-title", classes="pane-title")
                    yield QueueTable(multi_slurm, id="queue")
                with Pane(classes="pane", id="nodes-pane"):
                    yield Static(id="nodes-title", classes="pane-title")
                    yield NodeTable(multi_slurm, id="nodes")
                    yield StorageStrip(id="storage")  # df of storage_paths; hidden when none
            if hub.has_kind("modelarts"):
                with Pane(classes="pane", id="training-pane"):
                    yield Static(id="training-title", classes="pane-title")
                    yield TrainingJobTable(multi_ma, id="training")
        yield FilterBar()
        yield KeyBar()

    def set_banner(self, banner: str) -> None:
        """A new banner (the replay's poll and time) in the title line."""
        self.banner = banner
        self._retitle()

    def on_resize(self) -> None:
        self._retitle()

    def _retitle(self) -> None:
        for title in self.query("#title").results(Static):
            text = self._title()
            # a banner wider than the terminal (the no-config demo's "Add a real cluster: put
            # [clusters.NAME] in …" at 80 columns) takes up to 4 lines rather than lose its end
            width = max(self.size.width, 1)
            title.styles.height = min(4, len(text.wrap(self.app.console, width)))
            title.update(text)

    def _title(self) -> Text:
        t = Text()
        t.append(_(" Cockpit "), style="bold reverse")
        if getattr(self.app, "readonly", False):  # --readonly: no action runs (said up front)
            t.append(_(" read-only "), style="bold reverse yellow")
        if self.banner:
            t.append(" " + clean(self.banner, 300), style="yellow")
        else:
            t.append("  " + ", ".join(clean(n, 40) for n in self.hub.states), style="bold")
        # as many key hints as fit after the banner, whose words come first (the key bar at
        # the bottom says the keys too)
        room = self.size.width or 1000
        hints = _("   ?:help  i:incidents  /:filter  ctrl+p:jump  q:quit").split("  ")
        shown = []
        for hint in hints:
            if t.cell_len + cell_len("  ".join([*shown, hint])) > room:
                break
            shown.append(hint)
        if shown:
            t.append("  ".join(shown), style="dim")
        return t

    def on_mount(self) -> None:
        self._apply_column_prefs()
        self.call_after_refresh(self._retitle)  # composed before the screen had its width
        self.refresh_data()
        tables = list(self.query(VirtualTable))
        if tables:
            tables[0].focus()

    def refresh_data(self) -> None:
        hub = self.hub
        if hub.generation != self._applied:
            self._applied = hub.generation
            for pane_id, kind, _label, _sk in PANES:
                rows, shown = hub.rows(kind), self._rows.get(pane_id)
                if rows is shown or (shown is not None and not rows and not shown):
                    continue  # its sources did not poll (the hub hands over one list per poll)
                self._rows[pane_id] = rows
                for table in self.query(f"#{pane_id}").results(VirtualTable):
                    table.set_rows(rows)
            self._say_unanswered()
            self.query_one(IncidentStrip).refresh()
            for strip in self.query(StorageStrip):
                strip.show(storage_groups(hub), storage_threshold(hub))
        self.query_one(SourceStatus).sync()
        self._update_titles()

    def _say_unanswered(self) -> None:
        """An empty pane whose sources never answered says so: "no jobs" under a STALE line
        read as all clear (a cluster that does not answer is unknown, not healthy)."""
        for pane_id, kind in _PANE_SOURCE_KIND.items():
            states = [st for st in self.hub.states.values() if st.source.kind == kind]
            answered = any(st.snapshot is not None and st.snapshot.error is None for st in states)
            for table in self.query(f"#{pane_id}").results(VirtualTable):
                usual = self._empty_texts.setdefault(pane_id, table.empty_text)
                want = usual if answered or not states else _UNANSWERED
                if table.empty_text != want:
                    table.empty_text = want
                    table.refresh()

    def _update_titles(self) -> None:
        for pane_id, _kind, label, _sk in PANES:
            tables = list(self.query(f"#{pane_id}").results(VirtualTable))
            if not tables:
                continue
            table = tables[0]
            t = Text(f" {_(label)} ", style="bold")
            # counted_rows: the exact count costs a full filter pass, which runs between frames
            shown, total = table.counted_rows, table.total_count
            more = "≥" if table.filter_pending else ""
            t.append(
                f"{total}"
                if shown == total
                else _("{more}{shown} of {total}").format(more=more, shown=shown, total=total),
                style="cyan",
            )
            bad = self._problems().get(pane_id, 0)
            if bad:  # at 80x24 a pane shows a few rows: say how many need a look
                t.append(" · " + _(_PROBLEM_WORD[pane_id]).format(n=bad), style="bold red")
            self._fit_bad_rows(pane_id, table, bad)
            if table.filter_text:
                t.append(
                    _("  filter “{text}”").format(text=clean(table.filter_text, 40)), style="yellow"
                )
            if self._titles.get(pane_id) != t:
                # one line of fixed height: no layout pass (a full-screen reflow is ~18 ms;
                # after every poll, a third of an idle cockpit's CPU)
                self._titles[pane_id] = t
                self.query_one(f"#{pane_id}-title", Static).update(t, layout=False)

    def _fit_bad_rows(self, pane_id: str, table: VirtualTable, bad: int) -> None:
        """A pane is at least tall enough for its first few rows that need a look (bad rows
        sort first): at 80x24 the third node out of service was below the nodes pane's two
        rows. Up to ``_BAD_ROWS_SHOWN``, so the focused pane keeps most of the height."""
        pane = table.parent
        if not isinstance(pane, Pane):
            return
        # the title, the storage strip when shown (one line each), the header, the rows
        others = sum(1 for w in pane.children if w is not table and w.display)
        lines = others + 1 + min(bad, _BAD_ROWS_SHOWN)
        if self._min_lines.get(pane_id) == lines:
            return
        self._min_lines[pane_id] = lines
        pane.styles.min_height = max(_PANE_MIN_LINES, lines)

    def _problems(self) -> dict[str, int]:
        """Per pane, its rows that need a look (a node out of service, a job or training job
        with a critical verdict), counted once per poll."""
        hub = self.hub
        if self._problem_gen == hub.generation:
            return self._problem_counts
        counts = {"queue": 0, "nodes": 0, "training": 0}
        for st in hub.states.values():
            snap = st.snapshot
            if snap is None:
                continue
            counts["nodes"] += sum(1 for n in snap.nodes if n.is_unhealthy)
            for (kind, _src, _id), f in st.verdicts.items():
                if f.severity == "critical":
                    if kind == "job":
                        counts["queue"] += 1
                    elif kind == "training_job":
                        counts["training"] += 1
        self._problem_gen, self._problem_counts = hub.generation, counts
        return counts

    def on_input_changed(self) -> None:
        self._update_titles()

    def on_virtual_table_filtered(self) -> None:
        self._update_titles()  # the filter pass finished: the exact count

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        kind = {p[0]: p[3] for p in PANES}.get(event.table.id or "")
        if kind is None:
            return
        source, ident = split_key(event.key)
        self.cockpit.open_subject(Subject(kind, source, ident))  # type: ignore[arg-type]

    def action_on_row(self, then: str) -> None:
        """``l`` / ``a``: the focused pane's selected row, drilled into, then its logs or
        actions."""
        table = self.focused if isinstance(self.focused, VirtualTable) else None
        kind = {p[0]: p[3] for p in PANES}.get(table.id or "") if table is not None else None
        key = table.cursor_key if table is not None else None
        if kind is None or not key:
            self.notify(_("select a job, node or training job first"), timeout=2)
            return
        source, ident = split_key(key)
        self.cockpit.open_subject(Subject(kind, source, ident), then=then)  # type: ignore[arg-type]

    def action_focus_pane(self, pane_id: str) -> None:
        for table in self.query(f"#{pane_id}").results(VirtualTable):
            pane = table.parent
            if self.maximized is not None and pane is not self.maximized:
                # zoomed: the zoom follows to the pane asked for (focusing a hidden pane made
                # enter open a row nobody could see)
                self.minimize()
                if isinstance(pane, Pane):
                    self.maximize(pane, container=False)
            table.focus()
            return
        self.notify(_("no such pane for the configured sources"), timeout=2)

    def show_source(self, source: str) -> None:
        """The fleet's ``enter``: only ``source`` on the dashboard. A pane fed by several
        sources is filtered to it (its CLUSTER/PROJECT column); a pane of another kind of
        source (the ModelArts pane when a cluster was chosen) is hidden. ``esc`` shows all."""
        st = self.hub.states.get(source)
        kind = st.source.kind if st is not None else ""
        shown: list[VirtualTable] = []
        for table in self.query(VirtualTable):
            pane = table.parent
            if not isinstance(pane, Pane) or table.id not in _PANE_SOURCE_KIND:
                continue
            if _PANE_SOURCE_KIND[table.id] != kind:
                pane.display = False
                continue
            pane.display = True
            shown.append(table)
            if any(c.label in ("CLUSTER", "PROJECT") for c in table.columns):
                table.set_filter(source)
                table.post_message(VirtualTable.Filtered(table))
        self._only = source
        if shown:
            shown[0].focus()
        self.notify(
            _("showing {source} only (esc: all sources)").format(source=source),
            timeout=3,
            markup=False,
        )

    def action_back(self) -> None:
        if self._only is not None and self.maximized is None:
            # back from the fleet's one-source view: every pane, unfiltered
            self._only = None
            for pane in self.query(Pane):
                pane.display = True
            for table in self.query(VirtualTable):
                if table.filter_text:
                    table.set_filter("")
                    table.post_message(VirtualTable.Filtered(table))
            for bar in self.query(FilterBar):
                bar.value = ""
            return
        super().action_back()

    def action_columns(self) -> None:
        """``c``: choose the focused pane's columns; remembered across sessions."""
        from cockpit.screens.columns import ColumnChooser

        table = self.focused
        if not isinstance(table, VirtualTable) or not table.id:
            self.notify(_("focus a pane first (1, 2, 3 or tab), then c"), timeout=2)
            return
        title = {p[0]: _(p[2]) for p in PANES}.get(table.id, table.id)

        def chosen(hidden: list[str] | None) -> None:
            if hidden is None:
                return
            table.set_hidden(hidden)
            problem = self.cockpit.prefs.set_hidden_columns(table.id or "", hidden)
            if problem:
                self.notify(problem, severity="warning", timeout=5, markup=False)

        self.app.push_screen(ColumnChooser(table, title), chosen)

    def _apply_column_prefs(self) -> None:
        for table in self.query(VirtualTable):
            if table.id:
                table.set_hidden(self.cockpit.prefs.hidden_columns(table.id))

    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused
        if isinstance(focused, VirtualTable) and isinstance(focused.parent, Pane):
            self.maximize(focused.parent, container=False)
        else:
            self.notify(_("focus a pane first (1, 2, 3 or tab), then z"), timeout=2)
