"""What every cockpit screen shares: the hub, ``esc`` back, a ``/`` filter bar."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.actions import SkipAction
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input

from cockpit.i18n import N_, _
from cockpit.widgets.table import VirtualTable

if TYPE_CHECKING:
    from cockpit.app import CockpitApp
    from cockpit.runtime.hub import Hub


class InOrderInput(Input):
    """An Input whose editing keys act in the order typed. Input's backspace, enter and arrows
    are bindings, and a binding runs only once its key has bubbled up to the app: in a batch
    (a fast typist, tmux send-keys, a paste of keystrokes) the letters behind it were
    inserted first, so `/drain⌫⌫⌫⌫⌫cn013⏎` filtered on "drainc"."""

    _IN_ORDER = {
        "backspace": "delete_left",
        "delete": "delete_right",
        "left": "cursor_left",
        "right": "cursor_right",
        "home": "home",
        "end": "end",
        "enter": "submit",
    }

    async def on_key(self, event: events.Key) -> None:
        action = self._IN_ORDER.get(event.key)
        if action is None and event.key == "escape" and hasattr(self, "action_cancel"):
            action = "cancel"
        if action is not None:
            event.stop()
            event.prevent_default()
            await self.run_action(action)


class FilterBar(InOrderInput):
    """The ``/`` input; filters the table that had focus, live, by any column text."""

    DEFAULT_CSS = (
        "FilterBar { dock: bottom; display: none; height: 3; } FilterBar.-shown { display: block; }"
    )

    BINDINGS = [Binding("escape", "cancel", N_("Clear filter"), show=False)]

    def __init__(self) -> None:
        super().__init__(
            placeholder=_("filter: any column text (enter keeps it, esc clears)"), id="filter"
        )
        self.target: VirtualTable | None = None

    def open_for(self, table: VirtualTable) -> None:
        self.target = table
        self.value = table.filter_text
        self.add_class("-shown")
        self.screen.set_focus(self)  # at once, not on the next idle: see the "/" binding

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
        Binding("escape", "back", N_("Back")),
        # priority: checked as the app takes the key from the terminal, before the next key of
        # the same batch is handed out, so `/drain⌫⌫cn013⏎` typed at once all lands in the
        # filter it opens (a plain binding runs only once the key has bubbled up: the keys
        # behind it had gone to the table). In an input, "/" is a character (SkipAction).
        Binding("slash", "filter", N_("Filter"), priority=True),
        Binding("z", "zoom", N_("Zoom"), show=False),
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
        self.notify(_("z zooms a dashboard pane: this view is already full-screen"), timeout=2)

    def filter_target(self) -> VirtualTable | None:
        focused = self.focused
        if isinstance(focused, VirtualTable):
            return focused
        return next(iter(self.query(VirtualTable)), None)

    def check_typing(self) -> None:
        """A priority key in a text box is the text's: the binding steps aside."""
        if isinstance(self.focused, Input):
            raise SkipAction()

    def action_filter(self) -> None:
        self.check_typing()
        table = self.filter_target()
        bars = self.query(FilterBar)
        if table is None or not bars:
            self.notify(_("nothing to filter here"), timeout=2)
            return
        bars.first().open_for(table)
