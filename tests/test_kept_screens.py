"""Views an operator keeps coming back to are made once (issue #32, the week in tmux): the
incident and alert screens, and one drill-down per kind retargeted to the next job. Each screen
made anew at every visit left its widget tree behind as cyclic garbage that the polls froze,
and the full collections that took it back stopped the UI for up to a second."""

from __future__ import annotations

from cockpit.model import Subject
from cockpit.screens.alerts import AlertScreen
from cockpit.screens.incidents import IncidentScreen
from cockpit.screens.subject import JobScreen
from tests.test_ui_flows import OOM_JOB, make_app, ready, until

TIMEOUT_JOB = "48103"


async def test_incidents_and_alerts_are_the_same_screens_at_every_visit(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        seen: dict[type, set[int]] = {IncidentScreen: set(), AlertScreen: set()}
        for _ in range(3):
            for key, cls in (("i", IncidentScreen), ("A", AlertScreen)):
                await pilot.press(key)
                await until(pilot, lambda cls=cls: isinstance(app.screen, cls), cls.__name__)
                seen[cls].add(id(app.screen))
                await pilot.press("escape")
                await pilot.pause()
        assert {cls: len(ids) for cls, ids in seen.items()} == {IncidentScreen: 1, AlertScreen: 1}
        # shown again, it shows the data of now: the incident list is filled at each visit
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, IncidentScreen), "incidents")
        assert "open" in str(app.screen.query_one("#incidents-title").render())


def _title(app) -> str:
    found = app.screen.query("#subject-title")  # empty until the screen is composed
    return str(found.first().render()) if found else ""


async def test_one_job_drilldown_is_kept_and_shows_the_job_it_was_opened_for(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        screens = set()
        for job in (OOM_JOB, TIMEOUT_JOB, OOM_JOB):
            app.open_subject(Subject("job", "demo-hpc", job))
            await until(pilot, lambda: isinstance(app.screen, JobScreen), "job screen")
            await until(pilot, lambda job=job: job in _title(app), f"title of {job}")
            screens.add(id(app.screen))
            other = TIMEOUT_JOB if job == OOM_JOB else OOM_JOB
            assert other not in _title(app)
            # the job's own findings, not the last job's: the OOM job's first finding is its OOM
            await until(pilot, lambda: bool(app.screen.findings), "findings")
            causes = {f.root_cause for f in app.screen.findings}
            assert ("oom_killed" in causes) == (job == OOM_JOB), causes
            await pilot.press("escape")
            await pilot.pause()
        assert len(screens) == 1


async def test_a_job_opened_from_the_kept_job_screen_gets_a_screen_of_its_own(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", OOM_JOB))
        await until(pilot, lambda: isinstance(app.screen, JobScreen), "job screen")
        kept = app.screen
        app.open_subject(Subject("job", "demo-hpc", TIMEOUT_JOB))  # e.g. through its node
        await until(pilot, lambda: app.screen is not kept, "a second job screen")
        assert isinstance(app.screen, JobScreen)
        await until(pilot, lambda: TIMEOUT_JOB in _title(app), "second title")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is kept and OOM_JOB in _title(app)


async def test_the_log_viewer_is_kept_and_shows_the_logs_it_was_opened_on(tmp_path):
    from cockpit.widgets.logview import LogView

    from cockpit.screens.log import BytesLogReader, LogScreen

    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        first = [
            ("a.out", BytesLogReader(b"step 1\nRuntimeError: CUDA out of memory.\n", "a.out")),
            ("a.err", BytesLogReader(b"warning only\n", "a.err")),
        ]
        second = [
            ("b.log", BytesLogReader(b"ok\nok\nslurmstepd: error: *** JOB 7 CANCELLED\n", "b"))
        ]
        screens = set()
        for title, logs, want in (("A", first, 2), ("B", second, 3), ("A", first, 2)):
            app.open_log(title, logs)
            await until(
                pilot,
                lambda: isinstance(app.screen, LogScreen) and bool(app.screen.query(LogView)),
                "log screen",
            )
            view = app.screen.query_one(LogView)

            def read(view=view, reader=logs[0][1]) -> bool:
                return view.reader is reader and view._done

            await until(pilot, read, "read")
            screens.add(id(app.screen))
            # the tabs and the title are the ones asked for, the view at that log's first error
            n_tabs = len(logs)
            await until(pilot, lambda n=n_tabs: len(app.screen.query("Tab")) == n, "tabs")
            assert str(app.screen.query_one("#log-title").render()).strip() == title
            assert view.error_at(view.cursor) is not None and view.cursor == want
            await pilot.press("f")  # follow: stopped when the viewer is closed
            await pilot.press("escape")
            await pilot.pause()
            assert not view._follow_timer
        assert len(screens) == 1
