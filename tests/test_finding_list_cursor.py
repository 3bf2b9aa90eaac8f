"""The drill-down's finding list keeps the cursor where the operator put it, and only there: a
cursor it placed itself follows the new top finding when evidence ranks another cause first."""

from __future__ import annotations

from textual.app import App, ComposeResult

from cockpit.model import Finding, Subject
from cockpit.screens.panes import FindingList

NODE = Subject("node", "hpc", "cn013")


def _f(cause: str, severity: str, title: str) -> Finding:
    return Finding(cause, severity, NODE, title, remedy="do this", explanation="because")


class _Host(App):
    def compose(self) -> ComposeResult:
        yield FindingList(id="fl")


def _top(fl: FindingList) -> str:
    return fl.findings[int(fl.get_option_at_index(fl.highlighted).id.split(":")[1])].root_cause


async def test_a_cursor_nobody_moved_goes_to_the_new_top_finding():
    app = _Host()
    async with app.run_test(size=(80, 12)) as pilot:
        fl = app.query_one(FindingList)
        warn = _f("node_drain_admin", "warning", "DRAIN: admin")
        fl.set_findings([warn])
        await pilot.pause()
        # the evidence round: a critical cause now ranks first
        crit = _f("node_drain_kill_task_failed", "critical", "DRAIN: Kill task failed")
        fl.set_findings([warn, crit])
        await pilot.pause()
        assert _top(fl) == "node_drain_kill_task_failed"
        assert fl.scroll_y == 0  # the headline is on screen


async def test_a_cursor_the_operator_moved_stays_on_its_finding():
    app = _Host()
    async with app.run_test(size=(80, 12)) as pilot:
        fl = app.query_one(FindingList)
        crit = _f("node_drain_kill_task_failed", "critical", "DRAIN: Kill task failed")
        warn = _f("node_drain_admin", "warning", "DRAIN: admin")
        fl.set_findings([crit, warn])
        await pilot.pause()
        fl.focus()
        await pilot.pause()
        while _top(fl) != "node_drain_admin":
            await pilot.press("j")
        fl.set_findings([crit, warn, _f("node_not_responding", "critical", "DOWN")])
        await pilot.pause()
        assert _top(fl) == "node_drain_admin"
