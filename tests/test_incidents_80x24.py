"""At 80x24 the incident view shows who acknowledged the incident under the cursor, and when,
without scrolling: it used to be the detail's last line, below a wrapped remedy and the
affected list, cut off by the detail's height."""

from __future__ import annotations

from textual.geometry import Region

from cockpit.app import CockpitApp
from cockpit.demo.site import demo_sources
from cockpit.screens.incidents import IncidentScreen
from cockpit.screens.panes import IncidentTable
from cockpit.store import open_store

from .test_ui_flows import frozen, until


def visible(widget) -> str:
    """The text the widget shows on screen (its own height, no scrolling)."""
    strips = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


async def test_who_acked_and_when_is_on_screen_at_80x24(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_OPERATOR", "ana")
    store = open_store(f"sqlite:///{tmp_path}/c.db")
    app = CockpitApp(demo_sources(7, clock=frozen), clock=frozen, bell=False, store=store)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await app.hub.first_round.wait()
            await until(pilot, lambda: app.hub.open_incidents, "incidents", 500)
            await pilot.press("i")
            await until(pilot, lambda: isinstance(app.screen, IncidentScreen), "the view")
            table = app.screen.query_one(IncidentTable)
            await until(pilot, lambda: table.row_count > 0, "incident rows")
            key = table.cursor_key
            await pilot.press("a")
            await pilot.pause(0.2)
            for ch in "on it":
                await pilot.press("space" if ch == " " else ch)
            await pilot.press("enter")
            await until(pilot, lambda: app.acks.ack_of(key) is not None, "the ack")
            await pilot.pause(0.2)
            # an acknowledged incident ranks below the open ones: the operator follows it
            assert table.move_to_key(key)
            await pilot.pause(0.2)
            assert table.cursor_key == key
            detail = app.screen.query_one("#incident-detail")
            shown = visible(detail)
            assert "acked by ana" in shown and "ago: on it" in shown, shown
            # the incident's own title is still there, right under it
            inc = app.hub.incident_for(key)
            assert inc.title[:30] in shown.replace("\n", " "), shown
    finally:
        store.close()
