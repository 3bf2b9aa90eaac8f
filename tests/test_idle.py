"""What an idle ``cockpit --demo`` does per poll: no layout pass for what cannot change size,
and a demo ``squeue`` that only re-renders what moves with time, with the same bytes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cockpit.widgets.storage import StorageStrip
from textual.screen import Screen
from textual.widgets import Static

from cockpit.app import CockpitApp
from cockpit.demo.site import DemoSite
from cockpit.demo.slurm import MIN_JOB_AGE
from cockpit.model import FsUsage, Snapshot
from cockpit.store.acks import AckStore
from tests.ui_support import NOW, FakeSource, frozen, small_site

FORMATS = [
    "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R",
    "%i|%M|%L|%N|%r|%S|%e|%%|%5L|%.4M",
    "%A %M%L %b %m %Q",
]


@pytest.fixture(scope="module")
def cluster():
    site = DemoSite(7, frozen)
    site.build()
    return site.slurm


@pytest.mark.parametrize("hours", [-2, 0, 0.5, 3, 7.25])
def test_visible_jobs_are_the_submitted_ones_not_gone(cluster, hours):
    t = int(hours * 3600)
    brute = []
    for j in cluster.jobs:  # every job, as squeue's MinJobAge rule says
        st = j.state_at(t)
        if st is None or (
            st not in ("PENDING", "RUNNING") and j.end is not None and t - j.end > MIN_JOB_AGE
        ):
            continue
        brute.append((j, st))
    assert cluster.visible_jobs(t) == brute
    assert any(st == "RUNNING" for _, st in brute)


@pytest.mark.parametrize("fmt", FORMATS)
def test_running_lines_from_templates_equal_full_renders(cluster, fmt):
    running = 0
    for step in range(0, 4 * 3600, 901):  # the same job at several times: TIME/TIME_LEFT move
        pending = cluster.pending_reasons(step, cluster.visible_jobs(step))
        for j, st in cluster.visible_jobs(step):
            assert cluster._row(fmt, j, st, step, pending) == cluster._render(
                fmt, j, st, step, pending
            )
            running += st == "RUNNING"
    assert running > 100


def test_squeue_time_column_still_moves(cluster):
    a = cluster.squeue(["--noheader", "-t", "RUNNING", "-o", "%i %M"], 3600)[0].splitlines()
    b = cluster.squeue(["--noheader", "-t", "RUNNING", "-o", "%i %M"], 3600 + 15)[0].splitlines()
    assert a and a != b


class StorageSource(FakeSource):
    storage: tuple[FsUsage, ...] = ()

    async def poll(self) -> Snapshot:
        return Snapshot(
            self.name, "slurm", NOW, jobs=self.jobs, nodes=self.nodes, storage=self.storage
        )


def _layouts(monkeypatch) -> list[bool]:
    calls: list[bool] = []
    real = Static.update

    def update(self, content="", *, layout=True):
        if isinstance(self, StorageStrip) or "pane-title" in self.classes:
            calls.append(layout)
        return real(self, content, layout=layout)

    monkeypatch.setattr(Static, "update", update)
    return calls


async def test_a_poll_that_changes_no_title_or_strip_redraws_neither(tmp_path, monkeypatch):
    src = small_site()
    app = CockpitApp([src], clock=frozen, acks=AckStore(tmp_path / "s.json"), bell=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause(0.3)  # start-up settled (the footer's recompose after its bindings)
        calls = _layouts(monkeypatch)
        layouts = []
        real_layout = Screen._refresh_layout

        def full_layout(self, size=None, scroll=False):
            layouts.append(scroll)  # scroll=True: the tables' new virtual size, not a reflow
            return real_layout(self, size, scroll)

        monkeypatch.setattr(Screen, "_refresh_layout", full_layout)
        await app.hub.poll_once(app.hub.states["lab"])
        await pilot.pause()
        assert calls == [] and False not in layouts
        title = app.screen.query_one("#queue-title", Static)
        assert "30" in str(title.render())


async def test_title_changes_are_drawn_without_a_layout_pass(tmp_path, monkeypatch):
    src = small_site()
    app = CockpitApp([src], clock=frozen, acks=AckStore(tmp_path / "s.json"), bell=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause()
        calls = _layouts(monkeypatch)
        src.jobs = src.jobs[:12]
        await app.hub.poll_once(app.hub.states["lab"])
        await pilot.pause()
        assert calls and not any(calls)
        assert " Queue 12" in str(app.screen.query_one("#queue-title", Static).render())


async def test_storage_strip_relayouts_only_when_its_height_changes(tmp_path, monkeypatch):
    src = StorageSource(jobs=small_site().jobs)
    app = CockpitApp([src], clock=frozen, acks=AckStore(tmp_path / "s.json"), bell=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause()
        strip = app.screen.query_one(StorageStrip)
        assert not strip.display  # no storage: hidden
        calls = _layouts(monkeypatch)
        src.storage = (FsUsage("/scratch", 100, 50, 50, 50.0),)
        await app.hub.poll_once(app.hub.states["lab"])
        await pilot.pause()
        assert strip.display and calls == [True]  # shown: one more line
        src.storage = (FsUsage("/scratch", 100, 60, 40, 60.0),)
        await app.hub.poll_once(app.hub.states["lab"])
        await pilot.pause()
        assert calls == [True, False]  # same height, new text
        assert "60%" in str(strip.render())


async def test_a_poll_of_one_source_leaves_the_other_sources_tables_alone(tmp_path, monkeypatch):
    from cockpit.widgets.table import VirtualTable

    from cockpit.demo.site import demo_sources
    from cockpit.screens.panes import QueueTable, TrainingJobTable

    def clock():
        return datetime(
            2026, 11, 29, 20, 45, tzinfo=UTC
        )  # the demo's story (tests/test_ui_snapshots.py)

    app = CockpitApp(
        demo_sources(7, clock=clock), clock=clock, acks=AckStore(tmp_path / "s.json"), bell=False
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await app.hub.first_round.wait()
        while app.screen._applied != app.hub.generation:  # both first polls on screen
            await pilot.pause(0.05)
        reset: list[str] = []
        real = VirtualTable.set_rows
        monkeypatch.setattr(
            VirtualTable,
            "set_rows",
            lambda self, rows: (reset.append(type(self).__name__), real(self, rows)),
        )
        ma = next(st for st in app.hub.states.values() if st.source.kind == "modelarts")
        slurm = next(st for st in app.hub.states.values() if st.source.kind == "slurm")
        await app.hub.poll_once(ma)
        while app.screen._applied != app.hub.generation:
            await pilot.pause(0.05)
        assert reset == [TrainingJobTable.__name__]  # the queue and node tables keep their rows
        await app.hub.poll_once(slurm)
        while app.screen._applied != app.hub.generation:
            await pilot.pause(0.05)
        assert QueueTable.__name__ in reset[1:] and TrainingJobTable.__name__ not in reset[1:]
        assert app.screen.query_one(QueueTable).row_count > 0
        assert app.screen.query_one(TrainingJobTable).row_count > 0
