"""The members view's title at 80 columns and narrower: what it names (the affected jobs)
wraps onto a next line instead of being cut after 'affected 4:'."""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.widgets import Static

from cockpit.app import CockpitApp
from cockpit.demo.site import DEMO_START, demo_sources
from cockpit.screens.members import MembersScreen
from cockpit.screens.panes import IncidentTable, QueueTable
from cockpit.store.acks import AckStore

from .test_hostile_text import painted

NOW = DEMO_START + timedelta(minutes=10)


@pytest.mark.parametrize("size", [(80, 24), (40, 12)], ids=["80x24", "40x12"])
async def test_the_affected_jobs_stay_on_screen(tmp_path, size):
    app = CockpitApp(
        demo_sources(7, clock=lambda: NOW), clock=lambda: NOW, acks=AckStore(tmp_path / "s.json")
    )
    async with app.run_test(size=size) as pilot:
        await app.hub.first_round.wait()
        for _ in range(200):
            if app.screen.query(QueueTable) and app.screen.query_one(QueueTable).row_count:
                break
            await pilot.pause(0.02)
        drain = next(i for i in app.hub.incidents if len(i.affected) > 3)
        await pilot.press("i")
        assert app.screen.query_one(IncidentTable).move_to_key(drain.key)
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MembersScreen)
        await pilot.pause()
        shown = " ".join(painted(app.screen.query_one("#members-title", Static)))
    names = [f"job {a.id}" for a in drain.affected[:3]]
    assert all(n in shown for n in names), (names, shown)
