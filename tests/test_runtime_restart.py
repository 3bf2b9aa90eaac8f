"""``r`` brings back a poller whose worker ended (cancelled, or killed by what its own last
defence let through): the source polls again instead of staying STALE for ever."""

from __future__ import annotations

import asyncio

from cockpit.app import CockpitApp
from cockpit.store.acks import AckStore
from tests.ui_support import frozen, small_site


async def until(cond, pilot, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        assert loop.time() < end, "timed out"
        await pilot.pause(0.05)


async def test_r_restarts_a_poller_whose_worker_was_cancelled(tmp_path):
    src = small_site()
    src.interval = 3600.0  # only r polls again within the test
    app = CockpitApp([src], clock=frozen, acks=AckStore(tmp_path / "s.json"), bell=False)
    async with app.run_test(size=(200, 30)) as pilot:
        await app.hub.first_round.wait()
        st = app.hub.states["lab"]
        worker = next(w for w in app.workers if w.name == "poll:lab")
        worker.cancel()
        await until(lambda: worker.is_finished, pilot)
        assert app.hub.stopped() == ["lab"]
        polls = st.polls
        await pilot.press("r")
        await until(lambda: st.polls > polls, pilot)
        assert app.hub.stopped() == []
        # and the restarted loop is the one r wakes from now on
        polls = st.polls
        await pilot.press("r")
        await until(lambda: st.polls > polls, pilot)
        await pilot.press("q")


async def test_r_restarts_a_poller_that_crashed(tmp_path, monkeypatch):
    src = small_site()
    src.interval = 3600.0
    app = CockpitApp([src], clock=frozen, acks=AckStore(tmp_path / "s.json"), bell=False)
    async with app.run_test(size=(200, 30)) as pilot:
        await app.hub.first_round.wait()
        st = app.hub.states["lab"]
        poller = app.hub.pollers["lab"]
        wake = poller.wake

        class BrokenEvent(asyncio.Event):  # fails outside every stage poll_once guards
            def clear(self) -> None:
                raise RuntimeError("poller bug")

        poller.wake = BrokenEvent()
        wake.set()  # the loop waits on the event it had
        await until(lambda: app.hub.stopped() == ["lab"], pilot)
        poller.wake = wake
        polls = st.polls
        await pilot.press("r")
        await until(lambda: st.polls > polls, pilot)
        await pilot.press("q")
