"""What an operator's view changes leave in gcpolicy's frozen set (issue #32, the week in tmux).

The policy freezes what is alive at each poll; a cycle frozen alive that dies later is only freed
by a hand-back, a full collection that stops the UI for 0.3-1.5 s at 10k jobs. So the UI must
not make such cycles: here, Textual's virtual style nodes of component classes, made anew at
every restyle (each screen or focus change), and what restyling still shows on screen."""

from __future__ import annotations

import gc
import re

import pytest
from cockpit.widgets import component_styles
from rich.text import Text
from textual.app import App, ComposeResult
from textual.color import Color
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Button

from cockpit import gcpolicy
from cockpit.app import CockpitApp
from cockpit.model import Subject
from tests.ui_support import small_site


@pytest.fixture(autouse=True)
def _thaw(monkeypatch):
    """Nothing frozen leaks between tests; no hand-back runs inside one (what is counted is the
    garbage the frozen set holds, not what the policy would hand back meanwhile)."""
    monkeypatch.setattr(gcpolicy, "UNFREEZE_EVERY", 10**9)
    gcpolicy.drain(10)
    gc.unfreeze()
    gc.collect()
    yield
    component_styles.install()
    gcpolicy.drain(10)
    gc.unfreeze()
    gc.collect()


def _frozen_garbage() -> list[object]:
    """The cycles that died frozen: what a hand-back would find."""
    gc.collect()  # what is not frozen is not the question
    gc.unfreeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


async def _view_changes(rounds: int) -> list[object]:
    """Incidents, alerts, a drill-down, the dashboard: a poll lands in each view (what is alive
    then is frozen), then the operator moves on."""
    src = small_site(30)
    app = CockpitApp([src], bell=False)
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        await pilot.pause()
        st = app.hub.states[src.name]
        for i in range(rounds):
            for key in ("i", "A"):
                await pilot.press(key)
                await pilot.pause()
                await app.hub.poll_once(st)
            app.open_subject(Subject("job", src.name, str(1 + i % 5)))
            await pilot.pause()
            await app.hub.poll_once(st)
            while len(app.screen_stack) > 1:
                app.pop_screen()
            await pilot.pause()
            await pilot.press("j")
            await app.hub.poll_once(st)
        assert gcpolicy.drain(30)
        garbage = _frozen_garbage()
        await app.hub.close()
    return garbage


def _virtual_style_nodes(objs: list[object]) -> int:
    return sum(1 for o in objs if type(o) is DOMNode)  # widgets and screens are subclasses


async def test_view_changes_leave_no_style_node_in_the_frozen_set():
    garbage = await _view_changes(8)
    assert _virtual_style_nodes(garbage) == 0, f"{len(garbage)} objects of frozen garbage"


async def test_textuals_own_restyle_leaves_style_nodes_frozen():
    """The same view changes with Textual's restyle: the count above can see them."""
    component_styles.uninstall()
    garbage = await _view_changes(8)
    assert _virtual_style_nodes(garbage) >= 8


class _Mark(Widget, can_focus=True):
    """A widget drawn in a component class's colour, which its focus changes."""

    COMPONENT_CLASSES = {"mark--text"}
    DEFAULT_CSS = """
    _Mark { height: 1; }
    _Mark > .mark--text { color: red; }
    _Mark:focus > .mark--text { color: blue; }
    """

    def render(self) -> Text:
        return Text("mark", style=self.get_component_rich_style("mark--text"))


class _Two(App):
    def compose(self) -> ComposeResult:
        yield _Mark()
        yield Button("other")


async def test_a_component_colour_follows_focus_however_often_it_moves():
    """The kept style node is restyled, and the widget redrawn, at every focus change."""
    app = _Two()
    blue, red = (Color.parse(c).hex.lower() for c in ("blue", "red"))
    async with app.run_test(headless=True, size=(40, 6)) as pilot:
        mark = app.query_one(_Mark)
        shown = []
        for _ in range(10):
            mark.focus()
            await pilot.pause()
            shown.append(_colours(app.export_screenshot()) & {blue, red})
            app.query_one(Button).focus()
            await pilot.pause()
            shown.append(_colours(app.export_screenshot()) & {blue, red})
    assert shown == [{blue}, {red}] * 10, shown


def _colours(svg: str) -> set[str]:
    return {m.lower() for m in re.findall(r"#[0-9a-fA-F]{6}", svg)}
