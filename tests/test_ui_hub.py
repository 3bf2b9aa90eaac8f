"""The hub: one poll feeds every pane; a failing source keeps its old data, marked STALE."""

from __future__ import annotations

from datetime import timedelta

from cockpit.app import CockpitApp
from cockpit.model import SourceError
from cockpit.screens.dashboard import DashboardScreen
from cockpit.screens.panes import NodeTable, QueueTable, SourceStatus
from cockpit.store.acks import AckStore
from tests.ui_support import NOW, small_site


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self):
        return self.now


async def test_failing_source_keeps_last_good_data_and_says_stale(tmp_path):
    src = small_site()
    clock = Clock()
    app = CockpitApp([src], clock=clock, acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(120, 30)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause()
        assert app.screen.query_one(QueueTable).row_count == 30
        st = app.hub.states["lab"]
        src.fail = SourceError("unreachable", "ssh: connection refused", where="lab-login")
        clock.now = NOW + timedelta(minutes=3)
        await app.hub.poll_once(st)
        await pilot.pause()
        status = str(app.screen.query_one(SourceStatus).render())
        assert "STALE" in status
        assert "connection refused" in status
        assert "3m ago" in status  # age of the last good data, not of the failed attempt
        assert app.screen.query_one(QueueTable).row_count == 30  # old data still shown
        src.interval = 10.0
        assert app.hub._next_delay(st) == 10.0
        await app.hub.poll_once(st)
        assert app.hub._next_delay(st) == 20.0  # backing off
        await app.hub.poll_once(st)
        assert app.hub._next_delay(st) == 20.0  # capped at two intervals: recovery stays prompt
        src.fail = SourceError("throttled", "429", retry_after_s=90)
        await app.hub.poll_once(st)
        assert app.hub._next_delay(st) == 90.0  # Retry-After wins
        src.fail = None
        clock.now = NOW  # the source answers again with fresh data
        await app.hub.poll_once(st)
        await pilot.pause()
        status = str(app.screen.query_one(SourceStatus).render())
        assert "STALE" not in status and "ago" not in status
        assert f"as of {NOW.astimezone():%H:%M:%S}" in status  # when the data was taken, local time
        # no poll for over two intervals: the line turns STALE by itself (its 1 Hz check)
        clock.now = NOW + timedelta(seconds=25)
        await pilot.pause(1.3)
        widget = app.screen.query_one(SourceStatus)
        painted = "".join(
            seg.text for strip in widget.render_lines(widget.size.region) for seg in strip
        )
        assert "(25s ago) STALE" in painted


async def test_panes_share_one_poll_and_r_polls_again(tmp_path):
    src = small_site()
    app = CockpitApp([src], clock=Clock(), acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(120, 30)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause()
        assert src.polls == 1  # queue and nodes panes, status line: one poll
        assert app.screen.query_one(NodeTable).rows[0].cells[0] == "c0"  # the drained node first
        await pilot.press("r")
        for _ in range(50):
            await pilot.pause(0.02)
            if src.polls == 2:
                break
        assert src.polls == 2


async def test_hostile_job_names_render_literally_and_q_exits_zero(tmp_path):
    evil = "[red]pwn[/] \x1b]8;;http://x\x07link\x1b]8;;\x07 [@click=app.quit]"
    src = small_site(hostile=evil)
    app = CockpitApp([src], clock=Clock(), acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(160, 30)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause()
        table = app.screen.query_one(QueueTable)
        line = "".join(s.text for s in table.render_line(1))
        assert "[red]pwn[/]" in line
        assert "\x1b" not in line
        await pilot.press("enter")
        await pilot.pause(0.2)
        title = str(app.screen.query_one("#subject-title").render())
        assert "[red]pwn[/]" in title
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)
        await pilot.press("q")
    assert app.return_code == 0


async def test_node_screen_shows_the_jobs_current_findings_not_a_contradicting_rediagnosis(
    tmp_path,
):
    """cn013 drained for 'Kill task failed': its jobs failed because of the drain, and the node
    screen must say so (the hub's enriched findings), not 'non-zero exit' from a re-diagnosis
    that had only the node's logs."""
    from cockpit.demo.site import demo_sources
    from cockpit.model import Subject
    from tests.test_ui_flows import frozen

    app = CockpitApp(
        demo_sources(7, clock=frozen), clock=frozen, acks=AckStore(tmp_path / "s.json")
    )
    hub = app.hub
    for st in hub.states.values():
        await hub.poll_once(st)
    node = Subject("node", "demo-hpc", "cn013")
    _arts, findings = await hub.artifacts(node)
    assert any(
        f.subject == node and f.root_cause == "node_drain_kill_task_failed" for f in findings
    )
    jobs = [f for f in findings if f.subject.kind == "job"]
    assert jobs, "the jobs that died with the drain are listed"
    current = {f.subject: f for f in hub.states["demo-hpc"].findings if f.subject.kind == "job"}
    for f in jobs:
        assert f.root_cause != "application_error", f.title
        assert f == current[f.subject]


async def test_incidents_include_a_source_that_published_while_another_was_diagnosed():
    """Correlation runs in the poll's thread; a source that published meanwhile is not lost."""
    import asyncio
    import threading

    from cockpit.runtime.hub import Hub

    a, b = small_site(), small_site()
    a.name, b.name = "east", "west"
    hub = Hub([a, b], clock=Clock())
    gate = threading.Event()
    analyse = hub._analyse

    def slow_for_east(snap, *args):
        if snap.source == "east":
            assert gate.wait(10)
        return analyse(snap, *args)

    hub._analyse = slow_for_east  # type: ignore[method-assign]
    for st in hub.states.values():  # no evidence round: its second publish would hide a stale first
        st.evidence.missing = lambda snap: []  # type: ignore[method-assign]
    east = asyncio.create_task(hub.poll_once(hub.states["east"]))
    await asyncio.sleep(0.05)
    await hub.poll_once(hub.states["west"])  # publishes while east's thread is still running
    gate.set()
    await east
    sources = {i.subject.source for i in hub.incidents}
    assert sources == {"east", "west"}, sources  # both drained c0 nodes, each under its cluster
