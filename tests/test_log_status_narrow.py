"""The log's status line in a narrow pane (40 columns, a split tmux window): what the red
line is ("here: missing_shared_library") stays whole, in English and in Chinese; the
counts give way before it does ('here:' with nothing after it said nothing)."""

from __future__ import annotations

import pytest

from cockpit import i18n

from .test_hostile_text import painted
from .test_ui_flows import make_app, ready, until


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_red_lines_label_stays_whole_at_40_columns(tmp_path, lang):
    from textual.widgets import Static

    from cockpit.model import Subject

    from .test_ui_snapshots import _settle

    i18n.set_language(lang)
    try:
        app = make_app(tmp_path)
        async with app.run_test(size=(40, 12)) as pilot:
            await ready(app, pilot)
            app.open_subject(Subject("job", "demo-hpc", "48105"))
            await until(pilot, lambda: bool(getattr(app.screen, "logs", None)), "48105's logs")
            await pilot.press("l")
            await _settle(pilot, lambda a: getattr(a.screen.query("LogView").first(), "_done", 0))
            await pilot.pause()
            status = painted(app.screen.query_one("#log-status", Static))[0].rstrip()
    finally:
        i18n.set_language("en")
    assert status.endswith("missing_shared_library"), status
    assert "2/3" in status.split()[0] + status.split()[1], status  # where the cursor is, first
