"""The log viewer's less/lnav keys: warnings apart from errors, pages and half pages, a typed
line number, sideways scroll, backward search, & keeping only matching lines, and the wrap
mode keeping the cursor line on screen."""

from __future__ import annotations

from cockpit.widgets.logview import LogView
from textual.app import App, ComposeResult

from cockpit.screens.log import BytesLogReader, LogScreen

from .test_ui_logview import settle, visible

LINES = [f"step {i:04d} loss=0.{i:04d}" for i in range(1, 1001)]
LINES[99] = "slurmstepd: error: *** JOB 7 ON cn01 CANCELLED AT 2026-12-01T09:00:00 ***"
LINES[199] = "Traceback (most recent call last):"
LINES[200] = "RuntimeError: CUDA error: out of memory"
LINES[399] = "WARNING: rank 3 NCCL timeout approaching " + "x" * 300 + " TAIL-MARK"
DATA = ("\n".join(LINES) + "\n").encode()


class LogApp(App):
    def __init__(self, data: bytes = DATA) -> None:
        super().__init__()
        self.data = data

    def compose(self) -> ComposeResult:
        yield LogView(id="log")

    def on_mount(self) -> None:
        view = self.query_one(LogView)
        view.focus()
        view.open(BytesLogReader(self.data, "slurm-7.out"), line=1)


async def _ready(app, pilot) -> LogView:
    view = app.query_one(LogView)
    await settle(pilot, view)
    return view


async def test_typed_line_number_pages_and_half_pages():
    app = LogApp()
    async with app.run_test(size=(100, 22)) as pilot:
        view = await _ready(app, pilot)
        await pilot.press("7", "5", "0", "g")
        assert view.cursor == 750
        await pilot.press("1", "G")
        assert view.cursor == 1
        height = view.scrollable_content_region.height
        await pilot.press("space")
        assert view.cursor == height  # a page down (less keeps one line of context)
        await pilot.press("b")
        assert view.cursor == 1
        await pilot.press("ctrl+d")
        assert view.cursor == 1 + (height - 1) // 2
        await pilot.press("ctrl+u")
        assert view.cursor == 1
        await pilot.press("3", "j")
        assert view.cursor == 4


async def test_e_stops_on_errors_and_w_on_warnings():
    """A scancel line is a warning: e passes over it to the real error, w finds it."""
    app = LogApp()
    async with app.run_test(size=(100, 22)) as pilot:
        view = await _ready(app, pilot)
        marks = {e.line: e.severity for e in view.errors}
        assert marks[100] == "warning" and marks[200] == "critical"
        await pilot.press("e")
        assert view.cursor == 200
        await pilot.press("w")  # no warning below: stays
        assert view.cursor == 200
        await pilot.press("W")
        assert view.cursor == 100
        await pilot.press("E")  # no error above the warning
        assert view.cursor == 100
        await pilot.press("e", "e")
        assert view.cursor == 201


async def test_right_scrolls_a_long_line_sideways_and_left_back():
    app = LogApp()
    async with app.run_test(size=(80, 22)) as pilot:
        view = await _ready(app, pilot)
        view.go_to_line(400)
        await pilot.pause()
        assert "TAIL-MARK" not in visible(view)
        for _ in range(12):
            await pilot.press("right")
        await pilot.pause()
        assert "TAIL-MARK" in visible(view) and view.pan_x > 0
        while view.pan_x:
            await pilot.press("left")
        await pilot.pause()
        assert "WARNING: rank 3" in visible(view)


async def test_keep_matching_lines_then_all_again():
    app = LogApp()
    async with app.run_test(size=(100, 22)) as pilot:
        view = await _ready(app, pilot)
        view.keep("loss=0.07")  # steps 0700..0799
        await settle(pilot, view)
        for _ in range(50):
            if view.row_count == 100:
                break
            await pilot.pause(0.02)
        assert view.row_count == 100
        await pilot.pause()
        shown = visible(view)
        assert "step 0700" in shown and "step 0701" in shown and "step 0100" not in shown
        await pilot.press("G")
        assert view.cursor == 799
        view.keep("")
        await pilot.pause()
        assert view.row_count == 1000 and view.cursor == 799


async def test_wrap_keeps_the_cursor_line_on_screen():
    long = ["y" * 500] * 60 + ["THE-CURSOR-LINE"] + ["z"] * 10
    app = LogApp(("\n".join(long) + "\n").encode())
    async with app.run_test(size=(80, 20)) as pilot:
        view = await _ready(app, pilot)
        await pilot.press("ctrl+w")
        assert view.wrap
        view.go_to_line(61)
        await pilot.pause()
        await pilot.pause()
        assert "THE-CURSOR-LINE" in visible(view)


class ScreenApp(App):
    def on_mount(self) -> None:
        self.push_screen(LogScreen("job 7", [("stdout", BytesLogReader(DATA, "slurm-7.out"))]))


async def test_question_mark_searches_backwards_and_ampersand_filters(monkeypatch):
    app = ScreenApp()
    async with app.run_test(size=(100, 24)) as pilot:
        view = app.screen.query_one(LogView)
        await settle(pilot, view)
        await pilot.press("G")
        await pilot.press("question_mark", *"loss=0.05", "enter")
        await settle(pilot, view)
        for _ in range(50):
            if view.cursor < 1000:
                break
            await pilot.pause(0.02)
        assert view.cursor == 599  # the last match above the bottom, not the first in the file
        await pilot.press("n")  # n keeps the direction: further up
        for _ in range(50):
            if view.cursor != 599:
                break
            await pilot.pause(0.02)
        assert view.cursor == 598
        await pilot.press("ampersand", *"CUDA", "enter")
        for _ in range(50):
            if view.row_count == 1:
                break
            await pilot.pause(0.02)
        assert view.row_count == 1 and view.cursor == 201
        assert "&CUDA: 1 lines" in view.status_text()


async def _kept_lines(data: bytes, text: str) -> list[int]:
    app = LogApp(data)
    async with app.run_test(size=(100, 22)) as pilot:
        view = await _ready(app, pilot)
        view.keep(text)
        for _ in range(100):
            await pilot.pause(0.02)
            if not any(w.is_running for w in app.workers):
                break
        return list(view._kept)


async def test_keep_finds_the_last_line_without_a_newline():
    assert await _kept_lines(b"hello\nworld Killed", "killed") == [2]


async def test_keep_finds_a_match_split_across_a_chunk_of_a_long_line():
    from cockpit.widgets.logview import CHUNK

    assert await _kept_lines(b"a" * (CHUNK - 3) + b"NEEDLE\nb\n", "needle") == [1]


async def test_keep_shows_a_long_line_once():
    assert await _kept_lines(b"A" * (5 << 20) + b"\nb\n", "a") == [1]
