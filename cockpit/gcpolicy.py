"""Garbage-collector policy for big snapshots (100k jobs = millions of long-lived objects).

CPython's full (generation 2) collection walks every tracked object and holds the GIL:
at 100k jobs that stops the UI for ~1 s, several times per poll. Snapshot data is
acyclic (frozen dataclasses of tuples and strings), so reference counting frees an old
snapshot on its own; the cyclic collector only needs to see what is new.

* :func:`bulk` - automatic collection off while a poll parses and diagnoses (a thread):
  the objects it builds are acyclic; walking them over and over as they pile up is the cost.
  On the way out everything alive is frozen *before* collection is switched back on: the
  millions of objects built meanwhile sit in generation 0, and the first allocation after
  ``gc.enable()`` (any thread, often the UI's) would walk them all in one collection (up to
  ~0.5 s at 100k jobs, counted as a full collection because they swamp generation 2).
* :func:`settle` - after a snapshot is applied: ``gc.freeze()`` what is alive (O(1)),
  so later full collections skip it. Frozen acyclic objects are still freed
  by reference counting when the hub drops them.

A freeze also takes in whatever is alive or not yet collected at that moment: widgets,
screens, styles and messages are cycles, and a frozen cycle is never collected (an operator
moving between views for a simulated week froze ~55 MiB a day of popped screens). So
:func:`settle` collects what is not frozen yet (a poll's worth of UI work: cheap) before it
freezes, and when the heap has grown by ``HANDBACK_GROWTH`` since the last hand-back
(and at most every ``UNFREEZE_EVERY`` settles) it is handed back and collected once, on the
reaper thread: one full collection, the only pause this policy leaves (it holds the GIL, so the
event loop stops too: ~0.2-0.4 s at 10k jobs, up to 1.3 s with the garbage). It waits for a
moment the operator is not at the keys (:func:`quiet_when`; the TUI says "no key or mouse for
``QUIET_S``"): a pause nobody sees beats one that eats a keypress. Only a heap grown
``FORCE_GROWTH`` (fourfold) is handed back while keys arrive. The first measure of the heap is
the base (the first hand-back used to come after ``UNFREEZE_EVERY`` polls whatever the
operator did). What keeps the frozen garbage small is the UI not making it: the screens that
show no particular subject are installed once and shown again (``CockpitApp._kept``), and
Textual's rendered lines and component-class style nodes no longer make cycles
(``cockpit.widgets.strip_cycles``, ``cockpit.widgets.component_styles``). (A hand-back left to
the automatic collector never happened: the next poll froze it again.)

Why the hand-back is not on a timer, nor every N polls (issue #32, soak round 11): it is one
full collection of everything alive, and on CPython 3.11 that is one GIL hold that cannot be
sliced (``gc.unfreeze`` hands the whole frozen set to the oldest generation; there is no
incremental collector). At 10k jobs the cockpit's frozen set is ~0.3-0.4 M objects, and its
collection took 0.3-0.9 s on the soak's machine with next to no garbage in it (15 objects),
1.3-1.5 s after a simulated day of view changes and 3.3-4.3 s after a week (loaded). Any
hand-back is a pause far over the 100 ms bound, however often it runs; so it waits for an
operator away from the keys, and the garbage is kept from being made instead.

The heap is measured with ``sys.getallocatedblocks()`` (it reads each memory pool's header:
~0.2 ms at 10k jobs, ~2 ms at 100k), not ``gc.get_freeze_count()``, which walks the frozen
list: 20-30 ms at 10k jobs, held with the GIL on the UI thread at every poll, and ~10x that
at 100k. Frozen garbage is heap that live objects do not account for, so it shows there too.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

UNFREEZE_EVERY = 20  # settles (polls) at least between hand-backs of the frozen set
HANDBACK_GROWTH = 0.25  # heap blocks grown by this fraction since the last hand-back
# ... and by this fraction: hand back even while the operator types. Only a backstop against
# an operator who never leaves the keys for QUIET_S (a script driving tmux): at 1.0 (doubling),
# an operator changing views every few seconds got a 0.8-1.3 s pause every simulated day
FORCE_GROWTH = 3.0
WORTH = 0.10  # a hand-back that freed less than this share of the heap found little garbage
CHUNK = 1000  # objects freed per GIL hold by the reaper (~0.3-1 ms)
PAUSE_S = 0.001  # the reaper's sleep between chunks: the UI thread gets the GIL in between
GRACE_S = 0.15  # wait before freeing: the frame that shows the new data is drawn first

_lock = threading.RLock()  # the reaper's collection may run finalizers that release()
_bulk_depth = 0
_was_enabled = True
_settles = 0
_last_handback = 0  # _settles at the last hand-back
# heap blocks right after the last hand-back (the live heap, then); None: not measured yet
_heap_base: int | None = None
_growth = HANDBACK_GROWTH  # the growth that calls for the next hand-back (see _handback)


def _always() -> bool:
    return True


_quiet: Callable[[], bool] = _always  # is now a moment a pause goes unseen?


def quiet_when(test: Callable[[], bool] | None) -> None:
    """Tell the policy when a full collection would go unseen (None: any time)."""
    global _quiet
    _quiet = test or _always


@contextmanager
def bulk() -> Iterator[None]:
    """Automatic GC off for the duration (re-entrant, thread-safe; restored by the last exit)."""
    global _bulk_depth, _was_enabled
    with _lock:
        if _bulk_depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _bulk_depth += 1
    try:
        yield
    finally:
        with _lock:
            _bulk_depth -= 1
            if _bulk_depth == 0:
                gc.freeze()  # O(1): what was built here never enters a collection
                if _was_enabled:
                    gc.enable()


def settle() -> None:
    """Call after a new snapshot replaced the old one (any thread; cheap: what is not frozen)."""
    global _settles, _last_handback, _heap_base
    with _lock:
        _settles += 1
        if _bulk_depth:  # a poll is building (not frozen yet): its end freezes
            return
        # what is not frozen yet is what was allocated since the last freeze (a poll's worth
        # of UI work): collecting it is cheap (~0.2 ms at 10k jobs: a poll's own objects were
        # frozen as they were built) and keeps its garbage out of the freeze
        gc.collect()
        gc.freeze()
        if _settles - _last_handback < UNFREEZE_EVERY:
            return
        heap = sys.getallocatedblocks()
        if _heap_base is None:  # the first measure is the base, not a reason to collect
            _heap_base, _last_handback = heap, _settles
            return
        if heap <= _heap_base * (1 + _growth):
            return
        if heap <= _heap_base * (1 + FORCE_GROWTH) and not _quiet():
            return
        _last_handback = _settles
    release(_COLLECT)  # reclaim the cycles frozen meanwhile, off the UI thread


def _handback() -> None:
    """Unfreeze, collect everything, freeze the survivors (the reaper thread). A hand-back
    that freed little found live data, not garbage (jobs and incidents grew): the next one
    waits for twice the growth (up to ``FORCE_GROWTH``), one that freed a fair share for
    ``HANDBACK_GROWTH`` again, so a growing site does not pay a wasted pause at every step."""
    global _heap_base, _growth
    with _lock:
        before = sys.getallocatedblocks()
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _heap_base = sys.getallocatedblocks()
        if before - _heap_base < before * WORTH:
            _growth = min(_growth * 2, FORCE_GROWTH)
        else:
            _growth = HANDBACK_GROWTH


# a queue this long leaves megabytes of freed heap behind a poll (squeue's output as bytes and
# str, the parse's fields, the diagnosis's and the store sync's temporaries): worth a trim.
# 7.5k rows (the peer bench's 10k jobs) left ~10-14 MB resident that malloc_trim handed back
TRIM_JOBS = 2_000
_malloc_trim: Any = None


def trim_heap() -> None:
    """Hand the heap pages freed meanwhile back to the OS (glibc ``malloc_trim``; a no-op
    elsewhere). A few ms at 10k jobs, ~10 ms at 100k; call it in a thread.

    Objects over 512 bytes (big lists and dicts, long strings, squeue's output) come from
    glibc's heap, not Python's arenas. Once glibc has freed one mmapped block it raises its mmap
    threshold, so later big buffers come from the heap too and, freed, stay resident under
    what lives on: without a trim the peak RSS climbs poll after poll."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):  # musl and others: no malloc_trim
                pass
    if _malloc_trim:
        _malloc_trim(0)


HEAP_ARENAS = 2  # glibc malloc arenas (M_ARENA_MAX); its default is 8 per core
_M_ARENA_MAX = -8  # mallopt's parameter number (malloc.h)


def limit_heap_arenas() -> None:
    """Let glibc keep at most ``HEAP_ARENAS`` heaps (call before threads start; no-op where
    there is no glibc, or when the operator set ``MALLOC_ARENA_MAX``).

    Each thread that allocates gets an arena of its own (the poll's stages run in worker
    threads), and each arena keeps its own freed pages: with the GIL, threads seldom allocate
    at the same moment, so one or two shared heaps cost no waiting and hold less (the TUI on
    the peer bench's 10k fake queue: peak RSS ~6 MB lower in one run)."""
    if os.environ.get("MALLOC_ARENA_MAX") or not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_ARENA_MAX, HEAP_ARENAS)
    except (OSError, AttributeError):  # musl and others
        pass


