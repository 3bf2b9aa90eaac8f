"""What one poll costs the cockpit on the peer site's queue, against reading and splitting it.

Runs the real ``SlurmSource`` (``LocalTransport``) against ``bench/peer/fakebin`` and the
pipeline as a poller runs it (evidence still valid, ``analyse``, the evidence round for new
failures and its second ``analyse``), poll after poll, and reports the process CPU of each
poll (the fake's own CPU is a child's: not counted). The floor is the same squeue call
through the same transport, decoded, plus ``str.split`` of every line into fields: what any reader
of that output pays.

Two situations:

* ``still``: ``FAKE_SLURM_NOW`` fixed: squeue prints the same text every poll (nothing
  changed); the target is a poll ≤ 2 × the floor;
* ``ticking``: the wall clock, submit times fixed (``FAKE_SLURM_EPOCH``): running jobs'
  TIME changes between polls, as on a real cluster.
* ``churn``: a real site's flow (#33): squeue's clock moves 5 s (the side by side's interval)
  per poll and ``FAKE_SLURM_CHURN=0.01``: 1 % of the queue leaves per minute and as many jobs
  arrive, running jobs' TIME moves, as in ``side_by_side.sh``.

``--store``: each poll also syncs its incidents into a fresh SQLite store and reads the open
ones back (``lifecycle.remember``, what the TUI's store thread does), timed apart.

    python bench/peer/poll_cost.py --jobs 10000 [--polls 6] [--situation churn] [--store] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))


def _cpu() -> float:
    return time.process_time()


async def _floor(transport, argv) -> float:
    c = _cpu()
    out = (await transport.run(argv)).stdout.decode()
    rows = [ln.split("\x1f") for ln in out.splitlines()]
    assert rows
    return _cpu() - c


async def _run(
    jobs: int, polls: int, situation: str, profile: str | None = None, store: bool = False
) -> dict:
    from cockpit.runtime import pipeline
    from cockpit.runtime.evidence import EvidenceCache
    from cockpit.slurm.commands import SQUEUE_ARGV
    from cockpit.slurm.source import SlurmSource
    from cockpit.transport import LocalTransport

    epoch = int(time.time())
    os.environ.update(
        PATH=f"{HERE / 'fakebin'}:{os.environ['PATH']}",
        FAKE_SLURM_JOBS=str(jobs),
        FAKE_SLURM_EPOCH=str(epoch),
        FAKE_SLURM_LOG=os.environ.get("FAKE_SLURM_LOG", "/tmp/cockpit-peer-calls.log"),
    )
    os.environ.pop("FAKE_SLURM_CHURN", None)
    if situation == "still":
        os.environ["FAKE_SLURM_NOW"] = str(epoch)
    else:
        os.environ.pop("FAKE_SLURM_NOW", None)
    if situation == "churn":
        os.environ["FAKE_SLURM_CHURN"] = "0.01"
    transport = LocalTransport()
    db = None
    if store:
        import tempfile

        from cockpit.runtime import lifecycle
        from cockpit.store import open_store

        where = Path(tempfile.mkdtemp(prefix="cockpit-poll-cost-"))
        db = open_store(f"sqlite:///{where / 'store.db'}", legacy_acks=where / "none.json")
    store_costs: list[float] = []
    squeue_now = [float(epoch)]
    # the cockpit reads squeue at squeue's own clock, as in the side by side (both the wall
    # clock there): else a running job's TIME, 5 s on per poll, would stray from the 0.2 s the
    # cockpit saw pass, and every running job be read anew every other poll
    clock = (lambda: datetime.fromtimestamp(squeue_now[0], UTC)) if situation == "churn" else None
    source = SlurmSource("peer", transport, clock=clock)
    cache = EvidenceCache()
    carry = pipeline.Carry()
    costs: list[float] = []
    first_rows = 0.0
    prof = None
    for i in range(polls):
        if profile and i == 2:
            import cProfile

            async def inline(fn, /, *args, **kwargs):  # cProfile sees only its own thread
                return fn(*args, **kwargs)

            asyncio.to_thread = inline
            prof = cProfile.Profile()
            prof.enable()
        if situation == "churn":  # a poll every 5 s of squeue's clock
            os.environ["FAKE_SLURM_NOW"] = str(epoch + 5 * i)
            squeue_now[0] = epoch + 5 * i
        c = _cpu()
        snap = await source.poll()
        assert snap.error is None, snap.error
        now = datetime.now(UTC)  # the cockpit's clock moves, whatever squeue prints
        if situation == "churn":
            now = datetime.fromtimestamp(epoch + 5 * i, UTC)
        if i == 0:
            pipeline.queue_first(snap, now)
            first_rows = _cpu() - c
        a = pipeline.analyse(snap, now, cache.cached(snap), cache.memo, (None,), carry=carry)
        missing = cache.missing(snap)
        if missing:
            evidence = await cache.refresh(source, snap, missing)
            a = pipeline.analyse(snap, now, evidence, cache.memo, (None,), carry=carry)
        costs.append(_cpu() - c)
        if db is not None:
            c = _cpu()
            lifecycle.remember(db, source.name, a.incidents or (), now)
            store_costs.append(_cpu() - c)
        incidents = len(a.incidents or ())
        await asyncio.sleep(0.2)
    if prof is not None:
        import pstats

        prof.disable()
        stats = pstats.Stats(prof, stream=sys.stderr).strip_dirs()
        stats.sort_stats(profile).print_stats(30)
    floors = [await _floor(transport, SQUEUE_ARGV) for _ in range(3)]
    steady = costs[2:] or costs[1:]
    return {
        "situation": situation,
        "jobs": jobs,
        "rows": len(snap.jobs),
        "first_poll_cpu_s": round(costs[0], 3),
        "first_rows_cpu_s": round(first_rows, 3),
        "poll_cpu_s": round(statistics.median(steady), 3),
        "floor_cpu_s": round(min(floors), 3),
        "ratio": round(statistics.median(steady) / min(floors), 2),
        "incidents": incidents,
        **(
            {"store_cpu_s": round(statistics.median(store_costs[2:] or store_costs), 3)}
            if db
            else {}
        ),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "loadavg": os.getloadavg()[0],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--polls", type=int, default=6)
    ap.add_argument("--situation", choices=("still", "ticking", "churn"), default="still")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--profile",
        choices=("tottime", "cumulative"),
        help="cProfile the steady polls (from the third) and print the top 30 to stderr",
    )
    ap.add_argument("--store", action="store_true", help="also time the store's sync a poll")
    args = ap.parse_args()
    res = asyncio.run(_run(args.jobs, args.polls, args.situation, args.profile, args.store))
    if args.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:18} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
