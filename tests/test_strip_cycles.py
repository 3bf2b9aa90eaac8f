"""A rendered line must not refer to itself (issue #32): Textual's ``Strip.divide`` and
``Strip.crop_extend`` cached ``self`` in the strip's own caches, so every line as wide as its
widget was a cycle only a full collection could free, and the polls froze them (most of the
soak's frozen garbage once the screens were kept)."""

from __future__ import annotations

import gc

from rich.segment import Segment
from textual.strip import Strip

import cockpit.app  # noqa: F401  (installs the fix, as the TUI does)


def _cycles_left_by(use) -> int:
    """Objects only the cyclic collector could free after ``use(strip)`` and dropping it."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        strip = Strip([Segment("cn013 DRAIN "), Segment("Kill task failed")], 28)
        use(strip)
        del strip
        return gc.collect()
    finally:
        if was:
            gc.enable()


def test_a_line_divided_at_its_own_end_is_freed_by_reference_counting():
    assert _cycles_left_by(lambda s: s.divide([28])) == 0
    assert _cycles_left_by(lambda s: s.divide([40, 50])) == 0  # cuts past the end: the same


def test_a_line_cropped_and_extended_to_itself_is_freed_by_reference_counting():
    assert _cycles_left_by(lambda s: s.crop_extend(0, 28, None)) == 0


def test_the_answers_are_those_of_textual():
    strip = Strip([Segment("cn013 DRAIN "), Segment("Kill task failed")], 28)
    assert strip.divide([28]) == [strip]
    assert [s.text for s in strip.divide([5, 28])] == ["cn013", " DRAIN Kill task failed"]
    assert strip.crop_extend(0, 28, None) is strip
    assert strip.crop_extend(6, 30, None).text == "DRAIN Kill task failed  "
    assert strip.crop_extend(6, 30, None) is strip.crop_extend(6, 30, None)  # still cached