_graveyard: queue.SimpleQueue[object] = queue.SimpleQueue()
_COLLECT = object()  # released: the reaper runs a full collection
_reaper: threading.Thread | None = None
_pending = 0  # released items not yet freed
_freed = threading.Condition()


def release(obj: object) -> None:
    """Drop the caller's last reference to ``obj`` on a background thread.

    Freeing an old 100k-row list or snapshot (a million objects) takes ~60 ms; done on
    the UI thread it is a visible stall, on the reaper it interleaves with frames.
    The caller must not keep its own reference (``release(self._old); self._old = new``).
    """
    global _reaper, _pending
    if _reaper is None:
        with _lock:
            if _reaper is None:
                _reaper = threading.Thread(target=_reap, name="cockpit-reaper", daemon=True)
                _reaper.start()
    with _freed:
        _pending += 1
    _graveyard.put(obj)


def drain(timeout: float = 10.0) -> bool:
    """Wait until everything released so far has been freed (tests, shutdown). False on timeout."""
    with _freed:
        return _freed.wait_for(lambda: _pending == 0, timeout)


# depth 0 the released tuple, 1 a Snapshot / findings / rows dict, 2 a jobs tuple / RowList,
# 3 a RowList's key index and haystack; what lies deeper (one job, one row) is small
_EXPLODE_DEPTH = 3
_DATACLASS_DEPTH = 1  # Snapshot: yes; each of 100k jobs: no (a few µs each, for nothing)


