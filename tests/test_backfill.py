"""Nothing missed while away: each poll asks sacct once for the jobs that ended in a failure
state since the last poll (or the store's cursor), and those squeue no longer lists join the
snapshot as ended jobs, so they are diagnosed and become incidents.

sacct answers are real 22.05 output captured on the lab (tests/fixtures/backfill)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cockpit.model import SlurmJob
from cockpit.slurm.backfill import (
    BACKFILL_STATES,
    Backfill,
    parse_backfill,
    sacct_time,
    split_rows,
)
from cockpit.slurm.commands import BACKFILL_FIELDS
from cockpit.slurm.source import DRILL_DOWN_NOTE, SlurmSource
from cockpit.transport import CommandResult, LocalTransport

FIX = Path(__file__).parent / "fixtures" / "backfill"
# the lab's 22.05 answer; its AllocCPUS column (1: the jobs' default) appended when the field
# joined BACKFILL_FIELDS
CAPTURE = (FIX / "sacct_backfill_22.05.txt").read_text()
T = datetime(2026, 12, 1, 21, 30, tzinfo=UTC)


def test_the_failure_states_asked_are_the_engines_that_sacct_accepts():
    # sacct --state rejects job flags ("unrecognized job state value 'LAUNCH_FAILED'")
    assert set(BACKFILL_STATES) == {
        "FAILED",
        "TIMEOUT",
        "OUT_OF_MEMORY",
        "NODE_FAIL",
        "BOOT_FAIL",
        "DEADLINE",
    }


def test_captured_backfill_parses_into_ended_jobs_with_owner_and_workdir():
    found, warnings = parse_backfill(CAPTURE, UTC)
    assert warnings == []
    jobs = {j.job_id: (j, o) for j, o in found}
    assert sorted(jobs) == ["1", "2", "3_1", "3_2", "4"]
    job, owner = jobs["2"]
    assert (job.name, job.user, job.state, job.partition) == (
        "bwa-run",
        "cockpitlab1",
        "FAILED",
        "debug",
    )
    assert (job.exit_code.code, job.exit_code.signal) == (127, 0)
    assert job.end_time == datetime(2026, 12, 1, 21, 9, 30, tzinfo=UTC)
    assert job.work_dir == "/tmp" and job.nodes == ("c1",)
    assert job.min_memory_mib == 100 and job.time_limit_s == 60
    assert (owner.user, owner.uid, owner.gid) == ("cockpitlab1", 1001, 1001)
    assert jobs["1"][0].name == "h3 probe"


def test_bad_rows_are_skipped_with_a_warning_and_the_rest_kept():
    bad = "x;rm\x1f" + "\x1f".join([""] * (len(BACKFILL_FIELDS) - 1)) + "\n"
    short = "9\x1f9\x1fonly three\n"
    found, warnings = parse_backfill(bad + CAPTURE + short, UTC)
    assert len(found) == 5
    assert len(warnings) == 2 and any("bad JobID" in w for w in warnings)


def test_crlf_and_a_name_with_a_newline_keep_rows_whole():
    row = CAPTURE.splitlines()[1].replace("bwa-run", "bwa\nrun")
    found, warnings = parse_backfill(row.replace("\n", "\r\n") + "\r\n", UTC)
    assert not warnings and found[0][0].name.replace("\r", "") == "bwa\nrun"
    rows, _ = split_rows("a\x1fb\nc\x1fd\n\n", 2)
    assert rows == [["a", "b"], ["c", "d"]]


def _job(jid: str, end: datetime, state: str = "FAILED") -> SlurmJob:
    return SlurmJob(jid, "n", "u", "p", state, "None", end_time=end)


def test_the_window_starts_at_the_cursor_less_an_overlap_else_hours_back():
    bf = Backfill(hours=12)
    overlap = timedelta(seconds=60)
    assert bf.since(T, overlap) == T - timedelta(hours=12)
    # the store remembered a poll three hours ago: still the whole window, so this cockpit's
    # queue lists the failures of the last hours that a cockpit beside it lists
    bf.resumed = T - timedelta(hours=3)
    assert bf.since(T, overlap) == T - timedelta(hours=12)
    bf.resumed = T - timedelta(hours=30)  # closed since yesterday: from there, nothing missed
    assert bf.since(T, overlap) == T - timedelta(hours=30, seconds=60)
    bf.record([], T)
    assert bf.since(T + timedelta(seconds=15), overlap) == T - overlap
    bf2 = Backfill(resumed=T - timedelta(days=30))
    assert bf2.since(T, overlap) == T - timedelta(days=7)  # an ancient cursor is cut


def test_at_most_cap_jobs_kept_the_newest_with_a_warning():
    bf = Backfill(cap=3)
    found = [(_job(str(i), T - timedelta(minutes=i)), None) for i in range(5)]
    warnings = bf.record(found, T)
    assert sorted(bf.jobs) == ["0", "1", "2"]
    assert warnings == ["sacct backfill: 5 failed jobs found, only the 3 newest are shown"]


def test_shown_while_squeue_forgets_hidden_while_it_lists_them_dropped_when_requeued():
    bf = Backfill(hours=1)
    bf.record([(_job("7", T), None), (_job("8", T), None)], T)
    queue = [_job("7", T)]  # squeue still lists 7 (MinJobAge not yet over)
    assert [j.job_id for j in bf.visible(queue, T)] == ["8"]
    assert [j.job_id for j in bf.visible([], T)] == ["7", "8"]
    assert [j.job_id for j in bf.visible([_job("8", T, "RUNNING")], T)] == ["7"]  # requeued
    assert bf.visible([], T + timedelta(hours=1, seconds=1)) == []  # kept `hours` after found


class Cluster(LocalTransport):
    """An empty queue; sacct answers the captured backfill (or ``sacct_reply``)."""

    def __init__(self, sacct_reply: tuple[int, str, str] | None = None) -> None:
        super().__init__("lab")
        self.argvs: list[tuple[str, ...]] = []
        self.sacct_reply = sacct_reply or (0, CAPTURE, "")

    async def run(self, argv, timeout: float = 30.0) -> CommandResult:
        argv = tuple(argv)
        self.argvs.append(argv)
        if argv[0] == "sacct":
            rc, out, err = self.sacct_reply
            return CommandResult(argv, out.encode(), err.encode(), rc)
        return CommandResult(argv, b"", b"", 0)  # squeue, scontrol show node/partition

    def sacct_calls(self) -> list[tuple[str, ...]]:
        return [a for a in self.argvs if a[0] == "sacct"]


def _source(tr: Cluster, clock: list[datetime], **kw) -> SlurmSource:
    return SlurmSource("lab", tr, interval=15, clock=lambda: clock[0], **kw)


def _since(argv: tuple[str, ...]) -> str:
    return argv[argv.index("-S") + 1]


def test_a_poll_asks_sacct_once_and_the_failed_jobs_squeue_forgot_join_the_snapshot():
    async def main():
        tr, clock = Cluster(), [T]
        src = _source(tr, clock)
        snap = await src.poll()
        assert snap.ok and not snap.warnings
        assert sorted(j.job_id for j in snap.jobs) == ["1", "2", "3_1", "3_2", "4"]
        assert all(j.state == "FAILED" for j in snap.jobs)
        (argv,) = tr.sacct_calls()
        assert "-a" in argv and "-X" in argv and argv[argv.index("-E") + 1] == "now"
        assert f"--state={','.join(BACKFILL_STATES)}" in argv
        assert _since(argv) == sacct_time(T - timedelta(hours=12), UTC)
        assert src.cursor() == T
        clock[0] = T + timedelta(seconds=15)
        await src.poll()
        # the next window starts one overlap (a poll interval, at least a minute) earlier
        assert _since(tr.sacct_calls()[-1]) == sacct_time(T - timedelta(seconds=60), UTC)
        await src.close()

    asyncio.run(main())


def test_a_forgotten_jobs_evidence_names_sacct_not_squeue():
    """An operator who runs squeue for a line the cockpit labels "squeue" finds nothing once
    slurmctld forgot the job: its state line is sacct's record, and says so."""
    from cockpit.diagnosis.engine import diagnose

    async def main():
        src = _source(Cluster(), [T])
        snap = await src.poll()
        await src.close()
        return snap

    snap = asyncio.run(main())
    assert sorted(snap.acct_only) == ["1", "2", "3_1", "3_2", "4"]
    findings = [f for f in diagnose(snap, now=T) if f.subject.id == "2"]
    assert findings
    wheres = {e.where for f in findings for e in f.evidence if "JobState=FAILED" in e.text}
    assert wheres == {"sacct"}, [(e.where, e.text) for f in findings for e in f.evidence]


