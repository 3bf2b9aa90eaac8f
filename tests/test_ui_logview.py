"""Log viewer: opens at the first red error, moves between errors, follows, survives truncation."""

from __future__ import annotations

from cockpit.widgets.logview import CHUNK, LogView
from textual.app import App, ComposeResult

from cockpit.screens.log import BytesLogReader


class GrowingReader(BytesLogReader):
    """In-memory file that records the largest single read (never the whole file)."""

    def __init__(self, data: bytes, name: str = "slurm-9.out") -> None:
        super().__init__(data, name)
        self.max_read = 0

    async def read(self, offset: int, length: int) -> bytes:
        self.max_read = max(self.max_read, length)
        return await super().read(offset, length)


class LogApp(App):
    def compose(self) -> ComposeResult:
        yield LogView(id="log")


async def settle(pilot, view: LogView) -> None:
    for _ in range(100):
        await pilot.pause(0.02)
        if view._done and not view._loading_window:
            break
    await pilot.pause(0.05)


def visible(view: LogView) -> str:
    return "\n".join("".join(s.text for s in view.render_line(y)) for y in range(view.size.height))


BIG = b"".join(f"line {i} fine\n".encode() for i in range(1, 200_001))


async def test_opens_at_first_error_and_e_E_move_between_errors():
    data = (
        BIG[:2000]
        + b"slurmstepd: error: Detected 1 oom_kill event in StepId=9.batch.\n"
        + BIG[:5000]
        + b"Traceback (most recent call last):\nValueError: bad\n"
    )
    reader = GrowingReader(data)
    app = LogApp()
    async with app.run_test(size=(100, 20)) as pilot:
        view = app.query_one(LogView)
        view.focus()
        view.open(reader)
        await settle(pilot, view)
        first = data[: data.index(b"slurmstepd")].count(b"\n") + 1
        assert view.cursor == first
        assert "oom_kill event" in visible(view)
        await pilot.press("e")
        assert view.cursor > first
        tb = view.cursor
        await pilot.press("E")
        assert view.cursor == first
        await pilot.press("G")
        assert view.cursor == view.line_count
        await pilot.press("g")
        assert view.cursor == 1
        assert tb > first


async def test_big_log_is_read_in_chunks_and_only_visible_lines_decoded():
    data = BIG + b"CUDA error: out of memory\n"
    reader = GrowingReader(data)
    app = LogApp()
    async with app.run_test(size=(100, 20)) as pilot:
        view = app.query_one(LogView)
        view.open(reader)
        await settle(pilot, view)
        assert view.line_count == 200_001
        assert view.cursor == 200_001
        assert reader.max_read <= CHUNK
        assert len(view._cache) < 200  # a window around the screen, not the file
        assert "CUDA error: out of memory" in visible(view)


async def test_follow_appends_and_truncation_reindexes_with_a_message():
    reader = GrowingReader(b"one\ntwo\n")
    app = LogApp()
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(LogView)
        view.focus()
        view.open(reader)
        await settle(pilot, view)
        assert view.line_count == 2
        await pilot.press("f")
        assert view.following
        reader.data += b"three\nfatal error: disk full\n"
        await view._poll_growth()
        await settle(pilot, view)
        assert view.line_count == 4
        assert view.cursor == 4
        reader.data = b"fresh\n"
        await view._poll_growth()
        await settle(pilot, view)
        assert view.line_count == 1
        assert "truncated or rotated" in view.status_text()


async def test_follow_notices_a_file_replaced_by_a_bigger_one(tmp_path):
    """logrotate's create mode (or rm + a restarted job): the new file is already longer than the
    old one. Without noticing, follow would append the new file's tail to the old lines."""
    from cockpit.screens.log import SourceLogReader
    from cockpit.transport import LocalTransport

    path = tmp_path / "slurm-7.out"
    path.write_bytes(b"old one\nold two\n")
    app = LogApp()
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(LogView)
        view.focus()
        view.open(SourceLogReader(LocalTransport(), str(path)))
        await settle(pilot, view)
        await pilot.press("f")
        path.unlink()
        path.write_bytes(
            b"new epoch 1\nnew epoch 2\nnew epoch 3\nTraceback (most recent call last):\n"
        )
        await view._poll_growth()
        await settle(pilot, view)
        assert view.line_count == 4
        assert "old one" not in visible(view) and "new epoch 1" in visible(view)
        assert "replaced" in view.status_text()
        with path.open("ab") as fh:  # plain growth after that is still an append, not a rotation
            fh.write(b"RuntimeError: boom\n")
        await view._poll_growth()
        await settle(pilot, view)
        assert view.line_count == 5 and "boom" in visible(view)


async def test_hostile_log_lines_are_cleaned_and_search_finds_text():
    data = b"ok\n\x1b]52;c;ZXZpbA==\x07[bold]not markup[/] \x1b[31mred\x1b[0m\nneedle here\n"
    app = LogApp()
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(LogView)
        view.open(BytesLogReader(data, "x.log"))
        await settle(pilot, view)
        text = visible(view)
        assert "[bold]not markup[/] red" in text
        assert "\x1b" not in text and "52;c" not in text
        view.search("NEEDLE")
        await settle(pilot, view)
        assert view.cursor == 3


async def test_missing_file_is_a_message_not_a_crash():
    class Missing(BytesLogReader):
        async def size(self) -> int:
            raise FileNotFoundError("no such file: /x/slurm-1.out")

    app = LogApp()
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(LogView)
        view.open(Missing(b"", "slurm-1.out"))
        await settle(pilot, view)
        assert "cannot read slurm-1.out" in view.status_text()
        assert app.is_running
