"""Keys that must never surprise: q leaves a view and quits only from the dashboard, Q quits
from anywhere, z zooms the focused pane, i replaces what was open instead of stacking."""

from __future__ import annotations

from cockpit.widgets.logview import LogView
from textual import events

from cockpit.model import Subject
from cockpit.screens.dashboard import DashboardScreen, Pane
from cockpit.screens.incidents import IncidentScreen
from cockpit.screens.log import LogScreen
from cockpit.screens.panes import NodeTable, QueueTable, TrainingJobTable
from cockpit.screens.subject import JobScreen

from .test_ui_flows import OOM_JOB, make_app, ready, until


async def _open_log(app, pilot) -> LogScreen:
    app.open_subject(Subject("job", "demo-hpc", OOM_JOB))
    await until(pilot, lambda: isinstance(app.screen, JobScreen) and bool(app.screen.logs), "logs")
    await pilot.press("l")
    await until(pilot, lambda: isinstance(app.screen, LogScreen), "log screen")
    view = app.screen.query_one(LogView)
    await until(pilot, lambda: view._done, "log indexed")
    return app.screen


async def test_q_in_the_log_viewer_goes_back_instead_of_quitting(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await _open_log(app, pilot)
        await pilot.press("q")
        assert isinstance(app.screen, JobScreen) and app.is_running
        await pilot.press("q")
        assert isinstance(app.screen, DashboardScreen) and app.is_running
        await pilot.press("q")
    assert app.return_code == 0


async def test_capital_q_quits_from_a_log(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await _open_log(app, pilot)
        await pilot.press("Q")
        await pilot.pause()
        assert not app.is_running
    assert app.return_code == 0


async def test_i_from_a_log_replaces_it_so_one_esc_is_home(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await _open_log(app, pilot)
        await pilot.press("i")
        assert isinstance(app.screen, IncidentScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)


async def test_z_in_a_drill_down_says_it_zooms_dashboard_panes(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", "48104"))
        await pilot.pause(0.3)
        screen = app.screen
        await pilot.press("z")
        await pilot.pause()
        assert app.screen is screen  # nothing else happened
        assert any("zooms a dashboard pane" in str(n.message) for n in app._notifications)


async def test_z_zooms_the_focused_pane_and_esc_restores(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        screen = app.screen
        queue = screen.query_one(QueueTable)
        nodes = screen.query_one(NodeTable)
        await pilot.press("2")
        assert screen.focused is nodes
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(screen.maximized, Pane) and screen.maximized.id == "nodes-pane"
        # the zoomed pane takes the screen: the queue is not drawn, the nodes get the rows
        assert queue.region.height == 0 or not queue.display or queue.region.area == 0
        assert nodes.region.height > 10
        await pilot.press("escape")
        await pilot.pause()
        assert screen.maximized is None and queue.region.height > 0
        await pilot.press("z")
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None


async def test_keys_typed_fast_after_slash_go_into_the_filter(tmp_path):
    # `/oom⏎` typed in one go: the letters reached the table before the filter had focus, and
    # enter opened the top row (another job); back from it, the filter still held the focus
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        queue = app.screen.query_one(QueueTable)
        # as a terminal delivers a fast typist's (or tmux send-keys') bytes: one batch, the
        # app handles none of them before all are queued
        batch = [("slash", "/"), *((c, c) for c in "dr"), ("backspace", None), ("backspace", None)]
        batch += [("o", "o"), ("o", "o"), ("m", "m"), ("enter", "\r")]
        for key, char in batch:  # "/dr⌫⌫oom⏎": the backspaces lost, "droom" was the filter
            app.post_message(events.Key(key, char))
        await pilot.pause(0.3)
        assert isinstance(app.screen, DashboardScreen)
        assert queue.filter_text == "oom"
        assert app.screen.focused is queue
        assert queue.row_count >= 1


async def test_a_pane_key_while_zoomed_zooms_that_pane(tmp_path):
    """Zoomed on the queue, `3` focused the hidden training pane: the screen still showed
    jobs, and enter opened a training job nobody could see (new-user trial). The zoom now
    follows to the pane asked for."""
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        screen = app.screen
        await pilot.press("1", "z")
        await pilot.pause()
        assert isinstance(screen.maximized, Pane) and screen.maximized.id == "queue-pane"
        await pilot.press("3")
        await pilot.pause()
        training = screen.query_one(TrainingJobTable)
        assert screen.focused is training
        assert isinstance(screen.maximized, Pane) and screen.maximized.id == "training-pane"
        assert training.region.height > 10