def _parts(x: object, depth: int) -> list | None:
    """The references held by ``x`` when it is worth taking apart (a big container or a
    dataclass such as ``Snapshot``), else None. Called only when the reaper holds ``x`` alone."""
    if isinstance(x, (tuple, list)):
        if len(x) < 64 and depth:
            return None
        out = list(x)
        if isinstance(x, list):
            x.clear()  # nobody else holds it
            out.extend(getattr(x, a) for a in getattr(type(x), "__slots__", ()) if hasattr(x, a))
        return out
    if isinstance(x, dict):
        if len(x) < 64 and depth:
            return None
        out = list(x.values())
        x.clear()
        return out
    if depth <= _DATACLASS_DEPTH and dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [getattr(x, f.name) for f in dataclasses.fields(x)]
    return None


def _reap() -> None:
    global _pending
    # A big container (tuple, list, dict, a Snapshot) is not deallocated in one go: its
    # items are moved into a list first, so freeing it only drops references, and the
    # items are then freed CHUNK at a time with the GIL yielded in between. One dealloc
    # of a 100k-job tuple would hold the GIL (and stall the UI thread) for ~tens of ms.
    # No tracked object per item is allocated here (an (item, depth) pair each would push 100k
    # tuples through the young generations into generation 2: full collections).
    while True:
        got = _graveyard.get()
        if got is _COLLECT:
            del got
            _handback()
            with _freed:
                _pending -= 1
                _freed.notify_all()
            continue
        frames: list[tuple[list, int]] = [([got], 0)]
        del got
        time.sleep(GRACE_S)
        done = 0
        while frames:
            items, depth = frames[-1]
            if not items:
                frames.pop()
                continue
            x = items.pop()
            # 2: the local and getrefcount's argument: nobody else holds it
            if depth <= _EXPLODE_DEPTH and sys.getrefcount(x) <= 2:
                parts = _parts(x, depth)
                if parts is not None:
                    frames.append((parts, depth + 1))
                    del parts
            del items, x  # the last reference, unless a part of it still waits in a frame
            done += 1
            if done % CHUNK == 0:
                time.sleep(PAUSE_S)  # let the UI thread run
        with _freed:
            _pending -= 1
            _freed.notify_all()
