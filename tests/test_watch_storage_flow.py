"""Shared storage end to end.

df during polling, the engine's disk_full, the nodes pane and the alert log.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from cockpit.app import CockpitApp
from cockpit.demo.site import DemoSite, DemoTransport, demo_sources
from cockpit.diagnosis.engine import diagnose
from cockpit.model import Artifacts, FsUsage, LogText, SlurmJob, Snapshot, Subject
from cockpit.screens.alerts import AlertScreen, AlertTable
from cockpit.slurm.source import SlurmSource
from cockpit.store.acks import AckStore
from cockpit.transport import CommandResult, CommandTimeout
from cockpit.watch.watcher import Watcher
from widgets.storage import bar, storage_line

NOW = datetime(2026, 11, 29, 20, 45, 0, tzinfo=UTC)


def frozen() -> datetime:
    return NOW


def test_demo_poll_collects_storage_with_scratch_over_85():
    slurm = demo_sources(7, clock=frozen)[0]
    snap = asyncio.run(slurm.poll())
    assert snap.ok and not snap.warnings
    usage = {u.mount: u for u in snap.storage}
    assert set(usage) == {"/home", "/scratch", "/opt/apps"}
    assert 89 <= usage["/scratch"].use_pct <= 93 and usage["/scratch"].inodes_pct == 51
    assert usage["/home"].use_pct < 85
    assert slurm.command_counts["df"] == 2  # df -P and df -Pi, once per poll


class _DfBroken(DemoTransport):
    """The demo cluster where df misbehaves: hangs, or is missing a path."""

    def __init__(self, site, mode):
        super().__init__(site)
        self.mode = mode

    async def run(self, argv, timeout=30.0):
        if argv[0] == "df" and self.mode == "hang":
            raise CommandTimeout("df did not answer in 20 s", where="df")
        if (
            argv[0] == "df" and "/nonexistent" in argv
        ):  # df prints the others and complains on stderr
            res = await super().run([a for a in argv if a != "/nonexistent"], timeout)
            return CommandResult(
                tuple(argv), res.stdout, b"df: /nonexistent: No such file or directory\n", 1
            )
        return await super().run(argv, timeout)


def test_df_failure_is_a_warning_not_an_error():
    site = DemoSite(7, frozen)
    src = SlurmSource(
        "demo-hpc", _DfBroken(site, "hang"), clock=frozen, storage_paths=("/scratch",)
    )
    snap = asyncio.run(src.poll())
    assert snap.ok and snap.jobs and snap.storage == ()
    assert any("df" in w and "did not answer" in w for w in snap.warnings)

    src = SlurmSource(
        "demo-hpc",
        _DfBroken(site, "missing"),
        clock=frozen,
        storage_paths=("/scratch", "/nonexistent"),
    )
    snap = asyncio.run(src.poll())
    assert snap.ok and [u.mount for u in snap.storage] == ["/scratch"]
    assert any("/nonexistent: No such file or directory" in w for w in snap.warnings)


def _snap(storage, jobs=()):
    return Snapshot("hpc", "slurm", NOW, jobs=tuple(jobs), storage=tuple(storage))


SCRATCH_FULL = FsUsage(
    "/scratch", 1000, 910, 90, 91.0, 40.0, path="/scratch", filesystem="lustre:/scratch"
)
HOME_OK = FsUsage("/home", 1000, 500, 500, 50.0, 10.0, path="/home")


def test_engine_reports_full_filesystem_as_site_finding():
    found = [f for f in diagnose(_snap([HOME_OK, SCRATCH_FULL])) if f.root_cause == "disk_full"]
    assert [(f.subject.kind, f.subject.id) for f in found] == [("file", "/scratch")]
    assert "91% used" in found[0].title
    assert all(f.root_cause != "disk_full" for f in diagnose(_snap([HOME_OK])))


def _failed_job_with_log(text: bytes):
    job = SlurmJob(
        "77",
        "writer",
        "ana",
        "cpu",
        "FAILED",
        "None",
        nodes=("cn01",),
        node_list="cn01",
        work_dir="/scratch/ana/run",
        stdout_path="/scratch/ana/run/slurm-77.out",
    )
    log = LogText("slurm-77.out", "stdout", text, path=job.stdout_path, subject_id="77")
    return job, Artifacts(logs=(log,))


def test_enospc_job_finding_names_the_full_filesystem():
    job, arts = _failed_job_with_log(
        b"writing checkpoint\nOSError: [Errno 28] No space left on device: 'ckpt_12.pt'\n"
    )
    found = [
        f
        for f in diagnose(_snap([HOME_OK, SCRATCH_FULL], [job]), arts)
        if f.subject == Subject("job", "hpc", "77")
    ]
    assert found[0].root_cause == "disk_full"
    assert "/scratch is 91% full" in found[0].title
    assert Subject("file", "hpc", "/scratch") in found[0].related
    assert any(e.where == "df -P" for e in found[0].evidence)
    assert any("No space left" in e.text for e in found[0].evidence)


def test_enospc_without_a_full_filesystem_does_not_blame_storage():
    job, arts = _failed_job_with_log(b"OSError: [Errno 28] No space left on device\n")
    found = [f for f in diagnose(_snap([HOME_OK], [job]), arts) if f.subject.kind == "job"]
    assert found and all("full" not in f.title for f in found)


def test_storage_line_bars():
    assert bar(0, 4) == "····" and bar(100, 4) == "████" and bar(50, 4) == "██··"
    line = storage_line([HOME_OK, SCRATCH_FULL], 85).plain
    assert "/home ██·· 50%" in line and "/scratch ███▋ 91%" in line and "i40%" in line


async def test_nodes_pane_shows_storage_and_alert_log_lists_scratch(tmp_path):
    app = CockpitApp(
        demo_sources(7, clock=frozen),
        clock=frozen,
        bell=False,
        acks=AckStore(tmp_path / "state.json"),
        watcher=Watcher(),
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause(0.2)
        strip = app.screen.query_one("#storage")
        assert strip.display and strip.region.height == 1  # one row at 80x24
        text = str(strip.render())
        assert "/scratch" in text and "91%" in text and "i51%" in text and "/opt/apps" in text
        await pilot.press("A")
        await pilot.pause(0.2)
        assert isinstance(app.screen, AlertScreen)
        rows = [r.cells for r in app.screen.query_one(AlertTable).rows]
        scratch = [c for c in rows if c[2] == "storage"]
        assert len(scratch) == 1 and "/scratch" in scratch[0][4] and "91%" in scratch[0][4]


def test_df_answer_shape_is_posix():
    site = DemoSite(7, frozen)
    res: CommandResult = asyncio.run(DemoTransport(site).run(("df", "-P", "--", "/opt/apps")))
    assert res.exit_status == 0 and res.stdout.decode().splitlines()[1].endswith("/opt/apps")
