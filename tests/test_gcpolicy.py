"""GC policy: frozen snapshots are still freed when the hub replaces them (no leak)."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import tracemalloc
import weakref
from datetime import UTC, datetime

from cockpit import gcpolicy
from cockpit.model import Artifacts, SlurmJob, Snapshot
from cockpit.runtime.hub import Hub
from tests.ui_support import BareSource

NOW = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
BIG = 20 * 2**20  # one 20 MiB job comment per snapshot: easy to see in tracemalloc


class Source(BareSource):
    kind = "slurm"
    name = "c1"
    interval = 3600.0

    def __init__(self) -> None:
        self.n = 0

    async def poll(self) -> Snapshot:
        self.n += 1
        job = SlurmJob("1", "train", "alice", "gpu", "RUNNING", "None", comment=str(self.n) * BIG)
        return Snapshot("c1", "slurm", NOW, jobs=(job,))

    async def artifacts(self, subject, snapshot) -> Artifacts:
        return Artifacts()

    async def close(self) -> None:
        return None


def _drain() -> None:
    assert gcpolicy.drain(10)


def test_old_snapshot_is_freed_after_two_new_ones_despite_freeze() -> None:
    async def main() -> list[int]:
        hub = Hub([Source()], clock=lambda: NOW)
        st = hub.states["c1"]
        sizes = []
        for _ in range(4):
            await hub.poll_once(st)
            _drain()
            sizes.append(tracemalloc.get_traced_memory()[0])
        assert gc.get_freeze_count() > 0  # the policy really froze the live objects
        return sizes

    tracemalloc.start()
    try:
        sizes = asyncio.run(main())
    finally:
        tracemalloc.stop()
        gc.unfreeze()
    # one snapshot (20 MiB) alive at a time: memory stays flat, it does not grow by 20 MiB a poll
    assert max(sizes) < 2 * BIG, [s // 2**20 for s in sizes]
    assert sizes[-1] - sizes[0] < BIG // 2, [s // 2**20 for s in sizes]


def test_bulk_restores_gc_state_when_nested() -> None:
    assert gc.isenabled()
    with gcpolicy.bulk():
        with gcpolicy.bulk():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


class _Item:
    pass


def test_release_frees_a_list_on_the_reaper() -> None:
    rows = [_Item() for _ in range(10_000)]
    first, last = weakref.ref(rows[0]), weakref.ref(rows[-1])
    gcpolicy.release((rows, None))
    del rows
    _drain()
    assert first() is None and last() is None


def test_objects_built_in_bulk_are_kept_out_of_later_collections() -> None:
    """What a poll built is frozen on the way out: a full collection after it does not walk it
    (walking all of it on the first collection after re-enabling costs ~0.5 s at 100k jobs)."""
    try:
        with gcpolicy.bulk():
            built = [_Item() for _ in range(1000)]
        assert gc.isenabled()
        walked = {id(o) for o in gc.get_objects()}
        assert id(built[0]) not in walked and id(built[-1]) not in walked
        first = weakref.ref(built[0])
        del built
        assert first() is None  # frozen, yet freed by reference counting
    finally:
        gc.unfreeze()


@dataclasses.dataclass(frozen=True)
class _Snap:
    jobs: tuple
    rows: dict


def test_release_takes_a_snapshot_apart_and_frees_all_of_it() -> None:
    jobs = tuple(_Item() for _ in range(10_000))
    rows = {"jobs": [_Item() for _ in range(5_000)]}
    first_job, last_row = weakref.ref(jobs[0]), weakref.ref(rows["jobs"][-1])
    gcpolicy.release((_Snap(jobs, rows), (), {}))
    del jobs, rows
    _drain()
    assert first_job() is None and last_row() is None


def test_release_leaves_what_someone_else_still_holds_intact() -> None:
    shown = [_Item() for _ in range(10_000)]  # e.g. the table still shows the hub's old rows
    snap = _Snap(tuple(shown), {"jobs": shown})
    gcpolicy.release((snap, shown))
    del snap
    _drain()
    assert len(shown) == 10_000 and all(isinstance(x, _Item) for x in shown)