def test_a_snapshot_with_forgotten_jobs_prints_as_json():
    """`cockpit snapshot --json` of a poll whose backfill found failed jobs: the jobs only
    sacct names are listed (sorted), and the command does not die on the set."""
    import json

    from cockpit.commands.snapshot import to_jsonable

    async def main():
        src = _source(Cluster(), [T])
        snap = await src.poll()
        await src.close()
        return snap

    doc = json.loads(json.dumps(to_jsonable(asyncio.run(main()))))
    assert doc["acct_only"] == ["1", "2", "3_1", "3_2", "4"]


def test_a_cockpit_started_later_asks_from_the_stores_cursor():
    async def main():
        tr, clock = Cluster(), [T]
        src = _source(tr, clock)
        src.resume_from(T - timedelta(hours=30))  # closed since yesterday afternoon
        await src.poll()
        assert _since(tr.sacct_calls()[0]) == sacct_time(T - timedelta(hours=30, minutes=1), UTC)
        await src.close()

    asyncio.run(main())


def test_drill_down_mode_runs_no_sacct_and_says_what_it_cannot_know():
    async def main():
        tr, clock = Cluster(), [T]
        src = _source(tr, clock, background_evidence=False)
        snap = await src.poll()
        assert tr.sacct_calls() == [] and snap.jobs == ()
        assert DRILL_DOWN_NOTE in snap.warnings
        assert "jobs that ended between polls are not seen in drill-down mode" in DRILL_DOWN_NOTE
        await src.close()

    asyncio.run(main())


