"""Garbage-collector policy for big snapshots (100k jobs = millions of long-lived objects).

CPython's full (generation 2) collection walks every tracked object and holds the GIL:
at 100k jobs that stopped the UI for ~1 s, several times per poll. Snapshot data is
acyclic (frozen dataclasses of tuples and strings), so reference counting frees an old
snapshot on its own; the cyclic collector only needs to see what is new.

* :func:`bulk` - automatic collection off while a poll parses and diagnoses (a thread):
  the objects it builds are acyclic; walking them over and over as they pile up is the cost.
* :func:`settle` - after a snapshot is applied: ``gc.freeze()`` what is alive (O(1)),
  so later full collections skip it. Frozen acyclic objects are still freed
  by reference counting when the hub drops them. Every ``UNFREEZE_EVERY`` settles the
  frozen set is handed back to the collector, so cyclic garbage that was frozen by
  mistake is reclaimed by a later full collection (bounded leak, rare pause).
"""

from __future__ import annotations

import gc
import queue
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

UNFREEZE_EVERY = 20  # settles (polls) between hand-backs of the frozen set
CHUNK = 2000  # list items freed per GIL hold by the reaper

_lock = threading.Lock()
_bulk_depth = 0
_was_enabled = True
_settles = 0


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
            if _bulk_depth == 0 and _was_enabled:
                gc.enable()


def settle() -> None:
    """Call after a new snapshot replaced the old one (any thread; cheap: young generations only)."""
    global _settles
    with _lock:
        _settles += 1
        if _settles % UNFREEZE_EVERY == 0:
            gc.unfreeze()  # the next automatic full collection reclaims frozen cycles
            return
        gc.freeze()


_graveyard: queue.SimpleQueue[object] = queue.SimpleQueue()
_reaper: threading.Thread | None = None


def release(obj: object) -> None:
    """Drop the caller's last reference to ``obj`` on a background thread.

    Freeing an old 100k-row list or snapshot (a million objects) takes ~60 ms; done on
    the UI thread it is a visible stall, on the reaper it interleaves with frames.
    The caller must not keep its own reference (``release(self._old); self._old = new``).
    """
    global _reaper
    if _reaper is None:
        with _lock:
            if _reaper is None:
                _reaper = threading.Thread(target=_reap, name="cockpit-reaper", daemon=True)
                _reaper.start()
    _graveyard.put(obj)


def _reap() -> None:
    while True:
        item = _graveyard.get()
        parts = list(item) if isinstance(item, tuple) else [item]
        del item
        while parts:
            x = parts.pop()
            # A list nobody else holds is freed in slices, yielding the GIL in between:
            # one big dealloc would hold it (and stall the UI thread) for its whole length.
            if isinstance(x, list) and sys.getrefcount(x) <= 2:
                while x:
                    del x[-CHUNK:]
                    time.sleep(0)
            del x  # the last reference: deallocation happens here
