"""At 80x24 the drill-down shows what to do without scrolling, and titles lead with the fact
that tells two jobs apart."""

from __future__ import annotations

from cockpit.model import Subject
from cockpit.screens.panes import FindingList
from cockpit.screens.subject import JobScreen

from .test_hostile_text import painted
from .test_ui_flows import make_app, ready, until


async def test_the_remedy_is_on_screen_at_80x24(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", "48104"))  # fastqc: command not found
        await until(pilot, lambda: isinstance(app.screen, JobScreen), "job screen")
        screen = app.screen
        await until(pilot, lambda: bool(screen.logs), "evidence")
        await pilot.pause()
        shown = "\n".join(painted(screen.query_one(FindingList)))
        assert "fastqc: command not found" in shown
        assert "→ Preflight on the compute node" in shown, shown


async def test_a_wrapped_remedy_keeps_its_last_line_when_the_list_scrolls(tmp_path):
    """The findings list is taller than 80x24 allows: its scrollbar appeared after the options
    were measured, narrowed them, and the remedy's last wrapped line ("resubmit.") was lost."""
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", "48101"))  # never runs: 64 CPUs > 48
        await until(pilot, lambda: isinstance(app.screen, JobScreen), "job screen")
        screen = app.screen
        await until(pilot, lambda: bool(screen.logs), "evidence")
        await pilot.pause()
        shown = "\n".join(painted(screen.query_one(FindingList)))
        assert "never runs: 64 CPUs > MaxCPUsPerNode 48" in shown  # the cause on top
        assert "resubmit." in shown, shown


def test_the_queues_verdict_cell_does_not_repeat_the_state_beside_it():
    from cockpit.views import _verdict_cell

    assert _verdict_cell("OUT_OF_MEMORY", "OUT_OF_MEMORY: MaxRSS 64.1G of ReqMem 64G") == (
        "MaxRSS 64.1G of ReqMem 64G"
    )
    assert _verdict_cell("TIMEOUT", "TIMEOUT after 04:00:00 (Timelimit 04:00:00)") == (
        "after 04:00:00 (Timelimit 04:00:00)"
    )
    # a verdict that does not start with the state keeps all its words
    assert _verdict_cell("PENDING", "never runs: 64 CPUs > MaxCPUsPerNode 48").startswith("never")
