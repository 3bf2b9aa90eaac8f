"""Switching logs while reads are in flight never shows (or caches) the other file's lines.

Each test holds a read of file A (an asyncio or threading Event), switches the viewer to file
B, then releases the read: whatever A's read brings back must be dropped, because it is tagged
with A and the view now shows B.
"""

from __future__ import annotations

import asyncio
import threading

from cockpit.widgets.logview import LogView
from textual.app import App, ComposeResult

from cockpit.screens.log import BytesLogReader


class HeldReader(BytesLogReader):
    """In-memory log whose reads wait on ``gate`` while ``hold`` is set (counted in ``waiting``)."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data, name, kind="app")
        self.hold = False
        self.gate = asyncio.Event()
        self.waiting = 0

    async def _wait(self) -> None:
        if self.hold:
            self.waiting += 1
            await self.gate.wait()

    async def read(self, offset: int, length: int) -> bytes:
        await self._wait()
        return await super().read(offset, length)

    async def size(self) -> int:
        await self._wait()
        return await super().size()


class LogApp(App):
    def compose(self) -> ComposeResult:
        yield LogView(id="log")


def lines_of(tag: str, n: int) -> bytes:
    # same line lengths in both files, so A's byte offsets are valid line starts in B
    return b"".join(f"{tag}-{i:05d} payload\n".encode() for i in range(1, n + 1))


def visible(view: LogView) -> str:
    return "\n".join("".join(s.text for s in view.render_line(y)) for y in range(view.size.height))


async def until(pilot, cond, what: str, tries: int = 200) -> None:
    for _ in range(tries):
        if cond():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def settle(pilot, view: LogView) -> None:
    await until(pilot, lambda: view._done and not view._loading_window, "log settled")
    await pilot.pause(0.05)


def assert_only_b(view: LogView) -> None:
    shown = visible(view)
    assert "A-" not in shown, shown
    assert all(text.startswith("B-") for text in view._cache.values()), [
        t for t in view._cache.values() if not t.startswith("B-")
    ][:3]


async def test_a_window_read_in_flight_does_not_land_in_the_next_file():
    a = HeldReader(lines_of("A", 500), "a.out")
    b = HeldReader(lines_of("B", 500), "b.out")
    app = LogApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(LogView)
        view.focus()
        view.open(a)
        await settle(pilot, view)
        a.hold = True
        await pilot.press("G")  # the window at the bottom is not cached yet: a held read
        await until(pilot, lambda: a.waiting > 0, "a held window read")
        view.open(b)
        await until(pilot, lambda: view._done, "b indexed")
        a.gate.set()  # A's bottom lines come back now, while B is shown
        await pilot.pause(0.1)
        await pilot.press("G")  # B's bottom: the lines A's stale read would have filled
        await settle(pilot, view)
        assert view.cursor == 500
        assert_only_b(view)
        assert "B-00500 payload" in visible(view)


async def test_an_index_read_in_flight_does_not_index_into_the_next_file():
    a = HeldReader(lines_of("A", 300) + b"fatal error: A broke\n", "a.out")
    b = HeldReader(lines_of("B", 200), "b.out")
    a.hold = True
    app = LogApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(LogView)
        view.open(a)
        await until(pilot, lambda: a.waiting > 0, "a held index read")
        view.open(b)
        await settle(pilot, view)
        a.gate.set()
        await pilot.pause(0.1)
        await settle(pilot, view)
        assert view.line_count == 200
        assert view.errors == []
        assert_only_b(view)


async def test_a_scan_on_a_worker_thread_does_not_write_into_the_next_file():
    """Big chunks are scanned on a thread; the thread returns data, it never touches the view."""

    class SlowScan(HeldReader):
        def __init__(self, data: bytes, name: str) -> None:
            super().__init__(data, name)
            self.scanning = threading.Event()
            self.release = threading.Event()

        def errors(self, data: bytes, start_line: int):
            self.scanning.set()
            self.release.wait(10)
            return super().errors(data, start_line)

    # > 256 KiB of whole lines, so the chunk goes to a thread
    a = SlowScan(b"slurmstepd: error: oom_kill event A\n" * 12_000, "a.out")
    b = HeldReader(lines_of("B", 200), "b.out")
    app = LogApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(LogView)
        view.open(a)
        await until(pilot, a.scanning.is_set, "a's chunk scanned on a thread")
        view.open(b)
        await settle(pilot, view)
        a.release.set()
        await pilot.pause(0.2)
        await settle(pilot, view)
        assert view.line_count == 200
        assert view.errors == []  # A's 12 000 error lines are not B's
        assert view.cursor == 1
        assert_only_b(view)


async def test_a_search_in_flight_does_not_move_the_cursor_in_the_next_file():
    a = HeldReader(lines_of("A", 400) + b"needle in A\n", "a.out")
    b = HeldReader(lines_of("B", 400), "b.out")
    app = LogApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(LogView)
        view.open(a)
        await settle(pilot, view)
        view.go_to_line(1)
        a.hold = True
        view.search("needle")
        await until(pilot, lambda: a.waiting > 0, "a held search read")
        view.open(b)
        await settle(pilot, view)
        view.search_text = ""  # B has no search of its own
        a.gate.set()
        await pilot.pause(0.1)
        await settle(pilot, view)
        assert view.cursor == 1
        assert_only_b(view)


async def test_a_follow_tick_in_flight_does_not_reindex_the_next_file():
    """A's size arrives after the switch: compared with B's, it would read as a truncation and
    reset B (with a message naming A)."""
    a = HeldReader(lines_of("A", 10), "a.out")
    b = HeldReader(lines_of("B", 300), "b.out")
    app = LogApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(LogView)
        view.open(a)
        await settle(pilot, view)
        view.set_follow(True)
        a.hold = True
        tick = asyncio.ensure_future(view._poll_growth())
        await until(pilot, lambda: a.waiting > 0, "a held follow tick")
        view.open(b)
        await settle(pilot, view)
        view.go_to_line(150)
        a.gate.set()
        await tick
        await settle(pilot, view)
        assert "a.out" not in view.status_text()
        assert view.line_count == 300 and view.cursor == 150
        assert_only_b(view)
