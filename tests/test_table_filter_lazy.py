"""The `/` filter at 10k+ rows: the frame after a keystroke shows the right rows at once, the
exact pass finishes between frames and then equals a brute-force filter."""

from __future__ import annotations

from cockpit.widgets.table import Column, Row, VirtualTable, prepare_rows
from textual.app import App, ComposeResult

COLS = (
    Column("ID", 8),
    Column("NAME", 12, 1),
    Column("STATE", 10),
    Column("WHY", 20, 0, flex=True),
)
N = 60_000


def make_rows(n: int) -> list[Row]:
    return [
        Row(str(i), (str(i), f"job-{i}", "PENDING" if i % 2 else "RUNNING", f"user{i % 97}"))
        for i in range(n)
    ]


def brute(rows: list[Row], text: str) -> list[str]:
    t = text.strip().lower()
    return [r.key for r in rows if any(t in c.lower() for c in r.cells)]


class TableApp(App):
    def __init__(self) -> None:
        super().__init__()
        self.filtered = 0

    def compose(self) -> ComposeResult:
        yield VirtualTable(COLS, id="t")

    def on_virtual_table_filtered(self) -> None:
        self.filtered += 1


def screen_keys(table: VirtualTable) -> list[str]:
    """The ID column of the body lines on screen."""
    lines = ["".join(seg.text for seg in table.render_line(y)) for y in range(1, table.size.height)]
    return [ln.split()[0] for ln in lines if ln.strip()]


async def settle(app: TableApp, pilot, table: VirtualTable) -> None:
    for _ in range(200):
        if not table.filter_pending:
            return
        await pilot.pause()
    raise AssertionError("the filter pass never finished")


async def test_first_frame_is_right_and_the_pass_finishes_exact():
    app = TableApp()
    raw = make_rows(N)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(VirtualTable)
        table.focus()
        table.set_rows(prepare_rows(raw))
        await pilot.pause()
        want = brute(raw, "User13")
        table.set_filter("User13")
        assert table.filter_pending  # the rest of the pass runs between frames
        assert table.counted_rows < len(want)
        assert screen_keys(table) == want[: table.size.height - 1]
        await settle(app, pilot, table)
        assert app.filtered == 1
        assert table.counted_rows == len(want)
        assert [r.key for r in table.rows] == want
        assert table.virtual_size.height == len(want) + 1


async def test_a_second_key_during_the_pass_gives_the_final_result():
    app = TableApp()
    raw = make_rows(N)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(VirtualTable)
        table.set_rows(prepare_rows(raw))
        await pilot.pause()
        table.set_filter("user1")
        assert table.filter_pending
        table.set_filter("user13")  # narrows the unfinished pass: what it found plus the rest
        assert screen_keys(table) == brute(raw, "user13")[: table.size.height - 1]
        await settle(app, pilot, table)
        assert [r.key for r in table.rows] == brute(raw, "user13")
        table.set_filter("job-5")  # not a narrowing: a new pass over every row
        table.set_filter("job-59")
        assert table.row_count == len(
            brute(raw, "job-59")
        )  # row_count is exact: it finishes the pass
        assert [r.key for r in table.rows] == brute(raw, "job-59")
        table.set_filter("")
        assert not table.filter_pending and table.row_count == N


async def test_cursor_stays_on_its_job_and_keys_during_the_pass_work():
    app = TableApp()
    raw = make_rows(N)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(VirtualTable)
        table.focus()
        table.set_rows(prepare_rows(raw))
        await pilot.pause()
        table.move_to_key("40013")  # 40013 % 97 == 49
        table.set_filter("user49")
        want = brute(raw, "user49")
        assert table.cursor_key == "40013" and table.cursor == want.index("40013")
        assert "40013" in screen_keys(table)
        await pilot.press("j", "pagedown", "k")  # inside the rows found so far
        key = table.cursor_key
        await settle(app, pilot, table)
        assert table.cursor_key == key and [r.key for r in table.rows] == want
        table.set_filter("user4")  # widening: a new pass, the cursor keeps its job
        await pilot.press("G")  # past the rows found so far: finishes the pass first
        assert not table.filter_pending and table.cursor_key == brute(raw, "user4")[-1]
        table.set_filter("user7")
        table.sort_by(0, reverse=True)  # sorting needs every match: no pass left running
        assert not table.filter_pending
        assert [r.key for r in table.rows] == sorted(
            brute(raw, "user7"), key=str.lower, reverse=True
        )
        table.sort_by(None)
        table.set_filter("")
        assert table.row_count == N
