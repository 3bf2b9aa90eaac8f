"""c on a pane: choose its columns; the choice is kept for the next session."""

from __future__ import annotations

from cockpit.prefs import Prefs
from cockpit.screens.columns import ColumnChooser
from cockpit.screens.panes import QueueTable

from .test_ui_flows import make_app, ready


def header(table) -> str:
    return "".join(seg.text for seg in table.render_line(0))


async def test_hide_a_column_and_find_it_hidden_next_session(tmp_path):
    path = tmp_path / "ui.json"
    app = make_app(tmp_path, prefs=Prefs(path))
    async with app.run_test(size=(160, 30)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        queue.focus()
        assert "USER" in header(queue)
        await pilot.press("c")
        assert isinstance(app.screen, ColumnChooser)
        labels = [c.label for c in queue.columns]
        for _ in range(labels.index("USER")):
            await pilot.press("down")
        await pilot.press("space", "enter")
        await pilot.pause()
        assert "USER" not in header(queue) and "JOBID" in header(queue)
        # the filter still finds rows by the hidden column
        queue.set_filter("alice")
        await pilot.pause()
        assert queue.row_count > 0
    again = make_app(tmp_path, prefs=Prefs(path))
    async with again.run_test(size=(160, 30)) as pilot:
        await ready(again, pilot)
        assert "USER" not in header(again.screen.query_one(QueueTable))


async def test_esc_keeps_the_columns_and_a_broken_prefs_file_is_ignored(tmp_path):
    path = tmp_path / "ui.json"
    path.write_text("{not json")
    app = make_app(tmp_path, prefs=Prefs(path))
    async with app.run_test(size=(160, 30)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        queue.focus()
        before = header(queue)
        await pilot.press("c", "space", "escape")
        await pilot.pause()
        assert header(queue) == before
