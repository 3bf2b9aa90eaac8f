"""The demo left open for a week: its slurmctld log keeps growing, its memory for it must not.

The soak (bench/soak.py, issue #32) measured the demo simulator's time-stamp cache filling for the
whole simulated week (~18 MiB, 4 allocations per line of the slurmctld log so far), counted
against the cockpit's RSS day 1 -> day 7.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from cockpit.demo.site import DEMO_START, DemoSite, DemoTransport
from cockpit.demo.slurm_output import ts

CTLD = "/var/log/slurm/slurmctld.log"
HOUR = 3600


def _read(tr: DemoTransport) -> bytes:
    async def go() -> bytes:
        size = (await tr.stat(CTLD)).size
        return await tr.read_range(CTLD, 0, size)

    return asyncio.run(go())


def test_a_week_of_slurmctld_log_leaves_the_time_stamp_cache_bounded_and_the_log_unchanged():
    now = [DEMO_START]
    site = DemoSite(7, lambda: now[0])
    tr = DemoTransport(site)
    ts.cache_clear()
    sizes = []
    for h in range(0, 7 * 24 + 1, 3):  # a poll every 3 simulated hours, one week
        now[0] = DEMO_START + timedelta(hours=h)
        sizes.append(len(_read(tr)))
    assert sizes[-1] > sizes[0] > 0  # the log did grow through the week
    # what the operator reads at the end is what a fresh demo at that instant serves
    fresh = DemoTransport(DemoSite(7, lambda: now[0]))
    week = _read(tr)
    assert week == _read(fresh)
    assert week.count(b"\n") > 8192  # more lines than the cache may keep
    assert ts.cache_info().currsize <= 8192


def test_the_log_read_at_an_earlier_time_again_is_that_time_s_log():
    now = [DEMO_START + timedelta(hours=30)]
    tr = DemoTransport(DemoSite(7, lambda: now[0]))
    later = _read(tr)
    now[0] = DEMO_START + timedelta(hours=6)
    earlier = _read(tr)
    assert earlier == _read(DemoTransport(DemoSite(7, lambda: now[0])))
    assert later.startswith(earlier) and len(later) > len(earlier)
