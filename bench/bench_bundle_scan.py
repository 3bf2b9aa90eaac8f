"""Benchmark: ``cockpit diagnose`` on a folder holding a 1 GiB log vs ``grep -n -m1 -E``.

The log (realistic training-job lines, the root-cause line near the end) sits in a bundle
folder beside a small squeue table; ``diagnose_bundle`` reads the folder, recognises each
file, streams the large one for its first red error and runs the engine. The reference is
grep with the same strong patterns over the log alone, on a warm page cache, and grep with the
28 patterns of the peer harness (``bench/peer/grep-patterns.txt``, a copy of the shared
harness's: what issue #33 measures against). Also reports the bundle run's peak RSS in a fresh
process (flat in file size: the log is read in chunks).

    python bench/bench_bundle_scan.py [--size-mib 1024] [--keep]

Target: within 1.5x grep with the peer's 28 patterns.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.bench_logscan import generate, to_ere  # noqa: E402
from cockpit.diagnosis.patterns import patterns_for  # noqa: E402
from cockpit.ingest.bundle import diagnose_bundle  # noqa: E402

FOLDER = "/tmp/cockpit-bench-bundle"
LOG = os.path.join(FOLDER, "train-4242.log")
HERE = os.path.dirname(os.path.abspath(__file__))
PEER_PATTERNS = os.path.join(HERE, "peer", "grep-patterns.txt")  # the shared harness's 28
SQUEUE = (
    "JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
    " 4242       gpu    train    user1  F    1:02:03      1 gn01\n"
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--keep", action="store_true", help="keep the generated folder")
    args = ap.parse_args()
    size = args.size_mib * 1024 * 1024
    os.makedirs(FOLDER, exist_ok=True)
    if not os.path.exists(LOG) or os.path.getsize(LOG) < size * 0.99:
        t = time.perf_counter()
        generate(LOG, size)
        print(
            f"generated {LOG} ({os.path.getsize(LOG) / 2**20:.0f} MiB) in "
            f"{time.perf_counter() - t:.1f} s"
        )
    with open(os.path.join(FOLDER, "squeue.txt"), "w") as fh:
        fh.write(SQUEUE)
    pat_file = FOLDER + ".ere"
    with open(pat_file, "wb") as fh:
        fh.write(b"|".join(b"(" + to_ere(p.regex) + b")" for p in patterns_for("app", True)))
    subprocess.run(["cat", LOG], stdout=subprocess.DEVNULL, check=True)  # warm the page cache

    def grep(patterns: str = pat_file) -> tuple[float, str]:
        t = time.perf_counter()
        r = subprocess.run(
            ["grep", "-n", "-m1", "-E", "-f", patterns, LOG],
            capture_output=True,
            env={"LC_ALL": "C"},
        )
        return time.perf_counter() - t, r.stdout.decode(errors="replace").split(":", 1)[0]

    def ours() -> tuple[float, str]:
        t = time.perf_counter()
        report = diagnose_bundle(FOLDER)
        fe = report.first_error
        return time.perf_counter() - t, str(fe.line if fe else None)

    def child_memory() -> str:
        code = (
            "import sys; sys.path.insert(0, {!r}); "
            "from cockpit.ingest.bundle import diagnose_bundle; diagnose_bundle({!r}); "
            "import re; s = open('/proc/self/status').read(); "
            "print(re.search(r'VmHWM:\\s+(\\d+)', s).group(1))"
        ).format(os.path.join(os.path.dirname(__file__), ".."), FOLDER)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
        return f"peak RSS {int(out[0]) / 1024:.0f} MiB (interpreter, engine and chunk buffers)"

    g = min(grep() for _ in range(3))
    p = min(grep(PEER_PATTERNS) for _ in range(3))
    o = min(ours() for _ in range(3))
    mem = child_memory()
    print(f"grep -n -m1 -E (LC_ALL=C):      {g[0]:.2f} s  line {g[1]}  (our strong patterns)")
    print(f"grep, the peer's 28 patterns:   {p[0]:.2f} s  line {p[1]}")
    print(f"diagnose_bundle (folder):       {o[0]:.2f} s  line {o[1]}")
    print(f"ratio ours/grep:                {o[0] / g[0]:.2f}x")
    print(f"ratio ours/grep (peer's 28):    {o[0] / p[0]:.2f}x (target <= 1.5x)")
    print(f"load average:                   {os.getloadavg()[0]:.2f}")
    print(f"bundle memory:                  {mem}")
    os.unlink(pat_file)
    if not args.keep:
        for fn in os.listdir(FOLDER):
            os.unlink(os.path.join(FOLDER, fn))
        os.rmdir(FOLDER)
    if g[1] != o[1]:
        print("MISMATCH: grep and the bundle disagree on the line", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