def test_a_site_without_accounting_gets_one_line_and_the_poll_goes_on():
    async def main():
        # what sacct 26.05 printed on the version lab, which runs without slurmdbd
        disabled = (FIX / "sacct_accounting_disabled_26.05.txt").read_text()
        tr = Cluster((1, "", disabled))
        clock = [T]
        src = _source(tr, clock)
        for i in range(3):
            clock[0] = T + timedelta(seconds=15 * i)
            snap = await src.poll()
            assert snap.ok
            assert [w for w in snap.warnings if "sacct" in w] == [
                "sacct: Slurm accounting storage is disabled: "
                "jobs that ended between polls are not seen"
            ]
        assert len(tr.sacct_calls()) == 1  # not asked again every poll
        clock[0] = T + timedelta(minutes=11)
        await src.poll()
        assert len(tr.sacct_calls()) == 2  # but again later: accounting may have been enabled
        await src.close()

    asyncio.run(main())


def test_slurmdbd_trouble_is_a_warning_and_the_window_is_asked_again():
    async def main():
        err = "sacct: error: Problem talking to the database: Connection refused\n"
        tr, clock = Cluster((1, "", err)), [T]
        src = _source(tr, clock)
        snap = await src.poll()
        assert snap.ok
        assert any("Connection refused" in w for w in snap.warnings)
        assert src.cursor() is None
        tr.sacct_reply = (0, CAPTURE, "")
        clock[0] = T + timedelta(seconds=15)
        snap = await src.poll()
        # the failed window is not skipped: asked from the same start again
        assert _since(tr.sacct_calls()[1]) == _since(tr.sacct_calls()[0])
        assert len(snap.jobs) == 5
        await src.close()

    asyncio.run(main())


def test_the_demo_answers_the_backfill_like_a_cluster_and_shows_what_aged_out():
    from cockpit.demo.site import DEMO_START, DemoSite, DemoTransport

    async def main():
        clock = [DEMO_START]
        site = DemoSite(seed=7, clock=lambda: clock[0])
        src = SlurmSource("demo-hpc", DemoTransport(site), interval=15, clock=lambda: clock[0])
        snap = await src.poll()
        assert not [w for w in snap.warnings if "sacct" in w]
        failed = {j.job_id for j in snap.jobs if j.state in BACKFILL_STATES}
        assert failed
        await src.close()
        # seven hours on, squeue has dropped them (the demo's MinJobAge is 6 h); a cockpit
        # started then, with no cursor, still shows them from sacct
        clock[0] = DEMO_START + timedelta(hours=7)
        in_squeue = {str(j.job_id) for j, _ in site.slurm.visible_jobs(site.now_s())}
        assert not failed & in_squeue
        later = SlurmSource("demo-hpc", DemoTransport(site), interval=15, clock=lambda: clock[0])
        shown = {j.job_id: j for j in (await later.poll()).jobs}
        assert failed <= set(shown)
        assert all(shown[j].end_time is not None for j in failed)
        await later.close()

    asyncio.run(main())


