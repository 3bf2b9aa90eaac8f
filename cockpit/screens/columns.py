"""``c`` on a table: choose its columns (space toggles, enter keeps, esc cancels); the choice
is remembered per pane across sessions (:mod:`cockpit.prefs`). The first column names the row
(job id, node, training job name): it is listed as fixed and cannot be turned off."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static

from cockpit.i18n import N_, _
from cockpit.widgets.table import VirtualTable


class ColumnChooser(ModalScreen["list[str] | None"]):
    """Returns the labels to hide, or None (cancelled)."""

    BINDINGS = [
        Binding("escape", "dismiss_none", N_("Cancel")),
        Binding("enter", "keep", N_("Keep"), priority=True),  # before SelectionList's own enter
        Binding("j", "move(1)", N_("Down"), show=False),
        Binding("k", "move(-1)", N_("Up"), show=False),
    ]
    DEFAULT_CSS = """
    ColumnChooser { align: center middle; }
    ColumnChooser > Vertical { width: 48; max-width: 100%; height: auto; border: round $accent;
                               background: $surface; padding: 0 1; }
    ColumnChooser SelectionList { height: auto; max-height: 16; }
    """

    def __init__(self, table: VirtualTable, title: str) -> None:
        super().__init__()
        self.table, self.title_text = table, title

    @property
    def key_label(self) -> str:
        """The column that names each row: always shown."""
        return self.table.columns[0].label

    def _prompt(self, label: str, drawn: frozenset[str]) -> str:
        if label == self.key_label:
            return _(label) + "  " + _("(fixed: names the row)")
        if label not in self.table.hidden and label not in drawn:
            # chosen, yet not drawn: the terminal is too narrow, not the operator's choice
            return _(label) + "  " + _("(no room at this width)")
        return _(label)

    def compose(self) -> ComposeResult:
        key = self.key_label
        drawn = self.table.drawn_labels
        with Vertical():
            yield Static(Text(_("Columns of {pane}").format(pane=self.title_text), style="bold"))
            yield SelectionList[str](
                *[
                    (
                        self._prompt(c.label, drawn),
                        c.label,
                        c.label == key or c.label not in self.table.hidden,
                    )
                    for c in self.table.columns
                ]
            )
            yield Static(Text(_("space: show/hide   enter: keep   esc: cancel"), style="dim"))

    def on_mount(self) -> None:
        self.query_one(SelectionList).focus()

    def on_selection_list_selection_toggled(self, event: SelectionList.SelectionToggled) -> None:
        if event.selection.value == self.key_label:
            event.selection_list.select(self.key_label)  # stays on
            self.notify(
                _("{column} names each row: it is always shown").format(column=_(self.key_label)),
                timeout=3,
                markup=False,
            )

    def action_move(self, step: int) -> None:
        selection = self.query_one(SelectionList)
        if step > 0:
            selection.action_cursor_down()
        else:
            selection.action_cursor_up()

    def action_keep(self) -> None:
        shown = set(self.query_one(SelectionList).selected) | {self.key_label}
        self.dismiss([c.label for c in self.table.columns if c.label not in shown])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
