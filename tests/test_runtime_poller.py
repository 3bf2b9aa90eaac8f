"""A poller never dies: a bug in any stage of one poll is shown, and the next poll runs."""

from __future__ import annotations

import asyncio

import pytest

from cockpit.app import CockpitApp
from cockpit.runtime import pipeline
from cockpit.runtime.hub import Hub
from cockpit.screens.panes import QueueTable, SourceStatus
from cockpit.store.acks import AckStore
from tests.ui_support import frozen, small_site


def fail_once(monkeypatch, name: str, message: str) -> dict[str, int]:
    """Make ``pipeline.<name>`` raise ``message`` the next ``left`` times it runs."""
    real = getattr(pipeline, name)
    left = {"n": 0}

    def stage(*args):
        if left["n"]:
            left["n"] -= 1
            raise RuntimeError(message)
        return real(*args)

    monkeypatch.setattr(pipeline, name, stage)
    return left


async def until(cond, pilot, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        assert loop.time() < end, "timed out"
        await pilot.pause(0.05)


@pytest.mark.expect_error_log  # the injected bug is logged with its traceback
async def test_rows_that_cannot_be_built_show_the_error_then_the_next_poll_publishes(
    tmp_path, monkeypatch
):
    src = small_site()
    src.interval = 1.0
    broken = fail_once(monkeypatch, "view_stage", "row builder bug")
    app = CockpitApp([src], clock=frozen, acks=AckStore(tmp_path / "s.json"), bell=False)
    async with app.run_test(size=(200, 30)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause()
        table = app.screen.query_one(QueueTable)
        assert table.row_count == 30
        st = app.hub.states["lab"]
        src.jobs = src.jobs[:20]
        broken["n"] = 1
        await until(lambda: st.error is not None, pilot)
        await pilot.pause()
        status = str(app.screen.query_one(SourceStatus).render())
        assert "views failed: RuntimeError: row builder bug" in status
        assert "STALE" in status
        assert table.row_count == 30  # the last good rows stay on screen
        # nobody pressed r: the same poller, still running, polls again and publishes
        await until(lambda: st.error is None, pilot)
        await until(lambda: table.row_count == 20, pilot)
        status = str(app.screen.query_one(SourceStatus).render())
        assert "STALE" not in status and "failed" not in status
        await pilot.press("q")


@pytest.mark.expect_error_log  # the injected bug is logged with its traceback
async def test_a_diagnosis_that_raises_still_shows_fresh_rows_with_a_warning(monkeypatch):
    src = small_site()
    hub = Hub([src], clock=frozen)
    st = hub.states["lab"]
    broken = fail_once(monkeypatch, "diagnose_stage", "rule engine bug")
    broken["n"] = 99  # this whole poll (its evidence round included)
    await hub.poll_once(st)
    assert st.error is None and len(st.rows["jobs"]) == 30
    assert "diagnosis failed: rule engine bug" in st.snapshot.warnings
    assert st.findings == ()
    broken["n"] = 0
    await hub.poll_once(st)  # the next poll diagnoses again
    assert st.snapshot.warnings == ()
    assert any(f.subject.id == "c0" for f in st.findings)  # the drained node is named again


@pytest.mark.expect_error_log  # the injected bug is logged with its traceback
async def test_an_alerting_bug_is_a_warning_on_good_data_not_an_outage():
    class BrokenWatcher:
        def observe(self, *args):
            raise RuntimeError("webhook template bug")

    src = small_site()
    hub = Hub([src], clock=frozen)
    hub.watcher = BrokenWatcher()
    st = hub.states["lab"]
    await hub.poll_once(st)
    assert st.error is None and not st.stale(frozen())
    assert "alerting failed: webhook template bug" in st.snapshot.warnings
    assert hub.first_round.is_set()
