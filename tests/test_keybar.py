"""The bottom line of keys: what it offers, that a click presses a key, and that moving focus
makes no new widgets (Textual's Footer rebuilt one per key on every focus move: reference
cycles a poll's freeze kept from the collector for days, ``tests/test_soak_leaks.py``)."""

from __future__ import annotations

import gc
import weakref

from cockpit.widgets.keybar import KeyBar
from textual.dom import DOMNode

from cockpit.app import CockpitApp
from cockpit.screens.incidents import IncidentScreen
from tests.ui_support import small_site


def _line(app: CockpitApp) -> str:
    bar = app.screen.query_one(KeyBar)
    return str(bar.render())


async def test_the_key_line_shows_each_screens_own_keys():
    app = CockpitApp([small_site(5)], bell=False)
    async with app.run_test(headless=True, size=(120, 30)) as pilot:
        await pilot.pause()
        line = _line(app)
        assert "i Incidents" in line and "/ Filter" in line and "? Help" in line
        assert "^p" in line  # the command palette, at the right
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, IncidentScreen)
        assert "esc" in _line(app)


async def test_a_click_on_a_key_presses_it():
    app = CockpitApp([small_site(5)], bell=False)
    async with app.run_test(headless=True, size=(120, 30)) as pilot:
        await pilot.pause()
        bar = app.screen.query_one(KeyBar)
        line = str(bar.render())
        x = line.index(" i Incidents") + 1
        assert bar.key_at(x) == ("i", True)
        assert bar.key_at(line.index("Incidents") + len("Incidents") + 1) is None  # between keys
        await pilot.click(KeyBar, offset=(x, 0))
        await pilot.pause()
        assert isinstance(app.screen, IncidentScreen)


async def test_moving_focus_between_panes_makes_no_widgets():
    app = CockpitApp([small_site(5)], bell=False)
    async with app.run_test(headless=True, size=(120, 30)) as pilot:
        await pilot.pause()
        made: list[weakref.ref] = []
        original = DOMNode.__init__

        def counting(self, *a, **kw):
            made.append(weakref.ref(self))
            original(self, *a, **kw)

        DOMNode.__init__ = counting  # type: ignore[method-assign]
        try:
            for _ in range(6):
                await pilot.press("tab")
                await pilot.pause()
        finally:
            DOMNode.__init__ = original  # type: ignore[method-assign]
        gc.collect()
        bars = [n for n in made if isinstance(n(), KeyBar)]
        assert not bars
        # Textual still makes style nodes for a restyled widget with component classes (the
        # two tables: 12 a move); Textual's footer made 105 a move (629 for these 6)
        assert len(made) <= 6 * 15, f"{len(made)} DOM nodes made by 6 focus moves"


async def test_the_logs_key_line_calls_slash_search():
    from cockpit.screens.log import LogScreen

    app = CockpitApp([small_site(5)], bell=False)
    async with app.run_test(headless=True, size=(120, 30)) as pilot:
        await pilot.pause()
        app.push_screen(LogScreen("job 1", [], 0))
        await pilot.pause()
        line = _line(app)
        assert "/ Search" in line and "/ Filter" not in line
