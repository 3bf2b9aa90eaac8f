"""Right-sizing from sacct history end to end.

The command, the demo's answer, artifacts, OOM/TIMEOUT remedies, the job screen.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from cockpit.app import CockpitApp
from cockpit.demo.site import demo_sources
from cockpit.diagnosis.engine import diagnose
from cockpit.diagnosis.rightsize import history_hint
from cockpit.model import AcctRecord, Subject
from cockpit.screens.subject import JobScreen
from cockpit.slurm import commands as sc
from cockpit.store.acks import AckStore

NOW = datetime(2026, 11, 29, 20, 45, 0, tzinfo=UTC)


def frozen() -> datetime:
    return NOW


def test_history_argv_keeps_step_rows():
    argv = sc.sacct_history_argv("chen", "align-star-oom")
    assert "-X" not in argv and "--allocations" not in argv
    assert (
        argv[argv.index("-u") + 1] == "chen" and argv[argv.index("--name") + 1] == "align-star-oom"
    )


def test_demo_history_has_step_maxrss_and_past_runs():
    slurm = demo_sources(7, clock=frozen)[0]
    rows = asyncio.run(slurm.history("chen", "align-star-oom"))
    jobs = {r.job_id for r in rows}
    assert {"48102", "47311", "47688"} <= jobs
    steps = [r for r in rows if r.step == "batch"]
    assert len(steps) == len(jobs) and all(r.max_rss_mib for r in steps)


def _artifacts(job_id: str):
    async def go():
        slurm = demo_sources(7, clock=frozen)[0]
        snap = await slurm.poll()
        polled = slurm.command_counts["sacct"]  # the poll's own backfill sacct
        arts = await slurm.artifacts(Subject("job", slurm.name, job_id), snap)
        return snap, arts, slurm.command_counts["sacct"] - polled

    return asyncio.run(go())


def test_oom_artifacts_carry_history_and_remedy_uses_it():
    snap, arts, sacct_calls = _artifacts("48102")
    assert {r.job_id for r in arts.history} >= {"47311", "47688"}
    assert sacct_calls == 2  # sacct -j and one history call
    oom = next(f for f in diagnose(snap, arts) if f.subject.id == "48102")
    assert oom.root_cause == "oom_killed"
    # one --mem value, the history peak's (same rounding as rightsize.suggest), with its basis
    assert oom.remedy.count("--mem=") == 1
    assert (
        "--mem=80G (1.2 x peak MaxRSS 64.1G of 3 runs of 'align-star-oom' in sacct history"
        in oom.remedy
    )


def test_timeout_remedy_uses_history_and_plain_failure_fetches_none():
    snap, arts, _ = _artifacts("48103")
    assert arts.history
    to = next(f for f in diagnose(snap, arts) if f.subject.id == "48103")
    assert to.root_cause == "time_limit" and "--time=" in to.remedy and "sacct history" in to.remedy
    _, arts, sacct_calls = _artifacts(
        "48104"
    )  # exit 127: no --mem/--time question, no history call
    assert arts.history == () and sacct_calls == 1


def test_history_hint_empty_without_usable_runs():
    assert history_hint(()) == ""
    running = AcctRecord("9", "", "x", "cpu", "RUNNING", None, 1024, None, 60, 3600, "cn01")
    assert history_hint([running]) == ""


async def test_job_screen_shows_mem_suggestion_from_history(tmp_path):
    app = CockpitApp(
        demo_sources(7, clock=frozen), clock=frozen, bell=False, acks=AckStore(tmp_path / "s.json")
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await app.hub.first_round.wait()
        app.open_subject(Subject("job", "demo-hpc", "48102"))
        for _ in range(100):
            await pilot.pause(0.05)
            if isinstance(app.screen, JobScreen) and app.screen.rightsize is not None:
                break
        await pilot.pause(0.1)
        fields = app.screen.query_one("#fields")
        from rich.console import Console

        con = Console(width=100, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        con.print(fields.content)
        text = con.export_text()
        assert "right-size" in text and "--mem=80G" in text and "from 3 runs" in text
