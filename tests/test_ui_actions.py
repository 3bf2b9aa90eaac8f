"""The guarded-action loop in the TUI on the demo site: a, pick, see the exact command,
confirm, see the result, the node really drained; esc runs nothing; --readonly refuses."""

from __future__ import annotations

import json

from textual.widgets import Input, Static

from cockpit.actions import ActionResult
from cockpit.model import Subject
from cockpit.screens.actions import ActionMenu, ConfirmAction
from cockpit.screens.subject import NodeScreen

from .test_ui_flows import make_app, ready, until

NODE = "bm01"


def _node(app):
    st = app.hub.states["demo-hpc"]
    return next(n for n in st.snapshot.nodes if n.name == NODE)


async def _open_node(app, pilot) -> None:
    app.open_subject(Subject("node", "demo-hpc", NODE))
    await until(pilot, lambda: isinstance(app.screen, NodeScreen), "node screen")


async def test_drain_from_the_drill_down_shows_the_command_runs_it_and_audits(tmp_path):
    journal = tmp_path / "audit.jsonl"
    app = make_app(tmp_path, audit_path=journal)
    async with app.run_test(size=(100, 32)) as pilot:
        await ready(app, pilot)
        assert "DRAIN" not in _node(app).flags
        await _open_node(app, pilot)
        await pilot.press("a")
        assert isinstance(app.screen, ActionMenu)
        await pilot.press("enter")  # the first action of a node: drain
        assert isinstance(app.screen, ConfirmAction)
        dialog = app.screen
        command = dialog.query_one("#command", Static)
        assert "reason is required" in str(command.render())
        await pilot.press("enter")  # no reason: nothing runs
        assert dialog.result is None and not journal.exists()
        await pilot.press(*"fan FAN2 failed")
        shown = str(command.render())
        assert "scontrol update NodeName=bm01 State=DRAIN 'Reason=fan FAN2 failed'" in shown
        await pilot.press("enter")
        await until(pilot, lambda: dialog.result is not None, "the action's result")
        assert dialog.result.ok
        assert "done" in str(dialog.query_one("#result", Static).render())
        issued, entry = (json.loads(ln) for ln in journal.read_text().splitlines())
        assert issued["action"] == "drain" and issued["ok"] is None  # written before it ran
        assert entry["action"] == "drain" and entry["subject"] == "node bm01" and entry["ok"]
        await pilot.press("enter")
        assert isinstance(app.screen, NodeScreen)
        # the poll the action asked for shows the node drained with the operator's reason
        await until(pilot, lambda: "DRAIN" in _node(app).flags, "node drained", tries=400)
        assert _node(app).reason == "fan FAN2 failed"


async def test_esc_in_the_confirm_dialog_runs_nothing(tmp_path):
    journal = tmp_path / "audit.jsonl"
    app = make_app(tmp_path, audit_path=journal)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await _open_node(app, pilot)
        await pilot.press("a", "enter", *"maintenance")
        assert isinstance(app.screen, ConfirmAction)
        await pilot.press("escape")
        assert isinstance(app.screen, NodeScreen)
        await pilot.pause(0.2)
        assert not journal.exists() and "DRAIN" not in _node(app).flags


async def test_readonly_refuses_and_says_why(tmp_path):
    app = make_app(tmp_path, readonly=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await _open_node(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen)
        assert any("read-only" in str(n.message) for n in app._notifications)


async def test_readonly_says_so_in_the_title_line_before_any_key(tmp_path):
    # an operator who started with --readonly (or took over someone's tmux) sees it up front,
    # not only when an action is refused
    for readonly in (True, False):
        app = make_app(tmp_path / str(readonly), readonly=readonly)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(app, pilot)
            title = str(app.screen.query_one("#title", Static).render())
            assert ("read-only" in title) is readonly


async def test_a_cluster_without_allow_actions_offers_none(tmp_path):
    app = make_app(tmp_path)
    for st in app.hub.states.values():
        st.source.allow_actions = False
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await _open_node(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, NodeScreen)
        assert any("allow_actions = true" in str(n.message) for n in app._notifications)


async def test_a_refused_action_shows_slurms_answer(tmp_path):
    """A job action on the demo is refused by its scontrol: the dialog shows the answer."""
    journal = tmp_path / "audit.jsonl"
    app = make_app(tmp_path, audit_path=journal)
    async with app.run_test(size=(100, 32)) as pilot:
        await ready(app, pilot)
        st = app.hub.states["demo-hpc"]
        job = next(j for j in st.snapshot.jobs if j.state == "PENDING")
        app.open_subject(Subject("job", "demo-hpc", job.job_id))
        await until(pilot, lambda: app.screen.__class__.__name__ == "JobScreen", "job screen")
        await pilot.press("a")
        menu = app.screen
        assert isinstance(menu, ActionMenu)
        await pilot.press("enter")  # hold: a job's first action (cancel comes last)
        dialog = app.screen
        assert isinstance(dialog, ConfirmAction) and not dialog.query(Input)
        assert f"scontrol hold {job.job_id}" in str(dialog.query_one("#command", Static).render())
        await pilot.press("enter")
        await until(pilot, lambda: dialog.result is not None, "the action's result")
        assert not dialog.result.ok and dialog.result.exit_status == 1
        shown = str(dialog.query_one("#result", Static).render())
        assert "failed (exit 1)" in shown and "polling now" in shown
        assert json.loads(journal.read_text().splitlines()[-1])["ok"] is False
        # Slurm's two messages (both on stderr) stay two lines, not "…job 12slurm_suspend…"
        two = "Requested partition configuration not available now for job 12\n"
        two += "slurm_suspend error: Requested partition configuration not available now"
        dialog._show(ActionResult(False, 1, two), "")
        shown = str(dialog.query_one("#result", Static).render())
        assert "job 12\nslurm_suspend error" in shown


async def test_j_and_k_move_in_the_action_menu(tmp_path):
    # j moved nothing here and enter then ran the first action (hold) instead of the one chosen
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await _open_node(app, pilot)
        await pilot.press("a")
        menu = app.screen
        assert isinstance(menu, ActionMenu)
        first = menu.kinds[0].verb
        await pilot.press("j")
        await pilot.press("enter")
        dialog = app.screen
        assert isinstance(dialog, ConfirmAction)
        assert dialog.kind.verb == menu.kinds[1].verb != first
        await pilot.press("escape")
        await pilot.press("a", "j", "k", "enter")
        assert app.screen.kind.verb == first


async def test_an_oom_killed_jobs_menu_says_a_requeue_will_likely_be_killed_again(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        st = app.hub.states["demo-hpc"]
        oom = next(j for j in st.snapshot.jobs if j.state == "OUT_OF_MEMORY")
        app.open_subject(Subject("job", "demo-hpc", oom.job_id))
        await until(pilot, lambda: not isinstance(app.screen, type(app.screen_stack[0])), "job")
        await pilot.press("a")
        menu = app.screen
        assert isinstance(menu, ActionMenu)
        assert [k.verb for k in menu.kinds] == ["requeue"]
        hint = str(menu.query_one("#oom-hint", Static).render())
        assert "same memory" in hint and "--mem" in hint
        await pilot.press("escape")
        # a job that did not run out of memory gets no such line
        other = next(j for j in st.snapshot.jobs if j.state == "FAILED")
        app.pop_screen()
        app.open_subject(Subject("job", "demo-hpc", other.job_id))
        await pilot.pause()
        await pilot.press("a")
        assert isinstance(app.screen, ActionMenu) and not app.screen.query("#oom-hint")
