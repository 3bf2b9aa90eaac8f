"""What every cockpit screen shares: the hub, ``esc`` back, a ``/`` filter bar."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input

from cockpit.widgets.table import VirtualTable

if TYPE_CHECKING:
    from cockpit.app import CockpitApp
    from cockpit.runtime.hub import Hub


class FilterBar(Input):
    """The ``/`` input; filters the table that had focus, live, by any column text."""

    DEFAULT_CSS = (
        "FilterBar { dock: bottom; display: none; height: 3; } FilterBar.-shown { display: block; }"
    )

    BINDINGS = [Binding("escape", "cancel", "Clear filter", show=False)]

    def __init__(self) -> None:
        super().__init__(
            placeholder="filter: any column text (enter keeps it, esc clears)", id="filter"
        )
        self.target: VirtualTable | None = None

    def open_for(self, table: VirtualTable) -> None:
        self.target = table
        self.value = table.filter_text
        self.add_class("-shown")
        # at once, not on the next idle (Widget.focus): keys typed right after `/` arrive in
        # the same batch and went to the table, enter opening its top row
        self.screen.set_focus(self)

    def on_input_changed(self, event: Input.Changed) -> None:
        # not stopped: the screen updates its pane titles ("12 of 650, filter …")
        if self.target is not None:
            self.target.set_filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close()

    def action_cancel(self) -> None:
        if self.target is not None:
            self.target.set_filter("")
        # through Input.Changed, so the screen's pane titles drop the "filter …" as well
        self.value = ""
        self._close()

    def _close(self) -> None:
        self.remove_class("-shown")
        if self.target is not None:
            self.target.focus()


class CockpitScreen(Screen):
    """Base screen: ``refresh_data()`` is called after every poll and when shown again."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("slash", "filter", "Filter"),
        Binding("z", "zoom", "Zoom", show=False),
    ]

    @property
    def hub(self) -> Hub:
        return self.cockpit.hub

    @property
    def cockpit(self) -> CockpitApp:
        return self.app  # type: ignore[return-value]

    def refresh_data(self) -> None:
        """Re-read the hub. Cheap when nothing changed."""

    def on_screen_resume(self) -> None:
        self.refresh_data()

    def action_back(self) -> None:
        if self.maximized is not None:  # z zoomed a pane: esc shows all panes again
            self.minimize()
            return
        table = self.focused
        if isinstance(table, VirtualTable) and table.filter_text:
            # a kept filter (/ … enter) goes first, as in k9s; the next esc goes back
            table.set_filter("")
            for bar in self.query(FilterBar):
                if bar.target is table:
                    bar.value = ""
            table.post_message(VirtualTable.Filtered(table))  # pane titles drop "filter …"
            return
        # the dashboard is the bottom of the stack (CockpitApp.get_default_screen): never pop it
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def action_zoom(self) -> None:
        """``z`` zooms a dashboard pane; a drill-down or log already has the whole screen."""
        self.notify("z zooms a dashboard pane: this view is already full-screen", timeout=2)

    def filter_target(self) -> VirtualTable | None:
        focused = self.focused
        if isinstance(focused, VirtualTable):
            return focused
        return next(iter(self.query(VirtualTable)), None)

    def action_filter(self) -> None:
        table = self.filter_target()
        bars = self.query(FilterBar)
        if table is None or not bars:
            self.notify("nothing to filter here", timeout=2)
            return
        bars.first().open_for(table)
