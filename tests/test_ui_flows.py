"""Pilot tests of the operator's flows on the demo site with a frozen clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cockpit.widgets.logview import LogView

from cockpit.app import CockpitApp, HubUpdated
from cockpit.demo.site import demo_sources
from cockpit.model import Finding, Incident, Subject
from cockpit.screens.dashboard import DashboardScreen
from cockpit.screens.help import KEYS, HelpScreen
from cockpit.screens.incidents import IncidentScreen
from cockpit.screens.log import LogScreen
from cockpit.screens.panes import FindingList, IncidentTable, QueueTable
from cockpit.screens.subject import JobScreen
from cockpit.store.acks import AckStore

NOW = datetime(2026, 11, 29, 20, 45, 0, tzinfo=UTC)
OOM_JOB = "48102"


def frozen() -> datetime:
    return NOW


def make_app(tmp_path, **kw) -> CockpitApp:
    return CockpitApp(
        demo_sources(7, clock=frozen), clock=frozen, acks=AckStore(tmp_path / "state.json"), **kw
    )


async def until(pilot, cond, what: str, tries: int = 200) -> None:
    for _ in range(tries):
        if cond():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def ready(app, pilot) -> None:
    await app.hub.first_round.wait()
    await pilot.pause()
    await until(
        pilot,
        lambda: app.screen.query(QueueTable) and app.screen.query_one(QueueTable).row_count > 0,
        "queue rows",
    )


async def test_job_drilldown_log_at_first_error_next_error_and_back(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        assert queue.move_to_key(f"demo-hpc\x1f{OOM_JOB}")
        await pilot.press("enter")
        assert isinstance(app.screen, JobScreen)
        job_screen = app.screen
        await until(pilot, lambda: bool(job_screen.logs), "artifacts and logs")
        findings = job_screen.query_one(FindingList)
        assert any(f.root_cause == "oom_killed" for f in job_screen.findings)
        assert findings.highlighted is not None
        # walk down the evidence chain to the application's own log line
        oom = next(i for i, f in enumerate(job_screen.findings) if f.root_cause == "oom_killed")
        app_ev = next(i for i, e in enumerate(job_screen.findings[oom].evidence) if e.tier == 2)
        target = findings.get_option_index(f"ev:{oom}:{app_ev}")
        while findings.highlighted != target:
            await pilot.press("down")
        await pilot.press("enter")
        assert isinstance(app.screen, LogScreen)
        view = app.screen.query_one(LogView)
        await until(pilot, lambda: view._done, "log indexed")
        first = view.cursor
        assert first == job_screen.findings[oom].evidence[app_ev].line
        assert view.error_at(first) is not None, view.status_text()  # shown red
        await pilot.press("e")
        await pilot.pause()
        assert view.cursor >= first
        await pilot.press("escape")
        assert app.screen is job_screen
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)
        assert app.screen.query_one(QueueTable).cursor_key == f"demo-hpc\x1f{OOM_JOB}"


async def test_l_opens_the_job_log_at_its_first_red_error(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", OOM_JOB))
        await until(
            pilot, lambda: isinstance(app.screen, JobScreen) and bool(app.screen.logs), "job logs"
        )
        await pilot.press("l")
        view = app.screen.query_one(LogView)
        await until(pilot, lambda: view._done, "log indexed")
        assert view.error_at(view.cursor) is not None
        assert "error" in view.status_text()


async def test_filter_narrows_the_queue_and_esc_clears(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        total = queue.row_count
        await pilot.press("slash", *OOM_JOB)
        assert queue.row_count >= 1
        assert all(OOM_JOB in "".join(r.cells) for r in queue.rows)
        await pilot.press("enter")  # keep the filter, back to the table
        assert app.screen.focused is queue
        assert "filter" in str(app.screen.query_one("#queue-title").render())
        await pilot.press("slash", "escape")
        assert queue.row_count == total
        # a kept filter: esc on the table clears it (the title too) and stays on the dashboard
        await pilot.press("slash", *OOM_JOB, "enter")
        assert queue.row_count < total
        await pilot.press("escape")
        await pilot.pause()
        assert queue.row_count == total and app.screen.focused is queue
        assert "filter" not in str(app.screen.query_one("#queue-title").render())


async def test_palette_jumps_to_a_job(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*OOM_JOB)
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobScreen), "job screen")
        assert app.screen.subject == Subject("job", "demo-hpc", OOM_JOB)


async def test_incident_view_drilldown_and_ack_persists(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # whatever happens, nothing is written into the checkout
    exports = tmp_path / "exports"
    app = make_app(tmp_path, export_dir=exports)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("i")
        assert isinstance(app.screen, IncidentScreen)
        table = app.screen.query_one(IncidentTable)
        if not app.hub.incidents:
            pytest.fail("the demo site should produce incidents")
        key = table.cursor_key
        first = app.hub.incident_for(key)
        assert first.severity == "critical"
        await pilot.press("a")
        assert app.acks.is_acked(key)
        assert "yes" in table.rows[[r.key for r in table.rows].index(key)].cells
        await pilot.press("x")
        exported = list(exports.glob("cockpit-incidents-*.md"))
        assert len(exported) == 1
        assert first.title.split(":")[0] in exported[0].read_text(encoding="utf-8")
        assert not list(tmp_path.glob("*.md"))  # the export dir, not the current directory
        table.move_to_key(key)
        await pilot.press("enter")
        await pilot.pause()
        assert getattr(app.screen, "subject", None) == first.subject or isinstance(
            app.screen, IncidentScreen
        )
    assert AckStore(tmp_path / "state.json").is_acked(key)


async def test_help_lists_every_key_and_i_works_from_anywhere(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        listed = " ".join(k for _, keys in KEYS for k, _ in keys)
        for key in (
            "q",
            "i",
            "r",
            "ctrl+p",
            "/",
            "e / E",
            "g / G",
            "f",
            "w / W",
            "a",
            "x",
            "enter",
            "esc",
        ):
            assert key in listed
        await pilot.press("escape")
        app.open_subject(Subject("job", "demo-hpc", OOM_JOB))
        await pilot.pause()
        await pilot.press("i")
        assert isinstance(app.screen, IncidentScreen)
        # i replaced the drill-down: q goes home, and quits only from there
        assert [type(s) for s in app.screen_stack] == [DashboardScreen, IncidentScreen]
        await pilot.press("q")
        assert isinstance(app.screen, DashboardScreen) and app.is_running
        await pilot.press("q")
    assert app.return_code == 0


async def test_bell_rings_once_for_a_new_critical_incident(tmp_path):
    f = Finding("oom_killed", "critical", Subject("job", "demo-hpc", "1"), "OOM")
    inc = Incident("k1", "oom_killed", "critical", f.subject, "OOM", (f,))
    for bell, expected in ((True, 1), (False, 0)):
        app = make_app(tmp_path, bell=bell)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(app, pilot)
            before = app.bells
            app.post_message(HubUpdated("demo-hpc", (inc,)))
            await pilot.pause()
            assert app.bells - before == expected
    # the hub reports an incident as new only once, and never on a source's first poll
    hub = make_app(tmp_path).hub
    assert hub._new_critical("demo-hpc", (inc,)) == ()
    inc2 = Incident("k2", "oom_killed", "critical", f.subject, "OOM", (f,))
    assert hub._new_critical("demo-hpc", (inc, inc2)) == (inc2,)
    assert hub._new_critical("demo-hpc", (inc, inc2)) == ()


async def test_l_and_a_on_a_dashboard_row_open_its_logs_and_its_actions(tmp_path):
    """The README's `l` and `a` work on the selected row, not only in the drill-down."""
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        queue.focus()
        assert queue.move_to_key(f"demo-hpc\x1f{OOM_JOB}")
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, LogScreen), "the job's log")
        await pilot.press("escape")  # back to the job, then the dashboard
        await until(pilot, lambda: isinstance(app.screen, JobScreen), "the job's drill-down")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard")
        app.screen.query_one(QueueTable).focus()
        await pilot.press("a")
        from cockpit.screens.actions import ActionMenu

        await until(pilot, lambda: isinstance(app.screen, ActionMenu), "the job's actions")
        job = next(s for s in app.screen_stack if isinstance(s, JobScreen))
        assert job.subject.id == OOM_JOB


async def test_q_closes_the_help(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("q")
        assert isinstance(app.screen, DashboardScreen) and app.is_running
