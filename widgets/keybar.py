"""The screen's keys on the bottom line, drawn as one line of text.

Textual's ``Footer`` is a container that recomposes one ``FooterKey`` widget per key on every
bindings change (each focus move). Each ``FooterKey`` also builds two virtual style nodes,
and those are reference cycles. A poll freezes whatever is alive when it lands
(``cockpit.gcpolicy``), so the keys it froze become garbage only a full collection frees. In
the week-long soak that was most of the frozen garbage: 524 keys and 1,511 style nodes in 40
view changes. ``KeyBar`` is one widget that repaints its line instead. It shows the same
keys (``Binding.show``, first binding per action, disabled ones dim, the command palette's
key at the right), and a click on a key presses it, as in the footer.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.color import Color, ColorParseError
from textual.screen import Screen
from textual.widget import Widget

from cockpit.i18n import N_, _

from ._safe import clean

_SEP = "  "
# Textual's own binding for the command palette (App.COMMAND_PALETTE_BINDING) is described
# "palette": in the catalogue, so the bar draws it in the language spoken like the others
_TEXTUAL_DESCRIPTIONS = (N_("palette"),)


class KeyBar(Widget, can_focus=False):
    """One line: ``key description`` for each key the focused screen offers."""

    ALLOW_SELECT = False
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        width: 1fr;
        background: $footer-background;
        color: $footer-description-foreground;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._spans: list[tuple[int, int, str, bool]] = []  # start, end, key, enabled
        self._key_style: tuple[str, Style] | None = None  # per theme

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        if self.is_attached and screen is self.screen:
            self.refresh()

    def _style_of_keys(self) -> Style:
        theme = self.app.theme
        if self._key_style is None or self._key_style[0] != theme:
            value = self.app.get_css_variables().get("footer-key-foreground", "")
            try:
                color = Color.parse(value).rich_color if value else None
            except ColorParseError:  # a theme's value Textual's parser does not take: plain bold
                color = None
            self._key_style = (theme, Style(bold=True, color=color))
        return self._key_style[1]

    def _items(self) -> tuple[list[tuple[str, str, str, bool]], tuple[str, str, str, bool] | None]:
        """(key, shown key, description, enabled) for each shown action; the palette's apart."""
        app = self.app
        palette_key = app.COMMAND_PALETTE_BINDING if app.ENABLE_COMMAND_PALETTE else None
        items: list[tuple[str, str, str, bool]] = []
        palette = None
        actions: set[str] = set()
        for key, (_node, binding, enabled, _tip) in self.screen.active_bindings.items():
            if key == palette_key:
                palette = (binding.key, app.get_key_display(binding), binding.description, enabled)
                continue
            if not binding.show or binding.action in actions:
                continue
            actions.add(binding.action)
            items.append((binding.key, app.get_key_display(binding), binding.description, enabled))
        return items, palette

    def render(self) -> Text:
        key_style = self._style_of_keys()
        items, palette = self._items()
        line = Text(no_wrap=True, overflow="crop", end="")
        spans: list[tuple[int, int, str, bool]] = []
        # spans in cells (a click's x), styles in characters: a CJK description is two cells
        # a character
        for key, shown, description, enabled in items:
            if len(line):
                line.append(_SEP)
            start, at = len(line), line.cell_len
            line.append(f" {clean(shown)} ", key_style)
            if description:
                line.append(clean(_(description)))
            if not enabled:
                line.stylize("dim", start)
            spans.append((at, line.cell_len, key, enabled))
        if palette is not None:
            key, shown, description, enabled = palette
            tail = Text.assemble((f" {clean(shown)} ", key_style), clean(_(description)), " ")
            room = self.size.width - line.cell_len - tail.cell_len
            if room >= 1:  # right-aligned, as the footer docks it; dropped when it does not fit
                line.append(" " * room)
                at = line.cell_len
                line.append_text(tail)
                spans.append((at, line.cell_len, key, enabled))
        self._spans = spans
        return line

    def key_at(self, x: int) -> tuple[str, bool] | None:
        """The key drawn at column ``x`` and whether it is enabled (None: between keys)."""
        for start, end, key, enabled in self._spans:
            if start <= x < end:
                return key, enabled
        return None

    def on_mouse_down(self, event: events.MouseDown) -> None:
        hit = self.key_at(event.x)
        if hit is None:
            return
        key, enabled = hit
        if enabled:
            self.app.simulate_key(key)
        else:
            self.app.bell()
