"""``NO_COLOR``: severity and state keep their meaning without colour.

Textual honours ``NO_COLOR`` by turning every colour into a grey (``Monochrome``), which
leaves a critical ``bold red`` cell as dark grey on darker grey. Cockpit styles name
colours by meaning (red = critical / dead / down, yellow = warning / pending / stale), so
this filter, run before Textual's own, turns those colours into attributes the terminal
shows without colour: ``bold red`` (critical) -> bold reverse, ``red`` -> bold,
``yellow`` -> bold; any ``reverse`` is kept. Theme colours (true colour) are left alone.
"""

from __future__ import annotations

from functools import lru_cache

from rich.color import ColorType
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import LineFilter

_RED = {1, 9}  # red, bright_red
_YELLOW = {3, 11}  # yellow, bright_yellow
_DEFAULT = Style(color="default")


@lru_cache(maxsize=1024)
def semantic_style(style: Style) -> Style:
    """``style`` with a loud ANSI foreground replaced by attributes (see the module doc)."""
    color = style.color
    if (
        color is None
        or color.type not in (ColorType.STANDARD, ColorType.WINDOWS)
        or color.number is None
    ):
        return style
    if color.number in _RED:
        return style + _DEFAULT + Style(bold=True, reverse=bool(style.bold or style.reverse))
    if color.number in _YELLOW:
        return style + _DEFAULT + Style(bold=True)
    return style


class SemanticNoColor(LineFilter):
    """Red/yellow foregrounds become bold reverse / bold (before colours are greyed)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            Segment(text, None if style is None else semantic_style(style), control)
            for text, style, control in segments
        ]


SEMANTIC_NO_COLOR = SemanticNoColor()
