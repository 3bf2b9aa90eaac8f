"""The cursor stays where the operator put it: across polls, after a log, with vim keys."""

from __future__ import annotations

import dataclasses

from cockpit.widgets.logview import LogView

from cockpit.model import Evidence, Subject
from cockpit.screens.help import HelpScreen
from cockpit.screens.log import LogScreen
from cockpit.screens.panes import FindingList
from cockpit.screens.subject import JobScreen, NodeScreen

from .test_ui_flows import OOM_JOB, make_app, ready, until


async def _job_screen(app, pilot) -> JobScreen:
    app.open_subject(Subject("job", "demo-hpc", OOM_JOB))
    await until(
        pilot, lambda: isinstance(app.screen, JobScreen) and bool(app.screen.logs), "job logs"
    )
    return app.screen


async def test_findings_cursor_survives_polls_and_a_visit_to_the_log(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        screen = await _job_screen(app, pilot)
        fl = screen.query_one(FindingList)
        fi, f = next((i, f) for i, f in enumerate(screen.findings) if f.root_cause == "oom_killed")
        ei = next(i for i, e in enumerate(f.evidence) if e.where.startswith("slurmd"))
        fl.highlighted = fl.get_option_index(f"ev:{fi}:{ei}")
        where = fl.highlighted_identity()
        assert where is not None and where[3].startswith("slurmd")
        # each poll's evidence gains a line ahead of the highlighted one (as a refined cause
        # does): the cursor must follow the line, not stay on its old index
        real = app.hub.artifacts

        async def one_more_line_first(subject):
            arts, findings = await real(subject)
            extra = Evidence("squeue", f"a line the poll {app.hub.generation} added", tier=0)
            return arts, [
                dataclasses.replace(g, evidence=(extra, *g.evidence))
                if g.root_cause == "oom_killed"
                else g
                for g in findings
            ]

        app.hub.artifacts = one_more_line_first
        for _ in range(2):  # real polls: new snapshot, artifacts fetched and findings shown again
            gen = app.hub.generation
            for st in app.hub.states.values():
                await app.hub.poll_once(st)
            assert app.hub.generation > gen
            screen.refresh_data()
            await pilot.pause(0.2)
            assert fl.highlighted_identity() == where
        await pilot.press("enter")
        assert isinstance(app.screen, LogScreen)
        await until(pilot, lambda: app.screen.query_one(LogView)._done, "log indexed")
        for st in app.hub.states.values():  # a poll while reading the log
            await app.hub.poll_once(st)
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.pause(0.2)
        assert fl.highlighted_identity() == where


async def test_j_and_k_move_in_the_findings_of_job_and_node_screens(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        for subject, kind in (
            (Subject("job", "demo-hpc", OOM_JOB), JobScreen),
            (Subject("node", "demo-hpc", "cn013"), NodeScreen),
        ):
            app.open_subject(subject)
            await until(
                pilot,
                lambda k=kind: isinstance(app.screen, k) and bool(app.screen.logs),
                "subject logs",
            )
            fl = app.screen.query_one(FindingList)
            assert app.screen.focused is fl
            start = fl.highlighted
            await pilot.press("j")
            assert fl.highlighted is not None and fl.highlighted > start
            await pilot.press("k")
            assert fl.highlighted == start
            await pilot.press("escape")


async def test_j_and_k_scroll_the_help(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        scroller = app.screen.query_one("VerticalScroll")
        assert scroller.max_scroll_y > 0  # the help is longer than 24 lines
        await pilot.press("j", "j")
        await pilot.pause()
        assert scroller.scroll_y > 0
        await pilot.press("k", "k")
        await pilot.pause()
        assert scroller.scroll_y == 0
