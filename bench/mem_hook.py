"""Run the cockpit as the operator does and record where its memory is, from inside (#33).

    python3 bench/mem_hook.py --out DIR [--at 15,55] [--trace] -- --config CONF

Starts the real ``cockpit`` (its console entry, the same process) with a daemon thread that,
at each of ``--at`` seconds after start, writes ``DIR/at-<s>.txt``: VmRSS and VmHWM,
pymalloc's arenas and blocks in use (``sys._debugmallocstats``), and with ``--trace``
(``tracemalloc`` from the start: its bookkeeping inflates the RSS, so the RSS of a traced run
is not the cockpit's) the top lines and files by memory held, and the snapshot itself
(``at-<s>.tracemalloc``) for ``tracemalloc.Snapshot.load``. Run it in the peer harness so the
cockpit sees the fake queue: ``N=10000 bench/peer/run_peer.sh python3 bench/mem_hook.py ...``.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mem_profile import pymalloc, rss_mb  # noqa: E402

TRIM = False


def _rollup() -> str:
    """The RSS split into file-backed (code, libraries) and anonymous (the heaps) pages."""
    keep = ("Rss:", "Anonymous:", "Shared_Clean:", "Private_Clean:")
    with open("/proc/self/smaps_rollup") as f:
        return ", ".join(" ".join(ln.split()) for ln in f if ln.startswith(keep))


def _stray_rows() -> list[str]:
    """Table rows alive that the hub does not publish, and what holds a few of them."""
    import gc

    from cockpit.runtime.state import HubState
    from widgets.rows import Row

    gc.unfreeze()  # get_objects does not list frozen objects (gcpolicy freezes each poll)
    objs = gc.get_objects()
    hubs = [o for o in objs if isinstance(o, HubState)]
    rows = [o for o in objs if type(o).__name__ == Row.__name__]
    live = {
        id(r) for h in hubs for st in h.states.values() for lst in st.rows.values() for r in lst
    }
    stray = [r for r in rows if id(r) not in live]
    out = [f"rows: {len(rows)} alive, {len(live)} published, {len(stray)} not"]
    for r in stray[:3]:
        chain, o = [], r
        for _ in range(5):
            refs = [x for x in gc.get_referrers(o) if x is not objs and x is not stray]
            refs = [x for x in refs if not isinstance(x, type(sys._getframe()))]
            if not refs:
                break
            o = refs[0]
            desc = type(o).__qualname__
            if isinstance(o, dict):
                desc += f"[{len(o)}]"
            elif isinstance(o, list | tuple):
                desc += f"({len(o)})"
            chain.append(desc)
        out.append("  held by: " + " <- ".join(chain))
    del objs, rows, stray
    gc.freeze()
    return out


def _record(out: Path, at: float, trace: bool, top: int) -> None:
    lines = [f"at {at:.0f} s: RSS {rss_mb()[0]:.1f} MB, peak RSS {rss_mb()[1]:.1f} MB"]
    lines.append("pymalloc: " + pymalloc())
    lines.append("smaps_rollup: " + _rollup())
    if TRIM:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
        lines.append(f"after malloc_trim(0): RSS {rss_mb()[0]:.1f} MB; " + _rollup())
    if os.environ.get("MEM_HOOK_ROWS"):
        lines += _stray_rows()
    if trace:
        held, peak = tracemalloc.get_traced_memory()
        lines.append(f"traced {held / 2**20:.1f} MB held, peak {peak / 2**20:.1f} MB")
        snap = tracemalloc.take_snapshot()
        snap.dump(str(out / f"at-{at:.0f}.tracemalloc"))
        for key in ("filename", "lineno"):
            lines.append(f"-- top {top} by {key}")
            for s in snap.statistics(key)[:top]:
                f = s.traceback[0]
                where = f"{f.filename}:{f.lineno}" if key == "lineno" else f.filename
                lines.append(f"{s.size / 2**20:8.2f} MB {s.count:8d} blocks  {where}")
    (out / f"at-{at:.0f}.txt").write_text("\n".join(lines) + "\n")


def _watch(out: Path, times: list[float], trace: bool, top: int) -> None:
    t0 = time.monotonic()
    for at in times:
        time.sleep(max(0.0, t0 + at - time.monotonic()))
        _record(out, at, trace, top)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--at", default="15,55", help="seconds after start, comma separated")
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--trim", action="store_true", help="then glibc's malloc_trim(0): RSS again")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    global TRIM
    TRIM = a.trim
    if a.trace:
        tracemalloc.start(int(os.environ.get("MEM_HOOK_FRAMES", "1")))
    times = [float(t) for t in a.at.split(",")]
    threading.Thread(target=_watch, args=(a.out, times, a.trace, a.top), daemon=True).start()
    from cockpit.cli import main as cockpit_main

    sys.argv = ["cockpit", *[x for x in a.args if x != "--"]]
    sys.exit(cockpit_main())


if __name__ == "__main__":
    main()
