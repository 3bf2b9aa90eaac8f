"""The demo's simulated site is built and answered without stopping the event loop.

``cockpit --demo`` (and the first run without a config) builds ~5k simulated jobs on first use
(~0.4 s of CPU). The ModelArts source calls the demo's in-memory API on the event loop, so a
first poll that built the site there froze the TUI for that long at start-up.
"""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import timedelta

from cockpit.demo.site import DEMO_START, DemoSite, demo_sources


def test_first_modelarts_poll_builds_the_site_off_the_event_loop(monkeypatch) -> None:
    _slurm, ma = demo_sources(clock=lambda: DEMO_START + timedelta(hours=1))
    site: DemoSite = ma.api.site
    built_on: list[str] = []
    real_build = DemoSite.build

    def build(self: DemoSite) -> None:
        built_on.append(threading.current_thread().name)
        real_build(self)

    monkeypatch.setattr(DemoSite, "build", build)

    async def first_poll():
        return await ma.poll(), threading.current_thread().name

    snap, loop_thread = asyncio.run(first_poll())

    assert snap.error is None
    assert snap.training_jobs, "the demo project lists its training jobs on the first poll"
    assert built_on and loop_thread not in built_on, built_on
    assert site.built


def test_a_running_jobs_log_preview_is_cheap_a_week_in() -> None:
    """Each poll previews Running jobs' logs from the loop; a week-old job's log is the
    longest. Its lines carry their own stamps only where the log has them."""
    site = DemoSite(clock=lambda: DEMO_START)
    site.build()
    project = site.modelarts
    week = 7 * 86400
    longest = max(project.jobs, key=lambda j: sum(1 for at, _ in j.log if at <= week))
    text = project.preview_json(longest, week)["content"]
    assert "{ts}" not in text  # every stamp filled in
    assert text.count("\n") == sum(1 for at, _ in longest.log if at <= week)
    t0 = time.perf_counter()
    for _ in range(20):
        project.preview_json(longest, week)
    # 20 previews (a few polls' worth) well inside one frame of a 60 Hz terminal each:
    # ~12 ms apiece before the stamps were formatted only where a line has one
    assert (time.perf_counter() - t0) / 20 < 0.008
