"""Benchmark 2: the UI at 1k/10k/100k jobs in a headless ``CockpitApp`` (160x48).

* apply: UI-thread time from the hub publishing a new snapshot (rows already projected
  off-thread, as the hub does) to the next frame with the queue pane updated;
* poll stall: the longest the event loop is blocked during one real ``Hub.poll_once``;
* keypress -> frame: ``j`` and ``pagedown`` in the queue, and each character typed in
  the ``/`` filter (the frame echoing the key, and the first frame showing the filtered
  rows; the same frame while the filter runs inside the keystroke). A frame is one ``Screen``
  compositor update handed to the driver (``App._display``); headless, the terminal write
  itself is skipped.

Snapshots are the fake site's (``bench/fake_slurm``) parsed by the real parsers.

    python bench/bench_ui.py --jobs 100000 [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fake_slurm import NOW, generate  # noqa: E402


class StubSource:
    """A Slurm source that hands out prepared snapshots (the poll itself is benchmark 1)."""

    kind = "slurm"

    def __init__(self, snap) -> None:
        self.name = snap.source
        self.snap = snap
        self.interval = 3600.0

    async def poll(self):
        return self.snap

    async def artifacts(self, subject, snapshot):
        from cockpit.model import Artifacts

        return Artifacts()

    def log_locations(self, subject, snapshot):
        return []

    async def read_range(self, path, offset, length):
        return b""

    async def stat(self, path):
        raise OSError(path)

    async def close(self) -> None:
        return None


def load_snapshot(jobs: int, nodes: int):
    from cockpit import gcpolicy
    from cockpit.model import Snapshot
    from cockpit.slurm.parse import parse_scontrol_nodes, parse_scontrol_partitions
    from cockpit.slurm.squeue import parse_squeue

    site = generate(f"/tmp/cockpit-fake-{jobs}", jobs, nodes)
    with gcpolicy.bulk():  # as SlurmSource._parse does
        js, _ = parse_squeue(site.output("squeue").decode())
        ns, _ = parse_scontrol_nodes(site.output("nodes").decode())
        ps, _ = parse_scontrol_partitions(site.output("partitions").decode())
    return Snapshot("bench", "slurm", NOW, jobs=tuple(js), nodes=tuple(ns), partitions=tuple(ps))


async def measure_app(snap, presses: int = 15) -> dict:
    from cockpit.app import CockpitApp, HubUpdated
    from cockpit.screens.panes import QueueTable
    from cockpit.store.acks import AckStore

    source = StubSource(snap)
    clock_now = [NOW]
    app = CockpitApp([source], clock=lambda: clock_now[0], bell=False, acks=AckStore(None))
    frames: list[float] = []
    frame_event = asyncio.Event()
    original = app._display

    def display(screen, renderable) -> None:
        original(screen, renderable)
        if renderable is not None:
            frames.append(time.perf_counter())
            frame_event.set()

    app._display = display  # type: ignore[method-assign]

    async def next_frame_after(t0: float, timeout: float = 2.0) -> float:
        deadline = time.perf_counter() + timeout
        while True:
            later = [f for f in frames if f >= t0]
            if later:
                return later[0]
            frame_event.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                return float("nan")
            try:
                await asyncio.wait_for(frame_event.wait(), left)
            except TimeoutError:
                return float("nan")

    pauses: list[float] = []  # full (generation 2) garbage collections: they stop every thread

    def on_gc(phase: str, info: dict) -> None:
        if info.get("generation") == 2:
            if phase == "start":
                pauses.append(-time.perf_counter())
            elif pauses and pauses[-1] < 0:
                pauses[-1] += time.perf_counter()

    gc.callbacks.append(on_gc)
    out: dict = {"jobs": len(snap.jobs)}
    async with app.run_test(size=(160, 48)) as pilot:
        await asyncio.wait_for(app.hub.first_round.wait(), 120)
        await pilot.pause()
        table = app.screen.query_one(QueueTable)
        assert table.total_count == len(snap.jobs), (table.total_count, len(snap.jobs))
        st = app.hub.states[source.name]
        # apply: a new snapshot (one minute later, every elapsed time changed)
        applies = []
        for k in range(3):
            later = dataclasses.replace(snap, taken_at=NOW + timedelta(seconds=60 * (k + 1)))
            clock_now[0] = later.taken_at
            # the poll's thread: engine, rows, incidents (Poller._apply's to_thread part)
            analysis = await asyncio.to_thread(
                app.hub._analyse, later, clock_now[0], None, None, app.hub._basis(st, None)
            )
            await pilot.pause()
            t0 = time.perf_counter()
            app.hub._publish(st, later, analysis)  # Poller._apply's UI-thread part
            app.post_message(HubUpdated(source.name))
            while (
                getattr(app.screen, "_applied", None) != app.hub.generation
                and time.perf_counter() - t0 < 5
            ):
                await asyncio.sleep(0)
            assert table.total_count == len(later.jobs)
            t1 = await next_frame_after(time.perf_counter())
            applies.append(t1 - t0)
        out["apply_s"] = min(applies)

        # a whole real poll (Hub.poll_once: engine, rows, incidents, evidence round, publish):
        # the longest the event loop went without running a 5 ms ticker is what a keypress waits
        gaps: list[float] = []

        async def ticker() -> None:
            last = time.perf_counter()
            while True:
                await asyncio.sleep(0.005)
                t = time.perf_counter()
                gaps.append(t - last)
                last = t

        source.snap = dataclasses.replace(snap, taken_at=NOW + timedelta(seconds=300))
        clock_now[0] = source.snap.taken_at
        tick = asyncio.create_task(ticker())
        await app.hub.poll_once(st)
        tick.cancel()
        out["poll_stall_s"] = max(gaps, default=0.0)

        async def keys(*seq: str) -> list[float]:
            lat = []
            for key in seq:
                await pilot.pause()
                t0 = time.perf_counter()
                await pilot.press(key)
                lat.append(await next_frame_after(t0) - t0)
            return lat

        table.focus()
        await pilot.pause()
        out["j_s"] = statistics.median(await keys(*["j"] * presses))
        out["pagedown_s"] = statistics.median(await keys(*["pagedown"] * presses))
        await keys("slash")
        typed, shown = [], []
        rebuilt: list[float] = []  # when the table last rebuilt its shown rows
        rebuild = table._rebuild

        def timed_rebuild(*a, **kw) -> None:
            rebuild(*a, **kw)
            rebuilt.append(time.perf_counter())

        table._rebuild = timed_rebuild  # type: ignore[method-assign]
        for k, ch in enumerate("user01"):
            # the frame after the key (the filter bar echoes it), and the first frame with the
            # rows of the new filter (the same frame unless the table filters between frames)
            await pilot.pause()
            t0 = time.perf_counter()
            await pilot.press(ch)
            typed.append(await next_frame_after(t0) - t0)
            while table.filter_text != "user01"[: k + 1] and time.perf_counter() - t0 < 5:
                await asyncio.sleep(0.0005)
            shown.append(await next_frame_after(rebuilt[-1]) - t0)
        out["filter_first_char_s"] = typed[0]
        out["filter_s"] = statistics.median(typed)
        out["filter_max_s"] = max(typed)
        out["filter_rows_first_char_s"] = shown[0]
        out["filter_rows_s"] = statistics.median(shown)
        out["filter_rows_max_s"] = max(shown)
        out["filtered_rows"] = table.row_count
        table._rebuild = rebuild  # type: ignore[method-assign]
        await keys("escape")
        out["unfiltered_rows"] = table.row_count
    gc.callbacks.remove(on_gc)
    done = [p for p in pauses if p > 0]
    out["gc2_count"], out["gc2_max_s"] = len(done), max(done, default=0.0)
    return out


def measure(jobs: int, nodes: int = 10_000) -> dict:
    snap = load_snapshot(jobs, nodes)
    return asyncio.run(measure_app(snap))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = measure(args.jobs, args.nodes)
    if args.json:
        print(json.dumps(r))
    else:
        for k, v in r.items():
            print(f"{k:20} {v * 1000:.1f} ms" if k.endswith("_s") else f"{k:20} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
