"""Textual's rendered lines without a reference to themselves (issue #32, the week in tmux).

``Strip.divide`` returns ``[self]`` when the one cut is the strip's end (a line as wide as its
widget: most of them), and ``Strip.crop_extend`` returns ``self`` when nothing is cropped or
added; both keep the answer in the strip's own cache. The strip then refers to itself, so
when a widget drops the line, reference counting cannot free it: only a full collection can,
with its seven caches, ~10 objects a line. The cockpit freezes what is alive at each poll
(:mod:`cockpit.gcpolicy`), so these lines were frozen garbage, most of what the leak hunt
found after the screens were kept (40k caches in 40 view changes), and the reason the
collector's pauses came back. Here the self answer is returned and not cached (it costs
nothing to give again); every other answer is cached as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.style import Style
from textual.strip import Strip

_divide = Strip.divide
_crop_extend = Strip.crop_extend


def _divide_no_self(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    cell_length = self.cell_length
    kept = [cut for cut in cuts if cut <= cell_length]
    if kept == [cell_length]:
        return [self]
    return _divide(self, kept)


def _crop_extend_no_self(self: Strip, start: int, end: int, style: Style | None) -> Strip:
    strip = _crop_extend(self, start, end, style)
    if strip is self:
        self._crop_extend_cache._cache.pop((start, end, style), None)
    return strip


def install() -> None:
    """Patch ``Strip`` (idempotent). Called as the app module is imported."""
    Strip.divide = _divide_no_self  # type: ignore[method-assign]
    Strip.crop_extend = _crop_extend_no_self  # type: ignore[method-assign]
