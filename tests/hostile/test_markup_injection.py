"""Rich/Textual markup in user-controlled strings ([red], [link=…], [/], [@click=…]) is
shown literally on every screen and in toasts, never interpreted (no links, no actions,
no MarkupError crash)."""

from __future__ import annotations

import io

from cockpit.widgets.logview import LogView
from rich.console import Console

from cockpit.app import CockpitApp
from cockpit.model import Evidence, Subject
from cockpit.screens.log import LogScreen
from cockpit.screens.panes import QueueTable
from cockpit.screens.subject import JobScreen, NodeScreen, TrainingJobScreen
from cockpit.store.acks import AckStore
from tests.hostile.corpus import MARKUP, visible_text
from tests.hostile.site import (
    DRAINED_NODE,
    OOM_JOB,
    frozen,
    hostile_sources,
    screen_lines,
    screen_segments,
)

EVIL = " ".join(MARKUP)  # every form at once: names, reasons, events, log lines


def _assert_literal(app, *texts: str) -> None:
    flat = visible_text("\n".join(screen_lines(app)))
    for t in texts:
        assert visible_text(t) in flat, f"{t!r} not shown literally"
    for seg in screen_segments(app):
        style = seg.style
        if style is None:
            continue
        assert not (style.link and "evil" in style.link), f"markup became a link: {style.link}"
        assert "app.quit" not in str(style.meta or {}), "markup became a click action"
        assert not style.blink


async def _until(pilot, cond, tries=300):
    for _ in range(tries):
        if cond():
            return True
        await pilot.pause(0.02)
    return False


async def test_markup_in_names_reasons_events_and_logs_is_shown_literally(tmp_path):
    slurm, ma, *_ = hostile_sources(EVIL, log_lines=[f"RuntimeError: {EVIL}"])
    app = CockpitApp([slurm, ma], clock=frozen, acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(220, 60), notifications=True) as pilot:
        await app.hub.first_round.wait()
        await _until(
            pilot,
            lambda: app.screen.query(QueueTable) and app.screen.query_one(QueueTable).row_count,
        )
        table = app.screen.query_one(QueueTable)
        assert table.move_to_key(f"{slurm.name}\x1f{OOM_JOB}")
        await pilot.pause()
        _assert_literal(app, "[red]pwn[/]")  # in the queue row

        await pilot.press("enter")
        assert await _until(
            pilot, lambda: isinstance(app.screen, JobScreen) and bool(app.screen.logs)
        )
        _assert_literal(app, "[red]pwn[/]")

        await pilot.press("l")
        assert isinstance(app.screen, LogScreen)
        view = app.screen.query_one(LogView)
        await _until(pilot, lambda: view._done)
        view.go_to_line(1)
        await pilot.pause()
        _assert_literal(
            app, "[link=http://evil.example/]doc[/link]", "[@click=app.quit]quit[/]", "[/]", "[bold"
        )
        await pilot.press("escape", "escape")

        app.open_subject(Subject("node", slurm.name, DRAINED_NODE))
        await pilot.pause(0.2)
        assert isinstance(app.screen, NodeScreen)
        _assert_literal(
            app, "[red]pwn[/]", "[link=http://evil.example/]doc[/link]", "[@click=app.quit]quit[/]"
        )
        await pilot.press("escape")

        tj = next(t for t in app.hub.snapshot(ma.name).training_jobs if t.events)
        app.open_subject(Subject("training_job", ma.name, tj.job_id))
        await pilot.pause(0.3)
        assert isinstance(app.screen, TrainingJobScreen)
        _assert_literal(app, "[red]pwn[/]", "[@click=app.quit]quit[/]")
        await pilot.press("escape")
    assert app.return_code in (None, 0)  # nothing quit the app behind our back


async def test_evidence_toast_and_log_search_toast_show_markup_literally(tmp_path):
    from tests.ui_support import NOW, small_site

    src = small_site()
    app = CockpitApp([src], clock=lambda: NOW, acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await app.hub.first_round.wait()
        app.open_subject(Subject("job", "lab", "4"))
        assert await _until(
            pilot, lambda: isinstance(app.screen, JobScreen) and bool(app.screen.logs)
        )
        screen = app.screen
        screen.logs = []  # evidence without a log file: shown in a toast
        screen.open_evidence(Evidence("events", "[/] [red]pwn[/] [@click=app.quit]q[/]"))
        await pilot.pause(0.2)
        _assert_literal(app, "[red]pwn[/]", "[@click=app.quit]q[/]")

        app.push_screen(LogScreen("log", [("stdout", _reader(src))]))
        await pilot.pause(0.2)
        view = app.screen.query_one(LogView)
        await _until(pilot, lambda: view._done)
        view.search("[/]no such[@click=app.quit]")  # the operator searches for markup-like text
        await pilot.pause(0.3)
        _assert_literal(app, "[/]no such[@click=app.quit]")  # "… not found" toast, literal
    assert app.return_code in (None, 0)


def _reader(src):
    from cockpit.screens.log import SourceLogReader

    return SourceLogReader(src, "/home/u/slurm-4.out", name="slurm-4.out")


def test_cli_snapshot_table_prints_markup_literally():
    import asyncio

    from cockpit.commands import snapshot

    slurm, ma, *_ = hostile_sources(EVIL)
    buf = io.StringIO()
    console = Console(file=buf, width=400, force_terminal=True, color_system="truecolor")
    for s in (asyncio.run(slurm.poll()), asyncio.run(ma.poll())):
        snapshot.render(s, console)
    out = buf.getvalue()
    assert "[red]pwn[/]" in out and "[@click=app.quit]quit[/]" in out
    assert "\x1b]8;" not in out  # no OSC 8 hyperlink was produced from [link=…]
