"""Init-log baselines end to end.

The hub records good ModelArts starts; the stuck job's screen diffs against one.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from rich.console import Console

from cockpit.app import CockpitApp
from cockpit.demo.site import demo_sources
from cockpit.model import Subject
from cockpit.screens.subject import TrainingJobScreen
from cockpit.store.acks import AckStore
from cockpit.watch.baseline import (
    BaselineRecorder,
    BaselineStore,
    diff_against_baseline,
    strip_time,
)

NOW = datetime(2026, 11, 29, 20, 45, 0, tzinfo=UTC)
GOOD, STUCK = "5b1c0a4e-7d21-4f3a-9c11-000000000013", "5b1c0a4e-7d21-4f3a-9c11-000000000014"


def frozen() -> datetime:
    return NOW


def test_recorder_keeps_running_jobs_startup_log_and_diff_finds_the_stall(tmp_path):
    ma = demo_sources(7, clock=frozen)[1]
    store = BaselineStore(tmp_path / "b.json")
    rec = BaselineRecorder(store)

    async def go():
        snap = await ma.poll()
        rounds = [await rec.observe(ma, snap, NOW)]
        while rounds[-1]:  # per_poll jobs a poll: the next polls take the rest, once each
            rounds.append(await rec.observe(ma, snap, NOW))
        return snap, rounds

    snap, rounds = asyncio.run(go())
    ids = [b.job_id for r in rounds for b in r]
    assert GOOD in ids and len(ids) == len(set(ids))  # each job recorded once
    assert all(len(r) <= rec.per_poll for r in rounds) and len(rounds) <= 4
    assert BaselineStore(tmp_path / "b.json").baselines  # persisted
    stuck = next(t for t in snap.training_jobs if t.job_id == STUCK)
    base = store.closest_baseline(stuck)
    assert base is not None and base.job_id == GOOD
    d = diff_against_baseline(stuck.log_preview.splitlines(), base, NOW)
    assert strip_time(d.last_passed).startswith("[init] pip install")
    assert strip_time(d.next_expected[0]).startswith("[init] installed 14 packages")
    assert d.then_next_s == 38 and d.stalled_s is not None and d.stalled_s > 20 * 60
    assert any(x.status == "extra" and "Retrying" in x.text for x in d.steps)


def test_memory_store_writes_nothing(tmp_path):
    store = BaselineStore(tmp_path / "b.json", persist=False)
    ma = demo_sources(7, clock=frozen)[1]

    async def go():
        await BaselineRecorder(store).observe(ma, await ma.poll(), NOW)

    asyncio.run(go())
    assert store.baselines and not (tmp_path / "b.json").exists()


async def test_stuck_training_job_screen_shows_baseline_diff(tmp_path):
    app = CockpitApp(
        demo_sources(7, clock=frozen), clock=frozen, bell=False, acks=AckStore(tmp_path / "s.json")
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await app.hub.first_round.wait()
        app.open_subject(Subject("training_job", "demo-modelarts", STUCK))
        await pilot.pause(0.3)
        assert isinstance(app.screen, TrainingJobScreen)
        con = Console(width=120, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        con.print(app.screen.query_one("#fields").content)
        text = con.export_text()
        assert "vs good run" in text and "gpt2-zh-pretrain (v100-team)" in text
        assert "stopped after step 6/" in text and "installed 14 packages" in text
        assert "took 38s then" in text and "silent" in text and "Retrying" in text