@pytest.mark.parametrize("tz_name", ["UTC", "Asia/Shanghai"])
def test_since_is_printed_in_the_clusters_zone(tz_name):
    from zoneinfo import ZoneInfo

    assert sacct_time(T, ZoneInfo(tz_name)) == (
        "2026-12-01T21:30:00" if tz_name == "UTC" else "2026-12-02T05:30:00"
    )


def test_a_slow_slurmdbd_does_not_hold_the_poll_its_answer_comes_with_the_next(monkeypatch):
    import cockpit.slurm.source as source_mod

    monkeypatch.setattr(source_mod, "BACKFILL_GRACE", 0.05)

    class Slow(Cluster):
        async def run(self, argv, timeout: float = 30.0) -> CommandResult:
            if argv[0] == "sacct":
                await asyncio.sleep(0.5)
            return await super().run(argv, timeout)

    async def main():
        tr, clock = Slow(), [T]
        src = _source(tr, clock)
        snap = await src.poll()
        assert snap.ok and snap.jobs == ()
        assert "sacct backfill: slurmdbd is slow; its answer comes next poll" in snap.warnings
        await asyncio.sleep(0.6)
        clock[0] = T + timedelta(seconds=15)
        snap = await src.poll()
        assert len(snap.jobs) == 5 and not snap.warnings
        assert len(tr.sacct_calls()) == 1  # the one in flight was awaited, not asked again
        assert src.cursor() == T  # it covered up to when it was asked
        await src.close()

    asyncio.run(main())


def test_a_cockpit_on_screen_shows_the_queue_without_waiting_for_the_backfill():
    """A poller's first poll (``first_backfill_grace`` 0, as a poller sets it) publishes the
    queue as soon as it is read, with no warning; the backfill's jobs come with the next
    poll. A one-shot command's single poll still waits for them."""

    answered: list[str] = []

    class Slow(Cluster):
        async def run(self, argv, timeout: float = 30.0) -> CommandResult:
            if argv[0] == "sacct":
                await asyncio.sleep(0.3)
                answered.append("sacct")
            return await super().run(argv, timeout)

    async def main():
        tr, clock = Slow(), [T]
        src = _source(tr, clock)
        src.first_backfill_grace = 0.0
        snap = await src.poll()
        assert answered == []  # the queue came back before sacct did
        assert snap.ok and snap.jobs == () and not snap.warnings
        await asyncio.sleep(0.4)
        clock[0] = T + timedelta(seconds=15)
        snap = await src.poll()
        assert len(snap.jobs) == 5 and not snap.warnings
        assert len(tr.sacct_calls()) == 1
        await src.close()
        once = _source(Slow(), [T])
        assert len((await once.poll()).jobs) == 5  # the one poll waited
        await once.close()

    asyncio.run(main())


def test_a_poller_sets_the_first_poll_not_to_wait_for_the_backfill():
    from cockpit.runtime.poller import Poller
    from cockpit.runtime.state import HubState

    async def main():
        src = _source(Cluster(), [T])
        hub = HubState([src])
        poller = Poller(hub.states[src.name], hub)
        task = asyncio.ensure_future(poller.run())
        await asyncio.sleep(0)
        assert src.first_backfill_grace == 0.0
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await src.close()

    asyncio.run(main())


def test_output_that_is_not_saccts_cannot_grow_one_value_without_bound():
    """A fake or broken sacct printing 200k separator-less lines after a row: each glued
    value stops at MAX_VALUE_BYTES (gluing them all was quadratic: a third of a poll's CPU)."""
    from cockpit.slurm.backfill import MAX_VALUE_BYTES, SEP, split_rows

    text = SEP.join(["1"] * 5) + "\n" + "\n".join(["x" * 50] * 200_000)
    good, warnings = split_rows(text, 5)
    assert len(good) == 1 and len(good[0][-1]) < 2 * MAX_VALUE_BYTES
    assert warnings and all("expected 5" in w for w in warnings)


