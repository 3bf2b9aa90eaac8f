"""What a week-long soak found leaking: screens and widgets an operator left behind stayed alive
for good once a poll had frozen them (``gcpolicy``), so memory grew with every view opened."""

from __future__ import annotations

import gc
import sys
import weakref

import pytest

from cockpit import gcpolicy
from cockpit.app import CockpitApp
from cockpit.model import Subject
from cockpit.screens.help import HelpScreen
from cockpit.screens.subject import JobScreen
from tests.ui_support import small_site


class _Cycle:
    """Like a widget: it refers to itself, so only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def _thaw(monkeypatch):
    """Nothing frozen leaks from one test into the next, nor the policy's memory of the last
    hand-back (the heap then: another test's, in a full run)."""
    gcpolicy.drain(10)
    gc.unfreeze()
    gc.collect()
    monkeypatch.setattr(gcpolicy, "_heap_base", sys.getallocatedblocks())
    monkeypatch.setattr(gcpolicy, "_last_handback", gcpolicy._settles)
    monkeypatch.setattr(gcpolicy, "_growth", gcpolicy.HANDBACK_GROWTH)
    yield
    gcpolicy.drain(10)
    gc.unfreeze()
    gc.collect()


def test_garbage_waiting_for_the_collector_when_a_poll_lands_is_not_frozen():
    obj = _Cycle()
    ref = weakref.ref(obj)
    del obj  # garbage, but only the cyclic collector can tell
    gcpolicy.settle()  # the UI applied a poll: what is alive is frozen
    gc.collect()
    assert ref() is None


def test_cycles_frozen_alive_are_handed_back_and_collected_once_the_heap_grew(monkeypatch):
    monkeypatch.setattr(gcpolicy, "_heap_base", 0, raising=False)
    monkeypatch.setattr(gcpolicy, "_last_handback", gcpolicy._settles, raising=False)
    obj = _Cycle()
    ref = weakref.ref(obj)
    with gcpolicy.bulk():  # a poll built its data: frozen with everything alive
        pass
    assert gc.get_freeze_count() > 0
    del obj  # dies frozen: no collection sees it
    for _ in range(gcpolicy.UNFREEZE_EVERY):
        with gcpolicy.bulk():
            pass
        gcpolicy.settle()
    assert gcpolicy.drain(10)
    assert ref() is None


async def test_screens_pushed_and_popped_between_polls_are_all_freed_by_the_policy(monkeypatch):
    """Each screen is open while a poll lands (frozen alive) and popped after: the policy's own
    hand-back must free them, with no gc.collect() from outside."""
    monkeypatch.setattr(gcpolicy, "HANDBACK_GROWTH", 0.0, raising=False)
    monkeypatch.setattr(gcpolicy, "_growth", 0.0, raising=False)
    # opening a drill-down is the operator at work: the hand-back would wait QUIET_S after it
    monkeypatch.setattr("cockpit.app.QUIET_S", 0.0)
    src = small_site(30)
    app = CockpitApp([src], bell=False)
    helps: list[weakref.ref] = []
    jobs: list[weakref.ref] = []
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        await pilot.pause()
        st = app.hub.states[src.name]
        for i in range(30):
            screen = HelpScreen()
            helps.append(weakref.ref(screen))
            app.push_screen(screen)
            del screen
            await pilot.pause()
            if i % 3 == 0:  # a poll lands while the screen is open: it is frozen alive
                await app.hub.poll_once(st)
            app.pop_screen()
            await pilot.pause()
        for i in range(5):  # the drill-down, with its workers and log readers
            app.open_subject(Subject("job", src.name, str(1 + i)))
            await pilot.pause()
            jobs.append(weakref.ref(app.screen))
            assert isinstance(app.screen, JobScreen)
            await app.hub.poll_once(st)
            await pilot.pause()
            app.pop_screen()
            await pilot.pause()
        await pilot.pause(0.2)
        for _ in range(gcpolicy.UNFREEZE_EVERY):  # the operator on the dashboard, polls landing
            await app.hub.poll_once(st)
        # a wait, not a timing: the reaper frees each poll's old data after a grace and the
        # hand-back walks the whole test process (after a full run's tests: seconds)
        assert gcpolicy.drain(60)
        alive_help = sum(r() is not None for r in helps)
        # the one drill-down kept for jobs (CockpitApp._subject_screen) is alive, and only it
        alive_jobs = {id(r()) for r in jobs if r() is not None}
        await app.hub.close()
    assert alive_help == 0, f"{alive_help} of 30 popped help screens still alive"
    assert len(alive_jobs) <= 1, f"{len(alive_jobs)} popped job screens still alive"


def test_the_demo_keeps_one_copy_of_a_log_however_many_polls_read_it():
    """The simulator's memory must not grow with the run: a log served at a later instant
    replaces the earlier copy (the slurmctld log is the whole run so far)."""
    from datetime import timedelta

    from cockpit.demo.site import DEMO_START, SLURMCTLD_LOG, DemoSite

    now = [DEMO_START]
    site = DemoSite(7, clock=lambda: now[0])
    for minute in range(100):
        now[0] = DEMO_START + timedelta(minutes=minute)
        f = site.log_file(SLURMCTLD_LOG, site.now_s())
        assert f is not None and f.read(0, 10)
        assert site.log_file(SLURMCTLD_LOG, site.now_s()) is f  # the poll's second read
    cluster = site.slurm
    assert len(cluster._cache) == 1
    assert cluster._cached == f.size


def _grow_heap_and_settle(monkeypatch, base: int) -> weakref.ref:
    """A cycle frozen alive, then dead; UNFREEZE_EVERY polls land with the heap at
    ``base``'s growth: returns a weakref to the dead cycle."""
    monkeypatch.setattr(gcpolicy, "_heap_base", base, raising=False)
    monkeypatch.setattr(gcpolicy, "_last_handback", gcpolicy._settles, raising=False)
    obj = _Cycle()
    ref = weakref.ref(obj)
    with gcpolicy.bulk():
        pass
    del obj
    for _ in range(gcpolicy.UNFREEZE_EVERY):
        gcpolicy.settle()
    gcpolicy.drain(10)
    return ref


def test_the_full_collection_waits_while_the_operator_is_at_the_keys(monkeypatch):
    """The hand-back's full collection holds the GIL (a pause the size of the heap): while keys
    arrive it waits, unless the heap has doubled."""
    heap = sys.getallocatedblocks()
    busy = [True]
    gcpolicy.quiet_when(lambda: not busy[0])
    try:
        # grown by ~1/0.7 - 1 = 43 %: past the hand-back's growth, short of doubling
        ref = _grow_heap_and_settle(monkeypatch, int(heap * 0.7))
        assert ref() is not None  # typing: not collected yet
        busy[0] = False
        for _ in range(gcpolicy.UNFREEZE_EVERY):
            gcpolicy.settle()
        gcpolicy.drain(10)
        assert ref() is None  # quiet now: collected
    finally:
        gcpolicy.quiet_when(None)


def test_a_doubled_heap_still_waits_while_the_operator_types(monkeypatch):
    """An operator changing views every few seconds doubles the frozen heap within a simulated
    day: collecting it then stopped the event loop for 0.8-1.3 s each day of the soak."""
    heap = sys.getallocatedblocks()
    gcpolicy.quiet_when(lambda: False)
    try:
        ref = _grow_heap_and_settle(monkeypatch, int(heap * 0.4))  # grown by 150 %
        assert ref() is not None
    finally:
        gcpolicy.quiet_when(None)


def test_a_heap_grown_fourfold_is_collected_even_while_the_operator_types(monkeypatch):
    heap = sys.getallocatedblocks()
    gcpolicy.quiet_when(lambda: False)
    try:
        ref = _grow_heap_and_settle(monkeypatch, int(heap * 0.2))  # grown by 400 %
        assert ref() is None
    finally:
        gcpolicy.quiet_when(None)


def test_the_first_look_at_the_heap_is_its_base_not_a_pause(monkeypatch):
    """Before, nothing measured yet read as 'grown': the first hand-back came UNFREEZE_EVERY
    polls after start, the operator at the keys or not."""
    monkeypatch.setattr(gcpolicy, "_heap_base", None, raising=False)
    monkeypatch.setattr(gcpolicy, "_last_handback", gcpolicy._settles, raising=False)
    gcpolicy.quiet_when(lambda: False)
    try:
        obj = _Cycle()
        ref = weakref.ref(obj)
        with gcpolicy.bulk():
            pass
        del obj
        for _ in range(gcpolicy.UNFREEZE_EVERY):
            gcpolicy.settle()
        gcpolicy.drain(10)
        assert ref() is not None  # no full collection while the operator types
        assert gcpolicy._heap_base == pytest.approx(sys.getallocatedblocks(), rel=0.2)
    finally:
        gcpolicy.quiet_when(None)


def test_a_hand_back_that_found_little_garbage_makes_the_next_one_wait_longer(monkeypatch):
    """Jobs and incidents grow the live heap too: collecting it found nothing to free and
    stopped the UI for a second at each 25 % of growth. Twice the growth is awaited after a
    hand-back that freed under 10 % of the heap, the usual growth again after a useful one."""
    assert gcpolicy._growth == gcpolicy.HANDBACK_GROWTH
    gcpolicy.release(gcpolicy._COLLECT)  # nothing much to free
    assert gcpolicy.drain(10)
    assert gcpolicy._growth == 2 * gcpolicy.HANDBACK_GROWTH
    gcpolicy.release(gcpolicy._COLLECT)
    assert gcpolicy.drain(10)
    assert gcpolicy._growth == min(4 * gcpolicy.HANDBACK_GROWTH, gcpolicy.FORCE_GROWTH)
    junk = [_Cycle() for _ in range(sys.getallocatedblocks() // 2)]  # a heap of garbage, frozen
    gc.freeze()
    del junk
    gcpolicy.release(gcpolicy._COLLECT)
    assert gcpolicy.drain(30)
    assert gcpolicy._growth == gcpolicy.HANDBACK_GROWTH
