"""Leak hunt: the soak's demo site headless with the UI cycling fast, then what is alive and what
is garbage, frozen set included (``gc.get_objects()`` does not list frozen objects).

    python bench/leak_hunt.py [--rounds 60] [--every 0.4] [--with-fake]

Prints the GC-tracked objects grown by type between round 10 and the end, the frozen count,
and what a full collection of the frozen set finds unreachable (by type, ``DEBUG_SAVEALL``):
garbage that a freeze kept from the collector.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.soak import Faults, LoopProbe, SimClock, build, ui_cycle  # noqa: E402


def counts() -> collections.Counter:
    c: collections.Counter = collections.Counter()
    for o in gc.get_objects():
        t = type(o)
        c[f"{t.__module__}.{t.__qualname__}"] += 1
    return c


async def hunt(args: argparse.Namespace) -> None:
    from cockpit.app import CockpitApp
    from cockpit.demo.site import DEMO_START
    from cockpit.store.acks import AckStore
    from cockpit.watch.watcher import watcher_for

    tmp = Path(tempfile.mkdtemp(prefix="cockpit-leak-"))
    clock = SimClock(DEMO_START, 1008)
    sources, ctld = build(tmp, clock, Faults([], clock), 1.0, args.jobs)
    fake = sources[2]
    if not args.with_fake:
        sources = sources[:2]
    ctld.write_text("x\n")

    def late(app: CockpitApp) -> None:
        app.hub.watcher = watcher_for(None, demo=True)

    app = CockpitApp(sources, clock=clock, bell=False, acks=AckStore(tmp / "acks.json"), late=late)
    async with app.run_test(headless=True, size=(160, 48)) as pilot:
        await pilot.pause(3)
        cycle = ui_cycle(app, pilot, LoopProbe(clock), ctld, fake, args.every)
        task = asyncio.create_task(cycle)
        await asyncio.sleep(args.every * 10)
        gc.collect()
        before = counts()
        await asyncio.sleep(args.every * args.rounds)
        task.cancel()
        while len(app.screen_stack) > 1:
            app.pop_screen()
        await pilot.pause(1)
        gc.collect()
        after = counts()
        print("grown (tracked, not frozen):")
        for k, v in (after - before).most_common(15):
            print(f"  {v:+8d} {k}")
        print("frozen:", gc.get_freeze_count(), "tracked:", len(gc.get_objects()))
        t = time.perf_counter()
        gc.unfreeze()
        gc.set_debug(gc.DEBUG_SAVEALL)
        n = gc.collect()
        gc.set_debug(0)
        ms = (time.perf_counter() - t) * 1000
        print(f"unreachable once unfrozen: {n} (collection {ms:.0f} ms)")
        for k, v in collections.Counter(
            f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage
        ).most_common(25):
            print(f"  {v:8d} {k}")
        from textual.dom import DOMNode

        print("of which DOM nodes (widgets, screens), by class:")
        for k, v in collections.Counter(
            type(o).__qualname__ for o in gc.garbage if isinstance(o, DOMNode)
        ).most_common(15):
            print(f"  {v:8d} {k}")
        gc.garbage.clear()
        await app.hub.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=60, help="view changes measured")
    ap.add_argument("--every", type=float, default=0.4, help="s between view changes")
    ap.add_argument("--with-fake", action="store_true", help="the 10k fake cluster too")
    ap.add_argument("--jobs", type=int, default=10_000)
    asyncio.run(hunt(ap.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
