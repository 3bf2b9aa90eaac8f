"""--record keeps what a cluster answered; --replay plays it through the same pipeline: the
replayed snapshot of each poll is the live one, steps move between polls, a recording cut
by a crash still plays, and secrets never reach the recording."""

from __future__ import annotations

import gzip
from datetime import timedelta

import pytest

from cockpit.demo.site import DEMO_START, demo_sources
from cockpit.errors import UserError
from cockpit.record import ReplayClock, replay_sources, start_recording
from cockpit.transport import CommandResult
from tests.ui_support import replay_app


class Clock:
    def __init__(self) -> None:
        self.now = DEMO_START + timedelta(minutes=15)

    def __call__(self):
        return self.now


def _summary(snap):
    return (
        sorted((j.job_id, j.state, j.reason) for j in snap.jobs),
        sorted((n.name, n.state, n.flags, n.reason) for n in snap.nodes),
    )


async def _record(tmp_path, polls: int = 3):
    clock = Clock()
    src = demo_sources(7, clock=clock)[0]
    skipped = start_recording(tmp_path, [src], clock)
    assert skipped == []
    live = []
    for _ in range(polls):
        snap = await src.poll()
        assert snap.error is None
        live.append(_summary(snap))
        clock.now += timedelta(minutes=5)  # jobs start, end and fail between polls
    await src.close()
    return live


async def test_each_replayed_poll_is_the_recorded_one(tmp_path):
    live = await _record(tmp_path)
    assert live[0] != live[-1]  # the site changed between polls: the replay must follow
    sources, clock = replay_sources(tmp_path)
    assert [s.name for s in sources] == ["demo-hpc"] and len(clock.polls) == 3
    src = sources[0]
    for i in range(3):
        snap = await src.poll()
        assert snap.error is None, snap.error
        assert _summary(snap) == live[i], f"poll {i + 1}"
        assert clock.label().startswith(f"REPLAY poll {i + 1}/3")
        clock.step(1)
    assert not clock.step(1)  # at the end: stays on the last poll
    clock.step(-10)
    assert clock.index == 0 and _summary(await src.poll()) == live[0]


async def test_a_recording_cut_by_a_crash_still_plays_its_complete_polls(tmp_path):
    live = await _record(tmp_path)
    path = tmp_path / "demo-hpc.jsonl.gz"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 200])  # the last gzip member is cut short
    sources, clock = replay_sources(tmp_path)
    assert 1 <= len(clock.polls) <= 3
    assert _summary(await sources[0].poll()) == live[0]


def test_not_a_recording_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="not a cockpit recording"):
        replay_sources(tmp_path)
    (tmp_path / "meta.json").write_text('{"format": 1, "sources": []}')
    with pytest.raises(UserError, match="no poll"):
        replay_sources(tmp_path)


class Leaky:
    name = "leaky"

    async def run(self, argv, timeout=30.0):
        out = b"JOBID\x1fNAME\n1\x1fexport password=hunter2\n"
        return CommandResult(tuple(argv), out, b"", 0)

    async def close(self):
        return None


async def test_secrets_in_outputs_never_reach_the_recording(tmp_path):
    from cockpit.slurm.source import SlurmSource

    clock = Clock()
    src = SlurmSource("leaky", Leaky(), clock=clock)
    start_recording(tmp_path, [src], clock)
    await src.poll()
    await src.close()
    raw = gzip.decompress((tmp_path / "leaky.jsonl.gz").read_bytes())
    assert b"squeue" in raw and b"hunter2" not in raw


def test_replay_clock_reads_the_poll_time_and_answers_its_window():
    t0 = DEMO_START
    clock = ReplayClock([t0, t0 + timedelta(seconds=15), t0 + timedelta(seconds=30)])
    # the clock reads the poll's own time (the status line's "as of" matches the title); every
    # command of the poll (recorded a few seconds after its squeue) is before its window's end
    assert clock() == t0 and t0 + timedelta(seconds=14) < clock.end() < t0 + timedelta(seconds=15)
    clock.step(2)
    assert clock() == t0 + timedelta(seconds=30) and clock.end() == t0 + timedelta(seconds=90)


async def test_replay_keys_step_the_tui_through_the_recorded_polls(tmp_path):
    from textual.widgets import Static

    from cockpit.screens.panes import QueueTable

    from .test_ui_flows import until

    live = await _record(tmp_path / "rec")
    app, clock = replay_app(tmp_path / "rec", tmp_path / "state.json")
    async with app.run_test(size=(100, 30)) as pilot:
        st = app.hub.states["demo-hpc"]

        def queue():
            return app.screen.query_one(QueueTable)

        await until(pilot, lambda: st.snapshot is not None, "first replayed poll", 500)
        assert st.error is None and _summary(st.snapshot) == live[0]
        await pilot.press("right_square_bracket")
        assert clock.index == 1, clock.index
        await until(pilot, lambda: _summary(st.snapshot) == live[1], "the second poll", 500)
        await until(pilot, lambda: queue().row_count == len(live[1][0]), "its rows", 500)
        title = str(app.screen.query_one("#title", Static).render())
        assert "REPLAY poll 2/3" in title
        ids = {r.key.split("\x1f")[1] for r in queue().rows}
        assert ids == {j for j, _, _ in live[1][0]}
        await pilot.press("left_curly_bracket")
        await until(pilot, lambda: _summary(st.snapshot) == live[0], "back to poll 1", 500)


