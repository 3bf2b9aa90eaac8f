"""One poller for a team: `cockpit watch` publishes its polls to the store, the TUIs follow.

The followers never poll the platform, and they say what the poller says (same snapshot, same
evidence, same core). A store without a published poll, or one that went away, is a source
error on the follower's status line, never a crash.
"""

from __future__ import annotations

import asyncio
import dataclasses

from cockpit.app import CockpitApp
from cockpit.model import Artifacts, LogText, Subject
from cockpit.runtime.follow import FollowSource
from cockpit.runtime.hub import Hub
from cockpit.store import open_store
from cockpit.store import snapshots as published
from cockpit.store.acks import AckStore
from tests.test_store_tui import failed_job, until
from tests.ui_support import NOW, FakeSource, small_site


class CountingSource(FakeSource):
    """The platform: counts its polls, and its evidence names the missing program."""

    async def artifacts(self, subject: Subject, snapshot) -> Artifacts:
        out = (
            f"/var/spool/slurmd/job{subject.id}/slurm_script: line 3: bwa-mem3: command not found\n"
        )
        return Artifacts(logs=(LogText(f"slurm-{subject.id}.out", "stdout", out.encode()),))


def test_a_published_snapshot_reads_back_equal():
    snap = dataclasses.replace(
        asyncio.run(small_site(40).poll()),
        jobs=(*small_site(40).jobs, failed_job("77")),
        acct_only=("77",),  # backfilled: only sacct still names it
    )
    again = published.decode(published.encode(snap))
    assert again == snap


async def test_five_following_tuis_cost_the_platform_nothing_and_agree_with_the_poller(tmp_path):
    url = f"sqlite:///{tmp_path}/team.db"
    platform = CountingSource("lab", jobs=(*small_site(12).jobs, failed_job("20")))
    poller = Hub([platform], clock=lambda: NOW)
    poller.store = open_store(url)
    poller.publish_snapshots = True
    await poller.poll_all_once()
    polls = platform.polls
    assert poller.states["lab"].verdicts[("job", "lab", "20")].root_cause == "command_not_found"

    apps = [
        CockpitApp(
            [FollowSource("lab", "slurm", open_store(url), interval=3600)],
            clock=lambda: NOW,
            bell=False,
            acks=AckStore(tmp_path / f"acks{i}.json"),
            store=open_store(url),
        )
        for i in range(5)
    ]
    for app in apps:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda a=app: a.hub.states["lab"].settled, "the first follow")
            st = app.hub.states["lab"]
            assert len(st.snapshot.jobs) == 13  # the queue, from the store
            mine = {k: f.root_cause for k, f in st.verdicts.items()}
            theirs = {k: f.root_cause for k, f in poller.states["lab"].verdicts.items()}
            assert mine == theirs  # the evidence the poller kept names the same causes
            await pilot.press("Q")
    assert platform.polls == polls  # the followers never asked the platform


async def test_a_follower_says_when_no_poller_has_published(tmp_path):
    src = FollowSource("lab", "slurm", open_store(f"sqlite:///{tmp_path}/empty.db"))
    snap = await src.poll()
    assert snap.error is not None and "cockpit watch" in snap.error.message


def test_a_body_that_is_not_a_good_snapshot_is_one_clear_error_and_the_last_stays(
    tmp_path, monkeypatch
):
    """Garbage, a naive time, records of the wrong kind, a zip bomb: the follower says so on its
    status line and keeps what it showed; nothing raises out of poll()."""
    import json
    import zlib

    import sqlalchemy as sa

    from cockpit.store import schema

    monkeypatch.setattr(published, "MAX_BYTES", 1 << 20)
    url = f"sqlite:///{tmp_path}/team.db"
    store = open_store(url)
    store.publish(asyncio.run(small_site(5).poll()))
    src = FollowSource("lab", "slurm", store)
    good = asyncio.run(src.poll())
    assert good.error is None and len(good.jobs) == 5

    def body(doc) -> bytes:
        return zlib.compress(json.dumps(doc).encode())

    snap = {"@t": "Snapshot", "source": "lab", "kind": "slurm"}
    bad = [
        b"not zlib at all",
        body({"format": 1, "snapshot": {**snap, "taken_at": {"@d": "2026-01-01T00:00:00"}}}),
        body(
            {
                "format": 1,
                "snapshot": {
                    **snap,
                    "taken_at": {"@d": "2026-01-01T00:00:00+00:00"},
                    "jobs": ["x"],
                },
            }
        ),  # fmt: skip
        zlib.compress(b" " * (2 << 20)),  # 2 MB of spaces in a few KB, over the cap below
    ]
    engine = sa.create_engine(url)
    for n, raw in enumerate(bad, 1):
        with engine.begin() as conn:
            conn.execute(sa.update(schema.published).values(body=raw, taken_at=1000.0 + n))
        got = asyncio.run(src.poll())
        assert got.error is not None and got.error.kind == "parse", (n, got.error)
        assert "\n" not in got.error.message


async def test_a_cron_watch_once_publishes_for_the_followers(tmp_path):
    from cockpit.commands.watch import watch_once
    from cockpit.watch.alerts import AlertConfig
    from cockpit.watch.watcher import Watcher

    url = f"sqlite:///{tmp_path}/team.db"
    store = open_store(url)
    platform = CountingSource("lab", jobs=(failed_job("20"),))
    await watch_once([platform], Watcher(AlertConfig(), store=store), store, {}, publish=True)
    snap = await FollowSource("lab", "slurm", open_store(url)).poll()
    assert snap.error is None and [j.job_id for j in snap.jobs] == ["20"]


async def test_a_headless_head_builds_no_rows_and_the_same_verdicts():
    """watch and the one-shot commands read verdicts and incidents: the panes' rows (a quarter
    of a poll's analysis at 10k jobs) are built only for a head that draws them."""
    from cockpit.runtime.hub import one_shot

    jobs = (*small_site(12).jobs, failed_job("20"))
    headless = await one_shot([CountingSource("lab", jobs=jobs)])
    drawn = Hub([CountingSource("lab", jobs=jobs)], clock=lambda: NOW)
    await drawn.poll_once(drawn.states["lab"])
    assert headless.states["lab"].rows == {} and drawn.states["lab"].rows["jobs"]
    mine = {k: f.root_cause for k, f in headless.states["lab"].verdicts.items()}
    assert mine == {k: f.root_cause for k, f in drawn.states["lab"].verdicts.items()}
