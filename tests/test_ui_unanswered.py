"""A cluster that never answered is unknown, not healthy: its empty panes say so instead of
"no jobs" / "no nodes" under a STALE status line (a new user read that as all clear)."""

from __future__ import annotations

from cockpit.app import CockpitApp
from cockpit.model import SourceError
from cockpit.screens.panes import NodeTable, QueueTable
from cockpit.store.acks import AckStore

from .test_hostile_text import painted
from .test_ui_flows import until
from .ui_support import FakeSource, small_site


async def test_a_cluster_that_never_answered_is_not_shown_as_empty(tmp_path):
    src = FakeSource("lab")
    src.fail = SourceError("unreachable", "ssh: connect to 127.0.0.1 port 2: Connection refused")
    app = CockpitApp([src], acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        await app.hub.first_round.wait()
        queue = app.screen.query_one(QueueTable)
        await until(pilot, lambda: "no answer" in "\n".join(painted(queue)), "the queue's note")
        for table in (queue, app.screen.query_one(NodeTable)):
            shown = "\n".join(painted(table))
            assert "not all clear" in shown and "no jobs" not in shown and "no nodes" not in shown


async def test_a_cluster_that_answered_with_nothing_says_no_jobs(tmp_path):
    src = small_site(n_jobs=0)
    app = CockpitApp([src], acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        await app.hub.first_round.wait()
        queue = app.screen.query_one(QueueTable)
        await until(pilot, lambda: "no jobs" in "\n".join(painted(queue)), "no jobs")
        assert "no answer" not in "\n".join(painted(queue))
