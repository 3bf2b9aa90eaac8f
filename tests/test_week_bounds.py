"""What a cockpit left open for a week keeps in memory stays bounded, newest kept.

Each test feeds far more distinct items than the cap (job alerts of a churning queue, lines
of a followed log) and checks the size stays under the cap while what the operator is
looking at (the latest alert's rate limit, the last lines of the log) still works.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.widgets.logview import LogView
from textual.app import App, ComposeResult

from cockpit.model import Subject
from cockpit.screens.log import BytesLogReader
from cockpit.watch.alerts import Alert, AlertConfig, AlertRules

T0 = datetime(2026, 11, 24, 0, 0, tzinfo=UTC)


def job_failed(job_id: int, t: datetime) -> Alert:
    return Alert(
        t, "job_failed", "warning", Subject("job", "hpc", str(job_id)), f"{job_id} FAILED", None
    )


def test_alert_rate_limit_map_stays_bounded_over_a_week_of_churning_jobs():
    rules = AlertRules(AlertConfig(repeat_s=3600))
    week = 7 * 24 * 3600
    n = 100_000  # one failed job every ~6 s for a week, every one a new subject
    for i in range(n):
        t = T0 + timedelta(seconds=i * week // n)
        assert len(rules.filter([job_failed(i, t)], t)) == 1
    assert len(rules._last) <= AlertRules.MAX_KEYS
    end = T0 + timedelta(seconds=week)
    # the newest job still holds back a repeat within the hour: the limit was not lost
    assert rules.filter([job_failed(n - 1, end)], end) == []


def test_alert_storm_over_the_cap_keeps_the_newest_rate_limited():
    rules = AlertRules(AlertConfig(repeat_s=3600), max_keys=1000)
    n = 100_000  # all within one hour: nothing has expired, the oldest must go
    for i in range(n):
        t = T0 + timedelta(milliseconds=i * 30)
        rules.filter([job_failed(i, t)], t)
        assert len(rules._last) <= 1000
    end = T0 + timedelta(milliseconds=n * 30)
    assert rules.filter([job_failed(n - 1, end), job_failed(n - 500, end)], end) == []


class LogApp(App):
    def compose(self) -> ComposeResult:
        yield LogView(id="log")


async def settle(pilot, view: LogView) -> None:
    for _ in range(500):
        await pilot.pause(0.01)
        if view._done and not view._loading_window:
            break
    await pilot.pause(0.05)


def visible(view: LogView) -> str:
    return "\n".join("".join(s.text for s in view.render_line(y)) for y in range(view.size.height))


async def test_followed_log_keeps_the_index_of_its_newest_lines_only():
    reader = BytesLogReader(b"line 000001 start\n", "slurm-7.out")
    app = LogApp()
    async with app.run_test(size=(80, 12)) as pilot:
        view = app.query_one(LogView)
        view.max_index_lines = 10_000
        view.focus()
        view.open(reader)
        await settle(pilot, view)
        await pilot.press("f")
        assert view.following
        total = 1
        for _ in range(10):  # 100k more lines, one early error that must be forgotten
            batch = []
            for _ in range(10_000):
                total += 1
                word = "error: CUDA out of memory" if total == 5 else "step ok"
                batch.append(f"line {total:06d} {word}\n".encode())
            reader.data += b"".join(batch)
            await view._poll_growth()
            await settle(pilot, view)
            assert len(view._starts) - 1 <= 10_000
        reader.data += b"line 100002 slurmstepd: error: Exceeded job memory limit\n"
        total += 1
        await view._poll_growth()
        await settle(pilot, view)
        assert len(view._starts) - 1 <= 10_000
        assert view.line_count == total
        # the screen follows the newest line, with its own text and number
        assert view.cursor == total
        assert "line 100002 slurmstepd: error" in visible(view)
        assert "dropped" in view.status_text()
        # the early error went with its line; the new one is found
        assert [e.line for e in view.errors if e.strong] == [total]
        # top goes to the oldest line kept, shown with its real text, not a blank screen
        await pilot.press("g")
        await settle(pilot, view)
        first = view.first_line
        assert first > 1 and view.cursor == first
        assert f"line {first:06d} step ok" in visible(view)
