"""NO_COLOR: critical and stale items stay visible through attributes, not colour."""

from __future__ import annotations

from cockpit.widgets.nocolor import semantic_style
from rich.segment import Segment
from rich.style import Style
from textual.color import Color

from cockpit.screens.incidents import IncidentScreen
from cockpit.screens.panes import IncidentTable

from .test_ui_flows import make_app, ready


def _shown(app, strip) -> list[Segment]:
    """The segments as the terminal gets them: every line filter of the app applied."""
    for f in app.get_line_filters():
        strip = strip.apply_filter(f, Color(0, 0, 0))
    return list(strip)


async def _crit_segment(app, pilot) -> Segment:
    await ready(app, pilot)
    await pilot.press("i")
    assert isinstance(app.screen, IncidentScreen)
    table = app.screen.query_one(IncidentTable)
    # row 2: the cursor row (1) draws in the cursor's style
    assert table.rows[1].cells[0] == "CRIT"
    return next(s for s in _shown(app, table.render_line(2)) if "CRIT" in s.text)


async def test_no_color_critical_cell_is_bold_reverse(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(tmp_path)
    assert app.no_color
    async with app.run_test(size=(120, 40)) as pilot:
        seg = await _crit_segment(app, pilot)
        assert seg.style.bold and seg.style.reverse, seg.style


async def test_with_colour_critical_cell_is_red_not_reversed(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        seg = await _crit_segment(app, pilot)
        assert seg.style.bold and not seg.style.reverse
        assert seg.style.color is not None and seg.style.color.triplet is not None
        r, g, b = seg.style.color.triplet
        assert r > 150 and g < 120  # red


def test_semantic_style_maps_meaning_to_attributes():
    assert semantic_style(Style.parse("bold red")) == Style.parse("bold reverse default")
    assert (
        semantic_style(Style.parse("red")).bold and not semantic_style(Style.parse("red")).reverse
    )
    warn = semantic_style(Style.parse("yellow"))
    assert warn.bold and warn.color.is_default
    stale = semantic_style(Style.parse("bold reverse yellow"))
    assert stale.reverse and stale.bold
    assert semantic_style(Style.parse("cyan")) == Style.parse("cyan")  # left to Textual's greys
