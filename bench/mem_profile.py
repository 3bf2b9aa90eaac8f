"""Where the cockpit's memory goes per job on the peer site's queue (#33), measured in process.

Runs what the TUI's poller runs per poll (``bench/peer/poll_cost.py``'s loop: the real
``SlurmSource`` on ``bench/peer/fakebin`` with churn, the pipeline with its carry, the evidence
round) under ``tracemalloc`` and prints, after the first poll and after the last:

* the traced memory held and its peak (the peak of a poll: what lives at once while it runs);
* the top allocation sites by line (``--top``);
* the retained size of each thing the carry and the analysis hold (the snapshot's jobs, the
  findings, verdicts, rows, incidents, the diagnosis's reuse), by a deep walk that counts each
  object once, in the order listed (so a later item counts only what the earlier did not);
* counts of objects by type over the whole heap (``gc.get_objects``'s containers and what they
  reference), so a type made per job shows as ~N.

    python bench/mem_profile.py --jobs 10000 [--polls 10] [--top 25] [--no-trace]

``--no-trace``: no tracemalloc (its own bookkeeping doubles the heap), only the RSS and the
retained sizes: the numbers to compare with the side by side's peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import os
import resource
import sys
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
FAKEBIN = HERE / "peer" / "fakebin"
TRIM = "--trim" in sys.argv
DUMP = os.environ.get("MEM_PROFILE_DUMP", "")  # a path prefix: tracemalloc snapshots kept there


def rss_mb() -> tuple[float, float]:
    cur = hwm = 0.0
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            cur = int(line.split()[1]) / 1024
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) / 1024
    return cur, hwm


def pymalloc() -> str:
    """pymalloc's arenas: allocated now, and the bytes in used blocks (``sys._debugmallocstats``
    prints to the C stderr: read through a pipe)."""
    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(w)
        os.close(saved)
    text = b""
    while chunk := os.read(r, 1 << 16):
        text += chunk
    os.close(r)
    keep = (
        "arenas allocated current",
        "bytes in allocated blocks",
        "bytes in available blocks",
        "bytes in allocated pools",
        "unused pools",
    )
    out = [ln.strip() for ln in text.decode().splitlines() if any(k in ln for k in keep)]
    return "; ".join(" ".join(ln.split()) for ln in out)


def deep_size(obj: object, seen: set[int]) -> int:
    """Bytes reachable from ``obj`` not already in ``seen`` (modules, types, functions skipped:
    code, not data)."""
    skip = (type, type(sys), type(deep_size), type(len))
    size = 0
    stack = [obj]
    while stack:
        o = stack.pop()
        i = id(o)
        if i in seen or isinstance(o, skip):
            continue
        seen.add(i)
        size += sys.getsizeof(o)
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, list | tuple | set | frozenset):
            stack.extend(o)
        elif isinstance(o, str | bytes | int | float | bool) or o is None:
            pass
        else:
            stack.extend(gc.get_referents(o))
    return size


def by_project_line(snap: tracemalloc.Snapshot) -> list[tuple[int, int, str]]:
    """(bytes, blocks, where) by the most recent frame in this repository (else the most
    recent frame), biggest first."""
    root = str(HERE.parent)
    acc: dict[str, list[int]] = {}
    for t in snap.traces:
        frames = list(t.traceback)[::-1]  # a Traceback runs oldest first
        f = next((f for f in frames if f.filename.startswith(root)), frames[0])
        name = f.filename.removeprefix(root + "/")
        if f is not frames[0]:
            lib = Path(frames[0].filename).name
            name = f"{name}:{f.lineno} (via {lib}:{frames[0].lineno})"
        else:
            name = f"{name}:{f.lineno}"
        a = acc.setdefault(name, [0, 0])
        a[0] += t.size
        a[1] += 1
    return sorted(((s, c, w) for w, (s, c) in acc.items()), reverse=True)


def type_counts(limit: int) -> list[tuple[str, int]]:
    counts: collections.Counter[str] = collections.Counter()
    gc.unfreeze()  # the pipeline freezes what it builds (gcpolicy): get_objects skips frozen
    objs = gc.get_objects()
    seen: set[int] = set()
    for o in objs:
        counts[type(o).__qualname__] += 1
        seen.add(id(o))
        for r in gc.get_referents(o):  # strings, ints, datetimes are not tracked by gc
            if id(r) not in seen and not gc.is_tracked(r):
                seen.add(id(r))
                counts[type(r).__qualname__] += 1
    return counts.most_common(limit)


def module_memos() -> dict[str, object]:
    """The module-level memos that hold per-job data between polls."""
    from cockpit import safety
    from cockpit.diagnosis import delta, engine
    from cockpit.runtime import evidence
    from cockpit.store import codec
    from cockpit.watch import transitions

    return {
        "codec._FINDING_JSON (finding -> redacted JSON)": codec._FINDING_JSON,
        "codec._SUBJECT_JSON": codec._SUBJECT_JSON,
        "safety redact memo (two generations)": (safety._MEMO, safety._OLD),
        "engine._KEY_PREFIX": engine._KEY_PREFIX,
        "transitions._UNIQUE, evidence._VIEWS, delta._OOM_LAST": (
            transitions._UNIQUE,
            evidence._VIEWS,
            delta._OOM_LAST,
        ),
    }


def retained(parts: dict[str, object]) -> list[tuple[str, float]]:
    seen: set[int] = set()
    return [(name, deep_size(obj, seen) / 2**20) for name, obj in parts.items()]


def report(label: str, parts: dict[str, object], top: int, traced: bool, jobs: int) -> None:
    gc.collect()
    cur, hwm = rss_mb()
    print(f"\n=== {label}: RSS {cur:.1f} MB, peak RSS {hwm:.1f} MB")
    print("pymalloc:", pymalloc())
    blocks = sys.getallocatedblocks()
    gc.unfreeze()  # the frozen garbage (cycles frozen by gcpolicy before a collection saw them)
    freed = gc.collect()
    print(
        f"frozen garbage: {freed} objects, {blocks - sys.getallocatedblocks()} blocks; "
        f"RSS {rss_mb()[0]:.1f} MB after"
    )
    if TRIM:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
        print(f"after malloc_trim(0): RSS {rss_mb()[0]:.1f} MB")
    if traced:
        now_b, peak_b = tracemalloc.get_traced_memory()
        print(f"traced {now_b / 2**20:.1f} MB held, peak {peak_b / 2**20:.1f} MB")
        snap = tracemalloc.take_snapshot()
        if DUMP:
            snap.dump(DUMP + f".{label.replace(' ', '-')}")
        snap = snap.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        print(f"-- top {top} lines of the project (held now; a library's allocation is charged")
        print("   to the project line that called it, with --frames > 1)")
        for size, count, where in by_project_line(snap)[:top]:
            per = size / jobs
            print(f"{size / 2**20:8.2f} MB {per:7.0f} B/job {count:8d} blocks  {where}")
    print("-- retained (deep, each object counted once, in this order)")
    total = 0.0
    for name, mb in retained(parts):
        total += mb
        print(f"{mb:8.2f} MB {mb * 2**20 / jobs:7.0f} B/job  {name}")
    print(f"{total:8.2f} MB total")
    print("-- object counts by type (top 20)")
    for name, n in type_counts(20):
        print(f"{n:9d}  {name}")


async def run(jobs: int, polls: int, top: int, traced: bool, store: bool, frames: int) -> None:
    from cockpit.runtime import pipeline
    from cockpit.runtime.evidence import EvidenceCache
    from cockpit.slurm.source import SlurmSource
    from cockpit.transport import LocalTransport

    epoch = int(time.time())
    os.environ.update(
        PATH=f"{FAKEBIN}:{os.environ['PATH']}",
        FAKE_SLURM_JOBS=str(jobs),
        FAKE_SLURM_EPOCH=str(epoch),
        FAKE_SLURM_CHURN="0.01",
        FAKE_SLURM_LOG="/tmp/cockpit-mem-profile-calls.log",
    )
    from cockpit.diagnosis import correlate, engine  # noqa: F401  (code, not per-job data)

    gc.collect()
    print(f"after imports: RSS {rss_mb()[0]:.1f} MB")
    if traced:
        tracemalloc.start(frames)
    squeue_now = [float(epoch)]
    # the cockpit reads squeue at squeue's clock, as in the TUI (see poll_cost.py)
    source = SlurmSource(
        "peer", LocalTransport(), clock=lambda: datetime.fromtimestamp(squeue_now[0], UTC)
    )
    cache = EvidenceCache()
    carry = pipeline.Carry()
    db = remembered = None
    if store:  # what the TUI's store thread does after each poll (lifecycle.remember)
        import tempfile

        from cockpit.runtime import lifecycle
        from cockpit.store import open_store

        where = Path(tempfile.mkdtemp(prefix="cockpit-mem-profile-"))
        db = open_store(f"sqlite:///{where / 'store.db'}", legacy_acks=where / "none.json")
    a = None
    for i in range(polls):
        os.environ["FAKE_SLURM_NOW"] = str(epoch + 5 * i)
        squeue_now[0] = epoch + 5 * i
        if traced:
            tracemalloc.reset_peak()
            if i == polls - 1 and DUMP:
                tracemalloc.take_snapshot().dump(DUMP + ".before-last")
        snap = await source.poll()
        assert snap.error is None, snap.error
        now = datetime.fromtimestamp(epoch + 5 * i, UTC)
        if i == 0:
            pipeline.queue_first(snap, now)
        a = pipeline.analyse(snap, now, cache.cached(snap), cache.memo, (None,), carry=carry)
        missing = cache.missing(snap)
        if missing:
            evidence = await cache.refresh(source, snap, missing)
            a = pipeline.analyse(snap, now, evidence, cache.memo, (None,), carry=carry)
        if db is not None:
            remembered = None
            remembered = lifecycle.remember(db, source.name, a.incidents or (), now)
        if i in (0, polls - 1):
            parts = {
                "snapshot (jobs, nodes, partitions)": snap,
                "source (its own keep between polls)": source,
                "findings": a.findings,
                "verdicts": a.verdicts,
                "rows (jobs, nodes, training panes)": a.rows,
                "incidents + tally": (a.incidents, a.tally),
                "carry.diagnosis (Reuse)": carry.diagnosis,
                "carry.rows (RowMemo)": carry.rows,
                "carry (the rest: correlated memo, ...)": carry,
                "evidence cache": cache,
                "store's read back (Remembered)": remembered,
                "store (its memos: written, encoded, decoded, mirror)": db,
                **module_memos(),
            }
            report(f"after poll {i + 1}", parts, top, traced, jobs)
        del snap


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--polls", type=int, default=10)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--no-trace", action="store_true")
    ap.add_argument("--store", action="store_true", help="also sync a SQLite store each poll")
    ap.add_argument("--frames", type=int, default=1, help="tracemalloc frames kept per block")
    ap.add_argument("--trim", action="store_true", help="also RSS after glibc's malloc_trim(0)")
    args = ap.parse_args()
    asyncio.run(run(args.jobs, args.polls, args.top, not args.no_trace, args.store, args.frames))
    print(f"\nmax RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