class Flaky:
    """Answers like the demo, except that the second poll finds the controller unreachable."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.polls = inner, "flaky", 0

    async def run(self, argv, timeout=30.0):
        from cockpit.transport import ConnectError

        if argv[0] == "squeue" and "-O" not in argv:  # the queue, not the risk sampler's
            self.polls += 1
        if self.polls == 2:
            raise ConnectError("ssh: connect to host hpc port 22: Connection refused")
        return await self.inner.run(argv, timeout)

    async def read_range(self, path, offset, length):
        return await self.inner.read_range(path, offset, length)

    async def stat(self, path):
        return await self.inner.stat(path)

    async def close(self):
        return None


async def test_an_outage_is_recorded_and_replayed_as_an_outage(tmp_path):
    clock = Clock()
    src = demo_sources(7, clock=clock)[0]
    src.transport = Flaky(src.transport)
    start_recording(tmp_path, [src], clock)
    kinds = []
    for _ in range(3):
        snap = await src.poll()
        kinds.append(snap.error.kind if snap.error else None)
        clock.now += timedelta(minutes=1)
    await src.close()
    assert kinds == [None, "unreachable", None]
    sources, replay = replay_sources(tmp_path)
    replayed = []
    for _ in range(3):
        snap = await sources[0].poll()
        replayed.append(snap.error.kind if snap.error else None)
        replay.step(1)
    assert replayed == kinds


async def test_replay_never_answers_with_another_jobs_output(tmp_path):
    """Only a command's time options may differ from what was recorded (the backfill's
    sacct -S): scontrol show job for an unrecorded job is "not recorded", not some other job."""
    await _record(tmp_path, polls=2)
    sources, _ = replay_sources(tmp_path)
    transport = sources[0].transport
    res = await transport.run(["scontrol", "show", "job", "-o", "999999"])
    assert res.exit_status == 1 and b"not recorded" in res.stderr
    res = await transport.run(["sacct", "-P", "-n", "-j", "999999", "-o", "JobID"])
    assert res.exit_status == 1


def test_a_recording_that_could_not_be_written_is_retried(tmp_path):
    from cockpit.record import Recorder

    target = tmp_path / "rec"
    r = Recorder(target, "lab", Clock())
    r.add({"op": "run", "argv": ["squeue"], "rc": 0, "out": {"text": "1"}, "err": {"text": ""}})
    assert r.path.exists() and not r.error
    import shutil

    shutil.rmtree(target)
    (tmp_path / "rec").write_text("a file where the directory was")
    r.add({"op": "run", "argv": ["squeue"], "rc": 0, "out": {"text": "2"}, "err": {"text": ""}})
    assert r.error and r.lost == 1
    (tmp_path / "rec").unlink()
    r.add({"op": "run", "argv": ["squeue"], "rc": 0, "out": {"text": "3"}, "err": {"text": ""}})
    assert not r.error and r.path.exists()  # written again once the directory is back


def test_malformed_recordings_are_one_line_errors(tmp_path):
    for meta in (
        "[]",
        '{"format": 1, "sources": [{"nm": "x"}]}',
        '{"format": 1, "sources": ["lab"]}',
    ):
        (tmp_path / "meta.json").write_text(meta)
        with pytest.raises(UserError):
            replay_sources(tmp_path)
    (tmp_path / "meta.json").write_text('{"format": 1, "sources": [{"name": "lab"}]}')
    (tmp_path / "lab.jsonl.gz").mkdir()
    with pytest.raises(UserError, match="not a recording file"):
        replay_sources(tmp_path)


async def _record_demo(tmp_path, polls: int = 5):
    """Both demo sources, as ``cockpit --demo --record``: the ModelArts poll lands a moment
    before the Slurm one, so the replay's poll 1 is the project's, not the cluster's."""
    clock = Clock()
    sources = demo_sources(7, clock=clock)
    assert start_recording(tmp_path, sources, clock) == []
    live = []
    for _ in range(polls):
        ma = await sources[1].poll()
        clock.now += timedelta(milliseconds=300)
        hpc = await sources[0].poll()
        assert hpc.error is None and ma.error is None
        live.append(_summary(hpc))
        clock.now += timedelta(seconds=15)
    for src in sources:
        await src.close()
    return live


async def test_replay_poll_one_shows_what_poll_one_showed_live(tmp_path):
    live = await _record_demo(tmp_path)
    sources, clock = replay_sources(tmp_path)
    hpc = next(s for s in sources if s.name == "demo-hpc")
    assert clock.index == 0
    snap = await hpc.poll()  # the replay stands at the project's poll, before the cluster's
    assert snap.error is None, snap.error
    assert snap.jobs and _summary(snap) == live[0]
    clock.step(1)
    assert _summary(await hpc.poll()) == live[0]  # the cluster's own poll 1


async def test_replay_opens_without_an_invented_outage(tmp_path):
    from cockpit.screens.panes import QueueTable

    from .test_ui_flows import until

    await _record_demo(tmp_path / "rec")
    app, clock = replay_app(tmp_path / "rec", tmp_path / "state.json")
    async with app.run_test(size=(120, 30)) as pilot:
        states = app.hub.states
        await app.hub.first_round.wait()
        await until(
            pilot, lambda: all(s.snapshot is not None for s in states.values()), "poll 1", 500
        )
        assert "REPLAY poll 1/" in clock.label()
        assert all(s.error is None for s in states.values()), [s.error for s in states.values()]
        await until(pilot, lambda: app.screen.query_one(QueueTable).row_count > 0, "rows", 500)
        causes = {i.incident.root_cause for i in app.hub.open_incidents}
        assert "source_unreachable" not in causes, causes
