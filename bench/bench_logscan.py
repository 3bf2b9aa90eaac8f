"""Benchmark: ``first_error`` vs ``grep -n -m1 -E`` with the same strong patterns.

Generates a 1 GiB log in /tmp (realistic training-job lines, the root-cause line near the
end), times both on a warm page cache, and reports the ratio and the scanner's peak RSS
(it mmaps the file: memory stays flat in file size).

    python bench/bench_logscan.py [--size-mib 1024] [--keep]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from cockpit.diagnosis.patterns import patterns_for  # noqa: E402
from cockpit.ingest.logfile import scan_path  # noqa: E402

PATH = "/tmp/cockpit-bench-1g.log"
ERROR = (
    b"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.batch. Some of your "
    b"processes may have been killed.\n"
)


_CLASS_OUT = {b"d": b"[0-9]", b"s": b"[[:space:]]", b"S": b"[^[:space:]]", b"D": b"[^0-9]"}
_CLASS_IN = {b"d": b"0-9", b"s": b"[:space:]", b"w": b"[:alnum:]_"}


def to_ere(rx: bytes) -> bytes:
    """Our regex dialect -> GNU ERE, on bytes (some patterns hold GBK bytes; grep runs with
    LC_ALL=C, byte by byte, as the scanner does). Bracket expressions are rebuilt: POSIX
    reads a backslash inside them literally."""
    out, i, n = bytearray(), 0, len(rx)
    while i < n:
        c = rx[i : i + 1]
        if rx.startswith(b"(?:", i):
            out += b"("
            i += 3
        elif c == b"\\" and i + 1 < n:
            e = rx[i + 1 : i + 2]
            out += _CLASS_OUT.get(e, b"\\" + e)
            i += 2
        elif c == b"[":
            i, expr = _bracket(rx, i + 1)
            out += expr
        else:
            out += c
            i += 1
    return bytes(out)


def _bracket(rx: bytes, i: int) -> tuple[int, bytes]:
    neg = rx[i : i + 1] == b"^"
    i += neg
    items, close, dash = bytearray(), False, False
    while i < len(rx) and rx[i : i + 1] != b"]":
        c = rx[i : i + 1]
        if c == b"\\":
            e = rx[i + 1 : i + 2]
            if e == b"]":
                close = True
            elif e == b"-":
                dash = True
            else:
                items += _CLASS_IN.get(e, e)
            i += 2
        else:
            items += c
            i += 1
    body = (b"]" if close else b"") + bytes(items) + (b"-" if dash else b"")
    return i + 1, b"[" + (b"^" if neg else b"") + body + b"]"


def generate(path: str, size: int) -> None:
    rnd = random.Random(42)
    words = [
        "loss",
        "step",
        "lr",
        "epoch",
        "throughput",
        "samples/s",
        "INFO",
        "checkpoint",
        "reading",
        "/data/shard-0001.bin",
        "grad_norm",
        "Warning: slow io",
        "model",
        "batch",
        "ok",
        "rank",
    ]
    lines = [
        f"2026-11-29 20:{i % 60:02d}:{(i * 7) % 60:02d} [rank {i % 8}] "
        + " ".join(rnd.choice(words) for _ in range(rnd.randint(6, 16)))
        + f" {rnd.random():.5f}"
        for i in range(50_000)
    ]
    block = ("\n".join(lines) + "\n").encode()
    with open(path, "wb") as fh:
        written = 0
        while written + len(block) < size - 4096:
            fh.write(block)
            written += len(block)
        fh.write(ERROR)
        fh.write(block[: max(0, size - written - len(ERROR))].rsplit(b"\n", 1)[0] + b"\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--keep", action="store_true", help="keep the generated file")
    args = ap.parse_args()
    size = args.size_mib * 1024 * 1024
    if not os.path.exists(PATH) or os.path.getsize(PATH) < size * 0.99:
        t = time.perf_counter()
        generate(PATH, size)
        print(
            f"generated {PATH} ({os.path.getsize(PATH) / 2**20:.0f} MiB) in "
            f"{time.perf_counter() - t:.1f} s"
        )
    pat_file = PATH + ".ere"
    with open(pat_file, "wb") as fh:
        fh.write(b"|".join(b"(" + to_ere(p.regex) + b")" for p in patterns_for("app", True)))
    subprocess.run(["cat", PATH], stdout=subprocess.DEVNULL, check=True)  # warm the page cache

    def grep() -> tuple[float, str]:
        t = time.perf_counter()
        r = subprocess.run(
            ["grep", "-n", "-m1", "-E", "-f", pat_file, PATH],
            capture_output=True,
            env={"LC_ALL": "C"},
        )
        return time.perf_counter() - t, r.stdout.decode(errors="replace").split(":", 1)[0]

    def ours() -> tuple[float, str]:
        t = time.perf_counter()
        h = scan_path(PATH)
        return time.perf_counter() - t, str(h.line if h else None)

    def child_memory() -> str:
        """Peak RSS (VmHWM, with the chunk buffers) and RssAnon of a fresh process after a scan."""
        code = (
            "import sys; sys.path.insert(0, {!r}); "
            "from cockpit.ingest.logfile import scan_path; scan_path({!r}); "
            "s = open('/proc/self/status').read(); import re; "
            "print(*(re.search(k + r':\\s+(\\d+)', s).group(1) "
            "for k in ('VmHWM', 'RssAnon')))".format(
                os.path.join(os.path.dirname(__file__), ".."), PATH
            )
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
        return (
            f"peak RSS {int(out[0]) / 1024:.0f} MiB (includes the chunk buffers), anonymous "
            f"{int(out[1]) / 1024:.0f} MiB"
        )

    g = min(grep() for _ in range(3))
    o = min(ours() for _ in range(3))
    mem = child_memory()
    print(f"grep -n -m1 -E (LC_ALL=C): {g[0]:.2f} s  line {g[1]}")
    print(f"first_error (scan_path):        {o[0]:.2f} s  line {o[1]}")
    print(f"ratio ours/grep:           {o[0] / g[0]:.2f}x")
    print(f"scanner memory:            {mem}")
    if g[1] != o[1]:
        print("MISMATCH: grep and first_error disagree on the line", file=sys.stderr)
        return 1
    if not args.keep:
        os.unlink(PATH)
    os.unlink(pat_file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
