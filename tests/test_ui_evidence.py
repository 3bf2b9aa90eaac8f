"""Enter on an evidence line opens the full log at that very line."""

from __future__ import annotations

import re

from cockpit.widgets.logview import LogView

from cockpit.model import Subject
from cockpit.screens.log import LogScreen
from cockpit.screens.panes import FindingList
from cockpit.screens.subject import JobScreen
from cockpit.slurm.evidence import grep_excerpt

from .test_ui_flows import OOM_JOB, make_app, ready, until


async def _cursor_text(view: LogView) -> str:
    """The text of the log line under the viewer's cursor, read from the file itself."""
    start = view._starts[view.cursor - 1]
    data = await view.reader.read(start, view._line_end(view.cursor) - start)
    return data.decode("utf-8", "replace")


async def _open_evidence(app, pilot, where: str) -> tuple[LogView, object]:
    app.open_subject(Subject("job", "demo-hpc", OOM_JOB))
    await until(
        pilot, lambda: isinstance(app.screen, JobScreen) and bool(app.screen.logs), "job logs"
    )
    screen = app.screen
    fl = screen.query_one(FindingList)
    fi, f = next((i, f) for i, f in enumerate(screen.findings) if f.root_cause == "oom_killed")
    ei, ev = next((i, e) for i, e in enumerate(f.evidence) if e.where.startswith(where))
    fl.highlighted = fl.get_option_index(f"ev:{fi}:{ei}")
    await pilot.press("enter")
    assert isinstance(app.screen, LogScreen)
    view = app.screen.query_one(LogView)
    await until(pilot, lambda: view._done and view._landed, "log indexed")
    return view, ev


async def test_enter_on_the_slurmd_evidence_opens_slurmd_log_at_the_oom_kill_line(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        view, ev = await _open_evidence(app, pilot, "slurmd")
        text = await _cursor_text(view)
        assert "oom-kill event" in text and OOM_JOB in text, (view.status_text(), text)
        assert view.cursor == ev.line  # the evidence's own line number, shown as such
        assert "slurmd" in view.reader.name


async def test_enter_on_the_slurmctld_evidence_opens_the_controller_log_at_this_jobs_line(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        view, ev = await _open_evidence(app, pilot, "slurmctld")
        text = await _cursor_text(view)
        assert f"JobId={OOM_JOB}" in text and "Exceeded job memory" in text, (
            view.status_text(),
            text,
        )


async def test_shared_daemon_log_without_a_line_opens_at_this_jobs_first_error(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        app.open_subject(Subject("job", "demo-hpc", OOM_JOB))
        await until(
            pilot, lambda: isinstance(app.screen, JobScreen) and bool(app.screen.logs), "job logs"
        )
        screen = app.screen
        index = next(i for i, (label, _) in enumerate(screen.logs) if label == "slurmctld.log")
        screen.open_log(index)
        await pilot.pause()
        view = app.screen.query_one(LogView)
        await until(pilot, lambda: view._done and view._landed, "log indexed")
        text = await _cursor_text(view)
        assert OOM_JOB in text, (view.status_text(), text)


def test_grep_excerpt_keeps_each_lines_file_offset_and_number():
    data = b"a JobId=1 x\nb JobId=2 error: y\nc JobId=1 error: z\nd\n"
    lt = grep_excerpt(
        "slurmctld.log", "slurmctld", "/l", "2", data, 0, re.compile(rb"JobId=2(?![0-9])")
    )
    assert lt.data == b"b JobId=2 error: y\n"
    assert lt.line_offsets == (12,) and lt.line_numbers == (2,)
    assert lt.file_offset(1, 0) == 12 and lt.file_line(1) == 2
    # a tail range (offset > 0): offsets still exact, line numbers unknown
    tail = grep_excerpt(
        "slurmctld.log", "slurmctld", "/l", "1", data, 1000, re.compile(rb"JobId=1(?![0-9])")
    )
    assert tail.line_offsets == (1000, 1000 + data.index(b"c JobId"))
    assert tail.file_line(2) is None


async def test_a_finding_names_the_same_file_line_as_its_evidence(tmp_path):
    """48110's explanation quotes a slurmctld.log line numbered as in the file, not the excerpt."""
    app = make_app(tmp_path)
    hub = app.hub
    for st in hub.states.values():
        await hub.poll_once(st)
    f = next(f for f in hub.states["demo-hpc"].findings if f.subject.id == "48110")
    ev = next(e for e in f.evidence if e.where == "slurmctld.log")
    assert ev.line and ev.line > 100
    assert f"(slurmctld.log:{ev.line})" in f.explanation