def test_a_first_poll_on_screen_starts_its_sacct_after_squeue_answered():
    """Queue first: on a cold start the backfill's sacct does not run beside squeue (on a
    local transport they share the login node's cores); later polls, and a one-shot
    command's single poll, run them side by side."""

    events: list[str] = []

    class Ordered(Cluster):
        async def run(self, argv, timeout: float = 30.0) -> CommandResult:
            events.append(f"start {argv[0]}")
            if argv[0] == "squeue":
                await asyncio.sleep(0.05)
            got = await super().run(argv, timeout)
            events.append(f"end {argv[0]}")
            return got

    def sacct_after_squeue() -> bool:
        return events.index("start sacct") > events.index("end squeue")

    async def main():
        clock = [T]
        src = _source(Ordered(), clock)
        src.first_backfill_grace = 0.0
        await src.poll()
        await asyncio.sleep(0.05)
        assert sacct_after_squeue()
        events.clear()
        clock[0] = T + timedelta(seconds=15)
        await src.poll()
        clock[0] = T + timedelta(seconds=30)
        events.clear()
        await src.poll()
        assert not sacct_after_squeue()  # from then on, beside it
        await src.close()
        events.clear()
        once = _source(Ordered(), [T])
        await once.poll()
        assert not sacct_after_squeue()
        await once.close()

    asyncio.run(main())


def test_with_the_store_still_opening_the_queue_comes_first_and_sacct_asks_from_its_cursor(
    tmp_path,
):
    """The TUI opens the store on a thread (cockpit.store.opening) while the first poll
    runs: the queue is published without it, and the backfill still looks back from the
    stored cursor (a cockpit closed since yesterday misses nothing)."""
    import threading

    from cockpit.runtime.poller import Poller
    from cockpit.runtime.state import HubState
    from cockpit.store import open_store
    from cockpit.store.opening import OpeningStore

    real = open_store(f"sqlite:///{tmp_path}/c.db")
    real.set_cursor("lab", T - timedelta(hours=30))
    gate = threading.Event()

    def slow_open():
        gate.wait(10)
        return real

    async def main():
        tr = Cluster()
        src = _source(tr, [T])
        hub = HubState([src])
        hub.store = OpeningStore(slow_open)
        hub.store.start()
        poller = Poller(hub.states[src.name], hub)
        task = asyncio.ensure_future(poller.run())
        for _ in range(200):
            if hub.states[src.name].snapshot is not None:
                break
            await asyncio.sleep(0.01)
        assert hub.states[src.name].snapshot is not None  # the queue, published
        assert not hub.store.ready and tr.sacct_calls() == []
        gate.set()
        for _ in range(300):
            if tr.sacct_calls():
                break
            await asyncio.sleep(0.01)
        (argv,) = tr.sacct_calls()
        assert _since(argv) == sacct_time(T - timedelta(hours=30, minutes=1), UTC)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await src.close()

    try:
        asyncio.run(main())
    finally:
        gate.set()
        real.close()


def test_sacct_placeholder_rows_are_never_jobs():
    """Right after a job ends, slurmdbd may list a stand-in row (JobName ``allocation``, no
    partition, ReqMem ``?``): counted as a job it became a ghost failure in `watch`."""
    from cockpit.slurm.commands import BACKFILL_FIELDS

    real = CAPTURE.splitlines()[1].split("\x1f")
    at = {f: i for i, f in enumerate(BACKFILL_FIELDS)}

    def row(**over: str) -> str:
        r = list(real)
        for k, v in over.items():
            r[at[k]] = v
        return "\x1f".join(r) + "\n"

    ghost = row(JobID="77", JobIDRaw="77", JobName="allocation", Partition="")
    unknown_mem = row(JobID="78", JobIDRaw="78", ReqMem="0?")
    step = row(JobID="79.extern", JobIDRaw="79.extern")
    found, warnings = parse_backfill(ghost + unknown_mem + step + row(JobID="80"), UTC)
    assert [j.job_id for j, _ in found] == ["80"] and warnings == []
